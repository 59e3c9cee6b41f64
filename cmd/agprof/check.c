/* check.c - `agprof check`: gate CI on thresholds; the work is in analyzer/report/check.c. */
#include "builtin.h"
#include "check.h"
#include "options.h"
#include "recording.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>

static const char *const check_usage =
	"usage: agprof check RECORDING [THRESHOLDS] [--format text|junit|github]\n"
	"       agprof check --baseline BASE [THRESHOLDS] RECORDING\n"
	"\n"
	"Check a recording against thresholds, for CI.  Each crossed threshold is\n"
	"printed with its function and source location.  With --baseline, fail when\n"
	"RECORDING regresses from BASE (a recording of the main branch): see below.\n"
	"\n";

static const char *const check_epilogue =
	"\n"
	"A recording without TensorFlow activity crosses no threshold (a warning says\n"
	"so).  Recordings of other TensorFlow or Python versions or hosts are compared\n"
	"with a warning.  Exit codes: 0 all thresholds hold (nothing regressed), 1 one\n"
	"is crossed, 2 usage error or a file that is not a readable recording,\n"
	"3 internal error.\n";

int cmd_check(int argc, char **argv)
{
	struct check_config *cfg = check_config_new();
	struct opt_cmd cmd = { "check", check_usage, check_epilogue, 0,
			       { { check_options, check_option, cfg }, { help_options, NULL, NULL } } };
	struct recording rec;
	const char *path;
	int ret;

	if (!cfg) {
		error("out of memory");
		return EXIT_INTERNAL;
	}
	if ((ret = parse_recording_command(&cmd, argc, argv, &path)) != 0) {
		check_config_free(cfg);
		return ret < 0 ? EXIT_OK : ret;
	}
	if (recording_open_private(&rec, path)) {
		check_config_free(cfg);
		return EXIT_USAGE;
	}
	ret = check_exit_code(check_run(&rec, cfg));
	recording_close(&rec);
	check_config_free(cfg);
	return ret;
}
