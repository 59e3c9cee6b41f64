/* main.c - the agprof dispatcher: one table of subcommands. */
#include "builtin.h"
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const agprof_usage =
	"usage: agprof <command> [<args>]\n"
	"\n"
	"Profile TensorFlow graph-mode (tf.function / AutoGraph) workloads.\n"
	"\n"
	"commands:\n"
	"   run      run a program and record it into an SQLite recording\n"
	"   report   analyze a recording and print tuning recommendations\n"
	"   check    gate CI on thresholds (tracing count, eager share, rules)\n"
	"   view     interactive timeline of a recording (ncurses)\n"
	"   export   convert a recording (Chrome trace-event JSON)\n"
	"\n"
	"'agprof <command> --help' describes a command.  Exit codes: 0 success,\n"
	"1 check threshold crossed, 2 usage or bad recording, 3 internal error;\n"
	"'agprof run' exits with the workload's status.\n";

struct cmd_struct {
	const char *name;
	int (*fn)(int argc, char **argv);
};

static const struct cmd_struct commands[] = {
	{ "run", cmd_run },
	{ "report", cmd_report },
	{ "check", cmd_check },
	{ "view", cmd_view },
	{ "export", cmd_export },
	{ "__attach", cmd_attach },  /* hidden: the writer behind agprof.start() in Python */
};

int main(int argc, char **argv)
{
	const char *name;
	int status;

	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		fputs(agprof_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_USAGE : EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version")) {
		printf("agprof %s\n", AGPROF_VERSION);
		return EXIT_OK;
	}
	name = argv[1];
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(commands[i].name, name) != 0)
			continue;
		status = commands[i].fn(argc - 1, argv + 1);
		/* Like git: a full disk or closed pipe must not pass silently. */
		if (fflush(stdout) != 0 || ferror(stdout)) {
			if (errno != EPIPE)
				fprintf(stderr, "error: cannot write output: %s\n", strerror(errno));
			return status ? status : EXIT_INTERNAL;
		}
		return status;
	}
	fprintf(stderr, "error: unknown command '%s'; see 'agprof --help'\n", name);
	return EXIT_USAGE;
}
