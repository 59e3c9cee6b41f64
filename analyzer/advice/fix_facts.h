/*
 * fix_facts.h - advice chosen with the code facts (analyzer/model/code_facts.h):
 * what stops the code at a finding's line from going into a tf.function,
 * and the smallest unit that can (the model call that did the work).
 */
#ifndef AGPROF_FIX_FACTS_H
#define AGPROF_FIX_FACTS_H

struct model;
struct finding;

/*
 * eager-hotspot: when the function holding the busiest line (func, NULL or
 * "<module>": the loop around it) cannot be traced as it is, say what and
 * where, and advise the model call alone in a graph: f's recommendation and
 * no_edit set, 1.  0 when the facts are unknown or show nothing in the way
 * (the advice stays as it was).
 */
int facts_eager_advice(struct model *m, struct finding *f, const char *func);

#endif
