/*
 * fix.h - recommendations written against the user's own code, and what
 * applying them would save.
 *
 * Owns: after the rules ran, filling every finding's code quote, its edit
 * (struct finding_fix: the replaced lines and their replacement, read from
 * the source file at report time), or the reason no safe edit can be
 * written (the builder the rule names with `fix:`, analyzer/rules/rule_advice.h),
 * and its estimated saving (analyzer/advice/saving.c).  Also the unified
 * diff of `agprof fix` and the JSON/SARIF pieces that carry the edit.
 *
 * An edit is offered only when it can be written from what the recording
 * shows and the file as it is now: the file must be under the recording's
 * working directory, unchanged since the recording (source_files hash), and
 * the lines must have the expected form.  Otherwise the finding says why,
 * and the advice stays in words: never a template shown as the user's code.
 */
#ifndef AGPROF_FIX_H
#define AGPROF_FIX_H

#include "strbuf.h"

#include <stdint.h>

struct model;
struct finding;

/* Fill code/fix/no_edit/saving of every finding of m, then re-sort them. */
void fix_annotate(struct model *m);

/*
 * Append the unified-diff hunk of f's edit to out, after the file header
 * (--- a/FILE, +++ b/FILE; FILE relative to the recording's working
 * directory) when header is 1, with 3 lines of context read from the file.  Every edit keeps the number of lines, so
 * hunks of one file apply in any order.  0, or -1 when f has no edit.
 */
int fix_diff(struct strbuf *out, const struct model *m, const struct finding *f, int header);

/* JSON members ,"saving_ns":N,"forecast_ns":N|null,"saving_method":S,"fix":{file,line,before,after}|null for json_finding. */
struct json;
void fix_json_members(struct json *j, const struct finding *f);
/* SARIF: ,"fixes":[...] for a result, nothing when f has no edit. */
void fix_sarif_fixes(struct json *j, const struct finding *f);

/* saving.c: the saving of fixing f, with its method (strings in m's pool). */
void saving_estimate(struct model *m, struct finding *f);

#endif
