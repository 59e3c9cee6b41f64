/*
 * eager_runs.c - one function's eager ops in each thread's order, for the
 * eager-hotspot saving (eager_runs.h).
 *
 * A window query sorting every kept op by thread and time took 168 s of a
 * 10 M-event report (its sorter spilled to temporary files).  Rows are
 * stored in each thread's own order (the writer drains a thread's ring in
 * order; merge copies a rank whole), so one pass in row id order with a
 * little state per thread gives the same sums without a sort.
 */
#include "eager_runs.h"
#include "db.h"
#include "idmap.h"
#include "model.h"
#include "recording.h"
#include "saving_reads.h"
#include "checked.h"
#include "util.h"

#include "scan.h"

#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct run_thread {
	int64_t prev_end;
	int prev_mine;
	size_t call, calls_end;      /* its graph calls: [call, calls_end) of calls[] */
};

struct run_op {
	int64_t fastest;             /* the op type's fastest recorded run */
	int64_t mine;                /* runs of it in the function */
};

struct run_key {
	size_t thread, op;
	int64_t base;
	int mine;
};

/* Fewer rows than this per part: one thread reads them (threads cost more). */
#define RUNS_MIN_ROWS_PER_PART 250000

struct runs {
	struct idmap thread_ix, op_ix, key_ix, mine_sites;
	struct run_thread *threads;
	size_t nthreads, threads_cap;
	struct run_op *ops;
	size_t nops, ops_cap;
	struct run_key *keys;
	size_t nkeys, keys_cap;
	const int64_t (*calls)[4];   /* pid, tid, start, end: by thread, then start (saving_reads.c's) */
	size_t ncalls;
	struct eager_runs *out;
	int64_t gap_max;
};

/* The function's call sites (user code only): 0 or -1. */
static int load_mine(sqlite3 *db, struct runs *r, const char *file, const char *func)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT cs.id FROM callsites cs JOIN strings fs ON fs.id = cs.file_id"
				     " JOIN strings fn ON fn.id = cs.func_id"
				     " WHERE fs.text = ?1 AND fn.text = ?2 AND cs.library = 0");

	if (!s)
		return -1;
	sqlite3_bind_text(s, 1, file, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, func, -1, SQLITE_STATIC);
	while (sqlite3_step(s) == SQLITE_ROW)
		if (idmap_put(&r->mine_sites, sqlite3_column_int64(s, 0), 1) < 0)
			break;
	sqlite3_finalize(s);
	return 0;
}

