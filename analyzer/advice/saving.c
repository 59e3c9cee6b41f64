/*
 * saving.c - what applying a finding's fix would save (fix.h).
 *
 * A finding's cost_ns is its symptom's time; the saving is what disappears
 * with the fix, which is often less:
 *   retracing: each retrace the fix removes costs its tracing AND the
 *     building of its concrete function and its graph's set-up on first call
 *     (graph optimisation, kernel creation): from the retrace's start to
 *     its graph's first call's end, less a typical call (retrace_saving()),
 *     less what the fix adds back
 *     (fix_added(): reduce_retracing's one relaxed retrace, eager casts);
 *   eager-hotspot: the eager ops of the function to wrap (dispatch plus the
 *     Python between them, measured from the ops' own timestamps) minus what
 *     the same ops cost as graph nodes and the new tf.function's trace: a
 *     forecast, not a claim (moving work into a graph is an experiment,
 *     as_forecast());
 *   input-bound: the waits that overlapping input with compute would hide,
 *     at most the loop's time not spent waiting (the compute they overlap).
 * Other findings: the symptom's time, said to be an upper bound.
 * A rule picks its estimator by name with `saving:` (estimators[] below,
 * the names in analyzer/rules/rule_advice.h).
 * Every term is a recorded time; the collector's own time in a trace
 * (traces.collector_ns) is taken off wherever a trace is counted, so the
 * saving is what a run without agprof would save.
 */
#include "agp_protocol.h"
#include "checked.h"
#include "db.h"
#include "eager_runs.h"
#include "fix.h"
#include "model.h"
#include "model_internal.h"
#include "recording.h"
#include "rule_advice.h"
#include "scan.h"
#include "strbuf.h"
#include "saving_reads.h"
#include "saving_summary.h"
#include "util.h"

#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* Whether trace index i of fn is a retrace that fixing cause removes (CAUSE_NONE: any retrace). */
static int removed(const struct model_function *fn, size_t i, enum retrace_cause cause)
{
	const struct model_trace *t = &fn->traces[i];

	/* a retrace inside another function's retrace: that one's fix removes it, and its saving counts it */
	return i > 0 && t->why.cause != CAUSE_NONE && !t->why.followup && !t->why.inside &&
	       (!cause || t->why.cause == cause);
}

/* The span of one retrace: its tracing time. */
static int64_t tracing_ns(const struct model_trace *t)
{
	return t->end_ns > t->start_ns ? t->end_ns - t->start_ns : 0;
}

/*
 * A trace's time as a run without agprof pays it: its span less the
 * collector's own time in it (describing and watching it, collector_ns).
 */
static int64_t plain_tracing_ns(const struct model_trace *t)
{
	int64_t span = tracing_ns(t);

	return span > t->collector_ns ? span - t->collector_ns : 0;
}

/* What retrace_saving() found, for the method line. */
struct retrace_sum {
	size_t n;               /* retraces removed */
	int64_t tracing;        /* their tracing time, the collector's excluded */
	int64_t own;            /* the collector's time taken off */
	int64_t median;         /* the median retrace's saving */
	int warm;               /* a typical call from untraced calls (else: every call traced) */
};

/*
 * The saving of retrace i of fn: from the trace's start to the end of its
 * graph's first call (the tracing, the concrete function's making, the
 * graph's optimisation and kernel creation, the call itself), less what
 * the fix leaves of it: a typical call, the lower median of the calls
 * that did not trace (call_steps.typical, read once per function with its
 * calls, saving_reads.c).  Not from the previous call's end: the Python
 * between calls is the program's either way, and in the steps that retrace
 * it is often slower for reasons the fix keeps (the new dtype's or shape's
 * first tensor: cold eager kernels).  When every call traced (a new
 * tf.function object per call) there is no warm call to take off: the
 * saving is high by the warm calls the fix leaves, well under a
 * millisecond each for the small functions this happens to, and the method
 * says so.  A retrace whose graph never ran saves its tracing time.  The
 * collector's own time in the trace (collector_ns) is not the program's:
 * taken off.
 */
