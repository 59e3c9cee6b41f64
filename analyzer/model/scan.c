/* scan.c - see scan.h. */
#include "scan.h"
#include "agp_protocol.h"
#include "checked.h"
#include "db.h"
#include "util.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Tables smaller than this are scanned by one thread: threads cost more. */
#define SCAN_MIN_ROWS_PER_THREAD 250000

struct group_table {
	struct scan_group *slots;
	unsigned char *used;
	size_t cap, n;
};

static int group_table_init(struct group_table *t)
{
	t->cap = 256;
	t->n = 0;
	t->slots = calloc(t->cap, sizeof(*t->slots));
	t->used = calloc(t->cap, 1);
	return t->slots && t->used ? 0 : -1;
}

static void group_table_release(struct group_table *t)
{
	free(t->slots);
	free(t->used);
	memset(t, 0, sizeof(*t));
}

static size_t group_hash(int64_t k1, int64_t k2, size_t cap)
{
	uint64_t h = (uint64_t)k1 * 0x9E3779B97F4A7C15ULL ^ ((uint64_t)k2 + 0x632BE59BD9B4E019ULL) * 0xBF58476D1CE4E5B9ULL;

	return (size_t)(h ^ (h >> 31)) & (cap - 1);
}

static int group_table_grow(struct group_table *t)
{
	struct group_table nt;

	nt.cap = t->cap * 2;
	nt.n = t->n;
	nt.slots = alloc_zeroed(nt.cap, sizeof(*nt.slots));
	nt.used = alloc_zeroed(nt.cap, 1);
	if (!nt.slots || !nt.used) {
		free(nt.slots);
		free(nt.used);
		return -1;
	}
	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->used[i])
			continue;
		for (j = group_hash(t->slots[i].k1, t->slots[i].k2, nt.cap); nt.used[j]; j = (j + 1) & (nt.cap - 1))
			;
		nt.used[j] = 1;
		nt.slots[j] = t->slots[i];
	}
	group_table_release(t);
	*t = nt;
	return 0;
}

/* The group for (k1, k2), created empty when new; NULL when out of memory. */
static struct scan_group *group_table_get(struct group_table *t, int64_t k1, int64_t k2)
{
	size_t i;

	for (i = group_hash(k1, k2, t->cap); t->used[i]; i = (i + 1) & (t->cap - 1))
		if (t->slots[i].k1 == k1 && t->slots[i].k2 == k2)
			return &t->slots[i];
	if ((t->n + 1) * 2 > t->cap) {
		if (group_table_grow(t))
			return NULL;
		return group_table_get(t, k1, k2);
	}
	t->used[i] = 1;
	t->n++;
	memset(&t->slots[i], 0, sizeof(t->slots[i]));
	t->slots[i].k1 = k1;
	t->slots[i].k2 = k2;
	t->slots[i].first_ns = INT64_MAX;
	t->slots[i].last_ns = INT64_MIN;
	return &t->slots[i];
}

static int group_merge(struct group_table *t, const struct scan_group *g)
{
	struct scan_group *d = group_table_get(t, g->k1, g->k2);

	if (!d)
		return -1;
	d->count += g->count;
	d->total_ns = dur_add(d->total_ns, g->total_ns);
	d->python_ns = dur_add(d->python_ns, g->python_ns);
	d->flagged += g->flagged;
	d->failed += g->failed;
	d->kept += g->kept;
	d->brief += g->brief;
	d->brief_ns = dur_add(d->brief_ns, g->brief_ns);
	d->gaps += g->gaps;
	d->gap_ns = dur_add(d->gap_ns, g->gap_ns);
	if (g->first_ns < d->first_ns)
		d->first_ns = g->first_ns;
	if (g->last_ns > d->last_ns)
		d->last_ns = g->last_ns;
	return 0;
}

/* What scan_fanout() runs: sql over path's rowid range [lo, hi]. */
struct scan_spec {
	const char *path;
	const char *sql;
	int64_t lo, hi;
	const struct scan_walk *walk; /* riding along, or NULL */
	int eager;          /* the eager ops' table: their rows' steady parts too (group_add_steady) */
	size_t dense;       /* agprof_rows: key ids below this are grouped in an array, not hashed */
};

