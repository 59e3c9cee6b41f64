/*
 * analyze.h - the whole analysis in one call: model, rules, findings.
 * What report, check, `run --check` and the TUI's findings panel share.
 */
#ifndef AGPROF_ANALYZE_H
#define AGPROF_ANALYZE_H

#include "model.h"
#include "rules.h"

#include <stddef.h>

struct recording;

struct analyze_opts {
	const char *rules_dir;      /* --rules DIR, or NULL */
	const char *const *sets;    /* "RULE.THRESHOLD=VALUE" overrides */
	size_t nsets;
	int allow_empty;            /* 1: an empty recording is not an error */
};

/*
 * Load rec into m, load the rules into rs (initialized here), run them.
 * Returns 0; 2 after one "error: ..." line when the recording cannot be
 * analyzed (unreadable tables, empty recording unless allowed, bad --set,
 * missing rules directory); 3 on internal errors.  On failure m and rs are
 * released.  Errors in single rule files are printed but do not fail.
 */
int analyze(struct model *m, struct ruleset *rs, struct recording *rec, const struct analyze_opts *o);

#endif
