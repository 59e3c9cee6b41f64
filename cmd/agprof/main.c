/* main.c - the agprof dispatcher: one table of subcommands, one of options. */
#include "builtin.h"
#include "config.h"
#include "options.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const agprof_usage =
	"usage: agprof [--help | --version] <command> [<args>]\n"
	"\n"
	"Profile TensorFlow graph-mode (tf.function / AutoGraph) workloads.\n"
	"\n"
	"commands:\n";

static const char *const agprof_epilogue =
	"\n"
	"'agprof <command> --help' describes a command.  Exit codes: 0 success,\n"
	"1 check threshold crossed, 2 usage or bad recording, 3 internal error;\n"
	"'agprof run' exits with the workload's status.\n";

struct cmd_struct {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct cmd_struct commands[] = {
	{ "run", cmd_run, "run a program and record it into an SQLite recording" },
	{ "report", cmd_report, "analyze a recording and print tuning recommendations" },
	{ "check", cmd_check, "gate CI on thresholds (tracing count, eager share, rules)" },
	{ "diff", cmd_diff, "compare two recordings of a program: before and after a change" },
	{ "view", cmd_view, "interactive timeline of a recording (ncurses)" },
	{ "top", cmd_top, "live view of a run in progress: retraces, eager share, costly lines" },
	{ "export", cmd_export, "convert a recording (Chrome trace-event JSON)" },
	{ "fix", cmd_fix, "the findings' edits of your code as a diff (patch -p1)" },
	{ "merge", cmd_merge, "merge the recordings of a multi-worker job's workers" },
	{ "attach", cmd_attach_pid, "record a running Python program by its PID, then let it go on" },
	{ "__attach", cmd_attach, NULL },  /* hidden: the writer behind agprof.start() in Python */
	{ "__cell-facts", cmd_cell_facts, NULL },  /* hidden: code facts of the cells agprof.stop() wrote */
};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void print_usage(FILE *out)
{
	fputs(agprof_usage, out);
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (commands[i].summary)  /* NULL: hidden */
			fprintf(out, "   %-8s %s\n", commands[i].name, commands[i].summary);
	fputs(agprof_epilogue, out);
}

enum { MAIN_VERSION = OPT_KEY_BASE };

static const struct opt main_options[] = {
	{ "help", 'h', NULL, NULL },
	{ "version", MAIN_VERSION, NULL, NULL },
	OPT_END,
};

static int main_option(void *ctx, int key, const char *value)
{
	(void)value;
	*(int *)ctx = key;
	return 0;
}

/* Run command name; like git, a full disk or closed pipe must not pass silently. */
static int dispatch(const char *name, int argc, char **argv)
{
	for (size_t i = 0; i < NCOMMANDS; i++) {
		int status;

		if (strcmp(commands[i].name, name) != 0)
			continue;
		status = commands[i].fn(argc, argv);
		if (fflush(stdout) != 0 || ferror(stdout)) {
			if (errno != EPIPE)
				error("cannot write output: %s", strerror(errno));
			return status ? status : EXIT_INTERNAL;
		}
		return status;
	}
	error("unknown command '%s'; see 'agprof --help'", name);
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	int asked = 0, first;
	/* usage NULL: --help is ours (it lists the commands), key 'h' goes to main_option */
	struct opt_cmd cmd = { "", NULL, NULL, 1, { { main_options, main_option, &asked } } };

	first = opt_parse(&cmd, argc, argv);
	if (first < 0)
		return EXIT_USAGE;
	if (first < argc && (!strcmp(argv[first], "help") || !strcmp(argv[first], "version")))
		asked = argv[first][0] == 'h' ? 'h' : MAIN_VERSION;
	if (asked == MAIN_VERSION) {
		printf("agprof %s\n", AGPROF_VERSION);
		return EXIT_OK;
	}
	if (asked == 'h' || first >= argc) {
		print_usage(asked ? stdout : stderr);
		return asked ? EXIT_OK : EXIT_USAGE;
	}
	return dispatch(argv[first], argc - first, argv + first);
}