struct scan_job {
	const char *path;
	const char *sql;
	int64_t lo, hi;     /* rowid range [lo, hi] */
	struct group_table groups;
	int64_t rows;
	struct scan_group *last; /* consecutive rows usually share their group */
	const struct scan_walk *walk; /* riding along the rows, with its part's state */
	int eager;          /* scan_spec.eager */
	void *walk_part;
	struct scan_group *dense; /* agprof_rows: the groups of key ids 0 .. ndense - 1 (k2 0), moved into groups at the end */
	size_t ndense;
	int oom;
	int rc;
	char err[256];
};

/*
 * The per-row work runs inside SQLite as an aggregate function: reading
 * sqlite3_value arguments costs much less than a sqlite3_step() and one
 * sqlite3_column_*() call per column for each of millions of rows.
 * Arguments: k1, k2, start_ns, end_ns, flag, ok, raw columns: every
 * expression in the SQL costs opcodes per row.
 */
/* The group of (k1, k2) for the row being aggregated (consecutive rows usually share one); NULL: out of memory. */
static struct scan_group *job_group(sqlite3_context *ctx, struct scan_job *job, int64_t k1, int64_t k2)
{
	struct scan_group *g = job->last;

	if (job->oom)
		return NULL;
	if ((uint64_t)k1 < job->ndense && k2 == 0)
		return &job->dense[k1];
	if (!g || g->k1 != k1 || g->k2 != k2) {
		g = group_table_get(&job->groups, k1, k2);
		if (!g) {
			job->oom = 1;
			sqlite3_result_error_nomem(ctx);
			return NULL;
		}
		job->last = g;
	}
	return g;
}

/* Add one row to g: its cost span [first, last) lasting span ns, its flags. */
static void group_add_row(struct scan_job *job, struct scan_group *g, int64_t first, int64_t last, int64_t span,
			  int64_t python, int flag, int failed)
{
	g->count++;
	g->total_ns = dur_add(g->total_ns, span);
	g->python_ns = dur_add(g->python_ns, python < 0 ? 0 : python > span ? span : python);
	g->flagged += flag;
	g->failed += failed;
	if (first < g->first_ns)
		g->first_ns = first;
	if (last > g->last_ns)
		g->last_ns = last;
	job->rows++;
}

/* An eager op kept as a row: its dispatch and the Python before it, for scan_group_steady_ns(). */
static void group_add_steady(struct scan_group *g, int64_t dispatch, int64_t python)
{
	g->kept++;
	if (dispatch >= 0 && dispatch < AGP_PYTHON_GAP_MAX_NS) {
		g->brief++;
		g->brief_ns += dispatch;  /* each under 1 ms: no overflow below 2^43 rows */
	}
	if (python > 0 && python < AGP_PYTHON_GAP_MAX_NS) {
		g->gaps++;
		g->gap_ns += python;
	}
}

/* mean (sum / n) times count, clamped to [0, 2^62]. */
static int64_t mean_times(int64_t sum, int64_t n, int64_t count)
{
	double v = (double)sum / (double)n * (double)count;

	return v <= 0 ? 0 : v >= 4611686018427387904.0 ? INT64_C(4611686018427387904) : (int64_t)v;
}

int64_t scan_group_steady_ns(const struct scan_group *g, double wait_share)
{
	int64_t python = g->python_ns < 0 ? 0 : g->python_ns;
	int64_t dispatch = g->total_ns > python ? g->total_ns - python : 0;

	if (g->brief > 0 && 2 * g->brief >= g->kept)
		dispatch = mean_times(g->brief_ns, g->brief, g->count);
	else if (wait_share > 0)  /* long by nature: its recorded time less the waits in it */
		dispatch = (int64_t)((double)dispatch * (1 - (wait_share < 1 ? wait_share : 1)));
	if (g->gaps > 0 && 2 * g->gaps >= g->kept)
		python = mean_times(g->gap_ns, g->gaps, g->count);
	return dur_add(dispatch, python);
}

