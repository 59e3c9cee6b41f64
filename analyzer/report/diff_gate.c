/*
 * diff_gate.c - what `agprof check --baseline` fails on (diff.h): a user
 * function traced more than in BASE, a new finding at warning or worse,
 * the step slower beyond chance and the tolerance, eager dispatch grown.
 */
#include "diff.h"
#include "duration.h"
#include "pathdisp.h"
#include "util.h"

#include <math.h>

const char *diff_gate_name(enum diff_gate g)
{
	static const char *const names[GATE__COUNT] = { "new-traces", "new-findings", "step-time", "eager-share" };

	return g < GATE__COUNT ? names[g] : "?";
}

static size_t gate_traces(const struct diff *d, const struct diff_limits *lim, struct strbuf *passed,
			  diff_regression_fn *fn, void *ctx)
{
	size_t n = 0, most = 0;

	for (size_t i = 0; i < d->nfns; i++) {
		const struct diff_function *x = &d->fns[i];
		/* a function BASE never traced may trace once: a first trace is no retrace */
		size_t allowed = (x->base.present ? x->base.traces : 1) + (size_t)lim->max_new_traces;
		struct strbuf msg = STRBUF_INIT;

		/* the user's functions: not TensorFlow's or Keras's, not a def in an installed package */
		if (x->made_by || !x->new_.present || (x->new_.def.file && path_is_installed(x->new_.def.file)))
			continue;
		if (x->new_.traces > x->base.traces && x->new_.traces - x->base.traces > most)
			most = x->new_.traces - x->base.traces;
		if (x->new_.traces <= allowed)
			continue;
		if (x->rank >= 0)
			strbuf_addf(&msg, "rank %d: ", x->rank);
		strbuf_addf(&msg, "traced %zu times, %zu in BASE (at most %ld more allowed)", x->new_.traces,
			    x->base.traces, lim->max_new_traces);
		for (int c = 1; c < CAUSE__COUNT; c++)
			if (x->new_.cause_counts[c] > x->base.cause_counts[c])
				strbuf_addf(&msg, "; %zu more retraces by %s", x->new_.cause_counts[c] - x->base.cause_counts[c],
					    retrace_cause_name((enum retrace_cause)c));
		fn(ctx, x->name, &x->new_.def, msg.buf ? msg.buf : "");
		strbuf_release(&msg);
		n++;
	}
	strbuf_addf(passed, most ? "at most %zu more traces of one function" : "no function traced more than in BASE",
		    most);
	return n;
}

static size_t gate_findings(const struct diff *d, const struct diff_limits *lim, struct strbuf *passed,
			    diff_regression_fn *fn, void *ctx)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nadded + d->nchanged; i++) {
		const struct finding *f = i < d->nadded ? d->added[i].new_ : d->changed[i - d->nadded].new_;
		const struct finding *was = i < d->nadded ? NULL : d->changed[i - d->nadded].base;
		struct strbuf msg = STRBUF_INIT;

		if ((int)f->severity < lim->fail_on || (was && was->severity >= f->severity))
			continue;
		strbuf_addf(&msg, "%s %s %s: %s", was ? "worse:" : "new", severity_name(f->severity), f->rule, f->message);
		fn(ctx, f->function, &f->loc, msg.buf ? msg.buf : "");
		strbuf_release(&msg);
		n++;
	}
	strbuf_addf(passed, "no new finding of severity %s or worse (%zu new, %zu resolved)",
		    severity_name((enum severity)lim->fail_on), d->nadded, d->nresolved);
	return n;
}

static void add_ratio(struct strbuf *sb, const struct stats_compare *s)
{
	strbuf_addf(sb, "%+.1f%%", 100 * (s->ratio - 1));
	if (s->ratio_lo > 0 && isfinite(s->ratio_hi))
		strbuf_addf(sb, " (95%% interval %+.1f%% to %+.1f%%)", 100 * (s->ratio_lo - 1), 100 * (s->ratio_hi - 1));
}