static size_t thread_of(struct runs *r, int64_t pid, int64_t tid)
{
	int64_t id = (int64_t)((uint64_t)pid << 32 ^ (uint32_t)tid);
	size_t ix, lo = 0, hi = r->ncalls;
	struct run_thread *t;

	if (idmap_get(&r->thread_ix, id, &ix))
		return ix;
	if (ARRAY_GROW(r->threads, r->nthreads, r->threads_cap) || idmap_put(&r->thread_ix, id, r->nthreads) < 0)
		return SIZE_MAX;
	t = &r->threads[r->nthreads];
	memset(t, 0, sizeof(*t));
	t->prev_end = INT64_MIN;
	while (lo < hi) {  /* its first call */
		size_t mid = lo + (hi - lo) / 2;

		if (r->calls[mid][0] < pid || (r->calls[mid][0] == pid && r->calls[mid][1] < tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	t->call = t->calls_end = lo;
	while (t->calls_end < r->ncalls && r->calls[t->calls_end][0] == pid && r->calls[t->calls_end][1] == tid)
		t->calls_end++;
	return r->nthreads++;
}

static size_t op_of(struct runs *r, int64_t op_id)
{
	size_t ix;

	if (idmap_get(&r->op_ix, op_id, &ix))
		return ix;
	if (ARRAY_GROW(r->ops, r->nops, r->ops_cap) || idmap_put(&r->op_ix, op_id, r->nops) < 0)
		return SIZE_MAX;
	r->ops[r->nops].fastest = INT64_MAX;
	r->ops[r->nops].mine = 0;
	return r->nops++;
}

/* One op, in its thread's order. */
static void add_op(struct runs *r, size_t thread, size_t op, int mine, int64_t start, int64_t dur)
{
	struct run_thread *t = &r->threads[thread];
	struct eager_runs *o = r->out;
	int64_t gap;

	if (dur < 0)
		dur = 0;
	if (dur < r->ops[op].fastest)
		r->ops[op].fastest = dur;
	while (t->call < t->calls_end && r->calls[t->call][2] < start) {
		t->prev_end = r->calls[t->call][3];
		t->prev_mine = 0;  /* a graph call ends a run: its time is no Python */
		t->call++;
	}
	if (mine) {
		gap = t->prev_mine && start > t->prev_end ? start - t->prev_end : 0;
		o->ops++;
		o->eager_ns = dur_add(o->eager_ns, dur_add(dur, gap));
		o->long_gaps += t->prev_mine && gap >= r->gap_max;
		r->ops[op].mine++;
	}
	t->prev_end = start > INT64_MAX - dur ? INT64_MAX : start + dur;
	t->prev_mine = mine;
}

/*
 * Schema 6's rows, split into rowid ranges read by parallel connections
 * (a 10 M-event recording: seconds in one thread).  Each part runs add_op()'s
 * walk on its own, except for each thread's first op in it: the Python gap
 * before that op depends on the previous part's last op of the thread, so
 * stitch() adds it, going through the parts in order.  This needs each
 * thread's ops in start order (where a part starts, its graph-call cursor
 * is found by bisection); a recording where they are not is read again in
 * one part, which is add_op()'s walk exactly.
 */
struct part_thread {
	int seen;
	int64_t first_start;     /* its first op in the part: the gap before it is stitch()'s */
	int first_mine;
	int64_t last_start;
	int64_t prev_end;
	int prev_mine;
	size_t call;             /* the graph-call cursor after its last op */
};

struct part {
	const struct runs *r;
	const char *path;
	int64_t lo, hi;          /* rowid range */
	struct part_thread *threads;  /* per r->threads */
	struct run_op *ops;      /* per r->ops */
	int64_t nops, eager_ns, long_gaps;
	int in_order;            /* each thread's ops in start order within the part */
	int rc;
	char err[256];
};

/* The first of thread's graph calls that starts at or after start: those before it end a run before the op. */
static size_t first_call_from(const struct runs *r, const struct run_thread *t, int64_t start)
{
	size_t lo = t->call, hi = t->calls_end;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r->calls[mid][2] < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* add_op() for one part: the same walk, each thread's first op left to stitch(). */
static void part_op(struct part *p, const struct run_key *key, int64_t start, int64_t dur)
{
	const struct runs *r = p->r;
	const struct run_thread *rt = &r->threads[key->thread];
	struct part_thread *t = &p->threads[key->thread];

	if (dur < 0)
		dur = 0;
	if (dur < p->ops[key->op].fastest)
		p->ops[key->op].fastest = dur;
	if (!t->seen) {
		t->seen = 1;
		t->first_start = start;
		t->first_mine = key->mine;
		t->call = first_call_from(r, rt, start);
	} else {
		p->in_order &= start >= t->last_start;
		while (t->call < rt->calls_end && r->calls[t->call][2] < start) {
			t->prev_end = r->calls[t->call][3];
			t->prev_mine = 0;  /* a graph call ends a run: its time is no Python */
			t->call++;
		}
		if (key->mine) {
			int64_t gap = t->prev_mine && start > t->prev_end ? start - t->prev_end : 0;

			p->eager_ns = dur_add(p->eager_ns, gap);
			p->long_gaps += t->prev_mine && gap >= r->gap_max;
		}
	}
	if (key->mine) {
		p->nops++;
		p->eager_ns = dur_add(p->eager_ns, dur);
		p->ops[key->op].mine++;
	}
	t->last_start = start;
	t->prev_end = start > INT64_MAX - dur ? INT64_MAX : start + dur;
	t->prev_mine = key->mine;
}

/* agprof_runs(key, start, dur): one row, inside SQLite (cheaper than a step and three column reads). */
static void part_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct part *p = sqlite3_user_data(ctx);
	const struct runs *r = p->r;
	size_t ix;

	(void)argc;
	if (!idmap_get(&r->key_ix, sqlite3_value_int64(argv[0]), &ix) || ix >= r->nkeys)
		return;  /* a row of no key: untrusted input */
	part_op(p, &r->keys[ix], dur_add(r->keys[ix].base, sqlite3_value_int64(argv[1])), sqlite3_value_int64(argv[2]));
}

static void part_final(sqlite3_context *ctx)
{
	sqlite3_result_null(ctx);
}

static void *part_run(void *arg)
{
	struct part *p = arg;
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	int rc;

	p->rc = -1;
	if (db_open_readonly(p->path, SQLITE_OPEN_NOMUTEX, &db) != SQLITE_OK) {
		snprintf(p->err, sizeof(p->err), "cannot open '%s': %s", p->path, db ? sqlite3_errmsg(db) : "out of memory");
		goto cleanup;
	}
	if (sqlite3_create_function(db, "agprof_runs", 3, SQLITE_UTF8, p, NULL, part_step, part_final) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT agprof_runs(key, start, dur) FROM eager_op_rows WHERE id BETWEEN ?1 AND ?2",
			       -1, &s, NULL) != SQLITE_OK) {
		snprintf(p->err, sizeof(p->err), "cannot read '%s': %s", p->path, sqlite3_errmsg(db));
		goto cleanup;
	}
	sqlite3_bind_int64(s, 1, p->lo);
	sqlite3_bind_int64(s, 2, p->hi);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		;
	if (rc != SQLITE_DONE)
		snprintf(p->err, sizeof(p->err), "cannot read '%s': %s", p->path, sqlite3_errmsg(db));
	else
		p->rc = 0;
cleanup:
	sqlite3_finalize(s);
	sqlite3_close(db);
	return NULL;
}

/*
 * Add each part's first ops' gaps, going through the parts in order with
 * each thread's state at the end of the previous one, then the sums into
 * r.  0, or 1 when a thread's ops are not in start order and there are
 * several parts (then read again in one part).
 */
static int stitch(struct runs *r, struct part *parts, int nparts)
{
	struct part_thread *now = calloc(r->nthreads ? r->nthreads : 1, sizeof(*now));

	if (!now)
		return -1;
	for (int i = 0; i < nparts; i++) {
		struct part *p = &parts[i];

		if (!p->in_order && nparts > 1)
			goto unordered;
		for (size_t t = 0; t < r->nthreads; t++) {
			const struct part_thread *f = &p->threads[t];
			struct part_thread *c = &now[t];
			size_t before = c->seen ? c->call : r->threads[t].call, after;
			int64_t prev_end = c->seen ? c->prev_end : INT64_MIN, gap;
			int prev_mine = c->seen && c->prev_mine;

			if (!f->seen)
				continue;
			if (c->seen && f->first_start < c->last_start)
				goto unordered;
			if ((after = first_call_from(r, &r->threads[t], f->first_start)) > before) {
				prev_end = r->calls[after - 1][3];
				prev_mine = 0;
			}
			gap = prev_mine && f->first_start > prev_end ? f->first_start - prev_end : 0;
			if (f->first_mine) {
				p->eager_ns = dur_add(p->eager_ns, gap);
				p->long_gaps += prev_mine && gap >= r->gap_max;
			}
			*c = *f;
		}
	}
	for (int i = 0; i < nparts; i++) {
		r->out->ops += parts[i].nops;
		r->out->eager_ns = dur_add(r->out->eager_ns, parts[i].eager_ns);
		r->out->long_gaps += parts[i].long_gaps;
		for (size_t k = 0; k < r->nops; k++) {
			if (parts[i].ops[k].fastest < r->ops[k].fastest)
				r->ops[k].fastest = parts[i].ops[k].fastest;
			r->ops[k].mine += parts[i].ops[k].mine;
		}
	}
	free(now);
	return 0;
unordered:
	free(now);
	return 1;
}

static void parts_free(struct part *parts, int nparts)
{
	for (int i = 0; parts && i < nparts; i++) {
		free(parts[i].threads);
		free(parts[i].ops);
	}
	free(parts);
}

/* Run the rows [lo, hi] in nparts parallel parts and stitch them: 0, 1 (not in order: none added), -1. */
static int rows_in_parts(const char *path, struct runs *r, int64_t lo, int64_t hi, int nparts)
{
	unsigned __int128 span = (unsigned __int128)((uint64_t)hi - (uint64_t)lo) + 1;
	struct part *parts = calloc((size_t)nparts, sizeof(*parts));
	pthread_t tids[SCAN_MAX_THREADS];
	int started[SCAN_MAX_THREADS] = { 0 }, ret = -1;

	if (!parts)
		return -1;
	for (int i = 0; i < nparts; i++) {
		struct part *p = &parts[i];

		p->r = r;
		p->path = path;
		p->in_order = 1;
		p->lo = (int64_t)((uint64_t)lo + (uint64_t)(span * (unsigned)i / (unsigned)nparts));
		p->hi = (int64_t)((uint64_t)lo + (uint64_t)(span * (unsigned)(i + 1) / (unsigned)nparts) - 1);
		p->threads = calloc(r->nthreads ? r->nthreads : 1, sizeof(*p->threads));
		p->ops = calloc(r->nops ? r->nops : 1, sizeof(*p->ops));
		if (!p->threads || !p->ops)
			goto cleanup;
		for (size_t k = 0; k < r->nops; k++)
			p->ops[k].fastest = INT64_MAX;
	}
	for (int i = 1; i < nparts; i++)
		started[i] = pthread_create(&tids[i], NULL, part_run, &parts[i]) == 0;
	part_run(&parts[0]);
	for (int i = 1; i < nparts; i++)
		if (started[i])
			pthread_join(tids[i], NULL);
		else
			part_run(&parts[i]);
	for (int i = 0; i < nparts; i++)
		if (parts[i].rc) {
			ret = error("%s", parts[i].err);
			goto cleanup;
		}
	ret = stitch(r, parts, nparts);
cleanup:
	parts_free(parts, nparts);
	return ret;
}

/* The rows of eager_op_rows in id order, as add_op() walks them: 0 or -1. */
static int rows_pass(sqlite3 *db, const char *path, struct runs *r)
{
	int64_t lo, hi;
	int nparts = scan_threads(), rc;

	if (scan_id_range(db, "eager_op_rows", &lo, &hi))
		return -1;
	if (hi < lo)
		return 0;
	if ((uint64_t)hi - (uint64_t)lo < (uint64_t)nparts * RUNS_MIN_ROWS_PER_PART)
		nparts = (int)(((uint64_t)hi - (uint64_t)lo) / RUNS_MIN_ROWS_PER_PART) + 1;
	rc = rows_in_parts(path, r, lo, hi, nparts);
	if (rc == 1 && nparts > 1)  /* not in start order: one part is the plain walk */
		rc = rows_in_parts(path, r, lo, hi, 1);
	return rc == 1 ? error("internal error: one part out of order") : rc;
}

/* Schema 6: the keys, then the rows in id order. */
static int pass_v6(sqlite3 *db, const char *path, struct runs *r)
{
	sqlite3_stmt *k = db_prepare(db, "SELECT id, pid, tid, op_id, callsite_id, base_ns FROM eager_op_keys");
	size_t one;

	if (!k)
		return -1;
	while (sqlite3_step(k) == SQLITE_ROW) {
		struct run_key *key;

		if (ARRAY_GROW(r->keys, r->nkeys, r->keys_cap) ||
		    idmap_put(&r->key_ix, sqlite3_column_int64(k, 0), r->nkeys) < 0)
			break;
		key = &r->keys[r->nkeys];
		key->thread = thread_of(r, sqlite3_column_int64(k, 1), sqlite3_column_int64(k, 2));
		key->op = op_of(r, sqlite3_column_int64(k, 3));
		key->base = sqlite3_column_int64(k, 5);
		key->mine = idmap_get(&r->mine_sites, sqlite3_column_int64(k, 4), &one);
		if (key->thread != SIZE_MAX && key->op != SIZE_MAX)
			r->nkeys++;
	}
	sqlite3_finalize(k);
	return rows_pass(db, path, r);
}

/* Schemas 1 to 5: one table, in id order. */
static int pass_table(sqlite3 *db, struct runs *r)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT pid, tid, op_id, callsite_id, start_ns, end_ns FROM eager_ops ORDER BY id");
	size_t one;

	if (!s)
		return -1;
	while (sqlite3_step(s) == SQLITE_ROW) {
		size_t thread = thread_of(r, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1));
		size_t op = op_of(r, sqlite3_column_int64(s, 2));
		int64_t start = sqlite3_column_int64(s, 4), end = sqlite3_column_int64(s, 5);

		if (thread == SIZE_MAX || op == SIZE_MAX)
			break;
		add_op(r, thread, op, idmap_get(&r->mine_sites, sqlite3_column_int64(s, 3), &one), start,
		       end > start ? end - start : 0);
	}
	sqlite3_finalize(s);
	return 0;
}

