/*
 * html_bins.c - the timeline's busy time per lane and column, read with a
 * bounded number of rows whatever the recording holds (docs/html.md).
 *
 * A table of at most HB_CAP rows is read whole.  A bigger one is read by
 * HB_CAP point lookups on its id (INTEGER PRIMARY KEY: each a B-tree
 * descent, no scan), one every stride ids, each row counted stride times:
 * ids follow time on each thread (the writer appends), so the columns get
 * an unbiased estimate of their busy time, whose lane label says "sampled".
 * The 10-million-event recording reads about 1M rows instead of 10M (the
 * full scan of `agprof view` cost as much as the analysis itself).  Aggregate
 * tables (the budget's buckets) are small and read whole, their total time
 * spread over the span they cover.
 */
#include "html_bins.h"
#include "checked.h"
#include "model.h"
#include "recording.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HB_CAP 131072 /* rows read per table at most */
#define HB_RUN 16     /* consecutive ids read per seek when sampling */

const char *hb_kind_name(enum hb_kind k)
{
	static const char *const n[HB_NKINDS] = { "tracing", "graph call", "eager op", "py_function",
						  "GPU kernel", "GPU copy", "CPU kernel" };
	return (unsigned)k < HB_NKINDS ? n[k] : "?";
}

static struct hb_lane *lane_of(struct hb *b, int64_t pid, int64_t tid, int64_t dev, enum hb_kind kind)
{
	struct hb_lane *l = b->last;

	if (l && l->pid == pid && l->tid == tid && l->dev == dev && l->kind == kind)
		return l;
	for (size_t i = 0; i < b->n; i++) {
		l = &b->lanes[i];
		if (l->pid == pid && l->tid == tid && l->dev == dev && l->kind == kind)
			return b->last = l;
	}
	if (b->n == HB_MAX_LANES) {
		b->lanes_left = 1; /* hostile or huge: the rest are counted as not drawn */
		return NULL;
	}
	l = &b->lanes[b->n++];
	memset(l, 0, sizeof(*l));
	l->pid = pid, l->tid = tid, l->dev = dev, l->kind = kind;
	return b->last = l;
}

/* busy ns spread over the columns [s, e) covers (all in one column when e <= s). */
/* Times from the file in double: a damaged row's int64 differences could overflow. */
static void spread(struct hb *b, struct hb_lane *l, double s, double e, double busy)
{
	double span = (double)b->t1 - (double)b->t0, per = span / HB_COLS;
	double fs = s - (double)b->t0, fe = e - (double)b->t0;

	if (span <= 0 || fe < 0 || fs >= span || !(busy > 0)) /* NaN and negative (damaged aggregates) too */
		return;
	if (fe <= fs) {
		int c = fs > 0 ? (int)(fs / per) : 0;

		l->busy[c < HB_COLS ? c : HB_COLS - 1] += busy;
		return;
	}
	for (int c = fs > 0 ? (int)(fs / per) : 0; c < HB_COLS && c * per < fe; c++) {
		double lo = c * per > fs ? c * per : fs, hi = (c + 1) * per < fe ? (c + 1) * per : fe;

		if (hi > lo)
			l->busy[c] += busy * (hi - lo) / (fe - fs);
	}
}

/* Columns of every query: pid, tid, start_ns, end_ns, device (-1 a thread), kind, total (NULL: end - start). */
struct hb_source {
	const char *bounds; /* table whose id range is read: "SELECT min(id), max(id) FROM ..." */
	const char *rows;   /* the rows, with "%s" for the WHERE clause ("" or "WHERE id BETWEEN ? AND ?") */
	int keyed;          /* columns key, start, dur of eager_op_rows (schema 6), key in hb.keys */
};

