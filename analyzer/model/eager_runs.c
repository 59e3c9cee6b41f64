/*
 * eager_runs.c - every user function's eager ops in each thread's order,
 * for the eager-hotspot saving (eager_runs.h).
 *
 * A window query sorting every kept op by thread and time took 168 s of a
 * 10 M-event report (its sorter spilled to temporary files).  Rows are
 * stored in each thread's own order (the writer drains a thread's ring in
 * order; merge copies a rank whole), so one pass in row id order with a
 * little state per thread gives the same sums without a sort.  Each
 * callsite belongs to one function (file and function text), so the pass
 * sums all functions at once: an op continues a run when the thread's
 * previous op was the same function's.
 */
#include "eager_runs.h"
#include "agp_protocol.h"
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

/* A thread's graph calls: [call, calls_end) of calls[]. */
struct run_thread {
	size_t call, calls_end;
};

struct run_key {
	size_t thread, op;
	int64_t base;
	int64_t fn;                  /* index in fns[], -1: not user code */
};

struct run_fn {
	char *file, *func;
	struct eager_runs sums;
};

/* A user function's share of one part: the ops counts are the keys' (part.key_rows). */
struct part_fn {
	int64_t eager_ns, long_gaps;
};

/*
 * One rowid range of the walk, on its own (parallel parts, or the whole
 * table in one).  Each thread's first op in it is left to stitch(): the
 * Python gap before that op depends on the previous part's last op of the
 * thread.  Where a part starts, a thread's graph-call cursor is found by
 * bisection; this needs each thread's ops in start order, and a recording
 * where they are not is walked again in one part.
 */
struct part_thread {
	int seen;
	int64_t first_start;     /* its first op in the part: the gap before it is stitch()'s */
	int64_t first_fn;
	int64_t last_start;
	int64_t prev_end;
	int64_t prev_fn;         /* the previous op's function, -1 after a graph call or another op */
	size_t call;             /* the graph-call cursor after its last op */
};

struct part {
	const struct eager_runs_table *t;
	struct part_thread *threads; /* per t->threads */
	int64_t *fastest;        /* per t->fastest: the op type's fastest run in the part */
	int64_t *key_rows;       /* per t->keys */
	struct part_fn *fns;     /* per t->fns */
	int in_order;            /* each thread's ops in start order within the part */
	const char *path;        /* a part reading on its own (part_run()): */
	int64_t lo, hi;          /* its rowid range */
	int rc;
	char err[256];
};

enum runs_state { RUNS_NONE, RUNS_WALKING, RUNS_DONE, RUNS_FAILED };

struct eager_runs_table {
	enum runs_state state;
	int prepared;                /* prepare() ran: 1, or -1 when it failed */
	struct idmap thread_ix, op_ix, key_ix, site_fn;
	struct run_thread *threads;
	size_t nthreads, threads_cap;
	int64_t *fastest;            /* per op type, in order of first sight: its fastest recorded run */
	size_t nops, ops_cap;
	struct run_key *keys;
	size_t nkeys, keys_cap;
	uint32_t *key_dense;         /* key id - key_lo -> keys index + 1 (0: none), when the ids are dense */
	int64_t key_lo;
	size_t key_span;
	int64_t *key_rows;           /* per key: its kept ops */
	struct run_fn *fns;          /* by file, then function */
	size_t nfns, fns_cap;
	const int64_t (*calls)[4];   /* pid, tid, start, end: by thread, then start (saving_reads.c's) */
	size_t ncalls;
	struct part *parts;          /* the load scan's parts (eager_runs_walk()) */
	int nparts;
	struct scan_walk walk;
};

/* Fewer rows than this per part: one thread reads them (threads cost more). */
#define RUNS_MIN_ROWS_PER_PART 250000

/* Key ids spread over at most this many slots per key get a direct table. */
#define RUNS_DENSE_SLOTS_PER_KEY 4

static struct eager_runs_table *table_of(struct model *m)
{
	if (!m->eager_runs)
		m->eager_runs = calloc(1, sizeof(*m->eager_runs));
	return m->eager_runs;
}

