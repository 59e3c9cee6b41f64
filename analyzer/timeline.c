/* timeline.c - see timeline.h. */
#include "timeline.h"
#include "checked.h"
#include "db.h"
#include "duration.h"
#include "recording.h"
#include "scan.h"
#include "strbuf.h"
#include "util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_NBINS (1u << 18)
#define SCAN_CHUNK_ROWS (1 << 18)
#define MAX_TABLE_CHUNKS 4096 /* rowid chunks of one table, however far apart its ids */
#define SCAN_NICE 5  /* added to the scan threads' nice value (Linux: per thread) */

static const char *const kind_names[TL_NKINDS] = {
	"tracing", "call", "eager", "py_function", "kernel", "copy",
};
static const char *const kind_shorts[TL_NKINDS] = {
	"trace", "call", "eager", "pyfn", "kern", "copy",
};

const char *tl_kind_name(enum tl_kind kind)
{
	return kind < TL_NKINDS ? kind_names[kind] : "?";
}

const char *tl_kind_short(enum tl_kind kind)
{
	return kind < TL_NKINDS ? kind_shorts[kind] : "?";
}

/*
 * Every query on an event table returns the same columns, so that one
 * function turns a row into a slice:
 *   0 id, 1 pid, 2 tid (GPU: stream), 3 start_ns, 4 end_ns,
 *   5 aux (traces: function_id, calls: graph_function_id, else -1),
 *   6 name_id (-1 none), 7 device (-1 for threads), 8 failed, 9 copy (GPU)
 * lane is the filter that selects one lane's rows: ?1 pid, ?2 tid, ?6 device.
 * search is the column matched against the ids of matching strings.
 */
static const struct kind_sql {
	const char *select;
	const char *lane;
	const char *search;
} kind_sql[TL_NKINDS] = {
	[TL_TRACE] = { "SELECT id, pid, tid, start_ns, end_ns, function_id, -1, -1, status <> 'ok', 0 FROM traces",
		       "pid = ?1 AND tid = ?2", "function_id" },
	[TL_CALL] = { "SELECT id, pid, tid, start_ns, end_ns, coalesce(graph_function_id, -1), name_id, -1, ok = 0, 0"
		      " FROM function_calls",
		      "pid = ?1 AND tid = ?2", "name_id" },
	[TL_EAGER] = { "SELECT id, pid, tid, start_ns, end_ns, -1, op_id, -1, ok = 0, 0 FROM eager_ops",
		       "pid = ?1 AND tid = ?2", "op_id" },
	[TL_BLACKBOX] = { "SELECT id, pid, tid, start_ns, end_ns, -1, node_id, -1, 0, 0 FROM blackbox_execs",
			  "pid = ?1 AND tid = ?2", "node_id" },
	[TL_KERNEL] = { "SELECT id, pid, coalesce(stream, -1), start_ns, end_ns, -1, coalesce(name_id, -1),"
			" coalesce(device, 0), 0, 0 FROM gpu_activity",
			"kind = 'kernel' AND pid = ?1 AND coalesce(stream, -1) = ?2 AND coalesce(device, 0) = ?6",
			"kind = 'kernel' AND name_id" },
	[TL_COPY] = { "SELECT id, pid, coalesce(stream, -1), start_ns, end_ns, -1, coalesce(name_id, -1),"
		      " coalesce(device, 0), 0, 1 FROM gpu_activity",
		      "kind IN ('memcpy', 'memset') AND pid = ?1 AND coalesce(stream, -1) = ?2 AND coalesce(device, 0) = ?6",
		      "kind IN ('memcpy', 'memset') AND name_id" },
};

/*
 * The tables the scan reads, and only the columns the bins need: id, pid,
 * tid (stream), start_ns, end_ns, device, copy.  Every column costs time on
 * ten million rows; the rest of a long event is read by id when one is met.
 * GPU kernels and copies come from one scan.
 */
static const struct scan_table {
	const char *table;
	enum tl_kind kind;
	const char *select;
} scan_tables[] = {
	{ "traces", TL_TRACE, "SELECT id, pid, tid, start_ns, end_ns FROM traces WHERE id BETWEEN ?1 AND ?2" },
	{ "function_calls", TL_CALL,
	  "SELECT id, pid, tid, start_ns, end_ns FROM function_calls WHERE id BETWEEN ?1 AND ?2" },
	{ "eager_ops", TL_EAGER, "SELECT id, pid, tid, start_ns, end_ns FROM eager_ops WHERE id BETWEEN ?1 AND ?2" },
	{ "blackbox_execs", TL_BLACKBOX,
	  "SELECT id, pid, tid, start_ns, end_ns FROM blackbox_execs WHERE id BETWEEN ?1 AND ?2" },
	{ "gpu_activity", TL_KERNEL,
	  "SELECT id, pid, coalesce(stream, -1), start_ns, end_ns, coalesce(device, 0), kind <> 'kernel'"
	  " FROM gpu_activity WHERE id BETWEEN ?1 AND ?2 AND kind IN ('kernel', 'memcpy', 'memset')" },
};
#define NSCAN_TABLES (sizeof(scan_tables) / sizeof(scan_tables[0]))

/* qsort() for arrays that may be empty, and then NULL (qsort wants a valid pointer). */
static void sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/* ---- window arithmetic (pure) ---- */

int64_t tl_col_of(const struct tl_window *w, int64_t t)
{
	int64_t span = w->t1 - w->t0;
	__int128 x;

	if (span <= 0 || w->cols <= 0)
		return 0;
	x = (__int128)(t - w->t0) * w->cols;
	/* floor, also for times before t0 */
	if (x < 0)
		return (int64_t)((x - span + 1) / span);
	return (int64_t)(x / span);
}

int64_t tl_col_start(const struct tl_window *w, int64_t col)
{
	int64_t span = w->t1 - w->t0;
	__int128 x;

	if (w->cols <= 0)
		return w->t0;
	x = (__int128)col * span;
	/* ceil: the first t with tl_col_of(t) == col */
	if (x >= 0)
		x = (x + w->cols - 1) / w->cols;
	else
		x = x / w->cols;
	return w->t0 + (int64_t)x;
}

int tl_cols_of(const struct tl_window *w, int64_t start, int64_t end, int *c0, int *c1)
{
	int64_t a, b;

	if (end <= start)
		end = start + 1;
	if (end <= w->t0 || start >= w->t1 || w->cols <= 0)
		return 0;
	a = tl_col_of(w, start);
	b = tl_col_of(w, end - 1);
	if (a < 0)
		a = 0;
	if (b >= w->cols)
		b = w->cols - 1;
	if (b < a)
		b = a;
	*c0 = (int)a;
	*c1 = (int)b;
	return 1;
}

int tl_shade(uint64_t busy, int64_t width)
{
	uint64_t q;

	if (busy == 0)
		return 0;
	if (width <= 0)
		return 4;
	q = (busy * 4 + (uint64_t)width - 1) / (uint64_t)width;
	if (q < 1)
		q = 1;
	return q > 4 ? 4 : (int)q;
}

/* ---- level of detail (pure) ---- */

/*
 * Per-column busy time is accumulated in a side array so that struct
 * tl_cell stays small; it is only needed while merging.
 */
static void lod_add(const struct tl_window *w, struct tl_cell *cells, uint64_t *busy, const struct tl_slice *s, int32_t idx)
{
	int c0, c1;

	if (!tl_cols_of(w, s->start_ns, s->end_ns, &c0, &c1))
		return;
	if (c1 > c0) {
		for (int c = c0; c <= c1; c++) {
			struct tl_cell *cell = &cells[c];

			cell->type = TL_CELL_SLICE;
			cell->slice = idx;
			cell->head = c == c0;
			cell->wide = 1;
			cell->count = 1;
		}
		return;
	}
	struct tl_cell *cell = &cells[c0];
	int64_t a = s->start_ns > tl_col_start(w, c0) ? s->start_ns : tl_col_start(w, c0);
	int64_t b = s->end_ns < tl_col_start(w, c0 + 1) ? s->end_ns : tl_col_start(w, c0 + 1);
	uint64_t d = b > a ? (uint64_t)(b - a) : 0;

	switch (cell->type) {
	case TL_CELL_EMPTY:
		cell->type = TL_CELL_SLICE;
		cell->slice = idx;
		cell->head = 1;
		cell->wide = 0;
		cell->count = 1;
		busy[c0] = d;
		break;
	case TL_CELL_SLICE:
		cell->count++;
		if (!cell->wide) {
			cell->type = TL_CELL_DENSITY;
			cell->slice = -1;
			busy[c0] += d;
		}
		break;
	default:
		cell->count++;
		busy[c0] += d;
		break;
	}
}

static void lod_shade(const struct tl_window *w, struct tl_cell *cells, const uint64_t *busy)
{
	for (int c = 0; c < w->cols; c++) {
		if (cells[c].type != TL_CELL_DENSITY)
			continue;
		int s = tl_shade(busy[c], tl_col_start(w, c + 1) - tl_col_start(w, c));
		cells[c].shade = (uint8_t)(s ? s : 1);
	}
}

static void lod_merge_busy(const struct tl_window *w, const struct tl_slice *slices, size_t n, struct tl_cell *cells,
			   uint64_t *busy)
{
	for (size_t i = 0; i < n; i++)
		lod_add(w, cells, busy, &slices[i], (int32_t)i);
	lod_shade(w, cells, busy);
}

