/* slices.c - the run's figures per time slice (slices.h). */
#include "slices.h"
#include "call_times.h"
#include "checked.h"
#include "db.h"
#include "graph_ops.h"
#include "model.h"
#include "model_internal.h" /* model_is_input_wait */
#include "recording.h"
#include "stats.h"
#include "util.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

/* Append the numbers of text to *edges while they are valid and ascending; 1 when all of text was read. */
static int parse_edges(const char *text, int64_t **edges, size_t *n, size_t *cap)
{
	const char *p = text;

	for (;;) {
		char *end;
		long long v;

		errno = 0;
		v = strtoll(p, &end, 10);
		if (end == p || errno || (*end && *end != ',') || (*n && v <= (*edges)[*n - 1]) || *n > SLICES_MAX)
			return 0;
		if (ARRAY_GROW(*edges, *n, *cap))
			return -1;
		(*edges)[(*n)++] = v;
		if (!*end)
			return 1;
		p = end + 1;
	}
}

int slices_parse(const char *text, int64_t **edges, size_t *n)
{
	size_t cap = 0;
	int rc;

	*edges = NULL;
	*n = 0;
	rc = parse_edges(text, edges, n, &cap);
	if (rc == 1 && *n >= 2)
		return 0;
	free(*edges);
	*edges = NULL;
	*n = 0;
	if (rc < 0)
		return error("out of memory");
	return error("--slices wants two or more ascending times in nanoseconds, T0,T1,...,Tn (at most %d slices),"
		     " not '%s'", SLICES_MAX, text);
}

/* The slice t falls in, or s->n when none. */
static size_t slice_at(const struct slices *s, int64_t t)
{
	size_t lo = 0, hi = s->n;

	if (!s->n || t < s->v[0].start_ns || t >= s->v[s->n - 1].end_ns)
		return s->n;
	while (lo + 1 < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->v[mid].start_ns <= t)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* One function's traces into the slices they start in; the first of all its traces is no retrace. */
static int add_traces(struct slices *s, const struct model_function *f, size_t *caps)
{
	for (size_t k = 0; k < f->ntraces; k++) {
		size_t i = slice_at(s, f->traces[k].start_ns);
		struct slice *sl = &s->v[i];
		struct slice_function *sf;

		if (i == s->n)
			continue;
		sf = sl->nfunctions ? &sl->functions[sl->nfunctions - 1] : NULL;
		if (!sf || sf->fn != f) {
			if (ARRAY_GROW(sl->functions, sl->nfunctions, caps[i]))
				return error("out of memory");
			sf = &sl->functions[sl->nfunctions++];
			*sf = (struct slice_function){ f, 0, 0 };
		}
		sf->traces++;
		sl->traces++;
		if (k > 0) {
			sf->retraces++;
			sl->retraces++;
		}
	}
	return 0;
}

static int slice_traces(struct slices *s, const struct model *m)
{
	size_t *caps = calloc(s->n, sizeof(*caps));
	int ret = 0;

	if (!caps)
		return error("out of memory");
	for (size_t i = 0; i < m->nfunctions && !ret; i++)
		ret = add_traces(s, &m->functions[i], caps);
	free(caps);
	return ret;
}

/*
 * Eager ops as the session counts them (analyzer/model/scan.c, input.c):
 * every row and every bucket of the budget, each op's cost its dispatch
 * plus the Python that led to it (python_ns); an op run inside a black-box
 * run on its thread is the black box's, less that Python share, which stays
 * the program's.  Iterator reads are input waits (less their Python, as
 * input.c's read_wait_ns), the rest dispatch.  An op
 * is in the slice its start_ns falls in.
 */
static const char eager_sql[] =
	"SELECT start_ns, max(0, (1 - inside) * dur + python_ns), 1 - inside, op, max(0, python_ns), pid, tid, op_id,"
	" callsite_id FROM"
	" (SELECT e.start_ns AS start_ns, e.end_ns - e.start_ns AS dur, e.python_ns AS python_ns, o.text AS op,"
	"   e.pid AS pid, e.tid AS tid, e.op_id AS op_id, e.callsite_id AS callsite_id,"
	"   EXISTS (SELECT 1 FROM blackbox_execs b WHERE b.pid = e.pid AND b.tid = e.tid"
	"    AND e.start_ns >= b.start_ns AND e.start_ns < b.end_ns) AS inside"
	"  FROM eager_ops e JOIN strings o ON o.id = e.op_id WHERE e.start_ns >= ?1 AND e.start_ns < ?2)"
	" UNION ALL SELECT e.start_ns, max(0, e.total_ns + e.python_ns), e.count, o.text, max(0, e.python_ns),"
	" e.pid, e.tid, e.op_id, e.callsite_id FROM eager_op_buckets e"
	" JOIN strings o ON o.id = e.op_id WHERE e.start_ns >= ?1 AND e.start_ns < ?2";

/*
 * A dispatch row's time at its steady cost, as its thread's eager_ns
 * counts it (model_eager_key_op_ns()): count ops at the key's price; as
 * recorded (ns) when the key has none (an op inside a black box: its
 * Python only).
 */
static int64_t steady_ns(const struct model *m, sqlite3_stmt *st, int64_t count, int64_t ns)
{
	int64_t op = count > 0 ? model_eager_key_op_ns(m, sqlite3_column_int64(st, 5), sqlite3_column_int64(st, 6),
							    sqlite3_column_int64(st, 7), sqlite3_column_int64(st, 8)) : -1;

	return op < 0 ? ns : ts_clamp(sat_mul64(op, count));
}

static int slice_eager(struct slices *s, const struct model *m)
{
	sqlite3_stmt *st = db_prepare(m->rec->db, eager_sql);
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, s->v[0].start_ns);
	sqlite3_bind_int64(st, 2, s->v[s->n - 1].end_ns);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		size_t i = slice_at(s, sqlite3_column_int64(st, 0));
		int64_t ns = sqlite3_column_int64(st, 1), count = sqlite3_column_int64(st, 2);
		struct slice *sl = &s->v[i];

		if (i == s->n)
			continue;
		if (model_is_input_wait((const char *)sqlite3_column_text(st, 3))) {
			int64_t python = sqlite3_column_int64(st, 4);

			sl->input_waits = sat_add64(sl->input_waits, count);
			sl->input_ns = dur_add(sl->input_ns, ns - (python < ns ? python : ns));
		} else {
			sl->eager_ops = sat_add64(sl->eager_ops, count);
			sl->eager_ns = dur_add(sl->eager_ns, ns);
			sl->eager_steady_ns = dur_add(sl->eager_steady_ns, steady_ns(m, st, count, ns));
		}
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return error("%s: cannot read the eager ops: %s", m->rec->path, sqlite3_errmsg(m->rec->db));
	return 0;
}

