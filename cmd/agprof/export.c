/* export.c - `agprof export`: convert a recording for other viewers. */
#include "builtin.h"
#include "chrome.h"
#include "csv_export.h"
#include "fleet_export.h"
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
	"   or: agprof export --format csv --fleet DIR RECORDING...\n"
	"\n"
	"Write the recording as Chrome trace-event JSON (open it in Perfetto,\n"
	"ui.perfetto.dev, or chrome://tracing): tracing, graph function calls,\n"
	"eager ops with their source line, py_function runs, CPU kernels (op, type,\n"
	"the line that created it), GPU activity; eager ops past the budget\n"
	"(--max-events) as per-second counters per thread and op type.\n"
	"Writes to standard output unless -o FILE.\n"
	"--format csv: every table as DIR/TABLE.csv (created if missing), for\n"
	"DuckDB, Spark or Trino; docs/fleet.md runs agprof's job queries there.\n"
	"--fleet DIR: each recording on its own, no merge, into Hive partitions\n"
	"DIR/TABLE/recording=ID/part-0.csv (ID: the recording's meta recording_id,\n"
	"or a UUID of its content), with DIR/TABLE/_schema.ddl and views for DuckDB\n"
	"and Spark in DIR/_load; a recording DIR holds already is left as it is.\n"
	"Run it as each recording arrives; Spark, DuckDB or Trino read DIR as one\n"
	"table set (docs/fleet.md, its queries in analyzer/export/fleet_sql).\n"
	"\n"
	"options:\n";

static const char *const export_epilogue =
	"\n"
	"Exit codes: 0 success (--fleet: damaged recordings exported as far as they\n"
	"read, with a warning), 2 usage error, unreadable recording, or (--fleet) a\n"
	"recording id given twice or already in DIR from another recording, nothing\n"
	"written, 3 write error.\n";

enum { EO_FORMAT = OPT_KEY_BASE, EO_FLEET };

static const struct opt export_options[] = {
	{ "format", EO_FORMAT, "FMT", "chrome or csv" },
	{ "output", 'o', "FILE", "write to FILE, not standard output (csv: the folder)" },
	{ "fleet", EO_FLEET, "DIR", "csv: each recording into DIR's partitions (docs/fleet.md)" },
	OPT_HELP,
	OPT_END,
};

struct export_cmd {
	const char *format, *output, *fleet;
};

static int export_option(void *ctx, int key, const char *value)
{
	struct export_cmd *c = ctx;

	if (key == EO_FORMAT)
		c->format = value;
	else if (key == EO_FLEET)
		c->fleet = value;
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

/* --fleet DIR RECORDING...: each recording into DIR's partitions; an exit code. */
static int export_fleet(const struct export_cmd *c, int n, const char *const *paths)
{
	struct fleet_stats st;
	int ret;

	if (strcmp(c->format, "csv") || c->output) {
		error("--fleet writes CSV partitions into its own folder: give --format csv and no -o");
		return EXIT_USAGE;
	}
	if (n < 1) {
		error("--fleet needs at least one recording; see 'agprof export --help'");
		return EXIT_USAGE;
	}
	ret = fleet_export(c->fleet, paths, n, &st);
	if (ret == 0)
		printf("%d exported, %d already in '%s'%s\n", st.exported, st.unchanged, c->fleet,
		       st.flagged ? " (some damaged: see recordings.status)" : "");
	return ret == FLEET_WRITE_FAILED ? EXIT_INTERNAL : ret ? EXIT_USAGE : EXIT_OK;
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
	if (c.fleet)
		return export_fleet(&c, argc - first, (const char *const *)argv + first);
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
