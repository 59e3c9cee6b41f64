/*
 * rules.h - the rule engine: declarative rule files (docs/rules.md) read
 * from rules/ and from --rules DIR, evaluated on the model's metric sources,
 * producing the model's findings.
 *
 * Owns: parsing rule files, their condition expressions and message
 * templates, threshold overrides, and running the rules.  A rule file with
 * an error is reported as "error: FILE:LINE: ..." and skipped; the others
 * still run.
 */
#ifndef AGPROF_RULES_H
#define AGPROF_RULES_H

#include <stddef.h>

struct model;
struct rule; /* private */

struct ruleset {
	struct rule **rules;
	size_t nrules, cap;
	int errors;   /* rule files or rules that could not be loaded or run */
};

void ruleset_init(struct ruleset *rs);
void ruleset_release(struct ruleset *rs);

/*
 * Load every *.rule file of dir (sorted by name).  A rule whose id is
 * already loaded replaces the earlier one (user rules override built-in
 * ones).  Returns the number of files with errors, or -1 when dir cannot be
 * read (after printing the error).
 */
int ruleset_load_dir(struct ruleset *rs, const char *dir);
/* Load one rule file; 0, or -1 after printing "error: FILE:LINE: ...". */
int ruleset_load_file(struct ruleset *rs, const char *path);
/* Load one rule from text (tests); name is used in error messages. */
int ruleset_load_text(struct ruleset *rs, const char *name, const char *text);

/*
 * The built-in rules (agprof_rules_dir()), then user_dir when not NULL.
 * Returns -1 when a directory cannot be read (built-in missing is an error:
 * agprof is not installed right), else 0; files with errors only count in
 * rs->errors.
 */
int ruleset_load_default(struct ruleset *rs, const char *user_dir);

/*
 * Override a threshold: "RULE.NAME=VALUE" (VALUE accepts the suffixes of
 * rule expressions: 10ms, 20%).  0, or -1 after printing an error.
 */
int ruleset_set(struct ruleset *rs, const char *assignment);

/* Whether a rule with this id is loaded. */
int ruleset_has(const struct ruleset *rs, const char *id);
size_t ruleset_count(const struct ruleset *rs);
/* Id, title and default severity name of rule i (for listings). */
const char *ruleset_rule_id(const struct ruleset *rs, size_t i);
const char *ruleset_rule_title(const struct ruleset *rs, size_t i);

/*
 * Evaluate every rule on m, appending to m->findings, then sort them.
 * Errors met while running (unknown field, unknown source) are printed with
 * the rule's file and line, counted in rs->errors, and that rule stops.
 * Returns the number of findings added.
 */
size_t rules_run(struct ruleset *rs, struct model *m);

#endif
