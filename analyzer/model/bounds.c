/*
 * bounds.c - the invariants every finding keeps (issue 34): neither its
 * cost nor its saving exceeds the recorded run's wall time, nor, for a
 * finding about one traced function, that function's own time (its
 * tracing, a trace inside another of its traces counted once, plus its
 * graph calls).  An estimate past them is wrong where it was made; here,
 * after the rules and the savings, it is cut to the bound and its method
 * says so, so that a test (and a reader) sees that it happened.  Nor does
 * a saving exceed its finding's cost: the cost counts what the fix removes
 * (a retrace's tracing and its graph's first-call set-up, saving.c).
 */
#include "model.h"
#include "model_internal.h"

void model_bound_finding(struct model *m, struct finding *f)
{
	int64_t limit = m->session.wall_ns, own;
	const char *what = "the run's wall time";
	int cut = 0;

	if (f->fn) {
		own = f->fn->trace_ns + f->fn->exec_ns;
		if (own >= 0 && (limit <= 0 || own < limit)) {
			limit = own;
			what = "the function's own time (tracing and graph calls)";
		}
	}
	if (f->cost_ns < 0)
		f->cost_ns = 0;
	if (f->saving_ns < 0)
		f->saving_ns = 0;
	if (f->forecast_ns < 0)
		f->forecast_ns = 0;
	if (limit <= 0 && !f->fn)
		return;  /* no wall time recorded (a run cut short): nothing to bound by */
	if (f->cost_ns > limit) {
		f->cost_ns = limit;
		cut = 1;
	}
	if (f->saving_ns > limit) {
		f->saving_ns = limit;
		cut = 1;
	}
	if (f->forecast_ns > limit) {  /* a forecast (saving: eager-loop) keeps the same bounds */
		f->forecast_ns = limit;
		cut = 1;
	}
	if (cut)
		f->saving_method = model_strf(m, "%s; cut to %s, %.1f ms, which an estimate cannot exceed",
					      f->saving_method ? f->saving_method : "estimate", what, (double)limit / 1e6);
	/* one definition of cost: what the fix removes is part of it (issue 46) */
	if ((f->saving_ns > f->cost_ns || f->forecast_ns > f->cost_ns) && f->cost_ns > 0) {
		f->saving_method = model_strf(m, "%s; cut to the finding's cost, %.1f ms, which a saving cannot exceed",
					      f->saving_method ? f->saving_method : "estimate", (double)f->cost_ns / 1e6);
		f->saving_ns = f->saving_ns > f->cost_ns ? f->cost_ns : f->saving_ns;
		f->forecast_ns = f->forecast_ns > f->cost_ns ? f->cost_ns : f->forecast_ns;
	}
}
