/* fix.c - `agprof fix`: the findings' edits of the user's code as one unified diff. */
#include "builtin.h"
#include "analyze.h"
#include "fix.h"
#include "fix_verify.h"
#include "recording.h"
#include "strbuf.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const fix_usage =
	"usage: agprof fix [--rule R] [--function F] [--rules DIR] RECORDING\n"
	"       agprof fix --verify [--rule R] [--function F] [--runs N] [--rtol X] [--atol X] [--time-limit S]\n"
	"                           [--trust-recorded-command] RECORDING [-- COMMAND...]\n"
	"\n"
	"Print the edits that fix the recording's findings as a unified diff: paths\n"
	"are relative to the recording's working directory (a/ and b/ prefixes), so\n"
	"that, from that directory, `agprof fix REC | patch -p1` (or `git apply`)\n"
	"applies them.  One hunk per finding agprof can fix safely: an input_signature\n"
	"for shape retraces, tf.constant/tf.cast around the argument at the call site\n"
	"for python-value/dtype retraces, the tf.function(...) moved out of the loop\n"
	"for new function objects, num_parallel_calls/prefetch on an input-bound\n"
	"pipeline, @tf.function on an eager hot function called with tensors only,\n"
	"or on the model call alone (model_fn = tf.function(model)) when the loop\n"
	"around it cannot be traced.\n"
	"An edit of a notebook cell (a %%agprof recording) is printed as the whole\n"
	"corrected cell, between # lines, to run in its place.\n"
	"`agprof report` says why the others have no edit.\n"
	"\n";

static const char *const fix_epilogue =
	"\n"
	"--verify makes each edit an experiment: applied alone to a scratch copy of\n"
	"the recording's working directory (never to your files), and all of them\n"
	"together when there are several; the recorded command line (or COMMAND)\n"
	"runs there under agprof as it is and as edited, --runs times each.  Per\n"
	"finding it prints the time the finding named (its function's tracing and\n"
	"calls, the input wait, the run's CPU time: a loaded machine does not\n"
	"inflate it) as it is and as edited over\n"
	"every pair of runs, whether the output stayed the same (its numbers within\n"
	"--rtol/--atol; and the files the program wrote in its copy: .npy arrays,\n"
	"text, bytes), and a verdict: verified (every pair faster by 5% or more,\n"
	"output the same), refuted (slower, no change, another output) or failed\n"
	"(a crash, the time limit, the edit never ran).  The verdicts are kept in\n"
	"RECORDING.verify.json, which `agprof report` reads: a verified edit claims\n"
	"its measured saving, a refuted one's advice is withdrawn.\n"
	"The recorded command line runs only when the recording proves that your\n"
	"agprof recorded it on this machine (a key in ~/.config/agprof); a\n"
	"recording from elsewhere, or edited, needs the command after -- (or\n"
	"--trust-recorded-command).\n"
	"Exit codes: 0 a diff was printed (--verify: every edit verified), 1 nothing\n"
	"to fix (--verify: an edit refuted or failed), 2 usage error, a file that is\n"
	"not a readable recording, a program that cannot run as it is (or past the\n"
	"time limit), 3 internal error.\n";

enum { FIX_RULE = OPT_KEY_BASE, FIX_FUNCTION, FIX_VERIFY, FIX_TRUST, FIX_RUNS, FIX_RTOL, FIX_ATOL, FIX_LIMIT };

static const struct opt fix_options[] = {
	OPT_TEXT("options:"),
	{ "rule", FIX_RULE, "R", "only findings of rule R (e.g. retracing)" },
	{ "function", FIX_FUNCTION, "F", "only findings about the Python function F" },
	{ "verify", FIX_VERIFY, NULL, "run the program as it is and as edited (on a scratch\n"
				      "copy) and compare: traces, time, output" },
	{ "trust-recorded-command", FIX_TRUST, NULL, "--verify: run the recording's command line even when\n"
						      "nothing proves your agprof recorded it" },
	{ "runs", FIX_RUNS, "N", "--verify: runs as it is and with each edit (default 2, at most 20)" },
	{ "rtol", FIX_RTOL, "X", "--verify: numbers of the output equal within a relative X (default 0)" },
	{ "atol", FIX_ATOL, "X", "--verify: ... or an absolute X (default 0)" },
	{ "time-limit", FIX_LIMIT, "S", "--verify: end a run after S seconds: its edit failed (default: none)" },
	OPT_END,
};

struct fix_cmd {
	const char *rule, *function, *path;
	int verify;
	struct verify_opts vo;
	struct rules_args rules;
};

/* A number of an option, within [lo, hi].  0, or -1 after an error line. */
static int number_option(const char *name, const char *value, double lo, double hi, double *out)
{
	char *end;
	double v = strtod(value, &end);

	if (end == value || *end || !(v >= lo && v <= hi))
		return error("--%s '%s': not a number from %g to %g", name, value, lo, hi);
	*out = v;
	return 0;
}

