/* report.c - `agprof report`: analyze a recording and print what to change. */
#include "builtin.h"
#include "analyze.h"
#include "gpu.h"
#include "recording.h"
#include "report.h"
#include "strbuf.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const report_usage =
	"usage: agprof report [SECTION...] [--format text|json|csv|sarif] [options] RECORDING\n"
	"\n"
	"Analyze a recording: the run, the findings ranked by what fixing them saves\n"
	"(each with its fix and source line), then per-section tables.\n"
	"\n"
	"sections (default: all, with the summary first):\n"
	"   --summary     the run and the findings\n"
	"   --retracing   every retrace of every function, and its cause\n"
	"   --eager       eager dispatch per source line\n"
	"   --ops         eager dispatch per op type\n"
	"   --blackbox    py_function / numpy_function nodes and their runs\n"
	"   --functions   traced functions: traces, calls, time tracing and executing\n"
	"   --gpu         GPU kernels, copies, utilisation, idle gaps, synchronous calls\n"
	"   --sessions    TF1 Session.run steps per source line: runs, time, feeds, fetches\n"
	"options:\n"
	"   --format FMT  text (default), json (docs/report-json.md), csv, sarif (SARIF 2.1.0)\n"
	"   --rules DIR   also load the rule files of DIR (docs/rules.md)\n"
	"   --set RULE.NAME=VALUE  change a rule's threshold, e.g. retracing.max_traces=5\n"
	"   --top N       rows per table in text output (default 10, 0 for all)\n"
	"   --color, --no-color    force colours on or off (default: on a terminal, unless NO_COLOR)\n"
	"\n"
	"A recording without TensorFlow activity is reported too (what was and was not\n"
	"seen).  Exit codes: 0 success, 2 usage error or a file that is not a readable\n"
	"recording, 3 internal error.\n";

enum report_format { RF_TEXT, RF_JSON, RF_CSV, RF_SARIF };

struct report_cmd {
	struct report_opts opts;
	enum report_format format;
	struct analyze_opts ao;
	const char **sets;
	size_t nsets;
	const char *path;
	int color;  /* -1: decide from the terminal */
};

static const struct {
	const char *flag;
	unsigned bit;
} sections[] = {
	{ "--summary", SEC_SUMMARY },     { "--retracing", SEC_RETRACING }, { "--eager", SEC_EAGER },
	{ "--ops", SEC_OPS },             { "--blackbox", SEC_BLACKBOX },   { "--functions", SEC_FUNCTIONS },
	{ "--gpu", SEC_GPU },             { "--sessions", SEC_SESSIONS },
};

/* Value of option opt at argv[*i] ("--opt=V" or "--opt V"), or NULL if argv[*i] is not opt. */
static const char *opt_value(int argc, char **argv, int *i, const char *opt, int *missing)
{
	size_t n = strlen(opt);

	if (strncmp(argv[*i], opt, n))
		return NULL;
	if (argv[*i][n] == '=')
		return argv[*i] + n + 1;
	if (argv[*i][n])
		return NULL;
	if (*i + 1 >= argc) {
		*missing = 1;
		return NULL;
	}
	return argv[++*i];
}

static int parse(struct report_cmd *c, int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		int missing = 0, matched = 0;

		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(report_usage, stdout);
			exit(EXIT_OK);
		}
		for (size_t s = 0; s < sizeof(sections) / sizeof(sections[0]); s++)
			if (!strcmp(a, sections[s].flag)) {
				c->opts.sections |= sections[s].bit;
				matched = 1;
			}
		if (matched)
			continue;
		if ((v = opt_value(argc, argv, &i, "--format", &missing))) {
			if (!strcmp(v, "text"))
				c->format = RF_TEXT;
			else if (!strcmp(v, "json"))
				c->format = RF_JSON;
			else if (!strcmp(v, "csv"))
				c->format = RF_CSV;
			else if (!strcmp(v, "sarif"))
				c->format = RF_SARIF;
			else
				return error("unknown format '%s' (text, json, csv, sarif)", v);
		} else if ((v = opt_value(argc, argv, &i, "--rules", &missing))) {
			c->ao.rules_dir = v;
		} else if ((v = opt_value(argc, argv, &i, "--set", &missing))) {
			const char **p = realloc(c->sets, (c->nsets + 1) * sizeof(*p));

			if (!p)
				return error("out of memory");
			c->sets = p;
			c->sets[c->nsets++] = v;
		} else if ((v = opt_value(argc, argv, &i, "--top", &missing))) {
			char *end;
			long n = strtol(v, &end, 10);

			if (*end || !*v || n < 0 || n > 1000000)
				return error("--top wants a number, not '%s'", v);
			c->opts.top = (int)n;
		} else if (missing) {
			return error("option '%s' needs a value", a);
		} else if (!strcmp(a, "--color")) {
			c->color = 1;
		} else if (!strcmp(a, "--no-color")) {
			c->color = 0;
		} else if (a[0] == '-' && a[1]) {
			return error("unknown option '%s'; see 'agprof report --help'", a);
		} else if (c->path) {
			return error("one recording at a time ('%s' and '%s')", c->path, a);
		} else {
			c->path = a;
		}
	}
	if (!c->path)
		return error("no recording given; see 'agprof report --help'");
	return 0;
}

int cmd_report(int argc, char **argv)
{
	struct report_cmd c = { .opts = { .top = 10 }, .color = -1 };
	struct recording rec;
	struct model m;
	struct ruleset rs;
	struct strbuf out = STRBUF_INIT;
	struct gpu_model gpu;
	int ret, have_gpu = 0;

	if (parse(&c, argc, argv)) {
		free(c.sets);
		return EXIT_USAGE;
	}
	c.ao.sets = c.sets;
	c.ao.nsets = c.nsets;
	c.ao.allow_empty = 1;
	if (recording_open(&rec, c.path)) {
		free(c.sets);
		return EXIT_USAGE;
	}
	if ((ret = analyze(&m, &rs, &rec, &c.ao))) {
		recording_close(&rec);
		free(c.sets);
		return ret;
	}
	if (c.format == RF_JSON || (c.format == RF_TEXT && (!c.opts.sections || (c.opts.sections & SEC_GPU)))) {
		if (gpu_model_load(&gpu, &rec, NULL)) {
			model_release(&m);
			ruleset_release(&rs);
			recording_close(&rec);
			free(c.sets);
			return EXIT_USAGE;
		}
		have_gpu = 1;
		c.opts.gpu = &gpu;
	}
	c.opts.recording = c.path;
	c.opts.color = c.color >= 0 ? c.color : want_color(1);
	switch (c.format) {
	case RF_TEXT:
		report_text(&out, &m, &c.opts);
		break;
	case RF_JSON:
		report_json(&out, &m, &c.opts);
		break;
	case RF_CSV:
		report_csv(&out, &m, &c.opts);
		break;
	case RF_SARIF:
		report_sarif(&out, &m, &rs);
		break;
	}
	ret = EXIT_OK;
	/* names from the recording must not drive the terminal */
	if (c.format == RF_TEXT || c.format == RF_CSV)
		strbuf_sanitize_text(&out, 0, c.opts.color);
	if (out.len && fwrite(out.buf, 1, out.len, stdout) != out.len)
		ret = EXIT_INTERNAL;
	strbuf_release(&out);
	if (have_gpu)
		gpu_model_release(&gpu);
	model_release(&m);
	ruleset_release(&rs);
	recording_close(&rec);
	free(c.sets);
	return ret;
}