/*
 * Every callsite's user function (file and function text): a user frame's
 * own, a library frame's that of the user frame its chain leads to (the
 * ops TensorFlow Probability's sample_chain dispatches inside run_chain are
 * run_chain's: a tf.function of run_chain runs them as graph nodes too).
 * The chain is untrusted: followed at most 16 frames, as model.c's
 * user_frame_of(), so a cycle cannot loop.  fns[] sorted by both: 0 or -1.
 */
static int load_fns(sqlite3 *db, struct eager_runs_table *t)
{
	sqlite3_stmt *s = db_prepare(db, "WITH RECURSIVE up(id, at, depth) AS (SELECT id, id, 0 FROM callsites"
				     " UNION ALL SELECT up.id, c.parent_id, up.depth + 1 FROM up JOIN callsites c ON c.id = up.at"
				     " WHERE c.library != 0 AND c.parent_id > 0 AND up.depth < 16)"
				     " SELECT up.id, fs.text, fn.text FROM up JOIN callsites cs ON cs.id = up.at AND cs.library = 0"
				     " JOIN strings fs ON fs.id = cs.file_id JOIN strings fn ON fn.id = cs.func_id"
				     " WHERE fs.text IS NOT NULL AND fn.text IS NOT NULL ORDER BY fs.text, fn.text");
	int ret = 0;

	if (!s)
		return -1;
	while (ret == 0 && sqlite3_step(s) == SQLITE_ROW) {
		const char *file = (const char *)sqlite3_column_text(s, 1), *func = (const char *)sqlite3_column_text(s, 2);
		struct run_fn *last = t->nfns ? &t->fns[t->nfns - 1] : NULL;

		if (!file || !func)
			continue;
		if (!last || strcmp(last->file, file) || strcmp(last->func, func)) {
			if (ARRAY_GROW(t->fns, t->nfns, t->fns_cap)) {
				ret = -1;
				break;
			}
			memset(&t->fns[t->nfns], 0, sizeof(t->fns[0]));
			t->fns[t->nfns].file = strdup(file);
			t->fns[t->nfns].func = strdup(func);
			if (!t->fns[t->nfns++].file || !t->fns[t->nfns - 1].func)
				ret = -1;  /* freed with the others */
		}
		if (ret == 0 && idmap_put(&t->site_fn, sqlite3_column_int64(s, 0), t->nfns - 1) < 0)
			ret = -1;
	}
	sqlite3_finalize(s);
	return ret;
}

static int64_t fn_of_site(const struct eager_runs_table *t, int64_t callsite_id)
{
	size_t ix;

	return idmap_get(&t->site_fn, callsite_id, &ix) ? (int64_t)ix : -1;
}