static void agg_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct scan_job *job = sqlite3_user_data(ctx);
	struct scan_group *g = job_group(ctx, job, sqlite3_value_int64(argv[0]), sqlite3_value_int64(argv[1]));
	/* clamped: a hostile timestamp must not overflow the sums (checked.h) */
	int64_t start = ts_clamp(sqlite3_value_int64(argv[2])), end = ts_clamp(sqlite3_value_int64(argv[3]));

	(void)argc;
	if (!g)
		return;
	/* an end before its start costs 0 */
	group_add_row(job, g, start, end, span_ns(start, end), sqlite3_value_int64(argv[6]),
		      sqlite3_value_int(argv[4]) != 0, sqlite3_value_int(argv[5]) == 0);
	if (job->eager) {  /* start is the cost's: the Python before the dispatch */
		int64_t python = sqlite3_value_int64(argv[6]);

		group_add_steady(g, sat_sub64(span_ns(start, end), python), python);
	}
	if (job->walk)
		job->walk->row(job->walk_part, argv);
}

/*
 * Schema 6's eager_op_rows, raw: key, start (after the key's base: may be
 * negative), dur, python_ns, flags (already masked to what the caller
 * counts).  The group is the key's (k2 = 0); times stay relative until
 * map_key_groups() adds the base.  The cost is dur + python_ns, as
 * end_ns - (start_ns - python_ns) of the view.
 */
static void agg_rows_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct scan_job *job = sqlite3_user_data(ctx);
	struct scan_group *g = job_group(ctx, job, sqlite3_value_int64(argv[0]), 0);
	int64_t start = sqlite3_value_int64(argv[1]), dur = sqlite3_value_int64(argv[2]);
	int64_t python = sqlite3_value_int64(argv[3]), flags = sqlite3_value_int64(argv[4]);
	int64_t span = sat_add64(dur, python);

	(void)argc;
	if (!g)
		return;
	group_add_row(job, g, sat_sub64(start, python), sat_add64(start, dur), span < 0 ? 0 : ts_clamp(span), python,
		      (flags & 1) != 0, (flags & 2) != 0);
	group_add_steady(g, dur, python);
	if (job->walk)
		job->walk->eager_row(job->walk_part, g->k1, start, dur);
}

static void agg_final(sqlite3_context *ctx)
{
	sqlite3_result_int64(ctx, ((struct scan_job *)sqlite3_user_data(ctx))->rows);
}

/* The dense groups, empty (job->ndense of them): 0 or -1. */
static int dense_init(struct scan_job *job)
{
	if (!job->ndense)
		return 0;
	if (!(job->dense = malloc(job->ndense * sizeof(*job->dense))))
		return -1;
	for (size_t i = 0; i < job->ndense; i++) {
		memset(&job->dense[i], 0, sizeof(job->dense[i]));
		job->dense[i].k1 = (int64_t)i;
		job->dense[i].first_ns = INT64_MAX;
		job->dense[i].last_ns = INT64_MIN;
	}
	return 0;
}

/* The dense groups that have rows join the hashed ones: 0 or -1. */
static int dense_into_groups(struct scan_job *job)
{
	for (size_t i = 0; i < job->ndense; i++)
		if (job->dense[i].count && group_merge(&job->groups, &job->dense[i]))
			return -1;
	free(job->dense);
	job->dense = NULL;
	job->ndense = 0;
	return 0;
}

