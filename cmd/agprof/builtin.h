/* builtin.h - the subcommands; one file each, entry point cmd_<name>(). */
#ifndef AGPROF_BUILTIN_H
#define AGPROF_BUILTIN_H

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

int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_view(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_attach(int argc, char **argv);

#endif