static const struct hb_source sources[] = {
	{ "eager_op_rows", "SELECT key, start, dur FROM eager_op_rows %s", 1 },
	{ "traces", "SELECT pid, tid, start_ns, end_ns, -1, 0, NULL FROM traces %s", 0 },
	{ "function_calls", "SELECT pid, tid, start_ns, end_ns, -1, 1, NULL FROM function_calls %s", 0 },
	{ "eager_ops", "SELECT pid, tid, start_ns, end_ns, -1, 2, NULL FROM eager_ops %s", 0 }, /* schemas 1-5 */
	{ "blackbox_execs", "SELECT pid, tid, start_ns, end_ns, -1, 3, NULL FROM blackbox_execs %s", 0 },
	{ "gpu_activity", "SELECT pid, coalesce(stream, 0), start_ns, end_ns, coalesce(device, 0), "
			  "CASE kind WHEN 'kernel' THEN 4 WHEN 'sync' THEN -1 ELSE 5 END, NULL FROM gpu_activity %s", 0 },
	{ "kernels", "SELECT pid, tid, start_ns, end_ns, -1, 6, NULL FROM kernels %s", 0 },
	{ NULL, "SELECT pid, tid, start_ns, end_ns, -1, 2, total_ns FROM eager_op_buckets %s", 0 },
	{ NULL, "SELECT pid, tid, start_ns, end_ns, -1, 1, total_ns FROM function_call_buckets %s", 0 },
	{ NULL, "SELECT pid, tid, start_ns, end_ns, -1, 3, total_ns FROM blackbox_buckets %s", 0 },
};

static int key_cmp(const void *k, const void *e)
{
	int64_t a = *(const int64_t *)k, b = ((const struct hb_key *)e)->id;

	return a < b ? -1 : a > b;
}

/* A row of eager_op_rows: its key's thread and base time (the keys are few: a search each). */
static void add_keyed(struct hb *b, sqlite3_stmt *st, double weight, int sampled)
{
	int64_t key = sqlite3_column_int64(st, 0), s = sqlite3_column_int64(st, 1), d = sqlite3_column_int64(st, 2);
	const struct hb_key *k = b->lastkey;
	struct hb_lane *l;

	if (!k || k->id != key)
		k = bsearch(&key, b->keys, b->nkeys, sizeof(*b->keys), key_cmp);
	if (!k || d < 0 || !(l = lane_of(b, k->pid, k->tid, -1, HB_EAGER)))
		return;
	b->lastkey = k;
	spread(b, l, (double)k->base + (double)s, (double)k->base + (double)s + (double)d, (double)d * weight);
	l->events = sat_add64(l->events, (int64_t)weight);
	if (sampled > l->sampled)
		l->sampled = sampled;
}

static void add_row(struct hb *b, sqlite3_stmt *st, double weight, int sampled)
{
	int kind = sqlite3_column_int(st, 5);
	int64_t s = sqlite3_column_int64(st, 2), e = sqlite3_column_int64(st, 3);
	struct hb_lane *l;
	double busy;

	if (kind < 0 || kind >= HB_NKINDS || e < s)
		return;
	l = lane_of(b, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 4), kind);
	if (!l)
		return;
	busy = sqlite3_column_type(st, 6) == SQLITE_NULL ? (double)e - (double)s : sqlite3_column_double(st, 6);
	spread(b, l, (double)s, (double)e, busy * weight);
	l->events = sat_add64(l->events, (int64_t)weight);
	if (sampled > l->sampled)
		l->sampled = sampled;
}

static sqlite3_stmt *prepare(sqlite3 *db, const char *fmt, const char *where)
{
	char sql[512];
	sqlite3_stmt *st = NULL;

	snprintf(sql, sizeof(sql), fmt, where);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return NULL; /* a table this schema does not have */
	}
	return st;
}

/* The id range of table, 0 when it has none (or no such table). */
static int id_range(sqlite3 *db, const char *table, int64_t *lo, int64_t *hi)
{
	char sql[160];
	sqlite3_stmt *st = NULL;
	int ok;

	/* two subqueries: min() and max() in one SELECT scan the table, each alone is one descent */
	snprintf(sql, sizeof(sql), "SELECT (SELECT min(id) FROM %s), (SELECT max(id) FROM %s)", table, table);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		sqlite3_finalize(st);
		return 0;
	}
	ok = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL;
	if (ok) {
		*lo = sqlite3_column_int64(st, 0);
		*hi = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return ok && *hi >= *lo;
}

/*
 * HB_CAP / HB_RUN runs of HB_RUN consecutive ids spread evenly over the
 * table, each row counted for the ids between runs: a run is one seek and
 * a sequential read (a point lookup per row cost 25 times a scanned row).
 */
