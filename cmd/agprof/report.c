/* report.c - `agprof report`: analyze a recording and print what to change. */
#include "builtin.h"
#include "analyze.h"
#include "gpu.h"
#include "graph_ops.h"
#include "html.h"
#include "options.h"
#include "recording.h"
#include "report.h"
#include "slices.h"
#include "strbuf.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const report_usage =
	"usage: agprof report [SECTION...] [--format text|json|csv|sarif|html] [-o FILE] [options] RECORDING\n"
	"\n"
	"Analyze a recording: the run, the findings ranked by what fixing them saves\n"
	"(each with its fix and source line), then per-section tables.\n"
	"\n";

static const char *const report_epilogue =
	"\n"
	"A recording without TensorFlow activity is reported too (what was and was not\n"
	"seen).  Exit codes: 0 success, 2 usage error or a file that is not a readable\n"
	"recording, 3 internal error.\n";

enum report_format { RF_TEXT, RF_JSON, RF_CSV, RF_SARIF, RF_HTML };

enum {
	RO_FORMAT = OPT_KEY_BASE,
	RO_TOP,
	RO_COLOR,
	RO_NO_COLOR,
	RO_VERBOSE,
	RO_SLICES,
	RO_SECTION,  /* RO_SECTION + bit number of SEC_* */
};

#define SECTION(name, bit, help) { name, RO_SECTION + __builtin_ctz(bit), NULL, help }

static const struct opt report_options[] = {
	OPT_TEXT("sections (default: all, with the summary first):"),
	SECTION("summary", SEC_SUMMARY, "the run and the findings"),
	SECTION("retracing", SEC_RETRACING, "every retrace of every function, and its cause"),
	SECTION("eager", SEC_EAGER, "eager dispatch per source line"),
	SECTION("ops", SEC_OPS, "eager dispatch per op type; kernels inside graph calls:\n"
				"time and executor overhead per function, ops by time\n"
				"with the line that created them"),
	SECTION("blackbox", SEC_BLACKBOX, "py_function / numpy_function nodes and their runs"),
	SECTION("functions", SEC_FUNCTIONS, "traced functions: traces, calls, time tracing and executing"),
	SECTION("gpu", SEC_GPU, "GPU kernels, copies, utilisation, idle gaps, synchronous calls"),
	SECTION("sessions", SEC_SESSIONS, "TF1 Session.run steps per source line: runs, time, feeds, fetches"),
	SECTION("ranks", SEC_RANKS, "per-rank summary of a merged recording (agprof merge)"),
	OPT_TEXT("options:"),
	{ "format", RO_FORMAT, "FMT", "text (default), json (docs/report-json.md), csv, sarif (SARIF 2.1.0),\n"
				      "html (one self-contained page, docs/html.md)" },
	{ "output", 'o', "FILE", "write to FILE, not standard output" },
	{ "top", RO_TOP, "N", "rows per table in text output (default 10, 0 for all)" },
	{ "color", RO_COLOR, NULL, "force colours on (default: on a terminal, unless NO_COLOR)" },
	{ "no-color", RO_NO_COLOR, NULL, "force colours off" },
	{ "verbose", RO_VERBOSE, NULL, "text: how each finding's saving was derived (as JSON's saving_method)" },
	{ "slices", RO_SLICES, "T0,...,Tn", "json: the run's figures per slice [Ti, Ti+1) of the recording's clock\n"
					      "(CLOCK_MONOTONIC ns: Python's time.monotonic_ns())" },
	OPT_END,
};
/* then rules_options (--rules, --set) and help_options */

struct report_cmd {
	struct report_opts opts;
	enum report_format format;
	struct rules_args rules;
	const char *path;
	const char *output;  /* -o FILE, or NULL: standard output */
	int64_t *edges;      /* --slices, or NULL */
	size_t nedges;
	int color;  /* -1: decide from the terminal */
};

static int report_option(void *ctx, int key, const char *v)
{
	struct report_cmd *c = ctx;
	char *end;
	long n;

	static const char *const formats[] = { [RF_TEXT] = "text", [RF_JSON] = "json", [RF_CSV] = "csv",
					       [RF_SARIF] = "sarif", [RF_HTML] = "html", NULL };
	int i;

	switch (key) {
	case RO_FORMAT:
		if ((i = opt_choice("format", v, formats)) < 0)
			return -1;
		c->format = (enum report_format)i;
		return 0;
	case RO_TOP:
		n = strtol(v, &end, 10);
		if (*end || !*v || n < 0 || n > 1000000)
			return error("--top wants a number, not '%s'", v);
		c->opts.top = (int)n;
		return 0;
	case 'o':
		c->output = v;
		return 0;
	case RO_COLOR:
	case RO_NO_COLOR:
		c->color = key == RO_COLOR;
		return 0;
	case RO_VERBOSE:
		c->opts.verbose = 1;
		return 0;
	case RO_SLICES:
		free(c->edges);
		return slices_parse(v, &c->edges, &c->nedges);
	}
	c->opts.sections |= 1u << (key - RO_SECTION);
	return 0;
}

