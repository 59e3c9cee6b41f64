/*
 * check.h - `agprof check`: gate CI on thresholds over a recording.
 *
 * Owns: the threshold options (one table, shared by `agprof check`,
 * `agprof run --check` and their --help), their evaluation on the model and
 * the findings, and the text, JUnit XML and GitHub annotation printers.
 * Returns results; cmd/agprof maps them to exit codes.
 */
#ifndef AGPROF_CHECK_H
#define AGPROF_CHECK_H

#include "options.h"

struct recording;
struct check_config;

enum check_result {
	CHECK_HELD = 0,       /* every threshold holds */
	CHECK_CROSSED,        /* at least one is crossed */
	CHECK_BAD_INPUT,      /* the recording cannot be analyzed, unknown --forbid rule (error printed) */
	CHECK_FAILED,         /* out of memory, cannot write the output (error printed) */
};

/*
 * The threshold options, with --format, --rules and --set:
 *   --max-traces N | --max-traces FUNCTION=N   (repeatable)
 *   --max-eager-share PERCENT
 *   --forbid RULE                               (repeatable)
 *   --fail-on warning|error
 * With no threshold at all, --fail-on error applies.
 */
extern const struct opt check_options[];

/* A configuration to fill with check_option(); NULL when out of memory. */
struct check_config *check_config_new(void);
void check_config_free(struct check_config *cfg);

/* The opt_handler of check_options (ctx: a struct check_config). */
int check_option(void *ctx, int key, const char *value);

/*
 * Check rec against cfg's thresholds and print the result to stdout; errors
 * are printed as one "error: ..." line on stderr.
 */
enum check_result check_run(struct recording *rec, struct check_config *cfg);

#endif