static int64_t retrace_saved(const struct model_function *fn, const struct call_steps *st, size_t i, int64_t typical,
			     int64_t *own)
{
	const struct model_trace *t = &fn->traces[i];
	int64_t tr = tracing_ns(t), saved = tr, window = 0;

	/* times from a recording are untrusted: a negative start would overflow the window */
	if (t->start_ns >= 0 && st->first_end[i] > t->start_ns)
		window = st->first_end[i] - t->start_ns;
	if (window > typical && window - typical > tr)
		saved = window - typical;
	if (saved < tr)
		saved = tr;
	*own = saved > t->collector_ns ? t->collector_ns : saved;
	return saved - *own;
}

/*
 * Time removed with the retraces of fn with cause (CAUSE_NONE: every
 * retrace).  A retrace costs more than its tracing: TensorFlow also builds
 * the concrete function and, on its first call, optimises the graph and
 * creates its kernels.  So a retrace is measured whole, from its start to
 * the end of the new graph's first call, less what the fix leaves of it
 * (retrace_saved()).  *sum says how.
 */
static int64_t retrace_saving(struct model *m, const struct model_function *fn, enum retrace_cause cause,
			      struct retrace_sum *sum)
{
	const struct call_steps *st;
	int64_t *saved = NULL, total = 0;

	memset(sum, 0, sizeof(*sum));
	if (!fn->ntraces || !(st = saving_call_steps(m, fn)) || !(saved = calloc(fn->ntraces, sizeof(*saved))))
		return 0;
	sum->warm = st->nplain > 0;
	for (size_t i = 1; i < fn->ntraces; i++) {
		int64_t own;

		if (!removed(fn, i, cause))
			continue;
		saved[sum->n] = retrace_saved(fn, st, i, st->typical, &own);
		total += saved[sum->n++];
		sum->own += own;
		sum->tracing += plain_tracing_ns(&fn->traces[i]);
	}
	if (sum->n)
		sum->median = nth_int64(saved, sum->n, (sum->n - 1) / 2);
	free(saved);
	return total;
}

