/* check.c - `agprof check`: gate CI on thresholds; the work is in analyzer/check.c. */
#include "builtin.h"
#include "check.h"
#include "recording.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const check_usage_head =
	"usage: agprof check RECORDING [THRESHOLDS] [--format text|junit|github]\n"
	"\n"
	"Check a recording against thresholds, for CI.  Each crossed threshold is\n"
	"printed with its function and source location.\n"
	"\n";

static const char *const check_usage_tail =
	"\n"
	"A recording without TensorFlow activity crosses no threshold (a warning says\n"
	"so).  Exit codes: 0 all thresholds hold, 1 one is crossed, 2 usage error or a\n"
	"file that is not a readable recording, 3 internal error.\n";

/* Options that take a value as the next word (so it is not the recording). */
static int takes_value(const char *a)
{
	static const char *const opts[] = { "--max-traces", "--max-eager-share", "--forbid", "--fail-on",
					    "--format", "--rules", "--set", NULL };

	for (int i = 0; opts[i]; i++)
		if (!strcmp(a, opts[i]))
			return 1;
	return 0;
}

int cmd_check(int argc, char **argv)
{
	struct recording rec;
	const char *path = NULL;
	char **opts = calloc((size_t)argc + 1, sizeof(*opts));
	int nopts = 0, ret;

	if (!opts)
		return EXIT_INTERNAL;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(check_usage_head, stdout);
			fputs(check_options_help, stdout);
			fputs(check_usage_tail, stdout);
			free(opts);
			return EXIT_OK;
		}
		if (argv[i][0] == '-' && argv[i][1]) {
			opts[nopts++] = argv[i];
			if (takes_value(argv[i]) && i + 1 < argc)
				opts[nopts++] = argv[++i];
			continue;
		}
		if (path) {
			free(opts);
			error("one recording at a time ('%s' and '%s')", path, argv[i]);
			return EXIT_USAGE;
		}
		path = argv[i];
	}
	if (!path) {
		free(opts);
		error("no recording given; see 'agprof check --help'");
		return EXIT_USAGE;
	}
	if (recording_open(&rec, path)) {
		free(opts);
		return EXIT_USAGE;
	}
	ret = check_run(&rec, nopts, opts);
	recording_close(&rec);
	free(opts);
	return ret;
}
