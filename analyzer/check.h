/*
 * check.h - `agprof check`: gate CI on thresholds over a recording.
 *
 * Owns: the threshold options, their evaluation on the model and the
 * findings, and the text, JUnit XML and GitHub annotation printers.
 * Used by cmd/agprof/check.c and by `agprof run --check`.
 */
#ifndef AGPROF_CHECK_H
#define AGPROF_CHECK_H

struct recording;

/*
 * Check rec against the thresholds in argv and print the result to stdout.
 * argv holds only options, no program name and no recording:
 *   --max-traces N | --max-traces FUNCTION=N   (repeatable)
 *   --max-eager-share PERCENT
 *   --forbid RULE                               (repeatable)
 *   --fail-on warning|error
 *   --format text|junit|github
 *   --rules DIR, --set RULE.THRESHOLD=VALUE
 * With no threshold at all, --fail-on error applies.
 * Returns 0 when every threshold holds, 1 when one is crossed, 2 on a usage
 * error or a recording that cannot be analyzed (one "error: ..." line on
 * stderr), 3 on an internal error.
 */
int check_run(struct recording *rec, int argc, char **argv);

/* The usage text of the threshold options (for --help of check and run). */
extern const char check_options_help[];

#endif