static void *scan_worker(void *arg)
{
	struct scan_job *job = arg;
	sqlite3 *db = NULL;
	sqlite3_stmt *stmt = NULL;
	int rc;

	job->rc = -1;
	if (group_table_init(&job->groups) || dense_init(job)) {
		snprintf(job->err, sizeof(job->err), "out of memory");
		return NULL;
	}
	if (db_open_readonly(job->path, SQLITE_OPEN_NOMUTEX, &db) != SQLITE_OK) {
		snprintf(job->err, sizeof(job->err), "cannot open '%s': %s", job->path, db ? sqlite3_errmsg(db) : "out of memory");
		goto cleanup;
	}
	/* Reading through mmap avoids one copy per page. */
	if (getenv("AGPROF_MMAP"))
		sqlite3_exec(db, "PRAGMA mmap_size=17179869184", NULL, NULL, NULL);
	/* agprof_group: seven arguments, then a walk's columns */
	if (sqlite3_create_function(db, "agprof_group", -1, SQLITE_UTF8, job, NULL, agg_step, agg_final) != SQLITE_OK ||
	    sqlite3_create_function(db, "agprof_rows", 5, SQLITE_UTF8, job, NULL, agg_rows_step, agg_final) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, job->sql, -1, &stmt, NULL) != SQLITE_OK) {
		snprintf(job->err, sizeof(job->err), "%s in '%s'", sqlite3_errmsg(db), job->sql);
		goto cleanup;
	}
	sqlite3_bind_int64(stmt, 1, job->lo);
	sqlite3_bind_int64(stmt, 2, job->hi);
	while ((rc = sqlite3_step(stmt)) == SQLITE_ROW)
		continue;  /* the aggregate functions fill job */
	if (rc != SQLITE_DONE) {
		snprintf(job->err, sizeof(job->err), "cannot read '%s': %s", job->path,
			 job->oom ? "out of memory" : sqlite3_errmsg(db));
		goto cleanup;
	}
	if (dense_into_groups(job)) {
		snprintf(job->err, sizeof(job->err), "out of memory");
		goto cleanup;
	}
	job->rc = 0;
cleanup:
	sqlite3_finalize(stmt);
	sqlite3_close(db);
	return NULL;
}

int scan_threads(void)
{
	const char *env = getenv("AGPROF_SCAN_THREADS");
	long n = env && *env ? strtol(env, NULL, 10) : sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		n = 1;
	if (n > SCAN_MAX_THREADS)
		n = SCAN_MAX_THREADS;
	return (int)n;
}

/* Read one integer from a query without parameters; 0 when NULL. */
static int query_int64(sqlite3 *db, const char *sql, int64_t *out)
{
	sqlite3_stmt *stmt = NULL;
	int rc = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK)
		goto cleanup;
	if (sqlite3_step(stmt) != SQLITE_ROW)
		goto cleanup;
	*out = sqlite3_column_int64(stmt, 0);
	rc = 0;
cleanup:
	if (rc)
		error("%s in '%s'", sqlite3_errmsg(db), sql);
	sqlite3_finalize(stmt);
	return rc;
}

/*
 * Where an event's cost starts: an eager op's includes the Python that led
 * to it from the thread's previous dispatch (eager_ops.python_ns).
 */
static const char *cost_start(const char *table)
{
	return strcmp(table, "eager_ops") == 0 ? "start_ns - python_ns" : "start_ns";
}

/* That Python's share, kept apart too (scan_group.python_ns). */
static const char *table_python(const char *table)
{
	return strcmp(table, "eager_ops") == 0 ? "python_ns" : "0";
}

/*
 * Run sql over the rowid range [lo, hi] split across parallel read-only
 * connections; returns the jobs (each holding its part's result), or NULL
 * when out of memory.  *failed is set, after one error line, when a part
 * failed.  The caller merges the parts, then scan_jobs_free().
 */
static struct scan_job *scan_fanout(const struct scan_spec *spec, int *njobs, int *failed)
{
	/* ids come from the file: hi - lo may not fit in int64 (the rows do) */
	int64_t lo = spec->lo, hi = spec->hi;
	unsigned __int128 span = hi >= lo ? (unsigned __int128)((uint64_t)hi - (uint64_t)lo) + 1 : 0;
	int nthreads = scan_threads();
	struct scan_job *jobs;
	pthread_t *tids;
	char *walk_parts = NULL;