void tl_lod_merge(const struct tl_window *w, const struct tl_slice *slices, size_t n, struct tl_cell *cells)
{
	uint64_t *busy;

	if (w->cols <= 0)
		return;
	busy = calloc((size_t)w->cols, sizeof(*busy));
	if (!busy)
		return;
	for (int c = 0; c < w->cols; c++) {
		memset(&cells[c], 0, sizeof(cells[c]));
		cells[c].slice = -1;
	}
	lod_merge_busy(w, slices, n, cells, busy);
	free(busy);
}

/* ---- strings and small maps ---- */

const char *timeline_string(const struct timeline *tl, int64_t id)
{
	size_t i;

	if (!idmap_get(&tl->strings.at, id, &i))
		return NULL;
	return tl->strings.text[i];
}

const char *timeline_slice_name(const struct timeline *tl, const struct tl_slice *s)
{
	const char *name = timeline_string(tl, s->name_id);

	if (name)
		return name;
	return tl_kind_name((enum tl_kind)s->kind);
}

/*
 * The pooled copy of text to show on the terminal: control characters
 * (which could move the cursor or retitle the window) become '?'.
 */
static const char *screen_text(struct strpool *pool, const unsigned char *text, int len)
{
	size_t n = len > 0 ? (size_t)len : 0;
	char *out = alloc_array(n + 1, 1);
	const char *r;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++)
		out[i] = text[i] < 0x20 || text[i] == 0x7f ? '?' : (char)text[i];
	r = strpool_intern(pool, out, n);
	free(out);
	return r;
}

/* Store row t->n: id and column 1 of st (text in tl's pool, or an integer).  0 or -1. */
static int id_row_add(struct timeline *tl, sqlite3_stmt *st, struct tl_idrows *t, size_t *cap, int text)
{
	size_t capv = *cap;

	if (grow_array((void **)&t->id, cap, t->n + 1, sizeof(*t->id)) ||
	    (text ? grow_array((void **)&t->text, &capv, *cap, sizeof(*t->text))
		  : grow_array((void **)&t->value, &capv, *cap, sizeof(*t->value))))
		return -1;
	if (text) {
		const unsigned char *s = sqlite3_column_text(st, 1);

		t->text[t->n] = s ? screen_text(&tl->pool, s, sqlite3_column_bytes(st, 1)) : NULL;
		if (s && !t->text[t->n])
			return -1;
	} else {
		t->value[t->n] = sqlite3_column_int64(st, 1);
	}
	t->id[t->n] = sqlite3_column_int64(st, 0);
	if (idmap_put(&t->at, t->id[t->n], t->n) < 0)
		return -1;
	t->n++;
	return 0;
}

/*
 * Read "SELECT id, value" rows into t: column 1 as text (text != 0) or as
 * an integer.  Memory grows with the rows, never with the ids (untrusted).
 */
static int load_id_rows(struct timeline *tl, const char *sql, struct tl_idrows *t, int text)
{
	sqlite3 *db = tl->rec->db;
	sqlite3_stmt *st = db_prepare(db, sql);
	size_t cap = 0;
	int rc;

	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if (id_row_add(tl, st, t, &cap, text)) {
			sqlite3_finalize(st);
			return error("out of memory");
		}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return error("cannot read '%s': %s", tl->rec->path, sqlite3_errmsg(db));
	return 0;
}

static void id_rows_release(struct tl_idrows *t)
{
	free(t->text);
	free(t->value);
	free(t->id);
	idmap_release(&t->at);
	memset(t, 0, sizeof(*t));
}

/* Load strings, functions and graph_functions, found by id through maps. */
static int load_maps(struct timeline *tl)
{
	if (load_id_rows(tl, "SELECT id, text FROM strings", &tl->strings, 1) < 0 ||
	    load_id_rows(tl, "SELECT id, name_id FROM functions", &tl->functions, 0) < 0 ||
	    load_id_rows(tl, "SELECT id, coalesce(function_id, -1) FROM graph_functions", &tl->graph_fns, 0) < 0)
		return -1;
	return 0;
}

/* The value of row id in t, -1 when there is none. */
static int64_t id_value(const struct tl_idrows *t, int64_t id)
{
	size_t i;

	return idmap_get(&t->at, id, &i) ? t->value[i] : -1;
}

static int64_t fn_name_of(const struct timeline *tl, int64_t fn)
{
	return id_value(&tl->functions, fn);
}

/*
 * The name a slice shows: a trace and a graph function call show the user
 * function ("train_step"), not the TensorFlow name, which the details give.
 */
static int64_t resolve_name(const struct timeline *tl, enum tl_kind kind, int64_t aux, int64_t name_id)
{
	int64_t n;

	if (kind == TL_TRACE)
		return fn_name_of(tl, aux);
	if (kind == TL_CALL && aux >= 0) {
		n = fn_name_of(tl, id_value(&tl->graph_fns, aux));
		if (n >= 0)
			return n;
	}
	return name_id;
}

/* Column layout of kind_sql: see there. */
static void row_to_slice(const struct timeline *tl, sqlite3_stmt *st, enum tl_kind kind, struct tl_slice *s)
{
	if (kind == TL_KERNEL && sqlite3_column_int(st, 9))
		kind = TL_COPY;
	s->id = sqlite3_column_int64(st, 0);
	s->start_ns = ts_clamp(sqlite3_column_int64(st, 3));
	s->end_ns = ts_clamp(sqlite3_column_int64(st, 4));
	if (s->end_ns < s->start_ns)
		s->end_ns = s->start_ns;
	s->name_id = resolve_name(tl, kind, sqlite3_column_int64(st, 5), sqlite3_column_int64(st, 6));
	s->kind = (uint8_t)kind;
	s->flags = sqlite3_column_int(st, 8) ? TL_SLICE_FAILED : 0;
	s->lane = 0;
}

/* ---- the scan ---- */

#define MAX_LANES 4096

struct lane_key {
	int64_t pid, tid, device;
	int kind;
};

static int lane_key_eq(const struct lane_key *a, const struct lane_key *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->device == b->device && a->kind == b->kind;
}

struct scan_task {
	const struct scan_table *table;
	int64_t lo, hi;
};

/* Rows a task stands for in the progress share: its id range, at most one chunk's worth. */
static int64_t task_rows(const struct scan_task *t)
{
	uint64_t n = (uint64_t)t->hi - (uint64_t)t->lo;

	return n >= SCAN_CHUNK_ROWS ? SCAN_CHUNK_ROWS : (int64_t)n + 1;
}


struct tl_loader {
	pthread_mutex_t lock;   /* lane creation, longs, next, failure */
	pthread_t threads[SCAN_MAX_THREADS];
	int started[SCAN_MAX_THREADS];
	int nthreads;
	struct scan_task *tasks;
	size_t ntasks, next;
	size_t nlanes;          /* lanes created by the scan; tl->nlanes is what poll published */
	int64_t rows_total;
	int64_t rows_done;      /* atomic */
	int running;            /* atomic: scan threads not finished */
	int stop;               /* atomic: timeline_release() asks the threads to stop */
	uint64_t generation;    /* atomic: bumped by each finished task */
	uint64_t seen;          /* generation at the last poll */
	int failed, reported, joined;
	int prefix;             /* the bins hold running sums: the scan is over */
	char err[256];
	double t_start;
};

/* A scan thread's memo of the lanes it has met, and of their new events. */
struct scan_worker {
	struct timeline *tl;
	struct {
		struct lane_key key;
		struct tl_lane *lane;
		int64_t events;
	} memo[64];
	size_t nmemo;
};

static double now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void loader_fail(struct tl_loader *ld, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void loader_fail(struct tl_loader *ld, const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&ld->lock);
	if (!ld->failed) {
		va_start(ap, fmt);
		vsnprintf(ld->err, sizeof(ld->err), fmt, ap);
		va_end(ap);
		ld->failed = 1;
	}
	pthread_mutex_unlock(&ld->lock);
}

static void worker_flush(struct scan_worker *w)
{
	for (size_t i = 0; i < w->nmemo; i++) {
		__atomic_fetch_add(&w->memo[i].lane->nevents, w->memo[i].events, __ATOMIC_RELAXED);
		w->memo[i].events = 0;
	}
}

/* The lane of key, created on first sight; NULL when out of memory or lanes. */
static struct tl_lane *worker_lane(struct scan_worker *w, const struct lane_key *key, int64_t **events)
{
	struct timeline *tl = w->tl;
	struct tl_loader *ld = tl->loader;
	struct tl_lane *l = NULL;
	size_t i;