/* The step function's periods that start in sl, and their median. */
static int slice_step(struct slice *sl, const struct model *m)
{
	struct call_times ct = { 0 };

	if (!sl->step)
		return 0;
	ct.from_ns = sl->start_ns;
	ct.to_ns = sl->end_ns;
	if (call_times_add(m, sl->step, &ct))
		return -1;
	sl->step_periods = ct.nperiods;
	sl->step_median_ns = ct.nperiods ? (int64_t)stats_quantile(ct.period_ns, ct.nperiods, 0.5) : 0;
	call_times_release(&ct);
	return 0;
}

static double share(int64_t part, int64_t whole)
{
	return whole > 0 ? (double)part / (double)whole : 0;
}

/* The eager threads' own time in [from, to) (model_thread_own_ns()): the base of the slice's eager share. */
static int64_t eager_own_ns(const struct model *m, int64_t from, int64_t to)
{
	int64_t own = 0, wait;

	for (size_t i = 0; i < m->nthreads; i++)
		if (m->threads[i].eager_ops > 0)
			own = dur_add(own, model_thread_own_ns(m, &m->threads[i], from, to, &wait));
	return own;
}

/* What is computed slice by slice: recorded time, the step, the executor overhead, the shares. */
static int slice_each(struct slices *s, const struct model *m)
{
	const struct model_function *step = call_times_step_function(m);

	for (size_t i = 0; i < s->n; i++) {
		struct slice *sl = &s->v[i];
		int64_t from = sl->start_ns > m->session.first_tf_ns ? sl->start_ns : m->session.first_tf_ns;
		int64_t to = sl->end_ns < m->session.end_ns ? sl->end_ns : m->session.end_ns;

		sl->active_ns = to > from ? model_recorded_ns(m, from, to) : 0;
		sl->step = step;
		if (slice_step(sl, m) || graph_ops_busy_in(m, sl->start_ns, sl->end_ns, &sl->call_ns, &sl->busy_ns))
			return -1;
		sl->eager_share = model_eager_share(sl->eager_steady_ns, eager_own_ns(m, sl->start_ns, sl->end_ns));
		sl->input_share = share(sl->input_ns, sl->active_ns);
		sl->overhead_share = share(sl->call_ns > sl->busy_ns ? sl->call_ns - sl->busy_ns : 0, sl->call_ns);
	}
	return 0;
}

int slices_compute(struct slices *s, const struct model *m, const int64_t *edges, size_t nedges)
{
	if (nedges < 2)
		return error("no time slice to compute");
	s->n = nedges - 1;
	if (!(s->v = calloc(s->n, sizeof(*s->v)))) {
		s->n = 0;
		return error("out of memory");
	}
	for (size_t i = 0; i < s->n; i++) {
		s->v[i].start_ns = edges[i];
		s->v[i].end_ns = edges[i + 1];
	}
	if (slice_traces(s, m) || slice_eager(s, m) || slice_each(s, m)) {
		slices_release(s);
		return -1;
	}
	return 0;
}

void slices_release(struct slices *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i].functions);
	free(s->v);
	memset(s, 0, sizeof(*s));
}