static size_t gate_step(const struct diff *d, const struct diff_limits *lim, struct strbuf *passed,
			diff_regression_fn *fn, void *ctx)
{
	const struct stats_compare *s = &d->step_period;
	struct strbuf msg = STRBUF_INIT;
	double tolerated;
	int slower;

	if (!d->step || !d->step_compared) {
		strbuf_addstr(passed, "no step to compare (no function called twice in both)");
		return 0;
	}
	if (s->na < DIFF_MIN_STEPS || s->nb < DIFF_MIN_STEPS) {
		strbuf_addf(passed, "per-step time of %s not compared: %zu and %zu steps, %d needed", d->step->name, s->na,
			    s->nb, DIFF_MIN_STEPS);
		return 0;
	}
	/*
	 * Slower beyond chance (the test) and beyond the tolerance even at the
	 * interval's low end: two runs of one program differ by a whole run's
	 * machine load, which no test over the steps of one run can see.  The
	 * load the recordings measured widens the tolerance by what it alone
	 * explains (diff.h, step_load_factor): such a run is not judged.
	 */
	tolerated = (1 + lim->max_slowdown / 100) * d->step_load_factor;
	slower = s->p_larger < lim->alpha && s->ratio_lo > tolerated;
	strbuf_addf(&msg, "per-step time of %s ", d->step->name);
	add_ratio(&msg, s);
	strbuf_addf(&msg, ", median ");
	strbuf_add_duration(&msg, d->step_median[0]);
	strbuf_addstr(&msg, " -> ");
	strbuf_add_duration(&msg, d->step_median[1]);
	strbuf_addf(&msg, " over %zu and %zu steps, Mann-Whitney p=%.2g (fails at p<%g with the interval above %+.0f%%",
		    s->na, s->nb, s->p_larger, lim->alpha, 100 * (tolerated - 1));
	if (d->step_load_factor > 1)
		strbuf_addf(&msg, ": %+g%% times %.2f, as NEW's threads waited for a CPU %.0f%% of their runnable time"
			    " and BASE's %.0f%%", lim->max_slowdown, d->step_load_factor, 100 * d->step_wait_share[1],
			    100 * d->step_wait_share[0]);
	strbuf_addch(&msg, ')');
	if (!slower && s->p_larger < lim->alpha && s->ratio_lo > 1 + lim->max_slowdown / 100)
		strbuf_addstr(&msg, "; not judged: the machine's load explains it, compare runs on a quieter machine");
	if (slower)
		fn(ctx, d->step->name, &d->step->new_.def, msg.buf ? msg.buf : "");
	else
		strbuf_addstr(passed, msg.buf ? msg.buf : "");
	strbuf_release(&msg);
	return slower;
}

static size_t gate_eager(const struct diff *d, const struct diff_limits *lim, struct strbuf *passed,
			 diff_regression_fn *fn, void *ctx)
{
	const struct model_session *a = &d->base->session, *b = &d->new_->session;
	double pts = 100 * (b->eager_share - a->eager_share);
	/* time shares move with the machine's load; the op count does not: both must grow */
	int more_ops = (double)b->eager_ops > 1.1 * (double)a->eager_ops + 10;
	struct strbuf msg = STRBUF_INIT;
	const struct model_eager_site *top = d->new_->nsites ? &d->new_->sites[0] : NULL;

	strbuf_addf(&msg, "eager share %.1f%% -> %.1f%% (%+.1f points, at most %+g allowed), %lld -> %lld eager ops",
		    100 * a->eager_share, 100 * b->eager_share, pts, lim->max_eager_increase, (long long)a->eager_ops,
		    (long long)b->eager_ops);
	if (pts <= lim->max_eager_increase || !more_ops) {
		strbuf_addstr(passed, msg.buf ? msg.buf : "");
		strbuf_release(&msg);
		return 0;
	}
	fn(ctx, top ? top->func : NULL, top ? &top->loc : NULL, msg.buf ? msg.buf : "");
	strbuf_release(&msg);
	return 1;
}

size_t diff_regressions(const struct diff *d, enum diff_gate g, const struct diff_limits *lim, struct strbuf *passed,
			diff_regression_fn *fn, void *ctx)
{
	switch (g) {
	case GATE_TRACES:
		return gate_traces(d, lim, passed, fn, ctx);
	case GATE_FINDINGS:
		return gate_findings(d, lim, passed, fn, ctx);
	case GATE_STEP:
		return gate_step(d, lim, passed, fn, ctx);
	case GATE_EAGER:
		return gate_eager(d, lim, passed, fn, ctx);
	case GATE__COUNT:
		break;
	}
	return 0;
}

int diff_baseline_load(struct diff_baseline *b, const char *base_path, const struct analyze_opts *ao,
		       const struct model *new_, const char *new_path)
{
	if (recording_open(&b->rec, base_path))
		return -1;
	if (analyze(&b->m, &b->rs, &b->rec, ao) != ANALYZE_OK) {
		recording_close(&b->rec);
		return -1;
	}
	if (diff_build(&b->d, &b->m, new_, base_path, new_path)) {
		model_release(&b->m);
		ruleset_release(&b->rs);
		recording_close(&b->rec);
		return -1;
	}
	return 0;
}

void diff_baseline_release(struct diff_baseline *b)
{
	diff_release(&b->d);
	model_release(&b->m);
	ruleset_release(&b->rs);
	recording_close(&b->rec);
}