/* The aggregated ops past the budget (schema 5): dispatch plus python_ns; graph at the fastest run. */
static void add_buckets(sqlite3 *db, struct runs *r)
{
	sqlite3_stmt *s;
	size_t one, ix;

	if (!db_has_table(db, "eager_op_buckets") ||
	    !(s = db_prepare(db, "SELECT callsite_id, op_id, count, total_ns, python_ns FROM eager_op_buckets")))
		return;
	while (sqlite3_step(s) == SQLITE_ROW) {
		int64_t count = sqlite3_column_int64(s, 2), total = sqlite3_column_int64(s, 3), each;

		if (!idmap_get(&r->mine_sites, sqlite3_column_int64(s, 0), &one) || count <= 0)
			continue;
		each = idmap_get(&r->op_ix, sqlite3_column_int64(s, 1), &ix) && r->ops[ix].fastest != INT64_MAX
			       ? r->ops[ix].fastest : total / count;
		r->out->ops = dur_add(r->out->ops, count);
		r->out->eager_ns = dur_add(r->out->eager_ns, dur_add(total, sqlite3_column_int64(s, 4)));
		r->out->graph_ns = dur_add(r->out->graph_ns, sat_mul64(count, each));
	}
	sqlite3_finalize(s);
}

int eager_runs_of(struct model *m, const char *file, const char *func, int64_t gap_max, struct eager_runs *out)
{
	sqlite3 *db = m->rec ? m->rec->db : NULL;
	struct runs r = { .thread_ix = IDMAP_INIT, .op_ix = IDMAP_INIT, .key_ix = IDMAP_INIT,
			  .mine_sites = IDMAP_INIT, .out = out, .gap_max = gap_max };
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!db || load_mine(db, &r, file, func) || saving_thread_calls(m, &r.calls, &r.ncalls))
		goto done;
	if (db_has_table(db, "eager_op_rows") ? pass_v6(db, m->rec->path, &r) : db_has_table(db, "eager_ops") ? pass_table(db, &r) : 0)
		goto done;
	for (size_t i = 0; i < r.nops; i++)
		if (r.ops[i].mine && r.ops[i].fastest != INT64_MAX)
			out->graph_ns = dur_add(out->graph_ns, sat_mul64(r.ops[i].mine, r.ops[i].fastest));
	add_buckets(db, &r);
	rc = 0;
done:
	idmap_release(&r.thread_ix);
	idmap_release(&r.op_ix);
	idmap_release(&r.key_ix);
	idmap_release(&r.mine_sites);
	free(r.threads);
	free(r.ops);
	free(r.keys);
	return rc;
}
