/* export.c - `agprof export`: convert a recording for other viewers. */
#include "builtin.h"
#include "chrome.h"
#include "recording.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const export_usage =
	"usage: agprof export --format chrome [-o FILE] RECORDING\n"
	"\n"
	"Write the recording as Chrome trace-event JSON (open it in Perfetto,\n"
	"ui.perfetto.dev, or chrome://tracing): tracing, graph function calls,\n"
	"eager ops with their source line, py_function runs, GPU activity.\n"
	"Writes to standard output unless -o FILE.\n"
	"\n"
	"Exit codes: 0 success, 2 usage error or unreadable recording, 3 write error.\n";

int cmd_export(int argc, char **argv)
{
	const char *format = NULL, *path = NULL, *output = NULL;
	struct recording rec;
	FILE *out = stdout;
	int ret;

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(export_usage, stdout);
			return EXIT_OK;
		} else if (!strncmp(a, "--format=", 9)) {
			format = a + 9;
		} else if (!strcmp(a, "--format") || !strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (i + 1 >= argc) {
				error("option '%s' needs a value", a);
				return EXIT_USAGE;
			}
			if (a[1] == 'o' || a[2] == 'o')
				output = argv[++i];
			else
				format = argv[++i];
		} else if (a[0] == '-' && a[1]) {
			error("unknown option '%s'; see 'agprof export --help'", a);
			return EXIT_USAGE;
		} else if (path) {
			error("one recording at a time ('%s' and '%s')", path, a);
			return EXIT_USAGE;
		} else {
			path = a;
		}
	}
	if (!format || strcmp(format, "chrome")) {
		error(format ? "unknown format '%s' (chrome)" : "no format given%s; see 'agprof export --help'",
		      format ? format : "");
		return EXIT_USAGE;
	}
	if (!path) {
		error("no recording given; see 'agprof export --help'");
		return EXIT_USAGE;
	}
	if (recording_open(&rec, path))
		return EXIT_USAGE;
	if (recording_empty_reason(&rec)) {
		error("'%s' holds nothing to export: %s", path, recording_empty_reason(&rec));
		recording_close(&rec);
		return EXIT_USAGE;
	}
	if (output && !(out = fopen(output, "w"))) {
		error("cannot create '%s': %s", output, strerror(errno));
		recording_close(&rec);
		return EXIT_USAGE;
	}
	/* a malformed recording is bad input (2); only failing to write is 3 */
	ret = chrome_export(&rec, out);
	ret = ret == CHROME_WRITE_FAILED ? EXIT_INTERNAL : ret ? EXIT_USAGE : EXIT_OK;
	if (output && fclose(out) != 0 && ret == EXIT_OK) {
		error("cannot write '%s': %s", output, strerror(errno));
		ret = EXIT_INTERNAL;
	}
	recording_close(&rec);
	return ret;
}