	if (span / SCAN_MIN_ROWS_PER_THREAD + 1 < (unsigned)nthreads)
		nthreads = (int)(span / SCAN_MIN_ROWS_PER_THREAD + 1);
	jobs = calloc((size_t)nthreads, sizeof(*jobs));
	tids = calloc((size_t)nthreads, sizeof(*tids));
	if (!jobs || !tids) {
		free(jobs);
		free(tids);
		return NULL;
	}
	if (spec->walk && !(walk_parts = spec->walk->parts(spec->walk->ctx, nthreads))) {
		free(jobs);
		free(tids);
		return NULL;
	}
	for (int i = 0; i < nthreads; i++) {
		jobs[i].path = spec->path;
		jobs[i].sql = spec->sql;
		jobs[i].ndense = spec->dense;
		jobs[i].lo = (int64_t)((uint64_t)lo + (uint64_t)(span * (unsigned)i / (unsigned)nthreads));
		jobs[i].hi = (int64_t)((uint64_t)lo + (uint64_t)(span * (unsigned)(i + 1) / (unsigned)nthreads) - 1);
		jobs[i].walk = spec->walk;
		jobs[i].eager = spec->eager;
		jobs[i].walk_part = walk_parts ? walk_parts + (size_t)i * spec->walk->part_size : NULL;
	}
	for (int i = 1; i < nthreads; i++)
		if (pthread_create(&tids[i], NULL, scan_worker, &jobs[i]) != 0) {
			/* Run it here instead. */
			tids[i] = 0;
			scan_worker(&jobs[i]);
		}
	scan_worker(&jobs[0]);
	for (int i = 1; i < nthreads; i++)
		if (tids[i])
			pthread_join(tids[i], NULL);
	free(tids);
	*njobs = nthreads;
	*failed = 0;
	for (int i = 0; i < nthreads && !*failed; i++)
		if (jobs[i].rc) {
			error("%s", jobs[i].err);
			*failed = 1;
		}
	return jobs;
}

static void scan_jobs_free(struct scan_job *jobs, int njobs)
{
	for (int i = 0; jobs && i < njobs; i++) {
		group_table_release(&jobs[i].groups);
		free(jobs[i].dense);
	}
	free(jobs);
}

