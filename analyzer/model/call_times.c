/* call_times.c - one function's graph calls one by one (call_times.h). */
#include "call_times.h"
#include "checked.h"
#include "db.h"
#include "model.h"
#include "recording.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The calls of graph functions that are f's user-level call (roles as model.c counts calls). */
static const char calls_sql[] =
	"SELECT c.tid, c.start_ns, c.end_ns, c.pid FROM function_calls c"
	" WHERE c.graph_function_id IN (SELECT g.id FROM graph_functions g"
	"  WHERE (g.function_id = ?1 OR g.trace_id IN (SELECT t.id FROM traces t WHERE t.function_id = ?1))"
	"  AND g.role IN ('inference', 'forward', 'loaded', 'other'))"
	" ORDER BY c.pid, c.tid, c.start_ns LIMIT 1000000"; /* CALL_TIMES_MAX */

/* cpu_samples (docs/schema.md), each row with the start of the interval it covers. */
struct cpu_interval {
	int64_t pid, t0, t1;
	double run, wait;
};

struct cpu_intervals {
	struct cpu_interval *v;
	size_t n, cap;
};

/* A process's first row covers one sampling period (its baseline is not stored). */
#define FIRST_INTERVAL_NS 50000000

static const char samples_sql[] = "SELECT pid, t_ns, run_ns, wait_ns FROM cpu_samples"
				  " WHERE run_ns >= 0 AND wait_ns >= 0 ORDER BY pid, t_ns LIMIT 10000000";

/* The recording's samples by pid and time into ci (empty). */
static int load_intervals(const struct model *m, struct cpu_intervals *ci)
{
	sqlite3_stmt *s;
	int rc;

	if (!(s = db_prepare(m->rec->db, samples_sql)))
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(s, 0), t = sqlite3_column_int64(s, 1);
		int same = ci->n && ci->v[ci->n - 1].pid == pid;
		int64_t t0 = same ? ci->v[ci->n - 1].t1 : t - FIRST_INTERVAL_NS;

		if (same ? t <= t0 : t < INT64_MIN + FIRST_INTERVAL_NS)
			continue;  /* a repeated or damaged time */
		if (ARRAY_GROW(ci->v, ci->n, ci->cap))
			break;
		ci->v[ci->n] = (struct cpu_interval){ pid, t0, t, (double)sqlite3_column_int64(s, 2),
						      (double)sqlite3_column_int64(s, 3) };
		ci->n++;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error("%s: cannot read cpu_samples: %s", m->rec->path, sqlite3_errmsg(m->rec->db));
	return rc == SQLITE_ROW ? error("out of memory") : 0;
}

int cpu_intervals_load(const struct model *m, struct cpu_intervals **out)
{
	*out = NULL;
	if (!db_has_table(m->rec->db, "cpu_samples"))
		return 0;
	if (!(*out = calloc(1, sizeof(**out))))
		return error("out of memory");
	if (load_intervals(m, *out)) {
		cpu_intervals_free(*out);
		*out = NULL;
		return -1;
	}
	return 0;
}

void cpu_intervals_free(struct cpu_intervals *ci)
{
	if (ci)
		free(ci->v);
	free(ci);
}

