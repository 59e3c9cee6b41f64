/* diff.c - two recordings of one program compared (diff.h). */
#include "diff.h"
#include "call_times.h"
#include "checked.h"
#include "ranks.h"
#include "report.h"
#include "util.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The pooled path of file relative to m's working directory: the key that survives another checkout. */
static const char *rel_file(struct diff *d, const struct model *m, const char *file)
{
	return file ? strpool_str(&d->pool, report_rel_path(m, file)) : NULL;
}

/* Which def of f's name in f's file it is, by line: the n-th stays the n-th when lines move. */
static int def_ordinal(const struct model *m, const struct model_function *f)
{
	int n = 0;

	for (size_t i = 0; i < m->nfunctions; i++) {
		const struct model_function *g = &m->functions[i];
		int seen = 0;

		if (strcmp(g->name, f->name) || !diff_same(g->def.file, f->def.file) || g->def.line >= f->def.line)
			continue;
		for (size_t k = 0; k < i && !seen; k++) /* count each earlier line once (several processes) */
			seen = !strcmp(m->functions[k].name, f->name) && diff_same(m->functions[k].def.file, f->def.file) &&
			       m->functions[k].def.line == g->def.line;
		n += !seen;
	}
	return n;
}

static struct diff_function *fn_slot(struct diff *d, size_t *cap, const char *name, const char *file, int ordinal,
				     int rank)
{
	struct diff_function *x;

	for (size_t i = 0; i < d->nfns; i++)
		if (!strcmp(d->fns[i].name, name) && diff_same(d->fns[i].file, file) && d->fns[i].ordinal == ordinal &&
		    d->fns[i].rank == rank)
			return &d->fns[i];
	if (ARRAY_GROW(d->fns, d->nfns, *cap))
		return NULL;
	x = &d->fns[d->nfns++];
	memset(x, 0, sizeof(*x));
	x->name = strpool_str(&d->pool, name);
	x->file = file;
	x->ordinal = ordinal;
	x->rank = rank;
	return x;
}

static void side_add(struct diff_side *s, const struct model_function *f)
{
	if (!s->present)
		s->def = f->def;
	s->present = 1;
	s->traces += f->ntraces;
	s->calls += f->calls;
	s->trace_ns = sat_add64(s->trace_ns, f->trace_ns);
	s->call_ns = sat_add64(s->call_ns, f->exec_ns);
	s->blackbox_execs += f->blackbox_execs;
	s->blackbox_ns = sat_add64(s->blackbox_ns, f->blackbox_ns);
	for (int c = 0; c < CAUSE__COUNT; c++)
		s->cause_counts[c] += f->cause_counts[c];
}

/* Function f of m into d's list, side which, with its calls one by one in ct[] (cpu: m's samples, or NULL). */
static int add_function(struct diff *d, size_t *cap, struct call_times **ct, size_t *capct, const struct model *m,
			const struct model_function *f, int which, const struct cpu_intervals *cpu)
{
	struct diff_function *x = fn_slot(d, cap, f->name, rel_file(d, m, f->def.file), def_ordinal(m, f),
					  ranks_of_pid(m, f->pid));
	size_t at;
	int ret;

	if (!x)
		return error("out of memory");
	at = (size_t)(x - d->fns);
	if (*capct < 2 * *cap) {
		struct call_times *p = realloc(*ct, *cap * 2 * sizeof(*p));

		if (!p)
			return error("out of memory");
		memset(p + *capct, 0, (*cap * 2 - *capct) * sizeof(*p));
		*ct = p;
		*capct = *cap * 2;
	}
	if (!x->made_by && f->made_by)
		x->made_by = strpool_str(&d->pool, f->made_by);
	side_add(which ? &x->new_ : &x->base, f);
	if (!f->calls)
		return 0;
	(*ct)[2 * at + which].cpu = cpu;
	ret = call_times_add(m, f, &(*ct)[2 * at + which]);
	(*ct)[2 * at + which].cpu = NULL;  /* cpu lives only through add_functions() */
	return ret;
}

/* Every function of m into d's list, side which (0 base, 1 new), with its calls one by one in ct[]. */
static int add_functions(struct diff *d, size_t *cap, struct call_times **ct, size_t *capct, const struct model *m,
			 int which)
{
	struct cpu_intervals *cpu;
	int ret = 0;

	if (cpu_intervals_load(m, 0, &cpu))
		return -1;
	for (size_t i = 0; i < m->nfunctions && !ret; i++)
		ret = add_function(d, cap, ct, capct, m, &m->functions[i], which, cpu);
	cpu_intervals_free(cpu);
	return ret;
}

