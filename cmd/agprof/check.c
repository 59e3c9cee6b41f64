/* check.c - `agprof check`: gate CI on thresholds; the work is in analyzer/check.c. */
#include "builtin.h"
#include "check.h"
#include "options.h"
#include "recording.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>

static const char *const check_usage =
	"usage: agprof check RECORDING [THRESHOLDS] [--format text|junit|github]\n"
	"\n"
	"Check a recording against thresholds, for CI.  Each crossed threshold is\n"
	"printed with its function and source location.\n"
	"\n";

static const char *const check_epilogue =
	"\n"
	"A recording without TensorFlow activity crosses no threshold (a warning says\n"
	"so).  Exit codes: 0 all thresholds hold, 1 one is crossed, 2 usage error or a\n"
	"file that is not a readable recording, 3 internal error.\n";

static const struct opt check_own_options[] = {
	OPT_TEXT("other options:"),
	OPT_HELP,
	OPT_END,
};

int check_exit_code(int result)
{
	switch ((enum check_result)result) {
	case CHECK_HELD:
		return EXIT_OK;
	case CHECK_CROSSED:
		return EXIT_VIOLATION;
	case CHECK_BAD_INPUT:
		return EXIT_USAGE;
	case CHECK_FAILED:
		break;
	}
	return EXIT_INTERNAL;
}

const char *one_recording(const struct opt_cmd *cmd, int argc, char **argv, int first)
{
	if (first >= argc) {
		error("no recording given; see 'agprof %s --help'", cmd->name);
		return NULL;
	}
	if (first + 1 < argc) {
		error("one recording at a time ('%s' and '%s')", argv[first], argv[first + 1]);
		return NULL;
	}
	return argv[first];
}

int cmd_check(int argc, char **argv)
{
	struct check_config *cfg = check_config_new();
	struct opt_cmd cmd = { "check", check_usage, check_epilogue, 0,
			       { { check_options, check_option, cfg }, { check_own_options, NULL, NULL } } };
	struct recording rec;
	const char *path;
	int first, ret;

	if (!cfg) {
		error("out of memory");
		return EXIT_INTERNAL;
	}
	first = opt_parse(&cmd, argc, argv);
	if (first < 0 || !(path = one_recording(&cmd, argc, argv, first))) {
		check_config_free(cfg);
		return first == OPT_DONE ? EXIT_OK : EXIT_USAGE;
	}
	if (recording_open(&rec, path)) {
		check_config_free(cfg);
		return EXIT_USAGE;
	}
	ret = check_exit_code(check_run(&rec, cfg));
	recording_close(&rec);
	check_config_free(cfg);
	return ret;
}
