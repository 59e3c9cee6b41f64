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
	int no_verdicts;            /* 1: the experiments' sidecar (verdicts.h) is not applied (fix --verify tries again) */
};

enum analyze_result {
	ANALYZE_OK = 0,
	ANALYZE_BAD_INPUT,  /* unreadable tables, empty recording unless allowed, bad --set, no rules directory */
};

/*
 * Load rec into m, load the rules into rs (initialized here), run them.
 * On failure one "error: ..." line is printed and m and rs are released;
 * the caller decides what it means (cmd/agprof: exit 2).  Errors in single
 * rule files are printed but do not fail.
 */
enum analyze_result analyze(struct model *m, struct ruleset *rs, struct recording *rec, const struct analyze_opts *o);

#endif