static void set_method(struct model *m, struct finding *f, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void set_method(struct model *m, struct finding *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	f->saving_method = model_vstrf(m, fmt, ap);
	va_end(ap);
}

static double ms(int64_t ns)
{
	return (double)ns / 1e6;
}

/* The calls of trace id's graph. */
static int64_t trace_calls(const struct model *m, int64_t id)
{
	sqlite3_stmt *s;
	int64_t n = 0;
	char q[640];

	if (!m->rec)
		return 0;
	/* the calls past the recording's budget too (scan_all_calls) */
	snprintf(q, sizeof(q), "SELECT CAST(min(total(c.n), 4e18) AS INTEGER) FROM %s c JOIN graph_functions g"
		 " ON g.id = c.graph_function_id WHERE g.trace_id = ?1", scan_all_calls(m->rec->db));
	if (sqlite3_prepare_v2(m->rec->db, q, -1, &s, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) == SQLITE_ROW)
		n = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}

/* What the fix adds back (the eager ops it puts at the call site, a relaxed first trace), and its method words. */
struct fix_cost {
	int64_t ns;
	const char *how;        /* NULL: the fix adds nothing */
};

/* The words for where added_price's price came from (saving_added_price()); NULL when none. */
static int64_t added_price(struct model *m, const char *op, const char **from)
{
	enum price_source src;
	int64_t samples, v = saving_added_price(m, op, &src, &samples);

	*from = src == PRICE_CALIBRATED ? model_strf(m, "the thread CPU time of %lld %s timed at the program's first"
						     " trace, the median batch", (long long)samples, op)
		: src == PRICE_RECORDED ? model_strf(m, "the lower median of the recorded warm %s dispatches, of every"
						     " warm op's when fewer than %d were recorded", op, WARM_SAMPLES_MIN)
		: NULL;
	return v;
}

/*
 * A Cast's first dispatch for a new dtype pair, which creates its kernel:
 * the collector's thread CPU price of one (saving_first_price()), else an
 * op's first recorded dispatch (saving_cold_dispatch(), wall-clock time);
 * 0 when neither.  *from: the words for where it came from.
 */
static int64_t cold_cast_price(struct model *m, const char **from)
{
	int64_t samples, v = saving_first_price(m, "Cast", &samples);

	if (v > 0) {
		*from = model_strf(m, "a new Cast kernel's first dispatch, the median thread CPU time of %lld timed at"
				   " the program's first trace", (long long)samples);
		return v;
	}
	*from = "an op's first recorded dispatch";
	v = saving_cold_dispatch(m);
	return v > 0 ? v : 0;
}

/*
 * dtype: the fix casts the argument at the call site to the first trace's
 * dtype, an eager Cast on every call that passed another dtype: the first
 * of each new dtype (one per removed retrace) creates its kernel, priced at
 * a first dispatch (cold_cast_price()), the others at a warm Cast (added_price()).
 * python-value: a tf.constant per call, at a warm _EagerConst: a type's
 * first dispatch creates its kernel, and a short program's one _EagerConst
 * (a variable's initial value, 55 ms) priced 4 calls above the 2 retraces
 * they saved.  shape, when the fix is
 * reduce_retracing=True (no signature could be written, or no edit at
 * all): TensorFlow still traces once more, at the first new shape, for the
 * relaxed function, one more retrace: the median of those removed.
 * An input_signature adds nothing: its one trace serves every shape, in
 * place of the first trace (Sonnet's MLP step, traced three times, traced
 * twice with agprof's signature: the third trace was the saving).
 */
static struct fix_cost fix_added(struct model *m, const struct finding *f, const struct model_function *fn,
				 const struct retrace_sum *sum)
{
	struct fix_cost c = { 0, NULL };
	int64_t cold, warm, calls = 0;
	const char *from, *cold_from;
	size_t n = 0;

	if (f->cause == CAUSE_SHAPE && sum->n && !f->fix.pins_signature) {
		c.ns = sum->median;
		c.how = model_strf(m, "the relaxed function's own first trace and set-up, one retrace (the median of"
				   " those removed) %.1f ms", ms(c.ns));
	} else if (f->cause == CAUSE_DTYPE) {
		for (size_t i = 1; i < fn->ntraces; i++)
			if (removed(fn, i, CAUSE_DTYPE)) {
				n++;
				calls += trace_calls(m, fn->traces[i].id);
			}
		cold = cold_cast_price(m, &cold_from);
		warm = added_price(m, "Cast", &from);
		calls = calls > (int64_t)n ? calls - (int64_t)n : 0;
		c.ns = (int64_t)n * cold + calls * warm;
		c.how = model_strf(m, "the %zu eager Cast%s it adds on calls of another dtype (%.1f ms): the first of each"
				   " dtype at %s (%.2f ms), %lld more at a warm dispatch (%.3f ms)%s%s", n + (size_t)calls,
				   n + (size_t)calls == 1 ? "" : "s", ms(c.ns), cold_from, ms(cold), (long long)calls,
				   ms(warm), from ? ": " : "", from ? from : "");
	} else if (f->cause == CAUSE_PYTHON_VALUE) {
		warm = added_price(m, "_EagerConst", &from);
		c.ns = fn->calls * warm;
		c.how = !from ? model_strf(m, "nothing for the tf.constant it adds to each of the %lld calls: no warm"
					   " eager dispatch is recorded (each op type's first one creates its kernel)",
					   (long long)fn->calls)
			      : model_strf(m, "the tf.constant it adds to each of the %lld calls, at a warm eager"
					   " dispatch (%.3f ms): %.1f ms (%s)", (long long)fn->calls, ms(warm), ms(c.ns),
					   from);
	}
	return c;
}

/*
 * A retrace costs the program what a fix would remove of it: its tracing
 * and its graph's first-call set-up (retrace_saved()), so the finding's
 * cost counts them too (at least its tracing, the rule's cost): a saving
 * is never more than the cost it comes from.
 */
static void cost_whole(struct model *m, struct finding *f, const struct model_function *fn)
{
	struct retrace_sum all;
	int64_t whole = retrace_saving(m, fn, CAUSE_NONE, &all);

	if (whole > f->cost_ns)
		f->cost_ns = whole;
}

/* The function holding fn's retraces that ran inside another's (retrace_why.inside), and their number. */
static const char *inside_of(const struct model_function *fn, size_t *n)
{
	const char *outer = NULL;

	*n = 0;
	for (size_t i = 1; i < fn->ntraces; i++)
		if (fn->traces[i].why.inside && !fn->traces[i].why.followup && !(*n)++)
			outer = fn->traces[i].why.inside;
	return outer;
}

static void saving_retracing(struct model *m, struct finding *f, const struct model_function *fn)
{
	struct retrace_sum sum;
	struct fix_cost add;
	int64_t steps = retrace_saving(m, fn, f->cause, &sum);
	const char *inside;
	size_t nin;

	cost_whole(m, f, fn);
	if (!sum.n && (inside = inside_of(fn, &nin))) {
		f->saving_ns = 0;
		set_method(m, f, "none of its own: its %zu retrace%s ran inside retraces of %s, whose fix removes them"
			   " (their time is counted there)", nin, nin == 1 ? "" : "s", inside);
		return;
	}
	if (fn->jit_compile) {
		/* one trace for all shapes still leaves XLA one compilation per new shape, on its first call */
		f->saving_ns = sum.tracing;
		set_method(m, f, "the tracing of the %zu retrace%s the fix removes (%.1f ms, the collector's %.1f ms"
			   " aside); jit_compile: XLA still compiles each new input shape on its first call, so that time"
			   " stays", sum.n, sum.n == 1 ? "" : "s", ms(sum.tracing), ms(sum.own));
		return;
	}
	add = fix_added(m, f, fn, &sum);
	f->saving_ns = steps > add.ns ? steps - add.ns : 0;
	set_method(m, f, "the %zu retrace%s the fix removes, each from its start to its new graph's first call's end,"
		   " less %s and the collector's own time in the trace (%.1f ms): tracing %.1f ms + graph set-up %.1f ms%s%s",
		   sum.n, sum.n == 1 ? "" : "s",
		   sum.warm ? "a typical call" : "no warm call (every call traced: the warm calls the fix leaves are not"
		   " recorded)", ms(sum.own), ms(sum.tracing),
		   ms(steps > sum.tracing ? steps - sum.tracing : 0), add.how ? "; minus " : "", add.how ? add.how : "");
}

static void saving_all_retraces(struct model *m, struct finding *f, const struct model_function *fn)
{
	int64_t total = 0, tracing_all = 0, own = 0;
	size_t count = 0;

	(void)fn;  /* the estimators' one signature: this one reads no function */
	for (size_t i = 0; i < m->nfunctions; i++) {
		struct retrace_sum sum;

		if (m->functions[i].tf_data)
			continue;
		total += retrace_saving(m, &m->functions[i], CAUSE_NONE, &sum);
		tracing_all += sum.tracing;
		own += sum.own;
		count += sum.n;
	}
	f->saving_ns = total;
	if (total > f->cost_ns)  /* the cost counts every retrace whole, as cost_whole() one function's */
		f->cost_ns = total;
	set_method(m, f, "all %zu avoidable retraces, each from its start to its new graph's first call's end, less a"
		   " typical call and the collector's own time in the trace (%.1f ms): tracing %.1f ms + graph set-up"
		   " %.1f ms", count, ms(own), ms(tracing_all),
		   ms(total > tracing_all ? total - tracing_all : 0));
}

/*
 * A trace's time as a run without agprof on an idle machine pays it: its
 * plain time less its thread's share of its span spent waiting for a CPU,
 * the clock of the eager ops' steady cost (the collector's own time,
 * collector_ns, is on the trace's wall: the same share of it goes).
 */
static int64_t steady_tracing_ns(const struct model *m, const struct model_trace *t)
{
	int64_t span = tracing_ns(t), plain = plain_tracing_ns(t);
	double wait = span > 0 ? model_thread_wait_ns(m, t->pid, t->tid, t->start_ns, t->end_ns) : 0;

	return wait <= 0 ? plain : wait >= (double)span ? 0 : (int64_t)((double)plain * (1 - wait / (double)span));
}

/*
 * What the new tf.function's own first trace will cost: the lower median of
 * the recording's traces (tf.data's aside), each its tracing span less the
 * collector's own time in it and its waits for a CPU (steady_tracing_ns()); *n says
 * how many there were (0: none recorded, so nothing to take it from).  A
 * typical trace of this program, not a model of this function's: tracing
 * time depends on the Python and the graph machinery run, which the
 * recording measured, far more than on the op count.
 */
static int64_t typical_trace(const struct model *m, size_t *n)
{
	int64_t *spans, median;
	size_t k = 0, total = 0;

	*n = 0;
	for (size_t i = 0; i < m->nfunctions; i++)
		if (!m->functions[i].tf_data)
			total += m->functions[i].ntraces;
	if (!total || !(spans = malloc(total * sizeof(*spans))))
		return 0;
	for (size_t i = 0; i < m->nfunctions; i++)
		for (size_t j = 0; !m->functions[i].tf_data && j < m->functions[i].ntraces; j++)
			spans[k++] = steady_tracing_ns(m, &m->functions[i].traces[j]);
	median = nth_int64(spans, k, (k - 1) / 2);
	free(spans);
	*n = k;
	return median;
}

/*
 * eager-hotspot: the function holding the busiest line, run as a graph.
 * What wrapping removes is each op's dispatch and the Python before it (a
 * library call's own Python, Keras' layer machinery, included): their
 * steady cost (eager_runs.steady_ns), as the finding's cost reads them, so
 * that a loaded machine changes neither (issue 46).  In a graph each op
 * still runs its kernel, but neither the Python between ops nor the
 * Python-to-C dispatch: each op is counted at the fastest dispatch of its
 * op type in the recording (the kernel plus the least overhead seen),
 * which is what the graph keeps, at most the op's steady cost (an op type
 * run once beside a CPU hog has a fastest run as long as its wait).  The
 * wrapped function also traces once, which the eager loop never paid: a
 * typical trace of the recording (typical_trace()).
 */
static void saving_eager(struct model *m, struct finding *f, const struct model_function *fn)
{
	const char *func = model_finding_site_function(m, f);
	struct eager_runs r;
	int64_t eager, graph, trace;
	size_t ntraces;

	(void)fn;  /* the estimators' one signature: this one reads no function */
	if (!func || eager_runs_of(m, f->loc.file, func, &r) != 0) {
		f->saving_ns = f->cost_ns;
		set_method(m, f, "upper bound: the eager dispatch time (the function to wrap is not known)");
		return;
	}
	eager = r.steady_ns;
	graph = r.steady_graph_ns;
	trace = typical_trace(m, &ntraces);
	f->saving_ns = eager > graph + trace ? eager - graph - trace : 0;
	set_method(m, f, "%s's %lld eager ops: dispatch + the Python before each, at their steady cost (no wait for a"
		   " CPU: %.1f ms; recorded %.1f ms with %lld gaps over %.0f ms)"
		   " minus the same ops as graph nodes, each at its op type's fastest recorded run, at most its steady"
		   " cost (%.1f ms),"
		   " minus the new tf.function's first trace: %s (%.1f ms)", func, (long long)r.ops, ms(eager),
		   ms(r.eager_ns), (long long)r.long_gaps, ms(AGP_PYTHON_GAP_MAX_NS), ms(graph),
		   ntraces ? model_strf(m, "the median of the recording's %zu trace%s", ntraces, ntraces == 1 ? "" : "s")
			   : "no trace recorded to take it from, not counted", ms(trace));
}

/*
 * Input-bound: overlapping input with compute hides a wait only while the
 * loop computes, so at most the loop's time not spent waiting (the
 * finding's span is the loop's first to last read).  Not the run's whole
 * active time: start-up and data preparation are no step's compute.
 */
static void saving_input(struct model *m, struct finding *f, const struct model_function *fn)
{
	int64_t loop = f->end_ns > f->start_ns ? f->end_ns - f->start_ns : m->session.active_ns;
	int64_t compute = loop > f->cost_ns ? loop - f->cost_ns : 0;

	(void)fn;  /* the estimators' one signature: this one reads no function */
	f->saving_ns = f->cost_ns < compute ? f->cost_ns : compute;
	set_method(m, f, "the iterator waits that overlapping input with compute would hide: at most the loop's %.1f ms"
		   " not waiting for input (loop %.1f ms, waits %.1f ms)", ms(compute), ms(loop), ms(f->cost_ns));
}

/* XLA's extra compilations: each retrace of a jit_compile function compiles again on its first call. */
static void saving_recompiles(struct model *m, struct finding *f, const struct model_function *fn)
{
	struct retrace_sum sum;

	f->saving_ns = retrace_saving(m, fn, CAUSE_NONE, &sum);
	set_method(m, f, "upper bound: the %zu extra compilations (tracing %.1f ms + first-call compile %.1f ms)",
		   sum.n, ms(sum.tracing), ms(f->saving_ns > sum.tracing ? f->saving_ns - sum.tracing : 0));
}

/* A path as one shell word: as it is when plain, else in single quotes. */
static const char *shell_word(struct model *m, const char *s)
{
	struct strbuf sb = STRBUF_INIT;
	const char *w;

	if (s && *s && strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./-+=:,@%") == strlen(s))
		return s;
	strbuf_addch(&sb, '\'');
	for (const char *p = s ? s : ""; *p; p++)
		strbuf_addstr(&sb, *p == '\'' ? "'\\''" : (char[2]){ *p, 0 });
	strbuf_addch(&sb, '\'');
	w = model_strdup(m, sb.buf ? sb.buf : "''");
	strbuf_release(&sb);
	return w;
}

/*
 * saving: experiment.  Compile-time and graph advice (jit_compile, more
 * code in a tf.function) can make a program slower: XLA compiles first and
 * its CPU kernels for small shapes can be slower than the executor's (an
 * actor-critic's learn() called every step ran 1.8x slower with it).  No
 * recorded time can tell, so nothing is claimed: the finding carries the
 * command that measures it (the verdict of that experiment, verdicts.c,
 * claims what it measured).
 */
static const char *experiment_command(struct model *m, const struct finding *f)
{
	return model_strf(m, "agprof fix --verify %s --rule %s%s%s", shell_word(m, m->rec ? m->rec->path : "REC"),
			  f->rule, f->function ? " --function " : "", f->function ? shell_word(m, f->function) : "");
}

static void saving_experiment(struct model *m, struct finding *f, const struct model_function *fn)
{
	(void)fn;
	f->saving_ns = 0;
	f->experiment = experiment_command(m, f);
	set_method(m, f, "not claimed: compile-time or graph advice, whose saving only an experiment on this program"
		   " can tell");
}

/*
 * A graph move's estimate (saving: eager-loop) made a forecast: a new
 * tf.function traces, may retrace, and runs its ops through the executor,
 * which can cost more than the eager dispatch it removes; no recorded time
 * tells.  The estimate is kept apart (forecast_ns) and nothing is claimed,
 * as saving_experiment(): the finding carries the command that measures it.
 */
static void as_forecast(struct model *m, struct finding *f)
{
	f->forecast_ns = f->saving_ns;
	f->forecasts = 1;
	f->saving_ns = 0;
	f->experiment = experiment_command(m, f);
	set_method(m, f, "forecast, not claimed: %s; an experiment must confirm it", f->saving_method);
}

static void saving_cost(struct model *m, struct finding *f, const struct model_function *fn)
{
	(void)fn;
	f->saving_ns = f->cost_ns;
	set_method(m, f, "upper bound: the symptom's time (cost_ns); the fix saves part of it");
}

/*
 * The estimators a rule names with `saving:` (rule_advice.h); one that needs
 * the finding's function falls back to the cost when the finding has none.
 * forecast: the estimate is a graph move's, a forecast (as_forecast()).
 */
static const struct {
	void (*estimate)(struct model *m, struct finding *f, const struct model_function *fn);
	unsigned needs_function : 1, forecast : 1;
} estimators[] = {
	[SAVING_COST] = { saving_cost, 0, 0 },
	[SAVING_RETRACES] = { saving_retracing, 1, 0 },
	[SAVING_ALL_RETRACES] = { saving_all_retraces, 0, 0 },
	[SAVING_EAGER_LOOP] = { saving_eager, 0, 1 },
	[SAVING_INPUT_OVERLAP] = { saving_input, 0, 0 },
	[SAVING_RECOMPILES] = { saving_recompiles, 1, 0 },
	[SAVING_EXPERIMENT] = { saving_experiment, 0, 0 },
};
_Static_assert(sizeof(estimators) / sizeof(estimators[0]) == SAVING_NKINDS, "a saving kind without its estimator");

void saving_estimate(struct model *m, struct finding *f)
{
	const struct model_function *fn = model_finding_function(m, f);
	int kind = f->saving_kind >= 0 && f->saving_kind < SAVING_NKINDS ? f->saving_kind : SAVING_COST;

	f->saving_ns = 0;
	f->saving_method = NULL;
	f->experiment = NULL;
	f->forecast_ns = 0;
	f->forecasts = 0;
	if (estimators[kind].needs_function && !fn)
		kind = SAVING_COST;
	estimators[kind].estimate(m, f, fn);
	if (estimators[kind].forecast)
		as_forecast(m, f);
	saving_summarize(m, f, fn);
}