/* Open path read-only and read table's rowid range; NULL after an error line. */
static sqlite3 *open_id_range(const char *path, const char *table, int64_t *lo, int64_t *hi)
{
	sqlite3 *db = NULL;

	*lo = 0, *hi = -1;
	if (db_open_readonly(path, 0, &db) != SQLITE_OK) {
		error("cannot open '%s': %s", path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return NULL;
	}
	if (scan_id_range(db, table, lo, hi) == 0)
		return db;
	sqlite3_close(db);
	return NULL;
}

int scan_id_range(sqlite3 *db, const char *table, int64_t *lo, int64_t *hi)
{
	char q[160];

	/* one aggregate per statement: min(id) and max(id) together would scan the table */
	*lo = 0, *hi = -1;
	/* schema 6: the view's ids are its rows table's (through the view min() would scan the join) */
	if (!strcmp(table, "eager_ops") && db_has_table(db, "eager_op_rows"))
		table = "eager_op_rows";
	snprintf(q, sizeof(q), "SELECT coalesce(min(id), 0) FROM %s", table);
	if (query_int64(db, q, lo))
		return -1;
	snprintf(q, sizeof(q), "SELECT coalesce(max(id), -1) FROM %s", table);
	if (query_int64(db, q, hi)) {
		*lo = 0, *hi = -1;
		return -1;
	}
	if (*hi < *lo)
		*lo = 0, *hi = -1;
	return 0;
}

/*
 * Schema 5: the eager ops past the recording's budget are rows of
 * eager_op_buckets (count, summed times), with the eager_ops columns the
 * keys name (tid, op_id, callsite_id, slow_path as a count); added to the
 * groups as the rows they stand for.  A table without buckets, or a
 * recording older than schema 5, adds nothing.
 */
#define BUCKET_MAX_OPS (INT64_C(1) << 32)

static const char *bucket_table(sqlite3 *db, const char *table)
{
	/* schema 7: graph calls and black-box runs past the budget, with the row tables' column names */
	static const char *const pairs[][2] = {
		{ "eager_ops", "eager_op_buckets" }, { "function_calls", "function_call_buckets" },
		{ "blackbox_execs", "blackbox_buckets" },
	};

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
		if (!strcmp(table, pairs[i][0]))
			return db_has_table(db, pairs[i][1]) ? pairs[i][1] : NULL;
	return NULL;
}

/* Only eager ops have a Python share (python_ns); the other buckets' is 0. */
static const char *bucket_python(const char *bt)
{
	return !strcmp(bt, "eager_op_buckets") ? "python_ns" : "0";
}

static int scan_buckets(sqlite3 *db, const char *table, const char *k1, const char *k2, const char *flag,
			const char *ok, struct group_table *all, int64_t *rows)
{
	const char *bt = bucket_table(db, table);
	sqlite3_stmt *st;
	char sql[512];
	int rc;

	if (!bt)
		return 0;
	/* python_ns: an eager op's cost starts where its Python did (cost_start) */
	snprintf(sql, sizeof(sql),
		 "SELECT %s, %s, max(count, 0), max(total_ns, 0), max(%s, 0), %s, %s, start_ns, end_ns FROM %s",
		 k1, k2, bucket_python(bt), strcmp(flag, "0") ? flag : "0", strcmp(ok, "1") ? "failed" : "0", bt);
	if (!(st = db_prepare(db, sql)))
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct scan_group g = {
			.k1 = sqlite3_column_int64(st, 0), .k2 = sqlite3_column_int64(st, 1),
			.count = sqlite3_column_int64(st, 2),
			.total_ns = dur_add(ts_clamp(sqlite3_column_int64(st, 3)), ts_clamp(sqlite3_column_int64(st, 4))),
			.python_ns = ts_clamp(sqlite3_column_int64(st, 4)),
			.flagged = sqlite3_column_int64(st, 5), .failed = sqlite3_column_int64(st, 6),
			.first_ns = ts_clamp(sqlite3_column_int64(st, 7)), .last_ns = ts_clamp(sqlite3_column_int64(st, 8)),
		};

		/* the file's numbers: a second holds at most ~2^32 ops; flags at most all of them */
		g.count = g.count > BUCKET_MAX_OPS ? BUCKET_MAX_OPS : g.count;
		g.flagged = g.flagged < 0 ? 0 : g.flagged > g.count ? g.count : g.flagged;
		g.failed = g.failed < 0 ? 0 : g.failed > g.count ? g.count : g.failed;
		if (group_merge(all, &g)) {
			sqlite3_finalize(st);
			return error("out of memory");
		}
		*rows = dur_add(*rows, g.count);  /* saturating: the counts are the file's */
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : error("cannot read '%s': %s", bt, sqlite3_errmsg(db));
}

/*
 * Schema 6: the bit of eager_op_rows.flags that stands for the view's
 * column expr (slow_path: 1; ok, counted as failed: 2), 0 for a constant;
 * -1 for any other expression (then the scan reads the view).
 */
static int compact_flag(const char *expr, const char *column, int bit, const char *constant)
{
	if (!strcmp(expr, column))
		return bit;
	return !strcmp(expr, constant) ? 0 : -1;
}

/* The group of (k1, k2) in t, or NULL: never created. */
static const struct scan_group *group_table_find(const struct group_table *t, int64_t k1, int64_t k2)
{
	for (size_t i = group_hash(k1, k2, t->cap); t->used[i]; i = (i + 1) & (t->cap - 1))
		if (t->slots[i].k1 == k1 && t->slots[i].k2 == k2)
			return &t->slots[i];
	return NULL;
}

/*
 * Schema 6: the groups of *all, one per eager_op_keys id (k1 = id, k2 = 0,
 * times after the key's base), become the caller's: k1 and k2 evaluated
 * over each key's row (its columns are the view's pid, tid, op_id,
 * device_id, callsite_id), times made absolute.  Rows whose key has no row
 * are left out, as the view leaves them.  *rows is recounted.
 */
static int map_key_groups(sqlite3 *db, const char *k1, const char *k2, struct group_table *all, int64_t *rows)
{
	struct group_table mapped;
	sqlite3_stmt *st;
	char sql[512];
	int rc;

	snprintf(sql, sizeof(sql), "SELECT id, %s, %s, base_ns FROM eager_op_keys", k1, k2);
	if (group_table_init(&mapped))
		return error("out of memory");
	if (!(st = db_prepare(db, sql))) {
		group_table_release(&mapped);
		return -1;
	}
	*rows = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const struct scan_group *g = group_table_find(all, sqlite3_column_int64(st, 0), 0);
		int64_t base = ts_clamp(sqlite3_column_int64(st, 3));
		struct scan_group m;

		if (!g)
			continue;
		m = *g;
		m.k1 = sqlite3_column_int64(st, 1), m.k2 = sqlite3_column_int64(st, 2);
		m.first_ns = ts_clamp(sat_add64(g->first_ns, base));
		m.last_ns = ts_clamp(sat_add64(g->last_ns, base));
		if (group_merge(&mapped, &m)) {
			rc = SQLITE_NOMEM;
			break;
		}
		*rows = dur_add(*rows, g->count);
	}
	sqlite3_finalize(st);
	group_table_release(all);
	*all = mapped;
	if (rc != SQLITE_DONE)
		return error("cannot read 'eager_op_keys': %s", rc == SQLITE_NOMEM ? "out of memory" : sqlite3_errmsg(db));
	return 0;
}

