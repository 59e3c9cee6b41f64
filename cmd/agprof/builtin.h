/* builtin.h - the subcommands; one file each, entry point cmd_<name>(). */
#ifndef AGPROF_BUILTIN_H
#define AGPROF_BUILTIN_H

#include "analyze.h"
#include "options.h"

#include <stdio.h>

/*
 * Exit codes shared by every subcommand (documented in agprof(1)):
 *   0  success / all checks hold
 *   1  a check threshold was crossed (check)
 *   2  usage error, unreadable or invalid recording
 *   3  internal error (out of memory, cannot write output)
 * `agprof run` exits with the workload's own status instead; 126/127 when
 * the program cannot be executed / found.
 */
enum {
	EXIT_OK = 0,
	EXIT_VIOLATION = 1,
	EXIT_USAGE = 2,
	EXIT_INTERNAL = 3,
};

/* args.c: what the subcommands that read one recording share. */

/* Exit code of a check's result (enum check_result), for `check` and `run --check`. */
int check_exit_code(int check_result);

/*
 * The recording of a subcommand that takes exactly one: argv[first] after
 * opt_parse (returned by it); NULL after an error when there is none or more.
 */
const char *one_recording(const struct opt_cmd *cmd, int argc, char **argv, int first);

/*
 * opt_parse, then one_recording into *path: 0; -1 after --help (exit 0);
 * EXIT_USAGE after an error.
 */
int parse_recording_command(const struct opt_cmd *cmd, int argc, char **argv, const char **path);

/* --rules DIR and --set RULE.NAME=VALUE (repeatable), for report and view. */
enum { RULES_DIR = OPT_KEY_BASE + 50, RULES_SET };
struct rules_args {
	struct analyze_opts ao;   /* rules_dir, sets, nsets filled in */
	const char **sets;
};
extern const struct opt rules_options[];
int rules_option(void *ctx, int key, const char *value);  /* ctx: struct rules_args */
void rules_args_release(struct rules_args *ra);

/*
 * While curses owns the terminal (view, top), stderr goes to a temporary
 * file, printed once the terminal is back: stderr_hold() returns the
 * saved descriptor (or -1: nothing held), stderr_release() prints and
 * restores it.
 */
int stderr_hold(FILE **tmp);
void stderr_release(FILE *tmp, int saved);

/* -h, --help alone: the last table of a subcommand whose others are shared. */
extern const struct opt help_options[];

int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_fix(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_attach(int argc, char **argv);
int cmd_cell_facts(int argc, char **argv);
int cmd_attach_pid(int argc, char **argv);
int cmd_top(int argc, char **argv);

#endif
