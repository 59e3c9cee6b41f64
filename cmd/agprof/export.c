/* export.c - `agprof export`: convert a recording for other viewers. */
#include "builtin.h"
#include "chrome.h"
#include "csv_export.h"
#include "options.h"
#include "recording.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

static const char *const export_usage =
	"usage: agprof export --format chrome [-o FILE] RECORDING\n"
	"   or: agprof export --format csv -o DIR RECORDING\n"
	"\n"
	"Write the recording as Chrome trace-event JSON (open it in Perfetto,\n"
	"ui.perfetto.dev, or chrome://tracing): tracing, graph function calls,\n"
	"eager ops with their source line, py_function runs, CPU kernels (op, type,\n"
	"the line that created it), GPU activity; eager ops past the budget\n"
	"(--max-events) as per-second counters per thread and op type.\n"
	"Writes to standard output unless -o FILE.\n"
	"--format csv: every table as DIR/TABLE.csv (created if missing), for\n"
	"DuckDB, Spark or Trino; docs/fleet.md runs agprof's job queries there.\n"
	"\n"
	"options:\n";

static const char *const export_epilogue =
	"\n"
	"Exit codes: 0 success, 2 usage error or unreadable recording, 3 write error.\n";

enum { EO_FORMAT = OPT_KEY_BASE };

static const struct opt export_options[] = {
	{ "format", EO_FORMAT, "FMT", "chrome or csv" },
	{ "output", 'o', "FILE", "write to FILE, not standard output (csv: the folder)" },
	OPT_HELP,
	OPT_END,
};

struct export_cmd {
	const char *format, *output;
};

static int export_option(void *ctx, int key, const char *value)
{
	struct export_cmd *c = ctx;

	if (key == EO_FORMAT)
		c->format = value;
	else
		c->output = value;
	return 0;
}

/* Write rec as Chrome JSON to c->output or stdout; an exit code. */
static int export_to(const struct export_cmd *c, struct recording *rec)
{
	FILE *out = stdout;
	int ret;

	if (c->output && !(out = fopen(c->output, "w"))) {
		error("cannot create '%s': %s", c->output, strerror(errno));
		return EXIT_USAGE;
	}
	/* a malformed recording is bad input (2); only failing to write is 3 */
	ret = chrome_export(rec, out);
	ret = ret == CHROME_WRITE_FAILED ? EXIT_INTERNAL : ret ? EXIT_USAGE : EXIT_OK;
	if (c->output && fclose(out) != 0 && ret == EXIT_OK) {
		error("cannot write '%s': %s", c->output, strerror(errno));
		ret = EXIT_INTERNAL;
	}
	return ret;
}

/* Every table as c->output/TABLE.csv; an exit code. */
static int export_csv(const struct export_cmd *c, struct recording *rec)
{
	int ret;

	if (mkdir(c->output, 0777) != 0 && errno != EEXIST) {
		error("cannot create '%s': %s", c->output, strerror(errno));
		return EXIT_USAGE;
	}
	ret = csv_export(rec, c->output);
	return ret == CSV_WRITE_FAILED ? EXIT_INTERNAL : ret ? EXIT_USAGE : EXIT_OK;
}

int cmd_export(int argc, char **argv)
{
	struct export_cmd c = { 0 };
	struct opt_cmd cmd = { "export", export_usage, export_epilogue, 0, { { export_options, export_option, &c } } };
	const char *path;
	struct recording rec;
	int first, ret;

	first = opt_parse(&cmd, argc, argv);
	if (first < 0)
		return first == OPT_DONE ? EXIT_OK : EXIT_USAGE;
	if (!c.format || (strcmp(c.format, "chrome") && strcmp(c.format, "csv"))) {
		error(c.format ? "unknown format '%s' (chrome, csv)" : "no format given%s; see 'agprof export --help'",
		      c.format ? c.format : "");
		return EXIT_USAGE;
	}
	if (!strcmp(c.format, "csv") && !c.output) {
		error("--format csv writes a folder of files: give it with -o DIR");
		return EXIT_USAGE;
	}
	if (!(path = one_recording(&cmd, argc, argv, first)) || recording_open(&rec, path))
		return EXIT_USAGE;
	if (recording_empty_reason(&rec)) {
		error("'%s' holds nothing to export: %s", path, recording_empty_reason(&rec));
		recording_close(&rec);
		return EXIT_USAGE;
	}
	ret = !strcmp(c.format, "csv") ? export_csv(&c, &rec) : export_to(&c, &rec);
	recording_close(&rec);
	return ret;
}