/* The text of the chosen format, in out. */
static void render(struct report_cmd *c, struct strbuf *out, const struct model *m, const struct ruleset *rs)
{
	switch (c->format) {
	case RF_TEXT:
		report_text(out, m, &c->opts);
		break;
	case RF_JSON:
		report_json(out, m, &c->opts);
		break;
	case RF_CSV:
		report_csv(out, m, &c->opts);
		break;
	case RF_SARIF:
		report_sarif(out, m, rs);
		break;
	case RF_HTML:
		report_html(out, m, &c->opts); /* a timeline it cannot read: the page says so */
		break;
	}
	/* names from the recording must not drive the terminal */
	if (c->format == RF_TEXT || c->format == RF_CSV)
		strbuf_sanitize_text(out, 0, c->opts.color);
}

/* Print the report of an analyzed recording to path (NULL: standard output); an exit code. */
static int print_report(struct report_cmd *c, const struct model *m, const struct ruleset *rs)
{
	struct strbuf out = STRBUF_INIT;
	FILE *f = c->output ? fopen(c->output, "w") : stdout;
	int ret = EXIT_OK;

	if (!f) {
		error("cannot create '%s': %s", c->output, strerror(errno));
		return EXIT_USAGE;
	}
	if (c->format == RF_JSON || c->format == RF_HTML || (c->format == RF_TEXT && (!c->opts.sections || (c->opts.sections & SEC_GPU))))
		c->opts.gpu = gpu_metrics_model(m); /* the analysis's one GPU model */
	c->opts.graph_ops = graph_ops_model(m);
	c->opts.recording = c->path;
	c->opts.color = c->color >= 0 ? c->color : want_color(1);
	/* JSON streams: a million traces make 600 MB of it */
	c->opts.sink = c->format == RF_JSON ? f : NULL;
	render(c, &out, m, rs);
	if (strbuf_failed(&out)) {
		error("out of memory");
		ret = EXIT_INTERNAL;
	} else if ((out.len && fwrite(out.buf, 1, out.len, f) != out.len) || ferror(f) || fflush(f)) {
		ret = EXIT_INTERNAL;
	}
	if (c->output && fclose(f) != 0)
		ret = EXIT_INTERNAL;
	if (ret == EXIT_INTERNAL && c->output && !strbuf_failed(&out))
		error("cannot write '%s': %s", c->output, strerror(errno));
	strbuf_release(&out);
	return ret;
}

/* print_report() with the slices of --slices computed first (when given); an exit code. */
static int report_slices(struct report_cmd *c, const struct model *m, const struct ruleset *rs)
{
	struct slices sl = { 0 };
	int ret;

	if (c->edges && slices_compute(&sl, m, c->edges, c->nedges))
		return EXIT_INTERNAL;
	c->opts.slices = c->edges ? &sl : NULL;
	ret = print_report(c, m, rs);
	c->opts.slices = NULL;
	slices_release(&sl);
	return ret;
}

int cmd_report(int argc, char **argv)
{
	struct report_cmd c = { .opts = { .top = 10 }, .color = -1 };
	struct opt_cmd cmd = { "report", report_usage, report_epilogue, 0,
			       { { report_options, report_option, &c }, { rules_options, rules_option, &c.rules },
				 { help_options, NULL, NULL } } };
	struct recording rec;
	struct model m;
	struct ruleset rs;
	int ret;

	if ((ret = parse_recording_command(&cmd, argc, argv, &c.path)) != 0 || recording_open_private(&rec, c.path)) {
		rules_args_release(&c.rules);
		free(c.edges);
		return ret < 0 ? EXIT_OK : EXIT_USAGE;
	}
	c.rules.ao.allow_empty = 1;
	ret = EXIT_USAGE;
	if (c.edges && c.format != RF_JSON)
		error("--slices needs --format json");
	else if (analyze(&m, &rs, &rec, &c.rules.ao) == ANALYZE_OK) {
		ret = report_slices(&c, &m, &rs);
		model_release(&m);
		ruleset_release(&rs);
	}
	recording_close(&rec);
	rules_args_release(&c.rules);
	free(c.edges);
	return ret;
}
