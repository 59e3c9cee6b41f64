/*
 * saving_summary.h - a finding's saving in a few words, for the one line
 * the text report gives it ("4 retraces at ~5 ms each"); the derivation
 * stays in saving_method (JSON, `agprof report --verbose`).
 */
#ifndef AGPROF_SAVING_SUMMARY_H
#define AGPROF_SAVING_SUMMARY_H

struct model;
struct finding;
struct model_function;

/*
 * Set f->saving_summary from its estimated saving.  A finding whose saving
 * is 0 while it has a cost is not a warning: it becomes info, and says so;
 * unless the 0 is the measured saving less the estimated price of what the
 * edit adds (casts, constants): the retraces are real, the edit is not
 * offered (fix.c), and the finding says why.
 */
void saving_summarize(struct model *m, struct finding *f, const struct model_function *fn);

#endif