	for (i = 0; i < w->nmemo; i++) {
		if (lane_key_eq(&w->memo[i].key, key)) {
			*events = &w->memo[i].events;
			return w->memo[i].lane;
		}
	}
	pthread_mutex_lock(&ld->lock);
	for (i = 0; i < ld->nlanes; i++) {
		struct tl_lane *c = &tl->lanes[i];
		if ((int)c->kind == key->kind && c->pid == key->pid && c->tid == key->tid && c->device == key->device) {
			l = c;
			break;
		}
	}
	if (!l && ld->nlanes < MAX_LANES) {
		l = &tl->lanes[ld->nlanes];
		memset(l, 0, sizeof(*l));
		l->kind = (enum tl_kind)key->kind;
		l->pid = key->pid;
		l->tid = key->tid;
		l->device = key->device;
		l->count = calloc(tl->nbins, sizeof(*l->count));
		l->busy = calloc(tl->nbins, sizeof(*l->busy));
		l->coarse_count = calloc(tl->nbins / TL_COARSE + 1, sizeof(*l->coarse_count));
		l->coarse_busy = calloc(tl->nbins / TL_COARSE + 1, sizeof(*l->coarse_busy));
		if (l->count && l->busy && l->coarse_count && l->coarse_busy) {
			ld->nlanes++;
		} else {
			free(l->count);
			free(l->busy);
			free(l->coarse_count);
			free(l->coarse_busy);
			memset(l, 0, sizeof(*l));
			l = NULL;
		}
	}
	pthread_mutex_unlock(&ld->lock);
	if (!l)
		return NULL;
	if (w->nmemo == sizeof(w->memo) / sizeof(w->memo[0])) {
		/* a workload with very many threads: forget the memo, keep the counts */
		worker_flush(w);
		w->nmemo = 0;
	}
	w->memo[w->nmemo].key = *key;
	w->memo[w->nmemo].lane = l;
	w->memo[w->nmemo].events = 0;
	*events = &w->memo[w->nmemo].events;
	w->nmemo++;
	return l;
}

static int64_t bin_of(const struct timeline *tl, int64_t t)
{
	int64_t b = (t - tl->start_ns) / tl->bin_ns;

	if (b < 0)
		return 0;
	return b >= (int64_t)tl->nbins ? (int64_t)tl->nbins - 1 : b;
}