/* Key ids of schema 6 below this are grouped in an array (scan_job.dense): the writer's are 1 .. keys. */
#define SCAN_DENSE_KEYS 65536

/* How many of the smallest key ids to group in an array: up to the largest id, when that is small. */
static size_t dense_keys(sqlite3 *db)
{
	int64_t max = 0;

	if (!db_has_table(db, "eager_op_keys") || query_int64(db, "SELECT coalesce(max(id), 0) FROM eager_op_keys", &max) ||
	    max < 0 || max >= SCAN_DENSE_KEYS)
		return 0;
	return (size_t)max + 1;
}

int scan_table(const char *path, const char *table, const char *k1, const char *k2,
	       const char *flag, const char *ok, struct scan_result *out)
{
	return scan_table_walk(path, table, k1, k2, flag, ok, NULL, out);
}

int scan_table_walk(const char *path, const char *table, const char *k1, const char *k2, const char *flag,
		    const char *ok, const struct scan_walk *walk, struct scan_result *out)
{
	char sql[512];
	sqlite3 *db;
	int64_t lo, hi;
	int nthreads = 0, failed = 0, rc = -1;
	struct scan_job *jobs = NULL;
	struct group_table all = { 0 };
	int compact, slow, failed_bit;

	memset(out, 0, sizeof(*out));
	if (!(db = open_id_range(path, table, &lo, &hi)))
		goto cleanup;
	/* schema 6's eager ops: the rows grouped by key, no join per row; the keys map to k1, k2 after */
	slow = compact_flag(flag, "slow_path", 1, "0"), failed_bit = compact_flag(ok, "ok", 2, "1");
	compact = !strcmp(table, "eager_ops") && db_has_table(db, "eager_op_rows") && slow >= 0 && failed_bit >= 0;
	if (compact)
		snprintf(sql, sizeof(sql), "SELECT agprof_rows(key, start, dur, python_ns, flags & %d) FROM eager_op_rows"
			 " WHERE id BETWEEN ?1 AND ?2", slow | failed_bit);
	else
		snprintf(sql, sizeof(sql),
			 "SELECT agprof_group(%s, %s, %s, end_ns, %s, %s, %s%s%s) FROM %s WHERE id BETWEEN ?1 AND ?2",
			 k1, k2, cost_start(table), flag, ok, table_python(table), walk && walk->columns ? ", " : "",
			 walk && walk->columns ? walk->columns : "", table);
	jobs = scan_fanout(&(struct scan_spec){ .path = path, .sql = sql, .lo = lo, .hi = hi,
						.eager = !strcmp(table, "eager_ops"),
						.walk = walk && walk->kind == (compact ? SCAN_WALK_EAGER_ROWS : SCAN_WALK_TABLE)
								? walk : NULL,
						.dense = compact ? dense_keys(db) : 0 },
			   &nthreads, &failed);
	if (!jobs || group_table_init(&all)) {
		error("out of memory");
		goto cleanup;
	}
	if (failed)
		goto cleanup;
	rc = 0;
	for (int i = 0; i < nthreads; i++) {
		out->rows += jobs[i].rows;
		for (size_t j = 0; j < jobs[i].groups.cap; j++)
			if (jobs[i].groups.used[j] && group_merge(&all, &jobs[i].groups.slots[j])) {
				rc = error("out of memory");
				break;
			}
	}
	if (!rc && compact)
		rc = map_key_groups(db, k1, k2, &all, &out->rows);
	if (rc || (rc = scan_buckets(db, table, k1, k2, flag, ok, &all, &out->rows)) != 0)
		goto cleanup;
	out->groups = calloc(all.n ? all.n : 1, sizeof(*out->groups));
	if (!out->groups) {
		rc = error("out of memory");
		goto cleanup;
	}
	out->first_ns = INT64_MAX;
	out->last_ns = INT64_MIN;
	for (size_t j = 0; j < all.cap; j++) {
		struct scan_group *g;

		if (!all.used[j])
			continue;
		g = &out->groups[out->ngroups++];
		*g = all.slots[j];
		out->total_ns = dur_add(out->total_ns, g->total_ns);
		if (g->first_ns < out->first_ns)
			out->first_ns = g->first_ns;
		if (g->last_ns > out->last_ns)
			out->last_ns = g->last_ns;
	}
	if (!out->ngroups)
		out->first_ns = out->last_ns = 0;
cleanup:
	scan_jobs_free(jobs, nthreads);
	group_table_release(&all);
	sqlite3_close(db);
	if (rc)
		scan_result_release(out);
	return rc;
}