static size_t thread_of(struct eager_runs_table *t, int64_t pid, int64_t tid)
{
	int64_t id = (int64_t)((uint64_t)pid << 32 ^ (uint32_t)tid);
	size_t ix, lo = 0, hi = t->ncalls;
	struct run_thread *th;

	if (idmap_get(&t->thread_ix, id, &ix))
		return ix;
	if (ARRAY_GROW(t->threads, t->nthreads, t->threads_cap) || idmap_put(&t->thread_ix, id, t->nthreads) < 0)
		return SIZE_MAX;
	th = &t->threads[t->nthreads];
	while (lo < hi) {  /* its first call */
		size_t mid = lo + (hi - lo) / 2;

		if (t->calls[mid][0] < pid || (t->calls[mid][0] == pid && t->calls[mid][1] < tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	th->call = th->calls_end = lo;
	while (th->calls_end < t->ncalls && t->calls[th->calls_end][0] == pid && t->calls[th->calls_end][1] == tid)
		th->calls_end++;
	return t->nthreads++;
}

static size_t op_of(struct eager_runs_table *t, int64_t op_id)
{
	size_t ix;

	if (idmap_get(&t->op_ix, op_id, &ix))
		return ix;
	if (ARRAY_GROW(t->fastest, t->nops, t->ops_cap) || idmap_put(&t->op_ix, op_id, t->nops) < 0)
		return SIZE_MAX;
	t->fastest[t->nops] = INT64_MAX;
	return t->nops++;
}

/* A key of thread (pid, tid), op type op_id at callsite_id: its index, SIZE_MAX when out of memory. */
static size_t key_add(struct eager_runs_table *t, int64_t pid, int64_t tid, int64_t op_id, int64_t callsite_id,
		      int64_t base)
{
	struct run_key *key;

	if (ARRAY_GROW(t->keys, t->nkeys, t->keys_cap))
		return SIZE_MAX;
	key = &t->keys[t->nkeys];
	key->thread = thread_of(t, pid, tid);
	key->op = op_of(t, op_id);
	key->base = base;
	key->fn = fn_of_site(t, callsite_id);
	return key->thread == SIZE_MAX || key->op == SIZE_MAX ? SIZE_MAX : t->nkeys++;
}

/* Schema 6's keys, in id order (the op types' order is theirs): 0 or -1. */
static int load_keys(sqlite3 *db, struct eager_runs_table *t)
{
	sqlite3_stmt *k = db_prepare(db, "SELECT id, pid, tid, op_id, callsite_id, base_ns FROM eager_op_keys");
	int ret = 0;

	if (!k)
		return -1;
	while (ret == 0 && sqlite3_step(k) == SQLITE_ROW) {
		size_t n = t->nkeys, ix = key_add(t, sqlite3_column_int64(k, 1), sqlite3_column_int64(k, 2),
						  sqlite3_column_int64(k, 3), sqlite3_column_int64(k, 4),
						  sqlite3_column_int64(k, 5));
		int put;

		if (ix == SIZE_MAX || (put = idmap_put(&t->key_ix, sqlite3_column_int64(k, 0), ix)) < 0)
			ret = -1;
		else if (put == 1)
			t->nkeys = n;  /* a duplicate id: the first key has its rows */
	}
	sqlite3_finalize(k);
	return ret;
}

/* When the key ids are dense (the writer's are 1..n), a direct table instead of a hash lookup per row. */
static void dense_keys(sqlite3 *db, struct eager_runs_table *t)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT id FROM eager_op_keys");
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	size_t ix;

	if (!s)
		return;
	while (sqlite3_step(s) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0);

		lo = id < lo ? id : lo;
		hi = id > hi ? id : hi;
	}
	if (t->nkeys && t->nkeys < UINT32_MAX && (uint64_t)hi - (uint64_t)lo < RUNS_DENSE_SLOTS_PER_KEY * (uint64_t)t->nkeys &&
	    (t->key_dense = calloc((size_t)((uint64_t)hi - (uint64_t)lo) + 1, sizeof(*t->key_dense)))) {
		t->key_lo = lo;
		t->key_span = (size_t)((uint64_t)hi - (uint64_t)lo) + 1;
		sqlite3_reset(s);
		while (sqlite3_step(s) == SQLITE_ROW) {
			int64_t id = sqlite3_column_int64(s, 0);

			if (idmap_get(&t->key_ix, id, &ix))
				t->key_dense[(uint64_t)id - (uint64_t)lo] = (uint32_t)ix + 1;
		}
	}
	sqlite3_finalize(s);
}

/* The index of the key of a row, SIZE_MAX when none (untrusted input). */
static size_t key_of(const struct eager_runs_table *t, int64_t id)
{
	size_t ix;

	if (t->key_dense) {
		uint64_t off = (uint64_t)id - (uint64_t)t->key_lo;

		return off < t->key_span && t->key_dense[off] ? t->key_dense[off] - 1 : SIZE_MAX;
	}
	return idmap_get(&t->key_ix, id, &ix) && ix < t->nkeys ? ix : SIZE_MAX;
}

/* What every walk needs: the functions, the graph calls by thread, schema 6's keys.  0 or -1. */
static int prepare(struct model *m, struct eager_runs_table *t)
{
	sqlite3 *db = m->rec ? m->rec->db : NULL;

	if (t->prepared)
		return t->prepared < 0 ? -1 : 0;
	t->prepared = -1;
	if (!db || load_fns(db, t) || saving_thread_calls(m, &t->calls, &t->ncalls))
		return -1;
	if (db_has_table(db, "eager_op_rows")) {
		if (load_keys(db, t))
			return -1;
		dense_keys(db, t);
	}
	t->prepared = 1;
	return 0;
}

/* Every key's row count, zero (once the keys are known): 0 or -1. */
static int key_rows_alloc(struct eager_runs_table *t)
{
	if (!t->key_rows)
		t->key_rows = calloc(t->nkeys ? t->nkeys : 1, sizeof(*t->key_rows));
	return t->key_rows ? 0 : -1;
}

/* The first of thread's graph calls that starts at or after start: those before it end a run before the op. */
static size_t first_call_from(const struct eager_runs_table *t, const struct run_thread *th, int64_t start)
{
	size_t lo = th->call, hi = th->calls_end;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->calls[mid][2] < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* One op of key k, in its thread's order within the part; the thread's first op's gap is stitch()'s. */
static void part_op(struct part *p, size_t k, int64_t start, int64_t dur)
{
	const struct eager_runs_table *t = p->t;
	const struct run_key *key = &t->keys[k];
	const struct run_thread *rt = &t->threads[key->thread];
	struct part_thread *th = &p->threads[key->thread];

	if (dur < 0)
		dur = 0;
	if (dur < p->fastest[key->op])
		p->fastest[key->op] = dur;
	p->key_rows[k]++;
	if (!th->seen) {
		th->seen = 1;
		th->first_start = start;
		th->first_fn = key->fn;
		th->call = first_call_from(t, rt, start);
	} else {
		p->in_order &= start >= th->last_start;
		while (th->call < rt->calls_end && t->calls[th->call][2] < start) {
			th->prev_end = t->calls[th->call][3];
			th->prev_fn = -1;  /* a graph call ends a run: its time is no Python */
			th->call++;
		}
		if (key->fn >= 0 && th->prev_fn == key->fn) {
			int64_t gap = start > th->prev_end ? start - th->prev_end : 0;

			p->fns[key->fn].eager_ns = dur_add(p->fns[key->fn].eager_ns, gap);
			p->fns[key->fn].long_gaps += gap >= AGP_PYTHON_GAP_MAX_NS;
		}
	}
	if (key->fn >= 0)
		p->fns[key->fn].eager_ns = dur_add(p->fns[key->fn].eager_ns, dur);
	th->last_start = start;
	th->prev_end = start > INT64_MAX - dur ? INT64_MAX : start + dur;
	th->prev_fn = key->fn;
}

/* One row of eager_op_rows into part arg: key, start after the key's base, dur (scan_walk.eager_row). */
static void part_row(void *arg, int64_t key_id, int64_t start, int64_t dur)
{
	struct part *p = arg;
	size_t k = key_of(p->t, key_id);

	if (k != SIZE_MAX)  /* a row of no key: untrusted input */
		part_op(p, k, dur_add(p->t->keys[k].base, start), dur);
}

static void parts_free(struct part *parts, int nparts)
{
	for (int i = 0; parts && i < nparts; i++) {
		free(parts[i].threads);
		free(parts[i].fastest);
		free(parts[i].key_rows);
		free(parts[i].fns);
	}
	free(parts);
}

/* nparts empty parts over t's threads, keys and functions; NULL when out of memory. */
static struct part *parts_new(const struct eager_runs_table *t, int nparts)
{
	struct part *parts = calloc((size_t)nparts, sizeof(*parts));

	for (int i = 0; parts && i < nparts; i++) {
		struct part *p = &parts[i];

		p->t = t;
		p->in_order = 1;
		p->threads = calloc(t->nthreads ? t->nthreads : 1, sizeof(*p->threads));
		p->fastest = malloc((t->nops ? t->nops : 1) * sizeof(*p->fastest));
		p->key_rows = calloc(t->nkeys ? t->nkeys : 1, sizeof(*p->key_rows));
		p->fns = calloc(t->nfns ? t->nfns : 1, sizeof(*p->fns));
		if (!p->threads || !p->fastest || !p->key_rows || !p->fns) {
			parts_free(parts, nparts);
			return NULL;
		}
		for (size_t k = 0; k < t->nops; k++)
			p->fastest[k] = INT64_MAX;
	}
	return parts;
}

/*
 * Add each part's first ops' gaps, going through the parts in order with
 * each thread's state at the end of the previous one, then the parts' sums
 * into t.  0, or 1 when a thread's ops are not in start order and there are
 * several parts (nothing added: walk again in one part), -1.
 */
static int stitch(struct eager_runs_table *t, struct part *parts, int nparts)
{
	struct part_thread *now = calloc(t->nthreads ? t->nthreads : 1, sizeof(*now));

	if (!now)
		return -1;
	for (int i = 0; i < nparts; i++) {
		struct part *p = &parts[i];

		if (!p->in_order && nparts > 1)
			goto unordered;
		for (size_t k = 0; k < t->nthreads; k++) {
			const struct part_thread *f = &p->threads[k];
			struct part_thread *c = &now[k];
			size_t before = c->seen ? c->call : t->threads[k].call, after;
			int64_t prev_end = c->seen ? c->prev_end : INT64_MIN, prev_fn = c->seen ? c->prev_fn : -1;

			if (!f->seen)
				continue;
			if (c->seen && f->first_start < c->last_start)
				goto unordered;
			if ((after = first_call_from(t, &t->threads[k], f->first_start)) > before) {
				prev_end = t->calls[after - 1][3];
				prev_fn = -1;
			}
			if (f->first_fn >= 0 && prev_fn == f->first_fn) {
				int64_t gap = f->first_start > prev_end ? f->first_start - prev_end : 0;

				p->fns[f->first_fn].eager_ns = dur_add(p->fns[f->first_fn].eager_ns, gap);
				p->fns[f->first_fn].long_gaps += gap >= AGP_PYTHON_GAP_MAX_NS;
			}
			*c = *f;
		}
	}
	for (int i = 0; i < nparts; i++) {
		for (size_t k = 0; k < t->nfns; k++) {
			t->fns[k].sums.eager_ns = dur_add(t->fns[k].sums.eager_ns, parts[i].fns[k].eager_ns);
			t->fns[k].sums.long_gaps += parts[i].fns[k].long_gaps;
		}
		for (size_t k = 0; k < t->nops; k++)
			if (parts[i].fastest[k] < t->fastest[k])
				t->fastest[k] = parts[i].fastest[k];
		for (size_t k = 0; k < t->nkeys; k++)
			t->key_rows[k] += parts[i].key_rows[k];
	}
	free(now);
	return 0;
unordered:
	free(now);
	return 1;
}

/* agprof_runs(key, start, dur): one row, inside SQLite (cheaper than a step and three column reads). */
static void part_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	part_row(sqlite3_user_data(ctx), sqlite3_value_int64(argv[0]), sqlite3_value_int64(argv[1]),
		 sqlite3_value_int64(argv[2]));
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

/* Walk the rows [lo, hi] in nparts parallel parts and stitch them: 0, 1 (not in order: none added), -1. */
static int rows_in_parts(const char *path, struct eager_runs_table *t, int64_t lo, int64_t hi, int nparts)
{
	unsigned __int128 span = (unsigned __int128)((uint64_t)hi - (uint64_t)lo) + 1;
	struct part *parts = parts_new(t, nparts);
	pthread_t tids[SCAN_MAX_THREADS];
	int started[SCAN_MAX_THREADS] = { 0 }, ret = -1;

	if (!parts)
		return -1;
	for (int i = 0; i < nparts; i++) {
		parts[i].path = path;
		parts[i].lo = (int64_t)((uint64_t)lo + (uint64_t)(span * (unsigned)i / (unsigned)nparts));
		parts[i].hi = (int64_t)((uint64_t)lo + (uint64_t)(span * (unsigned)(i + 1) / (unsigned)nparts) - 1);
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
	ret = stitch(t, parts, nparts);
cleanup:
	parts_free(parts, nparts);
	return ret;
}

/* The rows of eager_op_rows in id order, walked in one part: 0 or -1. */
static int rows_in_one_part(sqlite3 *db, const char *path, struct eager_runs_table *t)
{
	int64_t lo, hi;

	if (scan_id_range(db, "eager_op_rows", &lo, &hi))
		return -1;
	return hi < lo ? 0 : rows_in_parts(path, t, lo, hi, 1) ? -1 : 0;
}

/* The rows of eager_op_rows in id order, in parallel parts: 0 or -1. */
static int rows_pass(sqlite3 *db, const char *path, struct eager_runs_table *t)
{
	int64_t lo, hi;
	int nparts = scan_threads(), rc;

	if (scan_id_range(db, "eager_op_rows", &lo, &hi))
		return -1;
	if (hi < lo)
		return 0;
	if ((uint64_t)hi - (uint64_t)lo < (uint64_t)nparts * RUNS_MIN_ROWS_PER_PART)
		nparts = (int)(((uint64_t)hi - (uint64_t)lo) / RUNS_MIN_ROWS_PER_PART) + 1;
	rc = rows_in_parts(path, t, lo, hi, nparts);
	if (rc == 1 && nparts > 1)  /* not in start order: one part is the plain walk */
		rc = rows_in_parts(path, t, lo, hi, 1);
	return rc == 1 ? error("internal error: one part out of order") : rc;
}

/* Schemas 1 to 5's thread, op type and callsite fit in a key id of this many bits each. */
#define TABLE_KEY_BITS 21

/* Schemas 1 to 5: one table, in id order, walked in one part; a key per (thread, op type, function). */
static int pass_table(sqlite3 *db, struct eager_runs_table *t)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT pid, tid, op_id, callsite_id, start_ns, end_ns FROM eager_ops ORDER BY id");
	struct part *p = NULL;
	int ret = -1;

	if (!s)
		return -1;
	while (sqlite3_step(s) == SQLITE_ROW) {  /* the keys first: a part is sized by them */
		size_t n = t->nkeys, ix = key_add(t, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
						  sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3), 0);
		int64_t id;
		int put;

		if (ix == SIZE_MAX || t->keys[ix].thread >> TABLE_KEY_BITS || t->keys[ix].op >> TABLE_KEY_BITS ||
		    (uint64_t)(t->keys[ix].fn + 1) >> TABLE_KEY_BITS)
			goto cleanup;
		id = (int64_t)((uint64_t)t->keys[ix].thread << (2 * TABLE_KEY_BITS) |
			       (uint64_t)t->keys[ix].op << TABLE_KEY_BITS | (uint64_t)(t->keys[ix].fn + 1));
		if ((put = idmap_put(&t->key_ix, id, ix)) < 0)
			goto cleanup;
		if (put == 1)
			t->nkeys = n;
	}
	if (key_rows_alloc(t) || !(p = parts_new(t, 1)))
		goto cleanup;
	sqlite3_reset(s);
	while (sqlite3_step(s) == SQLITE_ROW) {
		size_t th = thread_of(t, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1));
		size_t op = op_of(t, sqlite3_column_int64(s, 2)), k;
		int64_t fn = fn_of_site(t, sqlite3_column_int64(s, 3));
		int64_t start = sqlite3_column_int64(s, 4), end = sqlite3_column_int64(s, 5);

		if (!idmap_get(&t->key_ix, (int64_t)((uint64_t)th << (2 * TABLE_KEY_BITS) | (uint64_t)op << TABLE_KEY_BITS |
						      (uint64_t)(fn + 1)), &k))
			goto cleanup;
		part_op(p, k, start, end > start ? end - start : 0);
	}
	ret = stitch(t, p, 1);
cleanup:
	parts_free(p, 1);
	sqlite3_finalize(s);
	return ret;
}