static int lane_add(struct timeline *tl, struct tl_lane *l, const struct tl_slice *s)
{
	int64_t d = s->end_ns - s->start_ns;

	if (d > sat_mul64(TL_LONG_BINS, tl->bin_ns)) {
		int ret = 0;

		pthread_mutex_lock(&tl->loader->lock);
		if (!ARRAY_GROW(l->longs, l->nlongs, l->alongs))
			l->longs[l->nlongs++] = *s;
		else
			ret = -1;
		pthread_mutex_unlock(&tl->loader->lock);
		return ret;
	}
	int64_t cur = __atomic_load_n(&l->max_short_ns, __ATOMIC_RELAXED);
	while (d > cur && !__atomic_compare_exchange_n(&l->max_short_ns, &cur, d, 1, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		;
	int64_t b0 = bin_of(tl, s->start_ns), b1 = bin_of(tl, s->end_ns > s->start_ns ? s->end_ns - 1 : s->start_ns);
	__atomic_fetch_add(&l->count[b0], 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&l->coarse_count[b0 / TL_COARSE], 1, __ATOMIC_RELAXED);
	if (b0 == b1) {
		__atomic_fetch_add(&l->busy[b0], (uint64_t)d, __ATOMIC_RELAXED);
		__atomic_fetch_add(&l->coarse_busy[b0 / TL_COARSE], (uint64_t)d, __ATOMIC_RELAXED);
		return 0;
	}
	for (int64_t b = b0; b <= b1; b++) {
		int64_t a = tl->start_ns + b * tl->bin_ns, e = a + tl->bin_ns;
		if (a < s->start_ns)
			a = s->start_ns;
		if (e > s->end_ns)
			e = s->end_ns;
		if (e > a) {
			__atomic_fetch_add(&l->busy[b], (uint64_t)(e - a), __ATOMIC_RELAXED);
			__atomic_fetch_add(&l->coarse_busy[b / TL_COARSE], (uint64_t)(e - a), __ATOMIC_RELAXED);
		}
	}
	return 0;
}

static int is_retrace(const struct timeline *tl, int64_t trace_id);

/* The whole row of a long event, read by id on the scan's connection. */
static int scan_long(struct timeline *tl, sqlite3 *db, sqlite3_stmt **find, enum tl_kind kind, int64_t id,
		     struct tl_slice *s)
{
	char sql[512];
	int rc;

	if (!find[kind]) {
		snprintf(sql, sizeof(sql), "%s WHERE id = ?1", kind_sql[kind].select);
		if (sqlite3_prepare_v2(db, sql, -1, &find[kind], NULL) != SQLITE_OK) {
			loader_fail(tl->loader, "%.100s in '%.140s'", sqlite3_errmsg(db), sql);
			return -1;
		}
	}
	sqlite3_reset(find[kind]);
	sqlite3_bind_int64(find[kind], 1, id);
	rc = sqlite3_step(find[kind]);
	if (rc != SQLITE_ROW) {
		loader_fail(tl->loader, "%s", rc == SQLITE_DONE ? "an event vanished while reading" : sqlite3_errmsg(db));
		return -1;
	}
	row_to_slice(tl, find[kind], kind, s);
	if (s->kind == TL_TRACE && is_retrace(tl, s->id))
		s->flags |= TL_SLICE_RETRACE;
	sqlite3_reset(find[kind]);
	return 0;
}

static int scan_one(struct scan_worker *w, sqlite3 *db, sqlite3_stmt **find, const struct scan_task *task)
{
	struct timeline *tl = w->tl;
	const struct scan_table *t = task->table;
	sqlite3_stmt *st = NULL;
	int gpu = t->kind == TL_KERNEL, rc, n = 0;
	int64_t long_ns = sat_mul64(TL_LONG_BINS, tl->bin_ns);

	if (sqlite3_prepare_v2(db, t->select, -1, &st, NULL) != SQLITE_OK) {
		loader_fail(tl->loader, "%.100s in '%.140s'", sqlite3_errmsg(db), t->select);
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_bind_int64(st, 1, task->lo);
	sqlite3_bind_int64(st, 2, task->hi);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct tl_slice s;
		struct lane_key key;
		struct tl_lane *l;
		int64_t *events;

		s.start_ns = ts_clamp(sqlite3_column_int64(st, 3));
		s.end_ns = ts_clamp(sqlite3_column_int64(st, 4));
		if (s.end_ns < s.start_ns)
			s.end_ns = s.start_ns;
		key.kind = gpu && sqlite3_column_int(st, 6) ? TL_COPY : (int)t->kind;
		key.pid = sqlite3_column_int64(st, 1);
		key.tid = sqlite3_column_int64(st, 2);
		key.device = gpu ? sqlite3_column_int64(st, 5) : -1;
		if (s.end_ns - s.start_ns > long_ns) {
			if (scan_long(tl, db, find, (enum tl_kind)key.kind, sqlite3_column_int64(st, 0), &s) < 0) {
				sqlite3_finalize(st);
				return -1;
			}
		}
		l = worker_lane(w, &key, &events);
		if (!l) {
			/* past MAX_LANES the events are not shown; out of memory is an error */
			if (__atomic_load_n(&tl->loader->nlanes, __ATOMIC_RELAXED) < MAX_LANES) {
				loader_fail(tl->loader, "out of memory");
				sqlite3_finalize(st);
				return -1;
			}
			continue;
		}
		s.lane = (uint32_t)(l - tl->lanes);
		(*events)++;
		if (lane_add(tl, l, &s) < 0) {
			loader_fail(tl->loader, "out of memory");
			sqlite3_finalize(st);
			return -1;
		}
		if (++n % 65536 == 0 && __atomic_load_n(&tl->loader->stop, __ATOMIC_RELAXED))
			break;
	}
	if (rc != SQLITE_DONE && rc != SQLITE_ROW) {
		loader_fail(tl->loader, "%s", sqlite3_errmsg(db));
		sqlite3_finalize(st);
		return -1;
	}
	sqlite3_finalize(st);
	return 0;
}

static void *scan_thread(void *arg)
{
	struct scan_worker w = { .tl = arg };
	struct tl_loader *ld = w.tl->loader;
	sqlite3_stmt *find[TL_NKINDS] = { 0 };
	sqlite3 *db = NULL;

	/* the thread that draws must win the CPU over the scan: redraws stay fluid */
	setpriority(PRIO_PROCESS, (id_t)gettid(), SCAN_NICE);
	if (db_open_readonly(w.tl->rec->path, SQLITE_OPEN_NOMUTEX, &db) != SQLITE_OK) {
		loader_fail(ld, "%s", db ? sqlite3_errmsg(db) : "out of memory");
		goto done;
	}
	for (;;) {
		size_t i;

		pthread_mutex_lock(&ld->lock);
		i = ld->next++;
		pthread_mutex_unlock(&ld->lock);
		if (i >= ld->ntasks || __atomic_load_n(&ld->stop, __ATOMIC_RELAXED))
			break;
		if (scan_one(&w, db, find, &ld->tasks[i]) < 0)
			break;
		worker_flush(&w);
		__atomic_fetch_add(&ld->rows_done, task_rows(&ld->tasks[i]), __ATOMIC_RELAXED);
		__atomic_fetch_add(&ld->generation, 1, __ATOMIC_RELEASE);
	}
	worker_flush(&w);
done:
	for (int k = 0; k < TL_NKINDS; k++)
		sqlite3_finalize(find[k]);
	sqlite3_close(db);
	__atomic_fetch_sub(&ld->running, 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&ld->generation, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Split each event table into rowid ranges, interleaved across tables so
 * that the first moments of the scan meet every table (and so every lane
 * that is busy through the run).
 */
static int make_tasks(struct timeline *tl, struct tl_loader *ld)
{
	int64_t lo[NSCAN_TABLES], hi[NSCAN_TABLES];
	int has[NSCAN_TABLES];
	size_t alloc = 0;

	for (size_t t = 0; t < NSCAN_TABLES; t++) {
		char sql[128];
		sqlite3_stmt *st;

		/* one aggregate per statement: min(id) and max(id) together scan the table */
		has[t] = 0;
		for (int m = 0; m < 2; m++) {
			snprintf(sql, sizeof(sql), "SELECT %s(id) FROM %s", m ? "max" : "min", scan_tables[t].table);
			st = db_prepare(tl->rec->db, sql);
			if (!st)
				return -1;
			if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
				*(m ? &hi[t] : &lo[t]) = sqlite3_column_int64(st, 0);
				has[t] = 1;
			}
			sqlite3_finalize(st);
		}
	}
	/*
	 * Chunk k of a table is visited in bit-reversed order (0, 1/2, 1/4,
	 * 3/4 of the rows, ...): the first seconds of the scan sketch the whole
	 * run, which the rest refines.
	 */
	int64_t nchunks[NSCAN_TABLES], most = 0;
	uint64_t chunk[NSCAN_TABLES];
	int bits = 0;
	for (size_t t = 0; t < NSCAN_TABLES; t++) {
		/*
		 * Ids come from the file: a table whose ids span 2^64 gets at most
		 * MAX_TABLE_CHUNKS (mostly empty) chunks, not 2^46 of them.
		 */
		uint64_t width = has[t] && hi[t] >= lo[t] ? (uint64_t)hi[t] - (uint64_t)lo[t] : 0;

		chunk[t] = width / MAX_TABLE_CHUNKS + 1 > SCAN_CHUNK_ROWS ? width / MAX_TABLE_CHUNKS + 1 : SCAN_CHUNK_ROWS;
		nchunks[t] = has[t] && hi[t] >= lo[t] ? (int64_t)(width / chunk[t]) + 1 : 0;
		if (nchunks[t] > most)
			most = nchunks[t];
	}
	while ((INT64_C(1) << bits) < most)
		bits++;
	for (int64_t round = 0; round < (INT64_C(1) << bits) || round == 0; round++) {
		int64_t k = 0;
		for (int i = 0; i < bits; i++)
			if (round & (INT64_C(1) << i))
				k |= INT64_C(1) << (bits - 1 - i);
		for (size_t t = 0; t < NSCAN_TABLES; t++) {
			int64_t a;
			if (!has[t] || k >= nchunks[t])
				continue;
			a = (int64_t)((uint64_t)lo[t] + (uint64_t)k * chunk[t]);
			if (ARRAY_GROW(ld->tasks, ld->ntasks, alloc))
				return error("out of memory");
			ld->tasks[ld->ntasks].table = &scan_tables[t];
			ld->tasks[ld->ntasks].lo = a;
			ld->tasks[ld->ntasks].hi = (uint64_t)hi[t] - (uint64_t)a > chunk[t] - 1
							   ? (int64_t)((uint64_t)a + chunk[t] - 1) : hi[t];
			ld->rows_total += task_rows(&ld->tasks[ld->ntasks]);
			ld->ntasks++;
		}
	}
	return 0;
}

/* Span of the recording: meta start/end, widened to every event's start. */
static int find_span(struct timeline *tl)
{
	sqlite3 *db = tl->rec->db;
	char *s = db_meta_get(db, "start_ns"), *e = db_meta_get(db, "end_ns");
	int64_t lo = INT64_MAX, hi = INT64_MIN;

	if (s && *s)
		lo = ts_clamp(strtoll(s, NULL, 10));
	if (e && *e)
		hi = ts_clamp(strtoll(e, NULL, 10));
	free(s);
	free(e);
	for (size_t t = 0; t < NSCAN_TABLES; t++) {
		char sql[160];
		sqlite3_stmt *st;

		/*
		 * Two queries: SQLite answers min() or max() alone from the start_ns
		 * index, but both in one statement with a full scan.  Ends are
		 * covered by the slack below.
		 */
		for (int m = 0; m < 2; m++) {
			snprintf(sql, sizeof(sql), "SELECT %s(start_ns) FROM %s", m ? "max" : "min", scan_tables[t].table);
			st = db_prepare(db, sql);
			if (!st)
				return -1;
			if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL) {
				int64_t v = ts_clamp(sqlite3_column_int64(st, 0));
				if (!m && v < lo)
					lo = v;
				if (m && v >= hi)
					hi = v + 1;
			}
			sqlite3_finalize(st);
		}
	}
	if (lo == INT64_MAX)
		lo = 0;
	if (hi <= lo)
		hi = lo + 1000000;
	tl->start_ns = lo;
	tl->end_ns = hi;
	return 0;
}

static int track_order(const char *role)
{
	static const char *const order[] = { "python-main", "tf-executor", "tf-data", "other", "gpu", "gpu-stream" };

	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (role && !strcmp(role, order[i]))
			return (int)i;
	return 3;
}

static int track_cmp(const void *a, const void *b)
{
	const struct tl_track *x = a, *y = b;
	int ox = track_order(x->role), oy = track_order(y->role);

	if (x->proc_start != y->proc_start)
		return x->proc_start < y->proc_start ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (ox != oy)
		return ox - oy;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void track_label(struct tl_track *t)
{
	static const struct {
		const char *role, *label;
	} labels[] = {
		{ "python-main", "main" }, { "tf-executor", "exec" }, { "tf-data", "data" }, { "gpu", "cupti" },
	};
	const char *l = "thr";

	if (t->device >= 0) {
		snprintf(t->label, sizeof(t->label), "GPU%d s%d", (int)t->device, (int)t->tid);
		return;
	}
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (!strcmp(t->role, labels[i].role))
			l = labels[i].label;
	snprintf(t->label, sizeof(t->label), "%s %" PRId64, l, t->tid);
}

/*
 * processes.argv is a JSON array of strings: join them with spaces, the
 * program's directory dropped ("python train.py").  Escapes other than \"
 * and \\ are kept as written: this is for display.
 */
static char *command_of(const char *json)
{
	struct strbuf sb = STRBUF_INIT;
	const char *p = json;
	int first = 1;

	while (p && (p = strchr(p, '"'))) {
		const char *slash = NULL;
		struct strbuf arg = STRBUF_INIT;

		for (p++; *p && *p != '"'; p++) {
			if (*p == '\\' && p[1])
				p++;
			strbuf_addch(&arg, *p);
		}
		if (arg.len) {
			if (first && (slash = strrchr(arg.buf, '/')))
				strbuf_addstr(&sb, slash + 1);
			else
				strbuf_addf(&sb, "%s%s", first ? "" : " ", arg.buf);
			first = 0;
		}
		strbuf_release(&arg);
		if (*p)
			p++;
	}
	return sb.len ? strbuf_detach(&sb) : (strbuf_release(&sb), NULL);
}

/* Role and name of a thread, its process's start (for ordering) and command. */
static void thread_info(struct timeline *tl, struct tl_track *t)
{
	sqlite3_stmt *st;

	t->proc_start = INT64_MAX;
	st = db_prepare(tl->rec->db, "SELECT start_ns, argv FROM processes WHERE pid = ?1");
	if (st) {
		sqlite3_bind_int64(st, 1, t->pid);
		if (sqlite3_step(st) == SQLITE_ROW) {
			if (sqlite3_column_type(st, 0) != SQLITE_NULL)
				t->proc_start = sqlite3_column_int64(st, 0);
			if (sqlite3_column_type(st, 1) != SQLITE_NULL)
				t->command = command_of((const char *)sqlite3_column_text(st, 1));
		}
		sqlite3_finalize(st);
	}
	if (t->device >= 0) {
		t->role = strdup("gpu-stream");
		t->name = NULL;
		return;
	}
	st = db_prepare(tl->rec->db, "SELECT name, role FROM threads WHERE pid = ?1 AND tid = ?2");
	if (st) {
		sqlite3_bind_int64(st, 1, t->pid);
		sqlite3_bind_int64(st, 2, t->tid);
		if (sqlite3_step(st) == SQLITE_ROW) {
			if (sqlite3_column_type(st, 0) != SQLITE_NULL)
				t->name = strdup((const char *)sqlite3_column_text(st, 0));
			t->role = strdup((const char *)sqlite3_column_text(st, 1));
		}
		sqlite3_finalize(st);
	}
	if (!t->role)
		t->role = strdup("other");
}

static int slice_cmp(const void *a, const void *b)
{
	const struct tl_slice *x = a, *y = b;

	if (x->start_ns != y->start_ns)
		return x->start_ns < y->start_ns ? -1 : 1;
	if (x->end_ns != y->end_ns)
		return x->end_ns > y->end_ns ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int mark_id_cmp(const void *key, const void *elem)
{
	int64_t id = *(const int64_t *)key;
	const struct tl_mark *m = elem;

	return id < m->slice.id ? -1 : id > m->slice.id;
}

static int mark_sort_id(const void *a, const void *b)
{
	const struct tl_mark *x = a, *y = b;

	return x->slice.id < y->slice.id ? -1 : x->slice.id > y->slice.id;
}

static int is_retrace(const struct timeline *tl, int64_t trace_id)
{
	/* tl->retraces is by time; a by-id copy lives right after it */
	const struct tl_mark *by_id = tl->retraces ? tl->retraces + tl->nretraces : NULL;

	return by_id && bsearch(&trace_id, by_id, tl->nretraces, sizeof(*by_id), mark_id_cmp) != NULL;
}

/* The published lane of an event, or 0 when none. */
static int lane_of(const struct timeline *tl, enum tl_kind kind, int64_t pid, int64_t tid, int64_t device, uint32_t *lane)
{
	for (size_t i = 0; i < tl->nlanes; i++) {
		const struct tl_lane *l = &tl->lanes[i];
		if (l->kind == kind && l->pid == pid && l->tid == tid && l->device == device) {
			*lane = (uint32_t)i;
			return 1;
		}
	}
	return 0;
}

/* Put the lanes published since the last poll into tracks, sorted again. */
static int publish_lanes(struct timeline *tl, size_t n)
{
	size_t old = tl->nlanes;
	struct tl_track *p;

	p = realloc_array(tl->tracks, n, sizeof(*p)); /* at most one track per lane */
	if (!p)
		return error("out of memory");
	tl->tracks = p;
	for (size_t i = old; i < n; i++) {
		struct tl_lane *l = &tl->lanes[i];
		struct tl_track *t = NULL;
		size_t j;

		for (j = 0; j < tl->ntracks; j++)
			if (tl->tracks[j].pid == l->pid && tl->tracks[j].tid == l->tid && tl->tracks[j].device == l->device)
				t = &tl->tracks[j];
		if (!t) {
			t = &tl->tracks[tl->ntracks++];
			memset(t, 0, sizeof(*t));
			t->pid = l->pid;
			t->tid = l->tid;
			t->device = l->device;
			thread_info(tl, t);
			track_label(t);
		}
		/* keep the track's lanes in kind order */
		for (j = t->nlanes; j > 0 && tl->lanes[t->lanes[j - 1]].kind > l->kind; j--)
			t->lanes[j] = t->lanes[j - 1];
		t->lanes[j] = i;
		t->nlanes++;
	}
	tl->nlanes = n;
	sort(tl->tracks, tl->ntracks, sizeof(*tl->tracks), track_cmp);
	for (size_t j = 0; j < tl->ntracks; j++)
		for (size_t k = 0; k < tl->tracks[j].nlanes; k++)
			tl->lanes[tl->tracks[j].lanes[k]].track = j;
	for (size_t i = 0; i < tl->nretraces; i++) {
		struct tl_mark *m = &tl->retraces[i];
		lane_of(tl, TL_TRACE, m->pid, m->tid, -1, &m->slice.lane);
	}
	return 0;
}

/* Once the scan is over: sort the long slices, turn the bins into running sums. */
static void scan_finished(struct timeline *tl)
{
	struct tl_loader *ld = tl->loader;

	if (ld->prefix)
		return;
	for (size_t i = 0; i < tl->nlanes; i++) {
		struct tl_lane *l = &tl->lanes[i];
		sort(l->longs, l->nlongs, sizeof(*l->longs), slice_cmp);
		for (uint32_t b = 1; b < tl->nbins; b++) {
			l->count[b] += l->count[b - 1];
			l->busy[b] += l->busy[b - 1];
		}
	}
	ld->prefix = 1;
	/* the running sums answer every column in two loads: the coarse bins are done */
	for (size_t i = 0; i < tl->nlanes; i++) {
		free(tl->lanes[i].coarse_count);
		free(tl->lanes[i].coarse_busy);
		tl->lanes[i].coarse_count = NULL;
		tl->lanes[i].coarse_busy = NULL;
	}
}

int timeline_poll(struct timeline *tl, double *progress)
{
	struct tl_loader *ld = tl->loader;
	int flags = 0, running, failed;
	size_t n;
	uint64_t gen;

	if (progress)
		*progress = 1;
	if (!ld)
		return 0;
	running = __atomic_load_n(&ld->running, __ATOMIC_ACQUIRE);
	gen = __atomic_load_n(&ld->generation, __ATOMIC_ACQUIRE);
	pthread_mutex_lock(&ld->lock);
	n = ld->nlanes;
	failed = ld->failed;
	pthread_mutex_unlock(&ld->lock);
	if (n != tl->nlanes) {
		if (publish_lanes(tl, n) < 0)
			failed = 1;
		flags |= TL_POLL_CHANGED;
	}
	if (gen != ld->seen) {
		ld->seen = gen;
		flags |= TL_POLL_CHANGED;
	}
	if (failed && !ld->reported) {
		error("cannot read '%s': %s", tl->rec->path, ld->err);
		ld->reported = 1;
	}
	if (running) {
		flags |= TL_POLL_LOADING;
	} else if (!ld->joined) {
		for (int i = 0; i < ld->nthreads; i++)
			if (ld->started[i])
				pthread_join(ld->threads[i], NULL);
		ld->joined = 1;
		tl->load_seconds = now_seconds() - ld->t_start;
		/* publish the lanes the last tasks found before summing their bins */
		pthread_mutex_lock(&ld->lock);
		n = ld->nlanes;
		pthread_mutex_unlock(&ld->lock);
		if (n != tl->nlanes && publish_lanes(tl, n) < 0)
			ld->failed = 1;
		scan_finished(tl);
		flags |= TL_POLL_CHANGED;
	}
	if (progress && ld->rows_total > 0 && !ld->joined)
		*progress = (double)__atomic_load_n(&ld->rows_done, __ATOMIC_RELAXED) / (double)ld->rows_total;
	return flags;
}

int timeline_wait(struct timeline *tl)
{
	struct tl_loader *ld = tl->loader;

	if (!ld)
		return 0;
	if (!ld->joined) {
		for (int i = 0; i < ld->nthreads; i++)
			if (ld->started[i])
				pthread_join(ld->threads[i], NULL);
		ld->nthreads = 0;
	}
	__atomic_store_n(&ld->running, 0, __ATOMIC_RELEASE);
	timeline_poll(tl, NULL);
	return ld->failed ? -1 : 0;
}

int64_t tl_lane_events(const struct tl_lane *l)
{
	return __atomic_load_n(&l->nevents, __ATOMIC_RELAXED);
}

static int load_retraces(struct timeline *tl)
{
	sqlite3_stmt *st;
	size_t alloc = 0;
	int rc;

	/*
	 * A retrace: a trace whose tf.function object had traced before, or
	 * any trace of a function after its first.
	 */
	st = db_prepare(tl->rec->db,
			"SELECT t.id, t.pid, t.tid, t.start_ns, t.end_ns, t.function_id, t.object_trace_no, t.status <> 'ok'"
			" FROM traces t WHERE t.object_trace_no > 1 OR t.start_ns > "
			"(SELECT min(t2.start_ns) FROM traces t2 WHERE t2.function_id = t.function_id)"
			" ORDER BY t.start_ns, t.id");
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct tl_mark *m;

		if (tl->nretraces == alloc) {
			alloc = alloc ? alloc * 2 : 16;
			/* twice: the second half holds the same marks by id */
			struct tl_mark *p = realloc_array(tl->retraces, 2 * alloc, sizeof(*p));
			if (!p) {
				sqlite3_finalize(st);
				return error("out of memory");
			}
			tl->retraces = p;
		}
		m = &tl->retraces[tl->nretraces++];
		memset(m, 0, sizeof(*m));
		m->slice.id = sqlite3_column_int64(st, 0);
		m->pid = sqlite3_column_int64(st, 1);
		m->tid = sqlite3_column_int64(st, 2);
		m->slice.start_ns = ts_clamp(sqlite3_column_int64(st, 3));
		m->slice.end_ns = ts_clamp(sqlite3_column_int64(st, 4));
		if (m->slice.end_ns < m->slice.start_ns)
			m->slice.end_ns = m->slice.start_ns;
		m->function_id = sqlite3_column_int64(st, 5);
		m->slice.name_id = fn_name_of(tl, m->function_id);
		m->slice.kind = TL_TRACE;
		m->slice.flags = TL_SLICE_RETRACE | (sqlite3_column_int(st, 7) ? TL_SLICE_FAILED : 0);
		m->object_trace_no = sqlite3_column_int(st, 6);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return error("cannot read traces of '%s': %s", tl->rec->path, sqlite3_errmsg(tl->rec->db));
	if (tl->nretraces) {
		memcpy(tl->retraces + tl->nretraces, tl->retraces, tl->nretraces * sizeof(*tl->retraces));
		sort(tl->retraces + tl->nretraces, tl->nretraces, sizeof(*tl->retraces), mark_sort_id);
	}
	return 0;
}

static sqlite3_stmt *prepare_kind(struct timeline *tl, enum tl_kind kind, const char *tail)
{
	char sql[1024];

	snprintf(sql, sizeof(sql), "%s WHERE %s %s", kind_sql[kind].select, kind_sql[kind].lane, tail);
	return db_prepare(tl->rec->db, sql);
}

int timeline_open(struct timeline *tl, struct recording *rec, uint32_t nbins)
{
	struct tl_loader *ld;
	double t_start = now_seconds();

	memset(tl, 0, sizeof(*tl));
	tl->rec = rec;
	ld = tl->loader = calloc(1, sizeof(*ld));
	tl->lanes = calloc(MAX_LANES, sizeof(*tl->lanes));
	if (!ld || !tl->lanes) {
		error("out of memory");
		goto fail;
	}
	pthread_mutex_init(&ld->lock, NULL);
	ld->t_start = t_start;
	ld->joined = 1; /* until threads start */
	if (load_maps(tl) < 0 || find_span(tl) < 0 || load_retraces(tl) < 0)
		goto fail;
	if (!nbins)
		nbins = DEFAULT_NBINS;
	tl->bin_ns = (tl->end_ns - tl->start_ns + nbins - 1) / nbins;
	if (tl->bin_ns < 1)
		tl->bin_ns = 1;
	tl->nbins = (uint32_t)((tl->end_ns - tl->start_ns + tl->bin_ns - 1) / tl->bin_ns);
	if (tl->nbins < 1)
		tl->nbins = 1;
	for (int k = 0; k < TL_NKINDS; k++) {
		tl->range[k] = prepare_kind(tl, (enum tl_kind)k,
					    "AND start_ns >= ?3 AND start_ns < ?4 ORDER BY start_ns LIMIT ?5");
		tl->step[0][k] = prepare_kind(tl, (enum tl_kind)k, "AND start_ns < ?3 ORDER BY start_ns DESC LIMIT 1");
		tl->step[1][k] = prepare_kind(tl, (enum tl_kind)k, "AND start_ns > ?3 ORDER BY start_ns LIMIT 1");
		if (!tl->range[k] || !tl->step[0][k] || !tl->step[1][k])
			goto fail;
	}
	if (make_tasks(tl, ld) < 0)
		goto fail;
	ld->nthreads = scan_threads();
	if ((size_t)ld->nthreads > ld->ntasks)
		ld->nthreads = (int)ld->ntasks;
	tl->threads_used = ld->nthreads;
	ld->joined = 0;
	ld->running = ld->nthreads;
	int nstarted = 0;
	for (int i = 0; i < ld->nthreads; i++) {
		ld->started[i] = pthread_create(&ld->threads[i], NULL, scan_thread, tl) == 0;
		if (ld->started[i])
			nstarted++;
		else
			__atomic_fetch_sub(&ld->running, 1, __ATOMIC_RELEASE);
	}
	if (ld->ntasks && !nstarted) {
		error("cannot start a thread to read '%s'", rec->path);
		goto fail;
	}
	tl->open_seconds = now_seconds() - t_start;
	return 0;
fail:
	timeline_release(tl);
	return -1;
}

void timeline_release(struct timeline *tl)
{
	struct tl_loader *ld = tl->loader;

	if (ld) {
		__atomic_store_n(&ld->stop, 1, __ATOMIC_RELAXED);
		if (!ld->joined)
			for (int i = 0; i < ld->nthreads; i++)
				if (ld->started[i])
					pthread_join(ld->threads[i], NULL);
		pthread_mutex_destroy(&ld->lock);
		free(ld->tasks);
		free(ld);
	}
	for (size_t i = 0; i < tl->ntracks; i++) {
		free(tl->tracks[i].role);
		free(tl->tracks[i].name);
		free(tl->tracks[i].command);
	}
	free(tl->tracks);
	/* lanes the scan made but no poll published are freed too */
	for (size_t i = 0; tl->lanes && i < MAX_LANES && (tl->lanes[i].count || tl->lanes[i].busy); i++) {
		free(tl->lanes[i].count);
		free(tl->lanes[i].coarse_count);
		free(tl->lanes[i].coarse_busy);
		free(tl->lanes[i].busy);
		free(tl->lanes[i].longs);
	}
	free(tl->lanes);
	free(tl->retraces);
	id_rows_release(&tl->strings);
	id_rows_release(&tl->functions);
	id_rows_release(&tl->graph_fns);
	strpool_release(&tl->pool);
	for (int k = 0; k < TL_NKINDS; k++) {
		sqlite3_finalize(tl->range[k]);
		sqlite3_finalize(tl->step[0][k]);
		sqlite3_finalize(tl->step[1][k]);
	}
	memset(tl, 0, sizeof(*tl));
}

/* ---- per-lane queries ---- */

static void bind_lane(sqlite3_stmt *st, const struct tl_lane *l)
{
	sqlite3_bind_int64(st, 1, l->pid);
	sqlite3_bind_int64(st, 2, l->tid);
	if (l->kind == TL_KERNEL || l->kind == TL_COPY)
		sqlite3_bind_int64(st, 6, l->device);
}

static void finish_slice(const struct timeline *tl, struct tl_slice *s, size_t lane)
{
	s->lane = (uint32_t)lane;
	if (s->kind == TL_TRACE && is_retrace(tl, s->id))
		s->flags |= TL_SLICE_RETRACE;
}

static int render_push(struct tl_render *r, const struct tl_slice *s)
{
	if (ARRAY_GROW(r->slices, r->nslices, r->alloc))
		return error("out of memory");
	r->slices[r->nslices++] = *s;
	return 0;
}

static int loading(const struct timeline *tl)
{
	return tl->loader && !tl->loader->joined;
}

/* Long slices of the lane that overlap [t0, t1). */
static int push_longs(struct timeline *tl, const struct tl_lane *l, int64_t t0, int64_t t1, struct tl_render *r)
{
	int ret = 0, locked = loading(tl);

	/* while the scan runs, longs grow under the lock and are not sorted yet */
	if (locked)
		pthread_mutex_lock(&tl->loader->lock);
	for (size_t i = 0; i < l->nlongs && ret == 0; i++)
		if (l->longs[i].start_ns < t1 && l->longs[i].end_ns > t0)
			ret = render_push(r, &l->longs[i]);
	if (locked)
		pthread_mutex_unlock(&tl->loader->lock);
	return ret;
}

/* How far before a window a short event may start and still reach into it. */
static int64_t look_back(const struct timeline *tl, const struct tl_lane *l)
{
	if (loading(tl))
		return sat_mul64(TL_LONG_BINS, tl->bin_ns);
	return __atomic_load_n(&l->max_short_ns, __ATOMIC_RELAXED);
}

/*
 * Fetch the events of a lane starting in [t0 - look back, t1) that reach
 * into [t0, t1), at most limit rows; returns the rows read (limit + 1 means
 * too many) or -1.
 */
static ptrdiff_t fetch_range(struct timeline *tl, size_t lane, int64_t t0, int64_t t1, size_t limit, struct tl_render *r)
{
	struct tl_lane *l = &tl->lanes[lane];
	sqlite3_stmt *st = tl->range[l->kind];
	ptrdiff_t n = 0;
	int rc;

	sqlite3_reset(st);
	bind_lane(st, l);
	sqlite3_bind_int64(st, 3, t0 - look_back(tl, l));
	sqlite3_bind_int64(st, 4, t1);
	sqlite3_bind_int64(st, 5, (int64_t)limit + 1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct tl_slice s;

		n++;
		row_to_slice(tl, st, l->kind, &s);
		if (s.end_ns <= t0 && s.start_ns < t0)
			continue;
		finish_slice(tl, &s, lane);
		if (render_push(r, &s) < 0) {
			sqlite3_reset(st);
			return -1;
		}
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return error("cannot read '%s': %s", tl->rec->path, sqlite3_errmsg(tl->rec->db));
	return n;
}

/* Sort slices by time and drop the second copy of an event (SQL and memory). */
static void sort_unique(struct tl_render *r)
{
	size_t k = 0;

	sort(r->slices, r->nslices, sizeof(*r->slices), slice_cmp);
	for (size_t i = 0; i < r->nslices; i++) {
		if (k > 0 && r->slices[k - 1].id == r->slices[i].id && r->slices[k - 1].kind == r->slices[i].kind)
			continue;
		r->slices[k++] = r->slices[i];
	}
	r->nslices = k;
}

uint64_t tl_sum_bins32(const uint32_t *fine, const uint32_t *coarse, int64_t b0, int64_t b1)
{
	uint64_t n = 0;

	/* whole coarse bins in the middle, fine bins at the edges */
	for (int64_t b = b0; b < b1;) {
		if (coarse && b % TL_COARSE == 0 && b + TL_COARSE <= b1) {
			n += __atomic_load_n(&coarse[b / TL_COARSE], __ATOMIC_RELAXED);
			b += TL_COARSE;
		} else {
			n += __atomic_load_n(&fine[b], __ATOMIC_RELAXED);
			b++;
		}
	}
	return n;
}

uint64_t tl_sum_bins64(const uint64_t *fine, const uint64_t *coarse, int64_t b0, int64_t b1)
{
	uint64_t n = 0;

	for (int64_t b = b0; b < b1;) {
		if (coarse && b % TL_COARSE == 0 && b + TL_COARSE <= b1) {
			n += __atomic_load_n(&coarse[b / TL_COARSE], __ATOMIC_RELAXED);
			b += TL_COARSE;
		} else {
			n += __atomic_load_n(&fine[b], __ATOMIC_RELAXED);
			b++;
		}
	}
	return n;
}

/*
 * Short events counted in bins [b0, b1).  While the scan runs the bins are
 * summed (coarse ones where they fit); once it is done they hold running
 * sums (see scan_finished()), so a column costs two loads at any zoom.
 */
static uint64_t bins_count(const struct timeline *tl, const struct tl_lane *l, int64_t b0, int64_t b1)
{
	if (b1 <= b0)
		return 0;
	if (tl->loader && tl->loader->prefix)
		return l->count[b1 - 1] - (b0 > 0 ? l->count[b0 - 1] : 0);
	return tl_sum_bins32(l->count, l->coarse_count, b0, b1);
}

static uint64_t bins_busy(const struct timeline *tl, const struct tl_lane *l, int64_t b0, int64_t b1)
{
	if (b1 <= b0)
		return 0;
	if (tl->loader && tl->loader->prefix)
		return l->busy[b1 - 1] - (b0 > 0 ? l->busy[b0 - 1] : 0);
	return tl_sum_bins64(l->busy, l->coarse_busy, b0, b1);
}

int timeline_lane_render(struct timeline *tl, size_t lane, const struct tl_window *w, size_t max_events,
			 struct tl_render *r)
{
	struct tl_lane *l = &tl->lanes[lane];
	uint64_t *busy;
	int64_t b0, b1;

	if (w->cols <= 0 || w->t1 <= w->t0)
		return 0;
	if (grow_array((void **)&r->cells, &r->cells_alloc, (size_t)w->cols, sizeof(*r->cells)))
		return error("out of memory");
	busy = calloc((size_t)w->cols, sizeof(*busy));
	if (!busy)
		return error("out of memory");
	for (int c = 0; c < w->cols; c++) {
		memset(&r->cells[c], 0, sizeof(r->cells[c]));
		r->cells[c].slice = -1;
	}
	r->nslices = 0;
	/* more than a few events a column are read as density, not one by one */
	if (!max_events)
		max_events = w->cols * 4 > 128 ? (size_t)w->cols * 4 : 128;
	b0 = bin_of(tl, w->t0 - look_back(tl, l));
	b1 = bin_of(tl, w->t1) + 1;
	r->events = (int64_t)bins_count(tl, l, b0, b1);
	r->exact = 0;
	/* while loading, the bins may not know the window yet: ask SQLite, bounded */
	if ((size_t)r->events <= max_events) {
		ptrdiff_t n = fetch_range(tl, lane, w->t0, w->t1, max_events, r);
		if (n < 0)
			goto fail;
		if ((size_t)n <= max_events) {
			r->exact = 1;
			if (push_longs(tl, l, w->t0, w->t1, r) < 0)
				goto fail;
			sort_unique(r);
			r->events = (int64_t)r->nslices;
			lod_merge_busy(w, r->slices, r->nslices, r->cells, busy);
			free(busy);
			return 0;
		}
		r->nslices = 0;
	}
	/* density from the bins: each column sums the bins that start in it */
	for (int c = 0; c < w->cols; c++) {
		int64_t a = tl_col_start(w, c), e = tl_col_start(w, c + 1);
		int64_t ba, bb;
		uint64_t cnt, bsy;

		if (e <= tl->start_ns || a >= tl->end_ns)
			continue;
		ba = (a - tl->start_ns + tl->bin_ns - 1) / tl->bin_ns;
		bb = (e - tl->start_ns + tl->bin_ns - 1) / tl->bin_ns;
		if (ba < 0)
			ba = 0;
		if (bb > (int64_t)tl->nbins)
			bb = tl->nbins;
		if (bb <= ba) {
			/* columns narrower than a bin show the bin they lie in, pro rata */
			ba = bin_of(tl, a);
			bb = ba + 1;
			cnt = bins_count(tl, l, ba, bb);
			bsy = bins_busy(tl, l, ba, bb) * (uint64_t)(e - a) / (uint64_t)tl->bin_ns;
		} else {
			cnt = bins_count(tl, l, ba, bb);
			bsy = bins_busy(tl, l, ba, bb);
		}
		if (!cnt && !bsy)
			continue;
		r->cells[c].type = TL_CELL_DENSITY;
		r->cells[c].count = (uint32_t)cnt;
		busy[c] = bsy ? bsy : 1;
	}
	if (push_longs(tl, l, w->t0, w->t1, r) < 0)
		goto fail;
	sort(r->slices, r->nslices, sizeof(*r->slices), slice_cmp);
	lod_merge_busy(w, r->slices, r->nslices, r->cells, busy);
	free(busy);
	return 0;
fail:
	free(busy);
	return -1;
}

void tl_render_release(struct tl_render *r)
{
	free(r->cells);
	free(r->slices);
	memset(r, 0, sizeof(*r));
}

int timeline_lane_step(struct timeline *tl, size_t lane, int64_t t, int dir, int64_t slop, struct tl_slice *out)
{
	struct tl_lane *l = &tl->lanes[lane];
	struct tl_slice best;
	int found = 0, rc;

	if (dir == 0) {
		struct tl_render r = { 0 };
		int64_t bestd = INT64_MAX;

		if (fetch_range(tl, lane, t - slop, t + slop + 1, 4096, &r) < 0 ||
		    push_longs(tl, l, t - slop, t + slop + 1, &r) < 0) {
			tl_render_release(&r);
			return -1;
		}
		for (size_t i = 0; i < r.nslices; i++) {
			const struct tl_slice *s = &r.slices[i];
			int64_t d = t < s->start_ns ? s->start_ns - t : t >= s->end_ns ? t - s->end_ns + 1 : 0;
			/* the innermost (shortest) containing slice wins */
			if (d < bestd || (d == bestd && found && s->end_ns - s->start_ns < best.end_ns - best.start_ns)) {
				bestd = d;
				best = *s;
				found = 1;
			}
		}
		tl_render_release(&r);
		if (found && bestd <= slop)
			*out = best;
		return found && bestd <= slop;
	}
	sqlite3_stmt *st = tl->step[dir > 0][l->kind];
	sqlite3_reset(st);
	bind_lane(st, l);
	sqlite3_bind_int64(st, 3, t);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		row_to_slice(tl, st, l->kind, &best);
		finish_slice(tl, &best, lane);
		found = 1;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error("cannot read '%s': %s", tl->rec->path, sqlite3_errmsg(tl->rec->db));
	/* the step statements see long events too: they are rows like the others */
	if (found)
		*out = best;
	return found;
}

static int row_slice_lane(const struct timeline *tl, sqlite3_stmt *st, enum tl_kind kind, struct tl_slice *s)
{
	row_to_slice(tl, st, kind, s);
	finish_slice(tl, s, 0);
	return lane_of(tl, (enum tl_kind)s->kind, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
		       sqlite3_column_int64(st, 7), &s->lane);
}

int timeline_find(struct timeline *tl, enum tl_kind kind, int64_t id, struct tl_slice *out)
{
	char sql[512];
	sqlite3_stmt *st;
	int found = 0, rc;

	if (kind >= TL_NKINDS)
		return 0;
	snprintf(sql, sizeof(sql), "%s WHERE id = ?1", kind_sql[kind].select);
	st = db_prepare(tl->rec->db, sql);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		found = row_slice_lane(tl, st, kind, out);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error("cannot read '%s': %s", tl->rec->path, sqlite3_errmsg(tl->rec->db));
	return found;
}

/* JSON array of the ids whose text contains needle; for traces, function ids. */
static void matching_ids(const struct timeline *tl, const char *needle, int functions, struct strbuf *sb)
{
	int first = 1;

	strbuf_addch(sb, '[');
	if (functions) {
		for (size_t i = 0; i < tl->functions.n; i++) {
			const char *s = timeline_string(tl, tl->functions.value[i]);
			if (s && strcasestr(s, needle)) {
				strbuf_addf(sb, "%s%" PRId64, first ? "" : ",", tl->functions.id[i]);
				first = 0;
			}
		}
	} else {
		for (size_t i = 0; i < tl->strings.n; i++) {
			if (tl->strings.text[i] && strcasestr(tl->strings.text[i], needle)) {
				strbuf_addf(sb, "%s%" PRId64, first ? "" : ",", tl->strings.id[i]);
				first = 0;
			}
		}
	}
	strbuf_addch(sb, ']');
}

static int slice_time_cmp(const void *a, const void *b)
{
	return slice_cmp(a, b);
}

ptrdiff_t timeline_search(struct timeline *tl, const char *needle, unsigned mask, size_t max, struct tl_slice **out)
{
	struct strbuf ids = STRBUF_INIT, fids = STRBUF_INIT;
	struct tl_slice *res = NULL;
	size_t n = 0, alloc = 0;
	ptrdiff_t ret = -1;

	*out = NULL;
	matching_ids(tl, needle, 0, &ids);
	matching_ids(tl, needle, 1, &fids);
	for (int k = 0; k < TL_NKINDS; k++) {
		char sql[1024];
		sqlite3_stmt *st;
		int rc;

		if (!(mask & (1u << k)))
			continue;
		snprintf(sql, sizeof(sql), "%s WHERE %s IN (SELECT value FROM json_each(?1)) ORDER BY start_ns LIMIT ?2",
			 kind_sql[k].select, kind_sql[k].search);
		st = db_prepare(tl->rec->db, sql);
		if (!st)
			goto cleanup;
		sqlite3_bind_text(st, 1, k == TL_TRACE ? fids.buf : ids.buf, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, (int64_t)max);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			struct tl_slice s;

			if (!row_slice_lane(tl, st, (enum tl_kind)k, &s))
				continue;
			if (ARRAY_GROW(res, n, alloc)) {
				sqlite3_finalize(st);
				error("out of memory");
				goto cleanup;
			}
			res[n++] = s;
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE) {
			error("cannot search '%s': %s", tl->rec->path, sqlite3_errmsg(tl->rec->db));
			goto cleanup;
		}
	}
	sort(res, n, sizeof(*res), slice_time_cmp);
	if (n > max)
		n = max;
	*out = res;
	res = NULL;
	ret = (ptrdiff_t)n;
cleanup:
	free(res);
	strbuf_release(&ids);
	strbuf_release(&fids);
	return ret;
}

/* ---- details ---- */

struct details {
	struct tl_detail *v;
	size_t n, alloc;
	int oom;
};

static void detail_add(struct details *d, const char *label, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void detail_add(struct details *d, const char *label, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (ARRAY_GROW(d->v, d->n, d->alloc)) {
		d->oom = 1;
		return;
	}
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	snprintf(d->v[d->n].label, sizeof(d->v[d->n].label), "%s", label);
	d->v[d->n].value = strbuf_detach(&sb);
	if (!d->v[d->n].value)
		d->v[d->n].value = strdup("");
	d->n++;
}


/* One-row detail query per kind; columns are described by labels[]. */
static const struct detail_sql {
	const char *sql;
	const char *labels[12];
} detail_sql[TL_NKINDS] = {
	/* options, variables and status only when they say something */
	[TL_TRACE] = { "SELECT t.object_trace_no, fs.text, t.signature, tn.text, cf.text || ':' || c.line,"
		       " t.function_object, trim(CASE WHEN t.jit_compile THEN 'jit_compile ' ELSE '' END ||"
		       " CASE WHEN t.reduce_retracing THEN 'reduce_retracing ' ELSE '' END ||"
		       " CASE WHEN t.has_input_signature THEN 'input_signature' ELSE '' END),"
		       " nullif(t.variables_created, 0), nullif(t.status, 'ok'), df.text || ':' || fn.line"
		       " FROM traces t JOIN functions fn ON fn.id = t.function_id"
		       " LEFT JOIN strings fs ON fs.id = fn.name_id LEFT JOIN strings tn ON tn.id = t.tf_name_id"
		       " LEFT JOIN callsites c ON c.id = t.callsite_id LEFT JOIN strings cf ON cf.id = c.file_id"
		       " LEFT JOIN strings df ON df.id = fn.file_id WHERE t.id = ?1",
		       { "trace #", "function", "signature", "tf function", "source", "tf.function id", "options",
			 "new variables", "status", "defined at" } },
	[TL_CALL] = { "SELECT n.text, fs.text, g.role, cf.text || ':' || c.line, CASE ok WHEN 1 THEN 'ok' ELSE 'failed' END,"
		      " g.node_count"
		      " FROM function_calls x JOIN strings n ON n.id = x.name_id"
		      " LEFT JOIN graph_functions g ON g.id = x.graph_function_id"
		      " LEFT JOIN functions fn ON fn.id = g.function_id LEFT JOIN strings fs ON fs.id = fn.name_id"
		      " LEFT JOIN callsites c ON c.id = x.callsite_id LEFT JOIN strings cf ON cf.id = c.file_id"
		      " WHERE x.id = ?1",
		      { "tf function", "function", "graph role", "source", "status", "graph nodes" } },
	[TL_EAGER] = { "SELECT o.text, d.text, cf.text || ':' || c.line, cfn.text,"
		       " CASE slow_path WHEN 1 THEN 'slow (Python fallback)' ELSE 'fast (C)' END,"
		       " CASE ok WHEN 1 THEN 'ok' ELSE 'failed' END"
		       " FROM eager_ops x JOIN strings o ON o.id = x.op_id LEFT JOIN strings d ON d.id = x.device_id"
		       " LEFT JOIN callsites c ON c.id = x.callsite_id LEFT JOIN strings cf ON cf.id = c.file_id"
		       " LEFT JOIN strings cfn ON cfn.id = c.func_id WHERE x.id = ?1",
		       { "op", "device", "source", "in function", "dispatch", "status" } },
	[TL_BLACKBOX] = { "SELECT n.text, o.text FROM blackbox_execs x JOIN strings n ON n.id = x.node_id"
			  " JOIN strings o ON o.id = x.op_type_id WHERE x.id = ?1",
			  { "node", "op type" } },
	[TL_KERNEL] = { "SELECT n.text, x.device, x.stream, x.grid_x || 'x' || x.grid_y || 'x' || x.grid_z,"
			" x.block_x || 'x' || x.block_y || 'x' || x.block_z, x.correlation_id"
			" FROM gpu_activity x LEFT JOIN strings n ON n.id = x.name_id WHERE x.id = ?1",
			{ "kernel", "device", "stream", "grid", "block", "correlation" } },
	[TL_COPY] = { "SELECT x.kind, x.copy_kind, x.bytes, x.device, x.stream, x.correlation_id"
		      " FROM gpu_activity x WHERE x.id = ?1",
		      { "activity", "copy kind", "bytes", "device", "stream", "correlation" } },
};

/*
 * What a small pane must show first: what it is, which trace, where in the
 * source, how long; the rest keeps its order (a stable insertion sort).
 */
static int detail_rank(const char *label)
{
	static const char *const first[] = { "kind", "name", "trace #", "source", "duration", "start", "thread", "stream" };

	for (size_t i = 0; i < sizeof(first) / sizeof(first[0]); i++)
		if (!strcmp(label, first[i]))
			return (int)i;
	return (int)(sizeof(first) / sizeof(first[0]));
}

static void details_order(struct details *d)
{
	for (size_t i = 1; i < d->n; i++) {
		struct tl_detail x = d->v[i];
		size_t j = i;
		while (j > 0 && detail_rank(d->v[j - 1].label) > detail_rank(x.label)) {
			d->v[j] = d->v[j - 1];
			j--;
		}
		d->v[j] = x;
	}
}

ptrdiff_t timeline_details(struct timeline *tl, const struct tl_slice *s, struct tl_detail **out)
{
	struct details d = { 0 };
	const struct tl_track *t;
	sqlite3_stmt *st = NULL;
	char buf[64];
	int rc;

	*out = NULL;
	if (s->kind >= TL_NKINDS || s->lane >= tl->nlanes)
		return 0;
	t = &tl->tracks[tl->lanes[s->lane].track];
	detail_add(&d, "kind", "%s%s", tl_kind_name((enum tl_kind)s->kind),
		   s->flags & TL_SLICE_RETRACE ? " (retrace)" : "");
	detail_add(&d, "name", "%s", timeline_slice_name(tl, s));
	duration_format(buf, sizeof(buf), s->end_ns - s->start_ns);
	detail_add(&d, "duration", "%s", buf);
	detail_add(&d, "start", "%.6f s", (double)(s->start_ns - tl->start_ns) / 1e9);
	if (t->device >= 0)
		detail_add(&d, "stream", "GPU %" PRId64 " stream %" PRId64 " (pid %" PRId64 ")", t->device, t->tid, t->pid);
	else
		detail_add(&d, "thread", "%" PRId64 " %s%s%s (%s), pid %" PRId64, t->tid, t->name ? "'" : "",
			   t->name ? t->name : "", t->name ? "'" : "", t->role, t->pid);
	st = db_prepare(tl->rec->db, detail_sql[s->kind].sql);
	if (!st)
		goto fail;
	sqlite3_bind_int64(st, 1, s->id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		for (int i = 0; i < sqlite3_column_count(st) && i < 12 && detail_sql[s->kind].labels[i]; i++) {
			const char *v = db_col_text(st, i);
			if (v && *v)
				detail_add(&d, detail_sql[s->kind].labels[i], "%s", v);
		}
	} else if (rc != SQLITE_DONE) {
		error("cannot read '%s': %s", tl->rec->path, sqlite3_errmsg(tl->rec->db));
		goto fail;
	}
	sqlite3_finalize(st);
	st = NULL;
	if (s->kind == TL_TRACE) {
		struct strbuf sb = STRBUF_INIT;

		st = db_prepare(tl->rec->db, "SELECT name, kind, dtype, shape, value FROM trace_inputs"
					     " WHERE trace_id = ?1 ORDER BY position");
		if (!st)
			goto fail;
		sqlite3_bind_int64(st, 1, s->id);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			const char *name = db_col_text(st, 0), *kind = db_col_text(st, 1);
			if (sb.len)
				strbuf_addstr(&sb, ", ");
			strbuf_addf(&sb, "%s: ", name ? name : "?");
			if (kind && (!strcmp(kind, "tensor") || !strcmp(kind, "variable")))
				strbuf_addf(&sb, "%s%s%s", db_col_text_or(st, 2, "?"),
					    db_col_text_or(st, 3, ""), !strcmp(kind, "variable") ? " var" : "");
			else if (db_col_text(st, 4))
				strbuf_addf(&sb, "%s %s", kind ? kind : "?", db_col_text(st, 4));
			else
				strbuf_addstr(&sb, kind ? kind : "?");
		}
		if (sb.len) {
			/* the concrete inputs belong right after TensorFlow's signature text */
			detail_add(&d, "inputs", "%s", sb.buf);
			for (size_t i = 0; !d.oom && i + 1 < d.n; i++) {
				if (strcmp(d.v[i].label, "signature"))
					continue;
				struct tl_detail in = d.v[d.n - 1];
				memmove(d.v + i + 2, d.v + i + 1, (d.n - i - 2) * sizeof(*d.v));
				d.v[i + 1] = in;
				break;
			}
		}
		strbuf_release(&sb);
		if (rc != SQLITE_DONE) {
			error("cannot read '%s': %s", tl->rec->path, sqlite3_errmsg(tl->rec->db));
			goto fail;
		}
	}
	sqlite3_finalize(st);
	if (d.oom) {
		error("out of memory");
		tl_details_free(d.v, d.n);
		return -1;
	}
	details_order(&d);
	*out = d.v;
	return (ptrdiff_t)d.n;
fail:
	sqlite3_finalize(st);
	tl_details_free(d.v, d.n);
	return -1;
}

void tl_details_free(struct tl_detail *d, size_t n)
{
	for (size_t i = 0; d && i < n; i++)
		free(d[i].value);
	free(d);
}
