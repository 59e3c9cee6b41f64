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
#include "checked.h"
#include "util.h"

#include <sqlite3.h>
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

struct runs {
	struct idmap thread_ix, op_ix, key_ix, mine_sites;
	struct run_thread *threads;
	size_t nthreads, threads_cap;
	struct run_op *ops;
	size_t nops, ops_cap;
	struct run_key *keys;
	size_t nkeys, keys_cap;
	int64_t (*calls)[4];         /* pid, tid, start, end: by thread, then start */
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

/* Every graph call, by thread then start: they end a run of eager ops. */
static int load_calls(sqlite3 *db, struct runs *r)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT pid, tid, start_ns, end_ns FROM function_calls");
	size_t cap = 0;

	if (!s)
		return -1;
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (ARRAY_GROW(r->calls, r->ncalls, cap))
			break;
		for (int i = 0; i < 4; i++)
			r->calls[r->ncalls][i] = sqlite3_column_int64(s, i);
		r->ncalls++;
	}
	sqlite3_finalize(s);
	sort_array(r->calls, r->ncalls, sizeof(*r->calls), cmp_thread_start);
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

/* Schema 6: the keys, then the rows in id order. */
static int pass_v6(sqlite3 *db, struct runs *r)
{
	sqlite3_stmt *k = db_prepare(db, "SELECT id, pid, tid, op_id, callsite_id, base_ns FROM eager_op_keys");
	sqlite3_stmt *s = NULL;
	size_t ix, one;

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
	if (!(s = db_prepare(db, "SELECT key, start, dur FROM eager_op_rows ORDER BY id")))
		return -1;
	while (sqlite3_step(s) == SQLITE_ROW) {
		const struct run_key *key;

		if (!idmap_get(&r->key_ix, sqlite3_column_int64(s, 0), &ix))
			continue;  /* a row of no key: untrusted input */
		key = &r->keys[ix];
		add_op(r, key->thread, key->op, key->mine, dur_add(key->base, sqlite3_column_int64(s, 1)),
		       sqlite3_column_int64(s, 2));
	}
	sqlite3_finalize(s);
	return 0;
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

int eager_runs_of(const struct model *m, const char *file, const char *func, int64_t gap_max, struct eager_runs *out)
{
	sqlite3 *db = m->rec ? m->rec->db : NULL;
	struct runs r = { .thread_ix = IDMAP_INIT, .op_ix = IDMAP_INIT, .key_ix = IDMAP_INIT,
			  .mine_sites = IDMAP_INIT, .out = out, .gap_max = gap_max };
	int rc = -1;

	memset(out, 0, sizeof(*out));
	if (!db || load_mine(db, &r, file, func) || load_calls(db, &r))
		goto done;
	if (db_has_table(db, "eager_op_rows") ? pass_v6(db, &r) : db_has_table(db, "eager_ops") ? pass_table(db, &r) : 0)
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
	free(r.calls);
	return rc;
}