static int read_sampled(struct hb *b, sqlite3 *db, const struct hb_source *src, int64_t lo, int64_t hi)
{
	sqlite3_stmt *st = prepare(db, src->rows, "WHERE id BETWEEN ? AND ?");
	int64_t runs = HB_CAP / HB_RUN;
	/* in double: ids from a damaged file may span all of int64 */
	double step = ((double)hi - (double)lo + 1) / (double)runs, weight = step / HB_RUN;
	int sampled = weight < 1e9 ? (int)(weight + 0.5) : 1000000000;
	int rc = SQLITE_DONE;

	if (!st)
		return 0;
	for (int64_t r = 0; r < runs && rc != SQLITE_ERROR; r++) {
		/* the runs cover the ids evenly, to the last */
		double at = (double)lo + (double)r * step;
		int64_t first = at >= (double)hi ? hi : at <= (double)lo ? lo : (int64_t)at;

		sqlite3_bind_int64(st, 1, first);
		sqlite3_bind_int64(st, 2, sat_add64(first, HB_RUN - 1));
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			(src->keyed ? add_keyed : add_row)(b, st, weight, sampled);
			b->rows_read++;
		}
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_ERROR ? -1 : 0;
}

/* eager_op_keys by id; none (keys stays NULL) before schema 6. */
static int load_keys(struct hb *b, sqlite3 *db)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	if (sqlite3_prepare_v2(db, "SELECT id, pid, tid, base_ns FROM eager_op_keys ORDER BY id", -1, &st, NULL)) {
		sqlite3_finalize(st);
		return 0;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (b->nkeys == cap) {
			struct hb_key *k = realloc(b->keys, (cap = cap ? 2 * cap : 256) * sizeof(*k));

			if (!k)
				break;
			b->keys = k;
		}
		b->keys[b->nkeys++] = (struct hb_key){ sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
						       sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3) };
	}
	sqlite3_finalize(st);
	if (!b->keys)
		b->keys = calloc(1, sizeof(*b->keys)); /* the table is there: eager_ops is its view */
	return rc == SQLITE_DONE && b->keys ? 0 : -1;
}

static int read_source(struct hb *b, sqlite3 *db, const struct hb_source *src)
{
	int64_t lo = 0, hi = -1, n = 0;
	sqlite3_stmt *st;
	int rc = SQLITE_DONE;

	if (src->keyed && load_keys(b, db) < 0)
		return -1;
	/* schema 6 on: eager_ops is a view of eager_op_rows, read above */
	if (!src->keyed && src->bounds && !strcmp(src->bounds, "eager_ops") && b->keys)
		return 0;
	if (src->bounds && !id_range(db, src->bounds, &lo, &hi))
		return 0;
	if (src->bounds && sat_sub64(hi, lo) >= 2 * HB_CAP)
		return read_sampled(b, db, src, lo, hi);
	st = prepare(db, src->rows, "");
	if (!st)
		return 0;
	/* an aggregate table is small; a damaged one is cut at 4 x HB_CAP rows */
	while (n < 4 * (int64_t)HB_CAP && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		(src->keyed ? add_keyed : add_row)(b, st, 1.0, 1);
		n++;
	}
	b->rows_read += n;
	sqlite3_finalize(st);
	return rc == SQLITE_ERROR ? -1 : 0;
}

static int lane_cmp(const void *pa, const void *pb)
{
	const struct hb_lane *a = pa, *b = pb;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if ((a->dev >= 0) != (b->dev >= 0))
		return a->dev >= 0 ? 1 : -1;
	if (a->dev != b->dev)
		return a->dev < b->dev ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	return (int)a->kind - (int)b->kind;
}

int hb_read(struct hb *b, const struct model *m)
{
	sqlite3 *db = m->rec ? m->rec->db : NULL;
	int64_t t0 = m->session.first_tf_ns;
	int txn, ret = 0;

	memset(b, 0, sizeof(*b));
	b->t1 = m->session.end_ns;
	b->t0 = t0 > m->session.start_ns && t0 < b->t1 ? t0 : m->session.start_ns;
	if (!db)
		return -1;
	b->lanes = calloc(HB_MAX_LANES, sizeof(*b->lanes));
	if (!b->lanes)
		return -1;
	/* one read transaction: a lock per lookup would be a few system calls each */
	txn = sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) == SQLITE_OK;
	for (size_t i = 0; i < sizeof(sources) / sizeof(*sources) && !ret; i++)
		ret = read_source(b, db, &sources[i]);
	if (txn)
		sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (ret < 0)
		return -1;
	b->last = NULL;
	b->lastkey = NULL;
	qsort(b->lanes, b->n, sizeof(*b->lanes), lane_cmp);
	return 0;
}

void hb_release(struct hb *b)
{
	free(b->lanes);
	free(b->keys);
	memset(b, 0, sizeof(*b));
}
