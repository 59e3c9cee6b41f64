/*
 * diff_findings.c - the findings of the two recordings matched (by rule,
 * function, retrace cause and file: not by line, which an edit moves), the
 * warnings about runs that differ in more than the change (TensorFlow,
 * Python, host), and the summary line (diff.h).
 */
#include "diff.h"
#include "checked.h"
#include "duration.h"
#include "report.h"
#include "util.h"

#include <math.h>
#include <sys/stat.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static int same_finding(const struct diff *d, const struct finding *a, const struct finding *b)
{
	return !strcmp(a->rule, b->rule) && diff_same(a->function, b->function) && a->cause == b->cause &&
	       ((!a->loc.file && !b->loc.file) ||
		(a->loc.file && b->loc.file &&
		 !strcmp(report_rel_path(d->base, a->loc.file), report_rel_path(d->new_, b->loc.file))));
}

static int push(struct diff_finding **v, size_t *n, size_t *cap, const struct finding *base, const struct finding *new_)
{
	if (ARRAY_GROW(*v, *n, *cap))
		return error("out of memory");
	(*v)[*n].base = base;
	(*v)[(*n)++].new_ = new_;
	return 0;
}

/* Changed: another severity, or a cost more than twice or under half the other. */
static int finding_changed(const struct finding *a, const struct finding *b)
{
	return a->severity != b->severity || a->cost_ns > 2 * b->cost_ns || b->cost_ns > 2 * a->cost_ns;
}

static int match_findings(struct diff *d)
{
	const struct model *b = d->base, *n = d->new_;
	unsigned char *taken = calloc(n->nfindings + 1, 1);
	size_t capa = 0, capr = 0, capc = 0;
	int ret = -1;

	if (!taken)
		return error("out of memory");
	for (size_t i = 0; i < b->nfindings; i++) {
		size_t j;

		for (j = 0; j < n->nfindings; j++)
			if (!taken[j] && same_finding(d, &b->findings[i], &n->findings[j]))
				break;
		if (j == n->nfindings) {
			if (push(&d->resolved, &d->nresolved, &capr, &b->findings[i], NULL))
				goto out;
			continue;
		}
		taken[j] = 1;
		if (finding_changed(&b->findings[i], &n->findings[j]) &&
		    push(&d->changed, &d->nchanged, &capc, &b->findings[i], &n->findings[j]))
			goto out;
	}
	for (size_t j = 0; j < n->nfindings; j++)
		if (!taken[j] && push(&d->added, &d->nadded, &capa, NULL, &n->findings[j]))
			goto out;
	ret = 0;
out:
	free(taken);
	return ret;
}

static int add_warning(struct diff *d, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int add_warning(struct diff *d, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	char **p = realloc(d->warnings, (d->nwarnings + 1) * sizeof(*p));
	va_list ap;

	if (!p)
		return error("out of memory");
	d->warnings = p;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	if (strbuf_failed(&sb))
		return error("out of memory");
	d->warnings[d->nwarnings++] = strbuf_detach(&sb);
	return 0;
}

/* Runs that differ in more than the change: said, and compared all the same. */
static int environment_warnings(struct diff *d)
{
	const struct model_session *a = &d->base->session, *b = &d->new_->session;
	static const char why[] = "times may differ for that reason too";
	struct stat sa, sb;

	if (d->base_path && d->new_path && !stat(d->base_path, &sa) && !stat(d->new_path, &sb) &&
	    sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino &&
	    add_warning(d, "BASE and NEW are the same file: nothing can differ"))
		return -1;

	if (a->tf_version && b->tf_version && strcmp(a->tf_version, b->tf_version) &&
	    add_warning(d, "TensorFlow %s in BASE, %s in NEW: %s", a->tf_version, b->tf_version, why))
		return -1;
	if (a->python_version && b->python_version && strcmp(a->python_version, b->python_version) &&
	    add_warning(d, "Python %s in BASE, %s in NEW: %s", a->python_version, b->python_version, why))
		return -1;
	if (a->host && b->host && strcmp(a->host, b->host) &&
	    add_warning(d, "recorded on host %s (BASE) and %s (NEW): %s", a->host, b->host, why))
		return -1;
	if ((a->aggregate_reason != NULL) != (b->aggregate_reason != NULL) &&
	    add_warning(d, "only %s kept every call as a row (the budget): per-call times compare fewer calls",
			a->aggregate_reason ? "NEW" : "BASE"))
		return -1;
	return 0;
}

static size_t total_traces(const struct diff *d, int which)
{
	size_t n = 0;

	for (size_t i = 0; i < d->nfns; i++)
		n += which ? d->fns[i].new_.traces : d->fns[i].base.traces;
	return n;
}

static void add_signed_duration(struct strbuf *sb, int64_t ns)
{
	strbuf_addch(sb, ns < 0 ? '-' : '+');
	strbuf_add_duration(sb, ns < 0 ? -ns : ns);
}

/* "5 fewer traces, tracing -230 ms, eager share 12% -> 3%, per-step time -18% (95% interval -21% to -15%)" */
static int make_summary(struct diff *d)
{
	struct strbuf sb = STRBUF_INIT;
	size_t tb = total_traces(d, 0), tn = total_traces(d, 1);
	const struct model_session *a = &d->base->session, *b = &d->new_->session;

	if (tb == tn)
		strbuf_addf(&sb, "traces unchanged (%zu)", tn);
	else
		strbuf_addf(&sb, "%zu %s trace%s (%zu -> %zu)", tb > tn ? tb - tn : tn - tb, tb > tn ? "fewer" : "more",
			    (tb > tn ? tb - tn : tn - tb) == 1 ? "" : "s", tb, tn);
	strbuf_addstr(&sb, ", tracing ");
	add_signed_duration(&sb, b->trace_ns - a->trace_ns);
	strbuf_addf(&sb, ", eager share %.0f%% -> %.0f%%", 100 * a->eager_share, 100 * b->eager_share);
	if (d->step && d->step_compared) {
		const struct stats_compare *s = &d->step_period;

		strbuf_addf(&sb, ", per-step time %+.0f%%", 100 * (s->ratio - 1));
		if (isfinite(s->ratio_hi) && s->ratio_lo > 0)
			strbuf_addf(&sb, " (95%% interval %+.0f%% to %+.0f%%)", 100 * (s->ratio_lo - 1),
				    100 * (s->ratio_hi - 1));
		if (d->step_sampled && (d->step_wait_share[0] >= 0.1 || d->step_wait_share[1] >= 0.1))
			strbuf_addf(&sb, " (waits for a CPU %.0f%% -> %.0f%%)", 100 * d->step_wait_share[0],
				    100 * d->step_wait_share[1]);
	}
	strbuf_addf(&sb, ", findings %zu new, %zu resolved", d->nadded, d->nresolved);
	if (strbuf_failed(&sb))
		return error("out of memory");
	d->summary = strbuf_detach(&sb);
	return 0;
}

int diff_build_findings(struct diff *d)
{
	if (match_findings(d) || environment_warnings(d))
		return -1;
	return make_summary(d);
}
