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

/*
 * cpu_samples (docs/schema.md), each row with the start of the interval it
 * covers, tid 0; or thread_samples, each thread's own.
 */
struct cpu_interval {
	int64_t pid, tid, t0, t1;
	double run, wait;
};

struct cpu_intervals {
	struct cpu_interval *v;
	size_t n, cap;
};

/* A process's first row covers one sampling period (its baseline is not stored). */
#define FIRST_INTERVAL_NS 50000000

/* pid, tid, interval start (NULL: the process's previous row's end), end, run, wait; by pid, tid, end. */
static const char samples_sql[] = "SELECT pid, 0, NULL, t_ns, run_ns, wait_ns FROM cpu_samples"
				  " WHERE run_ns >= 0 AND wait_ns >= 0 ORDER BY pid, t_ns LIMIT 10000000";
static const char thread_samples_sql[] = "SELECT pid, tid, from_ns, t_ns, run_ns, wait_ns FROM thread_samples"
					 " WHERE run_ns >= 0 AND wait_ns >= 0 AND from_ns < t_ns"
					 " ORDER BY pid, tid, t_ns LIMIT 10000000";

/* The rows of sql (samples_sql's columns) by pid, tid and time into ci (empty). */
static int load_intervals(const struct model *m, const char *sql, struct cpu_intervals *ci)
{
	sqlite3_stmt *s;
	int rc;

	if (!(s = db_prepare(m->rec->db, sql)))
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(s, 0), tid = sqlite3_column_int64(s, 1), t = sqlite3_column_int64(s, 3);
		const struct cpu_interval *last = ci->n ? &ci->v[ci->n - 1] : NULL;
		int same = last && last->pid == pid && last->tid == tid;
		int64_t t0;

		if (sqlite3_column_type(s, 2) != SQLITE_NULL)
			t0 = sqlite3_column_int64(s, 2);
		else if (same)
			t0 = last->t1;
		else if (t >= INT64_MIN + FIRST_INTERVAL_NS)
			t0 = t - FIRST_INTERVAL_NS;
		else
			continue;  /* a damaged time */
		if (t <= t0 || (same && t <= last->t1))
			continue;  /* a repeated or damaged time */
		if (ARRAY_GROW(ci->v, ci->n, ci->cap))
			break;
		ci->v[ci->n] = (struct cpu_interval){ pid, tid, t0, t, (double)sqlite3_column_int64(s, 4),
						      (double)sqlite3_column_int64(s, 5) };
		ci->n++;
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error("%s: cannot read its CPU samples: %s", m->rec->path, sqlite3_errmsg(m->rec->db));
	return rc == SQLITE_ROW ? error("out of memory") : 0;
}

static int cmp_interval(const void *a, const void *b)
{
	const struct cpu_interval *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->t1 < y->t1 ? -1 : x->t1 > y->t1;
}

int cpu_intervals_load(const struct model *m, int threads, struct cpu_intervals **out)
{
	int has_threads = threads && db_has_table(m->rec->db, "thread_samples");

	*out = NULL;
	if (!db_has_table(m->rec->db, "cpu_samples") && !has_threads)
		return 0;
	if (!(*out = calloc(1, sizeof(**out))))
		return error("out of memory");
	if ((db_has_table(m->rec->db, "cpu_samples") && load_intervals(m, samples_sql, *out)) ||
	    (has_threads && load_intervals(m, thread_samples_sql, *out))) {
		cpu_intervals_free(*out);
		*out = NULL;
		return -1;
	}
	if ((*out)->n > 1)
		qsort((*out)->v, (*out)->n, sizeof(*(*out)->v), cmp_interval);
	return 0;
}

void cpu_intervals_free(struct cpu_intervals *ci)
{
	if (ci)
		free(ci->v);
	free(ci);
}

/* The first interval of (pid, tid) that ends after t (ci->n when none). */
static size_t interval_after(const struct cpu_intervals *ci, int64_t pid, int64_t tid, int64_t t)
{
	size_t lo = 0, hi = ci->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cpu_interval *x = &ci->v[mid];

		if (x->pid < pid || (x->pid == pid && (x->tid < tid || (x->tid == tid && x->t1 <= t))))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int cpu_intervals_between(const struct cpu_intervals *ci, int64_t pid, int64_t tid, int64_t a, int64_t b,
			  double *run, double *wait)
{
	size_t i = ci ? interval_after(ci, pid, tid, a) : 0;
	int any = 0;

	for (; ci && i < ci->n && ci->v[i].pid == pid && ci->v[i].tid == tid && ci->v[i].t0 < b; i++) {
		const struct cpu_interval *x = &ci->v[i];
		double lo = (double)(a > x->t0 ? a : x->t0), hi = (double)(b < x->t1 ? b : x->t1);
		double part = hi > lo ? (hi - lo) / ((double)x->t1 - (double)x->t0) : 0;

		*run += part * x->run;
		*wait += part * x->wait;
		any = 1;
	}
	return any;
}

double cpu_intervals_thread_wait(const struct cpu_intervals *ci, int64_t pid, int64_t tid, int64_t a, int64_t b)
{
	double run = 0, wait = 0;

	if (b <= a)
		return 0;
	if (tid && cpu_intervals_between(ci, pid, tid, a, b, &run, &wait))
		return wait;
	run = wait = 0;
	if (!cpu_intervals_between(ci, pid, 0, a, b, &run, &wait) || run + wait <= 0)
		return 0;
	return (double)(b - a) * (wait / (run + wait));
}

int64_t cpu_intervals_run(const struct cpu_intervals *ci, int64_t a, int64_t b)
{
	double run = 0, wait = 0;

	if (!ci || !ci->n)
		return -1;
	for (size_t i = 0; i < ci->n;) {
		int64_t pid = ci->v[i].pid;

		cpu_intervals_between(ci, pid, 0, a, b, &run, &wait);  /* the process's cpu_samples (tid 0) */
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
		cpu_intervals_between(ci, pid, 0, a, b, &ct->run_ns, &ct->wait_ns);
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