void scan_result_release(struct scan_result *r)
{
	free(r->groups);
	memset(r, 0, sizeof(*r));
}

void scan_eager_block_ids(char *buf, size_t len, const char *id, const char *pid, const char *tid, const char *from,
			  const char *to, const char *w)
{
	char cond[640], thread[160] = "";

	if (pid && tid)
		snprintf(thread, sizeof(thread), "pid = %s AND tid = %s AND ", pid, tid);
	snprintf(cond, sizeof(cond),
		 "FROM eager_op_blocks WHERE %smin_start_ns >= (%s) - (%s) AND min_start_ns < (%s) AND max_start_ns >= (%s)",
		 thread, from, w, to, from);
	snprintf(buf, len, " AND %s BETWEEN (SELECT min(first_id) %s) AND (SELECT max(last_id) %s)", id, cond, cond);
}

int64_t scan_eager_block_span(sqlite3 *db)
{
	int64_t w = 0;

	/* a hostile block's negative or overflowing span: the widest sane one is as good */
	if (query_int64(db, "SELECT coalesce(max(max(max_start_ns - min_start_ns, 0)), 0) FROM eager_op_blocks", &w))
		return INT64_C(1) << 62;  /* every block then */
	return w < 0 ? 0 : w;
}

const char *scan_all_calls(sqlite3 *db)
{
#define ROWS "SELECT id, pid, tid, start_ns, end_ns, graph_function_id, name_id, 1 AS n," \
	     " max(end_ns - start_ns, 0) AS ns FROM function_calls"
	/* a hostile bucket's count or time: clamped as scan_buckets clamps them */
	(void)db;  /* schema 1-6: an empty function_call_buckets (compat.c) */
	return "(" ROWS " UNION ALL SELECT NULL, pid, tid, start_ns, end_ns, graph_function_id, name_id,"
	       " min(max(count, 0), 4294967296), max(total_ns, 0) FROM function_call_buckets)";
#undef ROWS
}