/* The first interval of pid that ends after t (ci->n when none). */
static size_t interval_after(const struct cpu_intervals *ci, int64_t pid, int64_t t)
{
	size_t lo = 0, hi = ci->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cpu_interval *x = &ci->v[mid];

		if (x->pid < pid || (x->pid == pid && x->t1 <= t))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The threads' run and wait in [a, b), each interval's spread evenly over it. */
static void cpu_between(const struct cpu_intervals *ci, int64_t pid, int64_t a, int64_t b, double *run, double *wait)
{
	for (size_t i = interval_after(ci, pid, a); i < ci->n && ci->v[i].pid == pid && ci->v[i].t0 < b; i++) {
		const struct cpu_interval *x = &ci->v[i];
		double lo = (double)(a > x->t0 ? a : x->t0), hi = (double)(b < x->t1 ? b : x->t1);
		double part = (hi - lo) / (double)(x->t1 - x->t0);

		*run += part * x->run;
		*wait += part * x->wait;
	}
}

int64_t cpu_intervals_run(const struct cpu_intervals *ci, int64_t a, int64_t b)
{
	double run = 0, wait = 0;

	if (!ci || !ci->n)
		return -1;
	for (size_t i = 0; i < ci->n;) {
		int64_t pid = ci->v[i].pid;

		cpu_between(ci, pid, a, b, &run, &wait);
		while (i < ci->n && ci->v[i].pid == pid)
			i++;
	}
	return run < 9e18 ? (int64_t)run : INT64_MAX;
}

static int push(int64_t **v, size_t *n, size_t *cap, int64_t x)
{
	if (ARRAY_GROW(*v, *n, *cap))
		return -1;
	(*v)[(*n)++] = x;
	return 0;
}

/* One step period [a, b) of pid: its length, and its threads' CPU time and wait when there are samples. */
static int add_period(struct call_times *ct, const struct cpu_intervals *ci, int64_t pid, int64_t a, int64_t b)
{
	if (push(&ct->period_ns, &ct->nperiods, &ct->cap_period, b - a))
		return -1;
	if (ci && ci->n) {
		ct->sampled = 1;
		cpu_between(ci, pid, a, b, &ct->run_ns, &ct->wait_ns);
	}
	return 0;
}

/* A call or period starting at t is read (the caller's time range, call_times.from_ns and to_ns). */
static int in_range(const struct call_times *ct, int64_t t)
{
	return !ct->to_ns || (t >= ct->from_ns && t < ct->to_ns);
}

int call_times_add(const struct model *m, const struct model_function *f, struct call_times *ct)
{
	sqlite3_stmt *s;
	int64_t prev_pid = 0, prev_tid = 0, prev_start = -1;
	int rc = SQLITE_DONE, ret = -1, oom = 0;

	if (!(s = db_prepare(m->rec->db, calls_sql)))
		return -1;
	sqlite3_bind_int64(s, 1, f->id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t tid = sqlite3_column_int64(s, 0), start = sqlite3_column_int64(s, 1);
		int64_t end = sqlite3_column_int64(s, 2), pid = sqlite3_column_int64(s, 3);

		/* a damaged row (times are untrusted): no duration, and no difference that overflows */
		if (end < start || (start < 0 && end > INT64_MAX + start))
			continue;
		if ((in_range(ct, start) && push(&ct->dur_ns, &ct->n, &ct->cap_dur, end - start)) ||
		    (prev_start >= 0 && pid == prev_pid && tid == prev_tid && start > prev_start &&
		     in_range(ct, prev_start) && add_period(ct, ct->cpu, pid, prev_start, start))) {
			oom = 1;
			break;
		}
		prev_pid = pid;
		prev_tid = tid;
		prev_start = start;
	}
	if (oom)
		error("out of memory");
	else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		error("%s: cannot read the calls of %s: %s", m->rec->path, f->name, sqlite3_errmsg(m->rec->db));
	else
		ret = 0;
	sqlite3_finalize(s);
	sort_array(ct->dur_ns, ct->n, sizeof(int64_t), cmp_int64);
	sort_array(ct->period_ns, ct->nperiods, sizeof(int64_t), cmp_int64);
	return ret;
}

const struct model_function *call_times_step_function(const struct model *m)
{
	const struct model_function *best = NULL;

	for (size_t i = 0; i < m->nfunctions; i++)
		if (m->functions[i].calls > 1 && (!best || m->functions[i].calls > best->calls))
			best = &m->functions[i];
	return best;
}

double call_times_wait_share(const struct call_times *ct)
{
	return ct->run_ns + ct->wait_ns > 0 ? ct->wait_ns / (ct->run_ns + ct->wait_ns) : 0;
}

void call_times_release(struct call_times *ct)
{
	free(ct->dur_ns);
	free(ct->period_ns);
	memset(ct, 0, sizeof(*ct));
}