/* A user key's rows, for sum_keys(). */
struct fn_op_rows {
	int64_t fn;
	size_t op;
	int64_t rows;
};

static int cmp_fn_op(const void *a, const void *b)
{
	const struct fn_op_rows *x = a, *y = b;

	if (x->fn != y->fn)
		return x->fn < y->fn ? -1 : 1;
	return x->op < y->op ? -1 : x->op > y->op;
}

/*
 * Each function's ops and graph time from its keys' rows: each op type's
 * runs at its fastest, in the op types' order.  0 or -1.
 */
static int sum_keys(struct eager_runs_table *t)
{
	struct fn_op_rows *v = malloc((t->nkeys ? t->nkeys : 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return -1;
	for (size_t k = 0; k < t->nkeys; k++)
		if (t->keys[k].fn >= 0 && t->key_rows[k])
			v[n++] = (struct fn_op_rows){ t->keys[k].fn, t->keys[k].op, t->key_rows[k] };
	sort_array(v, n, sizeof(*v), cmp_fn_op);
	for (size_t i = 0; i < n;) {
		struct eager_runs *o = &t->fns[v[i].fn].sums;
		int64_t mine = 0;
		size_t j = i;

		for (; j < n && v[j].fn == v[i].fn && v[j].op == v[i].op; j++)
			mine += v[j].rows;
		o->ops += mine;
		if (t->fastest[v[i].op] != INT64_MAX)
			o->graph_ns = dur_add(o->graph_ns, sat_mul64(mine, t->fastest[v[i].op]));
		i = j;
	}
	free(v);
	return 0;
}

/* The aggregated ops past the budget (schema 5): dispatch plus python_ns; graph at the fastest run. */
static void add_buckets(sqlite3 *db, struct eager_runs_table *t)
{
	sqlite3_stmt *s;
	size_t ix;

	if (!(s = db_prepare(db, "SELECT callsite_id, op_id, count, total_ns, python_ns FROM eager_op_buckets")))
		return;
	while (sqlite3_step(s) == SQLITE_ROW) {
		int64_t count = sqlite3_column_int64(s, 2), total = sqlite3_column_int64(s, 3), each;
		int64_t fn = fn_of_site(t, sqlite3_column_int64(s, 0));
		struct eager_runs *o;

		if (fn < 0 || count <= 0)
			continue;
		o = &t->fns[fn].sums;
		each = idmap_get(&t->op_ix, sqlite3_column_int64(s, 1), &ix) && t->fastest[ix] != INT64_MAX
			       ? t->fastest[ix] : total / count;
		o->ops = dur_add(o->ops, count);
		o->eager_ns = dur_add(o->eager_ns, dur_add(total, sqlite3_column_int64(s, 4)));
		o->graph_ns = dur_add(o->graph_ns, sat_mul64(count, each));
	}
	sqlite3_finalize(s);
}

/* After the rows' walk: the functions' sums whole.  RUNS_DONE or RUNS_FAILED. */
static enum runs_state finish(sqlite3 *db, struct eager_runs_table *t)
{
	if (sum_keys(t))
		return RUNS_FAILED;
	add_buckets(db, t);
	return RUNS_DONE;
}

/* The walk on its own (no load scan walked it): RUNS_DONE or RUNS_FAILED. */
static enum runs_state walk_alone(struct model *m, struct eager_runs_table *t)
{
	sqlite3 *db = m->rec ? m->rec->db : NULL;

	if (prepare(m, t))
		return RUNS_FAILED;
	/* schemas 1 to 5: pass_table() makes its keys from the rows */
	if (db_has_table(db, "eager_op_rows") ? key_rows_alloc(t) || rows_pass(db, m->rec->path, t)
	    : db_has_table(db, "eager_ops") ? pass_table(db, t) : key_rows_alloc(t))
		return RUNS_FAILED;
	return finish(db, t);
}

/*
 * Function fn's ops at their steady cost: the model's groups of its call
 * sites, and as graph nodes each at its op type's fastest recorded run,
 * at most the group's steady cost per op (an op type run once, preempted,
 * has a fastest run as long as the wait in it).
 */
static void steady_sums(const struct model *m, const struct eager_runs_table *t, int64_t fn, struct eager_runs *out)
{
	for (size_t k = 0; k < m->neager_keys; k++) {
		const struct model_eager_key *key = &m->eager_keys[k];
		int64_t per = key->count > 0 ? key->steady_ns / key->count : 0, fast = per;
		size_t ox;

		if (key->count <= 0 || fn_of_site(t, key->site_id) != fn)
			continue;
		if (idmap_get(&t->op_ix, key->op_id, &ox) && ox < t->nops && t->fastest[ox] < per)
			fast = t->fastest[ox];
		out->steady_ns = dur_add(out->steady_ns, key->steady_ns);
		out->steady_graph_ns = dur_add(out->steady_graph_ns, sat_mul64(key->count, fast));
	}
}

int eager_runs_of(struct model *m, const char *file, const char *func, struct eager_runs *out)
{
	struct eager_runs_table *t = table_of(m);

	memset(out, 0, sizeof(*out));
	if (!t)
		return -1;
	if (t->state == RUNS_NONE)
		t->state = walk_alone(m, t);
	if (t->state != RUNS_DONE)
		return -1;
	for (size_t i = 0; i < t->nfns; i++)
		if (!strcmp(t->fns[i].file, file) && !strcmp(t->fns[i].func, func)) {
			*out = t->fns[i].sums;
			steady_sums(m, t, (int64_t)i, out);
			break;
		}
	return 0;
}

/* scan_walk.parts: the load scan's parts (those of an earlier scan go). */
static void *walk_parts(void *ctx, int nparts)
{
	struct eager_runs_table *t = ctx;

	parts_free(t->parts, t->nparts);
	t->nparts = (t->parts = parts_new(t, nparts)) ? nparts : 0;
	return t->parts;
}

const struct scan_walk *eager_runs_walk(struct model *m)
{
	struct eager_runs_table *t = table_of(m);

	if (!t || t->state != RUNS_NONE || !m->rec || !db_has_table(m->rec->db, "eager_op_rows"))
		return NULL;
	if (prepare(m, t) || key_rows_alloc(t)) {
		t->state = RUNS_FAILED;
		return NULL;
	}
	t->walk = (struct scan_walk){ .kind = SCAN_WALK_EAGER_ROWS, .ctx = t, .parts = walk_parts,
				      .part_size = sizeof(struct part), .eager_row = part_row };
	t->state = RUNS_WALKING;
	return &t->walk;
}

void eager_runs_walked(struct model *m, int scan_ok)
{
	struct eager_runs_table *t = m->eager_runs;
	int rc;

	if (!t || t->state != RUNS_WALKING)
		return;
	if (!scan_ok || !t->nparts) {  /* not walked: eager_runs_of() walks on its own */
		t->state = RUNS_NONE;
	} else if ((rc = stitch(t, t->parts, t->nparts)) == 1) {  /* not in start order: the plain walk */
		t->state = rows_in_one_part(m->rec->db, m->rec->path, t) ? RUNS_FAILED : finish(m->rec->db, t);
	} else {
		t->state = rc ? RUNS_FAILED : finish(m->rec->db, t);
	}
	parts_free(t->parts, t->nparts);
	t->parts = NULL;
	t->nparts = 0;
}

void eager_runs_release(struct eager_runs_table *t)
{
	if (!t)
		return;
	parts_free(t->parts, t->nparts);
	idmap_release(&t->thread_ix);
	idmap_release(&t->op_ix);
	idmap_release(&t->key_ix);
	idmap_release(&t->site_fn);
	free(t->threads);
	free(t->fastest);
	free(t->keys);
	free(t->key_dense);
	free(t->key_rows);
	for (size_t i = 0; i < t->nfns; i++) {
		free(t->fns[i].file);
		free(t->fns[i].func);
	}
	free(t->fns);
	free(t);
}