static int fix_option(void *ctx, int key, const char *value)
{
	struct fix_cmd *c = ctx;

	if (key == FIX_RULE)
		c->rule = value;
	else if (key == FIX_FUNCTION)
		c->function = value;
	else if (key == FIX_VERIFY)
		c->verify = 1;
	else if (key == FIX_TRUST)
		c->vo.trust_recorded = 1;
	else if (key == FIX_RUNS) {
		double runs = 0;

		if (number_option("runs", value, 1, VERIFY_MAX_RUNS, &runs) || runs != (int)runs)
			return runs != (int)runs ? error("--runs '%s': not a whole number", value) : -1;
		c->vo.runs = (int)runs;
	} else if (key == FIX_RTOL || key == FIX_ATOL)
		return number_option(key == FIX_RTOL ? "rtol" : "atol", value, 0, 1e300,
				     key == FIX_RTOL ? &c->vo.rtol : &c->vo.atol);
	else if (key == FIX_LIMIT)
		return number_option("time-limit", value, 0.001, 1e6, &c->vo.time_limit);
	return 0;
}

/* Whether an earlier finding's edit already touches one of f's lines (one hunk per region). */
static int overlaps(const struct model *m, size_t upto, const struct finding *f)
{
	for (size_t i = 0; i < upto; i++) {
		const struct finding *g = &m->findings[i];

		if (g->fix.file && !strcmp(g->fix.file, f->fix.file) && g->fix.line < f->fix.line + f->fix.nlines &&
		    f->fix.line < g->fix.line + g->fix.nlines)
			return 1;
	}
	return 0;
}

static int cmp_fix(const void *a, const void *b)
{
	const struct finding *x = *(const struct finding *const *)a, *y = *(const struct finding *const *)b;
	int c = strcmp(x->fix.file, y->fix.file);

	return c ? c : (x->fix.line > y->fix.line) - (x->fix.line < y->fix.line);
}

int cmd_fix(int argc, char **argv)
{
	struct fix_cmd c = { .vo = { .runs = 2, .keep = 1 } };
	struct opt_cmd cmd = { "fix", fix_usage, fix_epilogue, 0,
			       { { fix_options, fix_option, &c }, { rules_options, rules_option, &c.rules },
				 { help_options, NULL, NULL } } };
	struct recording rec;
	struct ruleset rs;
	struct model m;
	struct strbuf out = STRBUF_INIT;
	const struct finding **pick = NULL;
	size_t n = 0;
	int first = opt_parse(&cmd, argc, argv), ret;

	/* --verify: RECORDING [-- COMMAND...] */
	if (first < 0 || !(c.path = c.verify && first < argc ? argv[first] : one_recording(&cmd, argc, argv, first)) ||
	    recording_open(&rec, c.path)) {
		rules_args_release(&c.rules);
		return first == OPT_DONE ? EXIT_OK : EXIT_USAGE;
	}
	c.rules.ao.allow_empty = 1;
	c.rules.ao.no_verdicts = c.verify;  /* an experiment tries every edit again */
	if (analyze(&m, &rs, &rec, &c.rules.ao) != ANALYZE_OK) {
		recording_close(&rec);
		rules_args_release(&c.rules);
		return EXIT_USAGE;
	}
	if (m.nfindings && !(pick = calloc(m.nfindings, sizeof(*pick)))) {
		ret = EXIT_INTERNAL;
		goto cleanup;
	}
	for (size_t i = 0; i < m.nfindings; i++) {
		const struct finding *f = &m.findings[i];

		if (!f->fix.file || (c.rule && strcmp(f->rule, c.rule)) ||
		    (c.function && (!f->function || strcmp(f->function, c.function))) || overlaps(&m, i, f))
			continue;
		pick[n++] = f;
	}
	/* hunks of one file in line order, so that patch applies them without fuzz */
	qsort(pick, n, sizeof(*pick), cmp_fix);
	for (size_t i = 0; i < n && !c.verify; i++)
		fix_diff(&out, &m, pick[i], i == 0 || strcmp(pick[i - 1]->fix.file, pick[i]->fix.file) != 0);
	ret = n ? EXIT_OK : EXIT_VIOLATION;
	if (c.verify && n) {
		static const int codes[] = { [VERIFY_OK] = EXIT_OK, [VERIFY_NOT] = EXIT_VIOLATION,
					     [VERIFY_CANNOT] = EXIT_USAGE, [VERIFY_FAILED] = EXIT_INTERNAL };

		c.vo.command = first + 1 < argc ? argv + first + 1 : NULL;
		ret = codes[fix_verify(&m, pick, n, &c.vo)];
	}
	if (!n)
		fprintf(stderr, "agprof fix: nothing to fix in '%s'\n", c.path);
	if (out.len && fwrite(out.buf, 1, out.len, stdout) != out.len)
		ret = EXIT_INTERNAL;
cleanup:
	free(pick);
	strbuf_release(&out);
	model_release(&m);
	ruleset_release(&rs);
	recording_close(&rec);
	rules_args_release(&c.rules);
	return ret;
}