static void side_quantiles(struct diff_side *s, const struct call_times *ct)
{
	s->median_ns = (int64_t)stats_quantile(ct->dur_ns, ct->n, 0.5);
	s->p25_ns = (int64_t)stats_quantile(ct->dur_ns, ct->n, 0.25);
	s->p75_ns = (int64_t)stats_quantile(ct->dur_ns, ct->n, 0.75);
}

/* The step: the function called most in BASE that NEW calls too; its periods compared. */
static int compare_step(struct diff *d, const struct call_times *ct)
{
	const struct diff_function *best = NULL;
	const struct call_times *a, *b;
	size_t at = 0;

	for (size_t i = 0; i < d->nfns; i++)
		if (d->fns[i].base.calls > 1 && d->fns[i].new_.calls > 1 &&
		    (!best || d->fns[i].base.calls > best->base.calls)) {
			best = &d->fns[i];
			at = i;
		}
	if (!best)
		return 0;
	d->step = best;
	a = &ct[2 * at];
	b = &ct[2 * at + 1];
	d->step_median[0] = (int64_t)stats_quantile(a->period_ns, a->nperiods, 0.5);
	d->step_median[1] = (int64_t)stats_quantile(b->period_ns, b->nperiods, 0.5);
	d->step_compared = a->nperiods > 1 && b->nperiods > 1;
	d->step_sampled = a->sampled && b->sampled;
	d->step_wait_share[0] = call_times_wait_share(a);
	d->step_wait_share[1] = call_times_wait_share(b);
	d->step_load_factor = 1;
	if (d->step_sampled) {
		double wa = d->step_wait_share[0] < 0.95 ? d->step_wait_share[0] : 0.95;
		double wb = d->step_wait_share[1] < 0.95 ? d->step_wait_share[1] : 0.95;

		if ((1 - wa) / (1 - wb) > 1)
			d->step_load_factor = (1 - wa) / (1 - wb);
	}
	if (d->step_compared && stats_compare(a->period_ns, a->nperiods, b->period_ns, b->nperiods, &d->step_period))
		return error("out of memory");
	return 0;
}

static int cmp_abs_delta_fn(const void *a, const void *b)
{
	const struct diff_function *x = a, *y = b;
	int64_t dx = llabs(x->delta_ns), dy = llabs(y->delta_ns);

	if (dx != dy)
		return dx < dy ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int build_functions(struct diff *d)
{
	struct call_times *ct = NULL;
	size_t cap = 0, capct = 0;
	int ret = -1;

	if (add_functions(d, &cap, &ct, &capct, d->base, 0) || add_functions(d, &cap, &ct, &capct, d->new_, 1))
		goto out;
	for (size_t i = 0; i < d->nfns; i++) {
		struct diff_function *x = &d->fns[i];

		side_quantiles(&x->base, &ct[2 * i]);
		side_quantiles(&x->new_, &ct[2 * i + 1]);
		x->delta_ns = sat_add64(x->new_.trace_ns, x->new_.call_ns) - sat_add64(x->base.trace_ns, x->base.call_ns);
		x->compared = ct[2 * i].n > 1 && ct[2 * i + 1].n > 1;
		if (x->compared && stats_compare(ct[2 * i].dur_ns, ct[2 * i].n, ct[2 * i + 1].dur_ns, ct[2 * i + 1].n,
						 &x->calls)) {
			error("out of memory");
			goto out;
		}
	}
	ret = compare_step(d, ct);
out:
	for (size_t i = 0; i < capct; i++)
		call_times_release(&ct[i]);
	free(ct);
	return ret;
}

static void sort_functions(struct diff *d)
{
	struct diff_function step;
	int has = d->step != NULL;

	if (has)
		step = *d->step;
	sort_array(d->fns, d->nfns, sizeof(*d->fns), cmp_abs_delta_fn);
	for (size_t i = 0; has && i < d->nfns; i++)
		if (d->fns[i].name == step.name && d->fns[i].file == step.file && d->fns[i].ordinal == step.ordinal &&
		    d->fns[i].rank == step.rank)
			d->step = &d->fns[i];
}

int diff_build(struct diff *d, const struct model *base, const struct model *new_, const char *base_path,
	       const char *new_path)
{
	struct strpool pool = STRPOOL_INIT;

	memset(d, 0, sizeof(*d));
	d->pool = pool;
	d->base = base;
	d->new_ = new_;
	d->base_path = base_path;
	d->new_path = new_path;
	if (build_functions(d) || diff_build_lines(d) || diff_build_findings(d)) {
		diff_release(d);
		return -1;
	}
	sort_functions(d);
	return 0;
}

void diff_release(struct diff *d)
{
	for (size_t i = 0; i < d->nwarnings; i++)
		free(d->warnings[i]);
	free(d->warnings);
	free(d->fns);
	free(d->lines);
	free(d->added);
	free(d->resolved);
	free(d->changed);
	free(d->summary);
	strpool_release(&d->pool);
	memset(d, 0, sizeof(*d));
}
