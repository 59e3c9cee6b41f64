/* saving_summary.c - see saving_summary.h. */
#include "saving_summary.h"
#include "duration.h"
#include "model.h"
#include "model_internal.h"
#include "rule_advice.h"

#include <string.h>

/* Retraces of fn a fix of cause removes (CAUSE_NONE: any), as saving.c counts them. */
static size_t removed_count(const struct model_function *fn, enum retrace_cause cause)
{
	size_t n = 0;

	for (size_t i = 1; i < fn->ntraces; i++) {
		const struct model_trace *t = &fn->traces[i];

		n += t->why.cause != CAUSE_NONE && !t->why.followup && !t->why.inside && (!cause || t->why.cause == cause);
	}
	return n;
}

static size_t retraces_of(const struct model *m, const struct finding *f, const struct model_function *fn)
{
	size_t n = 0;

	if (f->saving_kind == SAVING_RETRACES)
		return fn ? removed_count(fn, f->cause) : 0;
	if (f->saving_kind != SAVING_ALL_RETRACES)
		return 0;
	for (size_t i = 0; i < m->nfunctions; i++)
		if (!m->functions[i].tf_data)
			n += removed_count(&m->functions[i], CAUSE_NONE);
	return n;
}

/* Does the saving take off a price of what the edit adds (casts, constants, a relaxed retrace)? */
static int adds_back(const struct finding *f)
{
	return strstr(f->saving_method, "; minus ") && !strstr(f->saving_method, "; minus nothing");
}

/* "N retraces at ~X each", and why it can exceed the cost (tracing only). */
static const char *retrace_words(struct model *m, const struct finding *f, const struct model_function *fn, size_t n)
{
	char each[DURATION_MAX];

	if (fn && fn->jit_compile && f->saving_kind == SAVING_RETRACES)
		return model_strf(m, "the tracing of %zu retrace%s (XLA still compiles each new shape on its first call)",
				  n, n == 1 ? "" : "s");
	duration_format(each, sizeof(each), f->saving_ns / (int64_t)n);
	return model_strf(m, "%zu retrace%s at ~%s each (tracing + the new graph's first-call set-up)%s", n,
			  n == 1 ? "" : "s", each, adds_back(f) ? ", net of what the edit adds" : "");
}

/*
 * A forecast (saving: eager-loop) in a few words, as the text report
 * prints it after "forecast, not claimed: about X: ".  A forecast of
 * nothing is no warning (info), as a claimed saving of nothing.
 */
static void forecast_words(struct finding *f)
{
	if (f->forecast_ns <= 0) {
		if (f->cost_ns > 0 && f->severity > SEV_INFO) {
			f->severity = SEV_INFO;
			f->saving_summary = "nothing measurable forecast, so reported as info";
		}
		return;
	}
	f->saving_summary = !strncmp(f->saving_method, "forecast, not claimed: upper bound", 34)
		? "at most the eager dispatch time (an experiment must confirm it)"
		: "its eager ops' dispatch and the Python between them, less the same ops in one graph (an experiment"
		  " must confirm it)";
}

void saving_summarize(struct model *m, struct finding *f, const struct model_function *fn)
{
	size_t n;

	f->saving_summary = NULL;
	if (!f->saving_method)
		return;
	if (f->forecasts) {  /* nothing claimed: the forecast's words */
		forecast_words(f);
		return;
	}
	if (f->experiment) {  /* nothing claimed, so nothing to demote: the experiment tells */
		f->saving_summary = "not claimed: only an experiment on this program tells";
		return;
	}
	if (f->saving_ns <= 0 && adds_back(f)) {
		/* the retraces are measured; only this edit's estimated price ate them: still a warning */
		f->saving_summary = "what the edit adds back (estimated) is about what it removes, so it is not offered";
		return;
	}
	if (f->saving_ns <= 0) {
		if (f->cost_ns > 0 && f->severity > SEV_INFO) {
			f->severity = SEV_INFO;  /* nothing to save is not a warning */
			f->saving_summary = "nothing measurable to save, so reported as info";
		}
		return;
	}
	if (!strncmp(f->saving_method, "upper bound", 11))
		f->saving_summary = "at most what it costs (an upper bound: the fix saves part of it)";
	else if ((n = retraces_of(m, f, fn)))
		f->saving_summary = retrace_words(m, f, fn, n);
	else if (f->saving_kind == SAVING_EAGER_LOOP)
		f->saving_summary = "its eager ops' dispatch and the Python between them, less the same ops in one graph";
	else if (f->saving_kind == SAVING_INPUT_OVERLAP)
		f->saving_summary = "the input waits that overlapping input with compute hides";
}
