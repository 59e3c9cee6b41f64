/* diff.c - `agprof diff BASE NEW`: two recordings of one program compared; the work is in analyzer/report/diff.c. */
#include "builtin.h"
#include "analyze.h"
#include "diff.h"
#include "html.h"
#include "options.h"
#include "recording.h"
#include "strbuf.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const diff_usage =
	"usage: agprof diff [--format text|json|markdown|html] [-o FILE] [options] BASE NEW\n"
	"\n"
	"Compare two recordings of one program (BASE before a change, NEW after):\n"
	"the summary first, then per function (matched by name and defining file,\n"
	"whatever lines moved) traces, calls, tracing and per-call time, per user\n"
	"line eager dispatch, black boxes and input reads, all by time change, then\n"
	"the findings that are new, resolved or changed.\n"
	"\n";

static const char *const diff_epilogue =
	"\n"
	"Recordings of different TensorFlow or Python versions or hosts are compared\n"
	"with a warning.  Exit codes: 0 success, 2 usage error or a file that is not a\n"
	"readable recording, 3 internal error.  To fail CI on a regression, use\n"
	"'agprof check --baseline BASE NEW'.\n";

enum { DO_FORMAT = OPT_KEY_BASE, DO_TOP, DO_COLOR, DO_NO_COLOR };

static const struct opt diff_options[] = {
	{ "format", DO_FORMAT, "FMT", "text (default), json (docs/report-json.md), markdown (GitHub tables), html (one page, docs/html.md)" },
	{ "output", 'o', "FILE", "write to FILE, not standard output" },
	{ "top", DO_TOP, "N", "rows per table in text and markdown (default 20, 0 for all)" },
	{ "color", DO_COLOR, NULL, "force colours on (default: on a terminal, unless NO_COLOR)" },
	{ "no-color", DO_NO_COLOR, NULL, "force colours off" },
	OPT_END,
};
/* then rules_options (--rules, --set: both recordings are analyzed with them) and help_options */

struct diff_cmd {
	enum diff_format format;
	int top, color;
	const char *output;  /* -o FILE, or NULL: standard output */
	struct rules_args rules;
};

static int diff_option(void *ctx, int key, const char *v)
{
	static const char *const formats[] = { [DIFF_TEXT] = "text", [DIFF_JSON] = "json",
					       [DIFF_MARKDOWN] = "markdown", [DIFF_HTML] = "html", NULL };
	struct diff_cmd *c = ctx;
	char *end;
	long n;
	int i;

	switch (key) {
	case DO_FORMAT:
		if ((i = opt_choice("format", v, formats)) < 0)
			return -1;
		c->format = (enum diff_format)i;
		return 0;
	case 'o':
		c->output = v;
		return 0;
	case DO_TOP:
		n = strtol(v, &end, 10);
		if (*end || !*v || n < 0 || n > 1000000)
			return error("--top wants a number, not '%s'", v);
		c->top = (int)n;
		return 0;
	}
	c->color = key == DO_COLOR;
	return 0;
}

/* The two analyzed recordings, printed; an exit code. */
static int run_diff(struct diff_cmd *c, struct model *m, const char *const *paths)
{
	struct diff d;
	struct strbuf out = STRBUF_INIT;
	int ret = EXIT_OK,
	    color = c->format == DIFF_TEXT && (c->color >= 0 ? c->color : !c->output && want_color(1));
	FILE *f = c->output ? fopen(c->output, "w") : stdout;

	if (!f)
		return error("cannot create '%s': %s", c->output, strerror(errno)), EXIT_USAGE;
	if (diff_build(&d, &m[0], &m[1], paths[0], paths[1])) {
		if (c->output)
			fclose(f);
		return EXIT_INTERNAL;
	}
	if (c->format == DIFF_HTML)
		diff_html(&out, &d); /* escapes what it shows, control characters included */
	else
		diff_print(&out, &d, c->format, c->top, color);
	/* names from the recordings must not drive the terminal */
	if (c->format != DIFF_JSON && c->format != DIFF_HTML)
		strbuf_sanitize_text(&out, 0, color);
	if (strbuf_failed(&out)) {
		error("out of memory");
		ret = EXIT_INTERNAL;
	} else if ((out.len && fwrite(out.buf, 1, out.len, f) != out.len) || fflush(f)) {
		ret = EXIT_INTERNAL;
	}
	if (c->output && fclose(f) != 0)
		ret = EXIT_INTERNAL;
	if (ret == EXIT_INTERNAL && c->output && !strbuf_failed(&out))
		error("cannot write '%s': %s", c->output, strerror(errno));
	strbuf_release(&out);
	diff_release(&d);
	return ret;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_cmd c = { .top = 20, .color = -1 };
	struct opt_cmd cmd = { "diff", diff_usage, diff_epilogue, 0,
			       { { diff_options, diff_option, &c }, { rules_options, rules_option, &c.rules },
				 { help_options, NULL, NULL } } };
	struct recording rec[2];
	struct model m[2];
	struct ruleset rs[2];
	int first = opt_parse(&cmd, argc, argv), opened = 0, analyzed = 0, ret = EXIT_USAGE;

	if (first == OPT_DONE || first < 0) {
		rules_args_release(&c.rules);
		return first == OPT_DONE ? EXIT_OK : EXIT_USAGE;
	}
	if (argc - first != 2) {
		error("agprof diff wants two recordings, BASE and NEW; see 'agprof diff --help'");
		goto out;
	}
	c.rules.ao.allow_empty = 1;
	for (; opened < 2; opened++)
		if (recording_open_private(&rec[opened], argv[first + opened]))
			goto out;
	for (; analyzed < 2; analyzed++)
		if (analyze(&m[analyzed], &rs[analyzed], &rec[analyzed], &c.rules.ao) != ANALYZE_OK)
			goto out;
	ret = run_diff(&c, m, (const char *const *)argv + first);
out:
	while (analyzed-- > 0) {
		model_release(&m[analyzed]);
		ruleset_release(&rs[analyzed]);
	}
	while (opened-- > 0)
		recording_close(&rec[opened]);
	rules_args_release(&c.rules);
	return ret;
}
