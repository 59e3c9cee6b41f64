/*
 * diff.h - `agprof diff` and `agprof check --baseline`: two analyzed
 * recordings of one program (before and after a change) compared.
 *
 * Owns: matching the two models' functions (by name and defining file, the
 * n-th def of that name in the file: robust to lines moved by an edit; in
 * merged recordings, rank by rank),
 * eager source lines, black boxes and findings; the per-call and per-step
 * comparisons (Mann-Whitney U and the Hodges-Lehmann ratio, common/stats.h);
 * the summary; the regressions check --baseline gates on; the text,
 * markdown and JSON printers (diff_print.c, docs/report-json.md).  Reads the
 * models (and each matched function's calls, call_times.h); no SQL here.
 */
#ifndef AGPROF_DIFF_H
#define AGPROF_DIFF_H

#include "analyze.h"
#include "model.h"
#include "recording.h"
#include "stats.h"
#include "strbuf.h"
#include "strpool.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* One function (or line, black box) in one of the two recordings. */
struct diff_side {
	int present;
	size_t traces;
	int64_t calls, trace_ns, call_ns;   /* call_ns: the graph calls' total time */
	size_t cause_counts[CAUSE__COUNT];
	int64_t median_ns, p25_ns, p75_ns; /* per call (kept rows), 0 when none */
	int64_t blackbox_execs, blackbox_ns;
	struct source_loc def;
};

struct diff_function {
	const char *name;
	const char *file;           /* relative to the recording's cwd when under it, or NULL */
	int ordinal;                /* the n-th def of name in file (0-based), by line */
	int rank;                   /* merged recordings (agprof merge): the rank, compared rank by rank; -1 */
	const char *made_by;        /* NULL: the user's own function */
	struct diff_side base, new_;
	int compared;               /* calls has a test: both sides have 2 calls or more */
	struct stats_compare calls; /* per-call time, new over base */
	int64_t delta_ns;           /* (trace_ns + call_ns) new - base: the ranking */
};

/* Eager dispatch of one user line (or a black box's runs, or an input read). */
struct diff_line {
	const char *kind;           /* "eager", "blackbox", "input" */
	const char *file, *func;    /* file relative as above; func: the Python function holding the line */
	int line_base, line_new;    /* 0 when absent on that side */
	const char *what;           /* the op type dispatched most, the black box's op type, the read op */
	int64_t count[2], ns[2];    /* base, new */
	int64_t delta_ns;
};

struct diff_finding {
	const struct finding *base, *new_; /* NULL when absent on that side */
};

struct diff {
	const struct model *base, *new_;
	const char *base_path, *new_path;
	struct diff_function *fns;  /* by |delta_ns|, largest first */
	size_t nfns;
	struct diff_line *lines;    /* by |delta_ns|, largest first */
	size_t nlines;
	struct diff_finding *added, *resolved, *changed;
	size_t nadded, nresolved, nchanged;
	/* The step: the function called most in BASE, present in both; NULL when none. */
	const struct diff_function *step;
	int step_compared;          /* both sides have 2 periods or more */
	struct stats_compare step_period; /* call start to next call start, new over base */
	int64_t step_median[2];
	int step_sampled;           /* both recordings have cpu_samples */
	double step_wait_share[2];  /* the steps' runnable thread time spent waiting for a CPU (call_times.h) */
	/*
	 * How much slower NEW's steps may be from the machine's load alone:
	 * (1 - base wait share) / (1 - new wait share), at least 1; 1 without
	 * samples.  A thread that waited a share w of its runnable time took up
	 * to 1 / (1 - w) as long as on an idle machine.
	 */
	double step_load_factor;
	char **warnings;            /* "TensorFlow 2.20.0 -> 2.21.0: ...", one line each */
	size_t nwarnings;
	char *summary;              /* the one line */
	struct strpool pool;
};

/* Two strings equal, or both NULL: how diff's keys compare (file, function, op type). */
static inline int diff_same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Compare the analyzed base and new models.  0, or -1 after an error line (d released). */
int diff_build(struct diff *d, const struct model *base, const struct model *new_, const char *base_path,
	       const char *new_path);
void diff_release(struct diff *d);

/* diff_build()'s parts: diff_lines.c (eager lines, black boxes, input reads), diff_findings.c (findings, warnings, summary). */
int diff_build_lines(struct diff *d);
int diff_build_findings(struct diff *d);

enum diff_format { DIFF_TEXT, DIFF_JSON, DIFF_MARKDOWN, DIFF_HTML }; /* DIFF_HTML: diff_html(), html.h */
/* top: rows per table in text and markdown (0: all). */
void diff_print(struct strbuf *out, const struct diff *d, enum diff_format format, int top, int color);
void diff_print_json(struct strbuf *out, const struct diff *d);  /* diff_json.c */

/* What check --baseline gates on (thresholds of regression). */
struct diff_limits {
	long max_new_traces;        /* more traces than BASE of one user function allowed (default 0) */
	/*
	 * Per-step time: the slowdown (percent) that still passes (default
	 * 50): it fails when significant and the 95% interval's low end is
	 * above it.  Two recordings of one program on a loaded machine
	 * differed by up to 37% (tests/integration/test_diff.py).
	 */
	double max_slowdown;
	double alpha;               /* the test's significance level (0.01) */
	double max_eager_increase;  /* eager share: percentage points that still pass (default 5) */
	int fail_on;                /* new findings of this severity or worse (SEV_WARNING) */
};
#define DIFF_LIMITS_INIT { 0, 50, 0.01, 5, SEV_WARNING }
/*
 * The step gate needs this many steps on both sides: two runs of a short
 * program (16 Keras steps) differed threefold on a loaded machine, and so
 * few steps cannot tell that from a regression.
 */
#define DIFF_MIN_STEPS 20

enum diff_gate { GATE_TRACES, GATE_FINDINGS, GATE_STEP, GATE_EAGER, GATE__COUNT };
/* "new-traces", "new-findings", "step-time", "eager-share". */
const char *diff_gate_name(enum diff_gate g);

/* One regression: loc in NEW's model (or base's when the finding is gone), msg one line. */
typedef void diff_regression_fn(void *ctx, const char *function, const struct source_loc *loc, const char *msg);

/*
 * Call fn for each regression of gate g in d; *passed gets what held (one
 * phrase, for the text output).  Returns the number of regressions.
 */
size_t diff_regressions(const struct diff *d, enum diff_gate g, const struct diff_limits *lim, struct strbuf *passed,
			diff_regression_fn *fn, void *ctx);

/*
 * check --baseline: open and analyze the recording base_path with ao, and
 * compare new_ (NEW's analyzed model) with it into b->d.  0, or -1 after an
 * error line (nothing to release then).
 */
struct diff_baseline {
	struct recording rec;
	struct model m;
	struct ruleset rs;
	struct diff d;
};
int diff_baseline_load(struct diff_baseline *b, const char *base_path, const struct analyze_opts *ao,
		       const struct model *new_, const char *new_path);
void diff_baseline_release(struct diff_baseline *b);

#endif
