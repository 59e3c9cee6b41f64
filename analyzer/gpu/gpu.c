/* gpu.c - the GPU part of the model; see gpu.h. */
#include "gpu.h"
#include "scan.h"
#include "checked.h"
#include "db.h"
#include "recording.h"
#include "util.h"
#include "strpool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copy s (may be NULL) into g's pool. */
static const char *pool_dup(struct gpu_model *g, const char *s)
{
	return strpool_str(g->pool, s);
}

/* ARRAY_GROW that says "out of memory": 0 or -1. */
#define GROW(a, n, cap) (ARRAY_GROW(a, n, cap) ? error("out of memory") : 0)


/* Run a statement to its end; -1 (after printing) when it fails midway. */
static int finish(sqlite3 *db, sqlite3_stmt *s, int rc)
{
	if (rc != SQLITE_DONE) {
		error("%s", sqlite3_errmsg(db));
		sqlite3_finalize(s);
		return -1;
	}
	sqlite3_finalize(s);
	return 0;
}

int gpu_sync_kind(const char *api)
{
	static const char *const syncs[] = {
		"cudaDeviceSynchronize", "cudaStreamSynchronize", "cudaEventSynchronize",
		"cudaThreadSynchronize", "cuCtxSynchronize", "cuStreamSynchronize",
		"cuEventSynchronize",
	};

	if (!api)
		return 0;
	for (size_t i = 0; i < sizeof(syncs) / sizeof(syncs[0]); i++)
		if (!strncmp(api, syncs[i], strlen(syncs[i])) &&
		    (api[strlen(syncs[i])] == '\0' || api[strlen(syncs[i])] == '_'))
			return 2;
	/* Copies: every cudaMemcpy* / cuMemcpy* without Async is synchronous for the host. */
	if ((!strncmp(api, "cudaMemcpy", 10) || !strncmp(api, "cuMemcpy", 8)) && !strstr(api, "Async"))
		return 1;
	return 0;
}

int64_t gpu_span_ns(const struct gpu_model *g)
{
	return g->last_ns - g->first_ns;
}

double gpu_utilisation(const struct gpu_model *g)
{
	int64_t span = gpu_span_ns(g);

	return span > 0 ? (double)g->busy_ns / (double)span : 0;
}

double gpu_idle_share(const struct gpu_model *g)
{
	int64_t span = gpu_span_ns(g);

	return span > 0 ? (double)g->idle_ns / (double)span : 0;
}

double gpu_dispatch_share(const struct gpu_model *g)
{
	return g->idle_ns > 0 ? (double)g->host_in_idle_ns / (double)g->idle_ns : 0;
}

/* ---- status and totals ------------------------------------------------ */

static int load_status(struct gpu_model *g, sqlite3 *db)
{
	sqlite3_stmt *s;
	int rc;

	/* The process that traced wins: a launcher shell child says "off". */
	s = db_prepare(db, "SELECT gpu_status, gpu_detail FROM processes"
			   " ORDER BY gpu_status = 'on' DESC, gpu_detail IS NULL, pid LIMIT 1");
	if (!s)
		return -1;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		g->status = db_col_pooled(s, 0, g->pool);
		g->detail = db_col_pooled(s, 1, g->pool);
		rc = SQLITE_DONE;
	}
	if (finish(db, s, rc))
		return -1;
	if (!g->status) {
		char *st = db_meta_get(db, "gpu_status"), *de = db_meta_get(db, "gpu_detail");
		g->status = pool_dup(g, st);
		g->detail = pool_dup(g, de);
		free(st);
		free(de);
	}
	return 0;
}

static int load_totals(struct gpu_model *g, sqlite3 *db)
{
	sqlite3_stmt *s;
	int rc;
	char *v;

	s = db_prepare(db, "SELECT kind, count(*), coalesce(sum(end_ns - start_ns), 0),"
			   " coalesce(sum(bytes), 0), min(start_ns), max(end_ns)"
			   " FROM gpu_activity GROUP BY kind");
	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *kind = db_col_text(s, 0);
		int64_t n = sqlite3_column_int64(s, 1), ns = ts_clamp(sqlite3_column_int64(s, 2));

		if (!kind)
			continue;
		if (!strcmp(kind, "kernel")) {
			g->kernels = n, g->kernel_ns = ns;
		} else if (!strcmp(kind, "memcpy")) {
			g->copies = n, g->copy_ns = ns;
			g->copy_bytes = sqlite3_column_int64(s, 3);
		} else if (!strcmp(kind, "memset")) {
			g->memsets = n, g->memset_ns = ns;
		} else if (!strcmp(kind, "sync")) {
			g->syncs = n;
			continue;       /* host waiting is not GPU work: not in the span */
		}
		g->has_data = 1;
		int64_t lo = ts_clamp(sqlite3_column_int64(s, 4)), hi = ts_clamp(sqlite3_column_int64(s, 5));
		if (!g->first_ns || lo < g->first_ns)
			g->first_ns = lo;
		if (hi > g->last_ns)
			g->last_ns = hi;
	}
	if (finish(db, s, rc))
		return -1;

	s = db_prepare(db, "SELECT count(*) FROM gpu_api_calls");
	if (!s)
		return -1;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		g->api_calls = sqlite3_column_int64(s, 0);
		rc = SQLITE_DONE;
	}
	if (finish(db, s, rc))
		return -1;

	v = db_meta_get(db, "start_ns");
	g->run_start_ns = ts_clamp(v ? strtoll(v, NULL, 10) : 0);
	free(v);
	v = db_meta_get(db, "end_ns");
	g->run_end_ns = ts_clamp(v ? strtoll(v, NULL, 10) : 0);
	free(v);
	if (g->run_end_ns <= g->run_start_ns) {
		g->run_start_ns = g->first_ns;
		g->run_end_ns = g->last_ns;
	}
	return 0;
}

/* ---- kernels, copies, streams ----------------------------------------- */

static int cmp_kernel(const void *a, const void *b)
{
	const struct gpu_kernel_stat *x = a, *y = b;

	return x->total_ns < y->total_ns ? 1 : x->total_ns > y->total_ns ? -1 : strcmp(x->name, y->name);
}

static int load_kernels(struct gpu_model *g, sqlite3 *db)
{
	size_t cap = 0;
	sqlite3_stmt *s;
	int rc;

	/* Group on the integer name id, then look the few names up. */
	s = db_prepare(db,
		"SELECT coalesce(n.text, '?'), k.* FROM (SELECT a.name_id AS nid, count(*),"
		" sum(a.end_ns - a.start_ns), min(a.end_ns - a.start_ns), max(a.end_ns - a.start_ns),"
		" count(c.correlation_id), coalesce(sum(c.end_ns - c.start_ns), 0),"
		" coalesce(sum(a.start_ns - c.start_ns), 0),"
		" coalesce(sum(a.end_ns - a.start_ns < c.end_ns - c.start_ns), 0)"
		" FROM gpu_activity a"
		" LEFT JOIN gpu_api_calls c ON c.pid = a.pid AND c.correlation_id = a.correlation_id"
		" WHERE a.kind = 'kernel' GROUP BY a.name_id) k LEFT JOIN strings n ON n.id = k.nid");
	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct gpu_kernel_stat *k;

		if (GROW(g->kernel_stats, g->nkernel_stats, cap))
			break;
		k = &g->kernel_stats[g->nkernel_stats++];
		memset(k, 0, sizeof(*k));
		k->name = db_col_pooled(s, 0, g->pool);
		k->count = sqlite3_column_int64(s, 2);
		k->total_ns = ts_clamp(sqlite3_column_int64(s, 3));
		k->min_ns = ts_clamp(sqlite3_column_int64(s, 4));
		k->max_ns = ts_clamp(sqlite3_column_int64(s, 5));
		k->launched = sqlite3_column_int64(s, 6);
		k->launch_ns = ts_clamp(sqlite3_column_int64(s, 7));
		k->latency_ns = sqlite3_column_int64(s, 8);
		k->short_count = sqlite3_column_int64(s, 9);
		k->mean_ns = k->count ? (double)k->total_ns / (double)k->count : 0;
		k->share = g->kernel_ns ? (double)k->total_ns / (double)g->kernel_ns : 0;
		g->short_kernels += k->short_count;
	}
	if (finish(db, s, rc))
		return -1;
	if (g->nkernel_stats)
		qsort(g->kernel_stats, g->nkernel_stats, sizeof(*g->kernel_stats), cmp_kernel);
	return 0;
}

static struct gpu_copy_stat *copy_stat(struct gpu_model *g, size_t *cap, const char *kind)
{
	struct gpu_copy_stat *c;

	for (size_t i = 0; i < g->ncopy_stats; i++)
		if (!strcmp(g->copy_stats[i].kind, kind))
			return &g->copy_stats[i];
	if (GROW(g->copy_stats, g->ncopy_stats, *cap))
		return NULL;
	c = &g->copy_stats[g->ncopy_stats++];
	memset(c, 0, sizeof(*c));
	c->kind = pool_dup(g, kind);
	return c->kind ? c : NULL;
}

static int cmp_copy(const void *a, const void *b)
{
	const struct gpu_copy_stat *x = a, *y = b;

	return x->total_ns < y->total_ns ? 1 : x->total_ns > y->total_ns ? -1 : strcmp(x->kind, y->kind);
}

static int load_copies(struct gpu_model *g, sqlite3 *db)
{
	size_t cap = 0;
	sqlite3_stmt *s;
	int rc;

	/* One row per copy: whether its call was synchronous is decided by name, in C. */
	s = db_prepare(db,
		"SELECT CASE a.kind WHEN 'memset' THEN 'memset' ELSE coalesce(a.copy_kind, 'unknown') END,"
		" a.bytes, a.end_ns - a.start_ns, n.text, c.end_ns - c.start_ns"
		" FROM gpu_activity a"
		" LEFT JOIN gpu_api_calls c ON c.pid = a.pid AND c.correlation_id = a.correlation_id"
		" LEFT JOIN strings n ON n.id = c.name_id"
		" WHERE a.kind IN ('memcpy', 'memset')");
	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct gpu_copy_stat *c = copy_stat(g, &cap, db_col_text(s, 0));

		if (!c)
			break;
		c->count++;
		c->bytes = sat_add64(c->bytes, sqlite3_column_int64(s, 1));
		c->total_ns = dur_add(c->total_ns, ts_clamp(sqlite3_column_int64(s, 2)));
		if (gpu_sync_kind(db_col_text(s, 3)) == 1) {
			c->sync_count++;
			c->sync_ns = dur_add(c->sync_ns, ts_clamp(sqlite3_column_int64(s, 4)));
		}
	}
	if (finish(db, s, rc))
		return -1;
	for (size_t i = 0; i < g->ncopy_stats; i++) {
		struct gpu_copy_stat *c = &g->copy_stats[i];
		c->gbps = c->total_ns ? (double)c->bytes / (double)c->total_ns : 0;
	}
	if (g->ncopy_stats)
		qsort(g->copy_stats, g->ncopy_stats, sizeof(*g->copy_stats), cmp_copy);
	return 0;
}

static int load_streams(struct gpu_model *g, sqlite3 *db)
{
	size_t cap = 0;
	sqlite3_stmt *s;
	int rc;

	s = db_prepare(db,
		"SELECT pid, coalesce(device, -1), coalesce(stream, -1),"
		" sum(kind = 'kernel'), sum(kind IN ('memcpy', 'memset')),"
		" sum(end_ns - start_ns), min(start_ns), max(end_ns)"
		" FROM gpu_activity WHERE kind <> 'sync'"
		" GROUP BY pid, device, stream ORDER BY pid, device, stream");
	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct gpu_stream_stat *t;

		if (GROW(g->streams, g->nstreams, cap))
			break;
		t = &g->streams[g->nstreams++];
		t->pid = sqlite3_column_int64(s, 0);
		t->device = sqlite3_column_int64(s, 1);
		t->stream = sqlite3_column_int64(s, 2);
		t->kernels = sqlite3_column_int64(s, 3);
		t->copies = sqlite3_column_int64(s, 4);
		t->busy_ns = ts_clamp(sqlite3_column_int64(s, 5));
		t->first_ns = ts_clamp(sqlite3_column_int64(s, 6));
		t->last_ns = ts_clamp(sqlite3_column_int64(s, 7));
	}
	return finish(db, s, rc);
}

/* ---- busy time, buckets, gaps ----------------------------------------- */

struct span {
	int64_t start, end;
	int64_t host;           /* host dispatch overlapping it (gaps only) */
};

struct spans {
	struct span *v;
	size_t n, cap;
};

static int spans_add(struct spans *sp, int64_t start, int64_t end)
{
	if (GROW(sp->v, sp->n, sp->cap))
		return -1;
	sp->v[sp->n].start = start;
	sp->v[sp->n].end = end;
	sp->v[sp->n].host = 0;
	sp->n++;
	return 0;
}

/* Add the busy interval [s, e) to the utilisation buckets. */
static void bucket_add(struct gpu_model *g, int64_t s, int64_t e)
{
	int64_t w = g->bucket_ns;

	if (s < g->run_start_ns)
		s = g->run_start_ns;
	if (e > g->run_end_ns)
		e = g->run_end_ns;
	while (s < e) {
		size_t i = (size_t)((s - g->run_start_ns) / w);
		if (i >= g->nbuckets)
			break;
		int64_t bend = g->run_start_ns + (int64_t)(i + 1) * w;
		int64_t chunk = (e < bend ? e : bend) - s;
		g->buckets[i].busy_ns += chunk;
		s += chunk;
	}
}

/*
 * Merge a time-ordered stream of intervals into their union; call with
 * s, e of each interval, then once with done = 1.  Hands each merged
 * interval to out.
 */
struct merger {
	int64_t s, e;
	int open;
};

static int merge_step(struct merger *m, int64_t s, int64_t e, int64_t *os, int64_t *oe)
{
	if (!m->open) {
		m->s = s, m->e = e, m->open = 1;
		return 0;
	}
	if (s <= m->e) {
		if (e > m->e)
			m->e = e;
		return 0;
	}
	*os = m->s, *oe = m->e;
	m->s = s, m->e = e;
	return 1;
}

static int load_busy(struct gpu_model *g, sqlite3 *db, struct spans *gaps)
{
	struct merger m = { 0, 0, 0 };
	int64_t os, oe, prev_end = -1;
	sqlite3_stmt *s;
	int rc;

	s = db_prepare(db, "SELECT start_ns, end_ns FROM gpu_activity"
			   " WHERE kind IN ('kernel', 'memcpy', 'memset') ORDER BY start_ns");
	if (!s)
		return -1;
	for (;;) {
		int more = (rc = sqlite3_step(s)) == SQLITE_ROW;
		int got;

		if (more) {
			int64_t a = ts_clamp(sqlite3_column_int64(s, 0)), b = ts_clamp(sqlite3_column_int64(s, 1));
			got = merge_step(&m, a, b < a ? a : b, &os, &oe);
		} else {
			got = m.open;
			os = m.s, oe = m.e;
			m.open = 0;
		}
		if (got) {
			g->busy_ns = dur_add(g->busy_ns, oe - os);
			bucket_add(g, os, oe);
			if (prev_end >= 0 && os > prev_end && spans_add(gaps, prev_end, os))
				break;
			prev_end = oe;
		}
		if (!more)
			break;
	}
	if (finish(db, s, rc))
		return -1;
	g->gaps = (int64_t)gaps->n;
	g->idle_ns = gpu_span_ns(g) - g->busy_ns;
	if (g->idle_ns < 0)
		g->idle_ns = 0;
	for (size_t i = 0; i < g->nbuckets; i++) {
		int64_t bs = g->buckets[i].start_ns;
		int64_t be = bs + g->bucket_ns < g->run_end_ns ? bs + g->bucket_ns : g->run_end_ns;
		g->buckets[i].util = be > bs ? (double)g->buckets[i].busy_ns / (double)(be - bs) : 0;
	}
	return 0;
}

static void gap_percentile(struct gpu_model *g, const struct spans *gaps)
{
	int64_t *len, acc = 0;

	if (!gaps->n || !(len = malloc(gaps->n * sizeof(*len))))
		return;
	for (size_t i = 0; i < gaps->n; i++)
		len[i] = gaps->v[i].end - gaps->v[i].start;
	qsort(len, gaps->n, sizeof(*len), cmp_int64);
	for (size_t i = 0; i < gaps->n; i++) {
		acc += len[i];
		if (2 * acc >= g->idle_ns) {
			g->idle_gap_p50_ns = len[i];
			break;
		}
	}
	free(len);
}

/* Indices of the longest gaps, kept in time order for the host sweep. */
static int cmp_gap_len_desc(const void *a, const void *b)
{
	const struct span *x = a, *y = b;
	int64_t lx = x->end - x->start, ly = y->end - y->start;

	return lx < ly ? 1 : lx > ly ? -1 : (x->start > y->start) - (x->start < y->start);
}

static int cmp_gap_start(const void *a, const void *b)
{
	const struct gpu_gap *x = a, *y = b;

	return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static int pick_top_gaps(struct gpu_model *g, const struct spans *gaps, size_t max)
{
	struct span *copy;
	size_t n = gaps->n < max ? gaps->n : max;

	if (!n)
		return 0;
	copy = malloc(gaps->n * sizeof(*copy));
	g->top_gaps = calloc(n, sizeof(*g->top_gaps));
	if (!copy || !g->top_gaps) {
		free(copy);
		return error("out of memory");
	}
	memcpy(copy, gaps->v, gaps->n * sizeof(*copy));
	qsort(copy, gaps->n, sizeof(*copy), cmp_gap_len_desc);
	for (size_t i = 0; i < n; i++) {
		g->top_gaps[i].start_ns = copy[i].start;
		g->top_gaps[i].end_ns = copy[i].end;
	}
	g->ntop_gaps = n;
	free(copy);
	qsort(g->top_gaps, n, sizeof(*g->top_gaps), cmp_gap_start);
	return 0;
}

/* Most frequent CUDA call per top gap: a few distinct names per gap suffice. */
#define GAP_NAMES 16
struct gap_names {
	int64_t id[GAP_NAMES];
	int64_t count[GAP_NAMES];
};

static void gap_name_add(struct gap_names *gn, int64_t id)
{
	for (int i = 0; i < GAP_NAMES; i++) {
		if (gn->count[i] && gn->id[i] == id) {
			gn->count[i]++;
			return;
		}
		if (!gn->count[i]) {
			gn->id[i] = id;
			gn->count[i] = 1;
			return;
		}
	}
}

/*
 * One pass over host activity (eager ops, graph function calls, CUDA API
 * calls) in time order: their union is intersected with every gap
 * (host_in_idle_ns), and each event is counted against the top gaps it
 * overlaps.
 */
/*
 * Count a host event [a, b) of source src (0 eager op, 1 graph call, 2 API
 * call named name_id) in the top gaps it overlaps (few, sorted).
 */
static void count_in_top_gaps(struct gpu_model *g, struct gap_names *names, int64_t a, int64_t b, int src,
			      int64_t name_id)
{
	for (size_t t = 0; t < g->ntop_gaps; t++) {
		struct gpu_gap *gp = &g->top_gaps[t];

		if (gp->start_ns >= b)
			break;
		if (gp->end_ns <= a)
			continue;
		if (src == 0)
			gp->eager_ops++;
		else if (src == 1)
			gp->function_calls++;
		else {
			gp->api_calls++;
			gap_name_add(&names[t], name_id);
		}
	}
}

/* Intersect the merged host interval [os, oe) with the gaps, from gaps->v[*gi] on (both in time order). */
static void host_in_gaps(struct gpu_model *g, struct spans *gaps, size_t *gi, int64_t os, int64_t oe)
{
	while (*gi < gaps->n) {
		struct span *gp = &gaps->v[*gi];
		int64_t lo, hi;

		if (gp->end <= os) {
			(*gi)++;
			continue;
		}
		if (gp->start >= oe)
			return;
		lo = gp->start > os ? gp->start : os;
		hi = gp->end < oe ? gp->end : oe;
		gp->host += hi - lo;
		g->host_in_idle_ns += hi - lo;
		if (gp->end > oe)
			return;
		(*gi)++;
	}
}

static int load_host_overlap(struct gpu_model *g, sqlite3 *db, struct spans *gaps,
			     struct gap_names *names)
{
	struct merger m = { 0, 0, 0 };
	size_t gi = 0;
	int64_t os, oe;
	sqlite3_stmt *s;
	int rc;

	s = db_prepare(db,
		"SELECT start_ns, end_ns, 0, op_id FROM eager_ops"
		" UNION ALL SELECT start_ns, end_ns, 1, name_id FROM function_calls"
		" UNION ALL SELECT start_ns, end_ns, 2, name_id FROM gpu_api_calls"
		" ORDER BY 1");
	if (!s)
		return -1;
	for (;;) {
		int more = (rc = sqlite3_step(s)) == SQLITE_ROW;
		int got;

		if (more) {
			int64_t a = ts_clamp(sqlite3_column_int64(s, 0)), b = ts_clamp(sqlite3_column_int64(s, 1));
			int src = sqlite3_column_int(s, 2);

			if (b < a)
				b = a;
			count_in_top_gaps(g, names, a, b, src, sqlite3_column_int64(s, 3));
			got = merge_step(&m, a, b, &os, &oe);
		} else {
			got = m.open;
			os = m.s, oe = m.e;
			m.open = 0;
		}
		if (got)
			host_in_gaps(g, gaps, &gi, os, oe);
		if (!more)
			break;
	}
	if (finish(db, s, rc))
		return -1;
	/* The host share of each top gap. */
	for (size_t t = 0; t < g->ntop_gaps; t++) {
		struct gpu_gap *gp = &g->top_gaps[t];
		for (size_t i = 0; i < gaps->n; i++)
			if (gaps->v[i].start == gp->start_ns && gaps->v[i].end == gp->end_ns) {
				gp->host_ns = gaps->v[i].host;
				break;
			}
	}
	return 0;
}

static int64_t max_duration(sqlite3 *db, const char *table)
{
	char sql[128];
	sqlite3_stmt *s;
	int64_t v = 0;

	if (!strcmp(table, "eager_ops") && db_has_table(db, "eager_op_rows"))  /* schema 6: no join for it */
		snprintf(sql, sizeof(sql), "SELECT coalesce(max(dur), 0) FROM eager_op_rows");
	else
		snprintf(sql, sizeof(sql), "SELECT coalesce(max(end_ns - start_ns), 0) FROM %s", table);
	s = db_prepare(db, sql);
	if (!s)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* Name of strings.id, into the pool; NULL when absent. */
static const char *string_text(struct gpu_model *g, sqlite3 *db, int64_t id)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT text FROM strings WHERE id = ?1");
	const char *t = NULL;

	if (!s)
		return NULL;
	sqlite3_bind_int64(s, 1, id);
	if (sqlite3_step(s) == SQLITE_ROW)
		t = db_col_pooled(s, 0, g->pool);
	sqlite3_finalize(s);
	return t;
}

/* The eager op and user line that dominate each top gap (indexed range queries). */
static int load_gap_details(struct gpu_model *g, sqlite3 *db, const struct gap_names *names)
{
	int64_t maxdur = max_duration(db, "eager_ops"), span;
	sqlite3_stmt *op, *site;
	char sql[2048], ids[1200] = "";

	if (maxdur < 0)
		return -1;
	/* schema 6 (no index on the ops): every thread's blocks that can hold the window's starts; ?4 their widest span */
	if (db_has_table(db, "eager_op_blocks"))
		scan_eager_block_ids(ids, sizeof(ids), "e.id", NULL, NULL, "?1 - ?3", "?2 + 1", "?4");
	snprintf(sql, sizeof(sql),
		 "SELECT s.text FROM eager_ops e JOIN strings s ON s.id = e.op_id"
		 " WHERE e.start_ns BETWEEN ?1 - ?3 AND ?2 AND e.end_ns > ?1%s"
		 " GROUP BY e.op_id ORDER BY count(*) DESC, s.text LIMIT 1", ids);
	op = db_prepare(db, sql);
	span = ids[0] ? scan_eager_block_span(db) : 0;
	snprintf(sql, sizeof(sql),
		 "SELECT f.text, c.line, fn.text FROM eager_ops e"
		 " JOIN callsites c ON c.id = e.callsite_id"
		 " JOIN strings f ON f.id = c.file_id JOIN strings fn ON fn.id = c.func_id"
		 " WHERE e.start_ns BETWEEN ?1 - ?3 AND ?2 AND e.end_ns > ?1%s"
		 " GROUP BY e.callsite_id ORDER BY count(*) DESC, f.text, c.line LIMIT 1", ids);
	site = db_prepare(db, sql);
	if (!op || !site) {
		sqlite3_finalize(op);
		sqlite3_finalize(site);
		return -1;
	}
	for (size_t t = 0; t < g->ntop_gaps; t++) {
		struct gpu_gap *gp = &g->top_gaps[t];
		int best = -1;

		for (int i = 0; i < GAP_NAMES; i++)
			if (names[t].count[i] && (best < 0 || names[t].count[i] > names[t].count[best]))
				best = i;
		if (best >= 0)
			gp->top_api = string_text(g, db, names[t].id[best]);
		if (!gp->eager_ops)
			continue;
		sqlite3_stmt *q[2] = { op, site };
		for (int k = 0; k < 2; k++) {
			sqlite3_reset(q[k]);
			sqlite3_bind_int64(q[k], 1, gp->start_ns);
			sqlite3_bind_int64(q[k], 2, gp->end_ns);
			sqlite3_bind_int64(q[k], 3, maxdur);
			if (ids[0])
				sqlite3_bind_int64(q[k], 4, span);
		}
		if (sqlite3_step(op) == SQLITE_ROW)
			gp->top_op = db_col_pooled(op, 0, g->pool);
		if (sqlite3_step(site) == SQLITE_ROW) {
			gp->site.file = db_col_pooled(site, 0, g->pool);
			gp->site.line = sqlite3_column_int(site, 1);
			gp->site.func = db_col_pooled(site, 2, g->pool);
		}
	}
	sqlite3_finalize(op);
	sqlite3_finalize(site);
	/* Longest first, as printed. */
	for (size_t i = 1; i < g->ntop_gaps; i++)
		for (size_t j = i; j > 0; j--) {
			struct gpu_gap *a = &g->top_gaps[j - 1], *b = &g->top_gaps[j];
			if (a->end_ns - a->start_ns >= b->end_ns - b->start_ns)
				break;
			struct gpu_gap tmp = *a;
			*a = *b;
			*b = tmp;
		}
	return 0;
}

/* ---- launch latency, correlation -------------------------------------- */

static int load_latency(struct gpu_model *g, sqlite3 *db)
{
	int64_t *v = NULL, sum = 0;
	size_t n = 0, cap = 0;
	sqlite3_stmt *s;
	int rc;

	s = db_prepare(db, "SELECT a.start_ns - c.start_ns FROM gpu_activity a"
			   " JOIN gpu_api_calls c ON c.pid = a.pid AND c.correlation_id = a.correlation_id"
			   " WHERE a.kind = 'kernel'");
	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (GROW(v, n, cap))
			break;
		/* within +-2^62 and summed saturating: a hostile file's mean still fits int64 (reports cast it) */
		v[n] = sqlite3_column_int64(s, 0);
		v[n] = v[n] < -TS_MAX_NS ? -TS_MAX_NS : v[n] > TS_MAX_NS ? TS_MAX_NS : v[n];
		sum = sat_add64(sum, v[n++]);
	}
	if (finish(db, s, rc)) {
		free(v);
		return -1;
	}
	if (n) {
		qsort(v, n, sizeof(*v), cmp_int64);
		g->latency.count = (int64_t)n;
		g->latency.mean_ns = (double)sum / (double)n;
		g->latency.p50_ns = v[(n - 1) / 2];
		g->latency.p95_ns = v[(size_t)((double)(n - 1) * 0.95)];
		g->latency.max_ns = v[n - 1];
	}
	free(v);

	s = db_prepare(db, "SELECT count(*) FROM gpu_activity a WHERE a.kind <> 'sync' AND EXISTS"
			   " (SELECT 1 FROM gpu_api_calls c WHERE c.pid = a.pid"
			   " AND c.correlation_id = a.correlation_id)");
	if (!s)
		return -1;
	if ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		g->correlated = sqlite3_column_int64(s, 0);
		rc = SQLITE_DONE;
	}
	return finish(db, s, rc);
}

/* ---- synchronous calls ------------------------------------------------ */

/* The host op (and its user line) behind the calls of one API name, through external ids. */
static const char *host_op_sql =
	"SELECT coalesce(es.text, fs.text), f.text, cs.line, fn.text"
	" FROM gpu_api_calls c"
	" JOIN gpu_external_ids x ON x.pid = c.pid AND x.external_id = c.external_id"
	" LEFT JOIN eager_ops eo ON x.event_table = 'eager_ops' AND eo.id = x.event_id"
	" LEFT JOIN strings es ON es.id = eo.op_id"
	" LEFT JOIN function_calls fc ON x.event_table = 'function_calls' AND fc.id = x.event_id"
	" LEFT JOIN strings fs ON fs.id = fc.name_id"
	" LEFT JOIN callsites cs ON cs.id = coalesce(eo.callsite_id, fc.callsite_id)"
	" LEFT JOIN strings f ON f.id = cs.file_id LEFT JOIN strings fn ON fn.id = cs.func_id"
	" JOIN strings n ON n.id = c.name_id"
	" WHERE n.text = ?1 AND c.external_id <> 0"
	" GROUP BY 1, 2, 3 ORDER BY count(*) DESC LIMIT 1";

static int cmp_sync(const void *a, const void *b)
{
	const struct gpu_sync_stat *x = a, *y = b;

	return x->total_ns < y->total_ns ? 1 : x->total_ns > y->total_ns ? -1 : strcmp(x->api, y->api);
}

static int load_sync_sites(struct gpu_model *g, sqlite3 *db);

/* The row of api in g->sync_stats, added (kind: gpu_sync_kind) when new; NULL when memory is short. */
static struct gpu_sync_stat *sync_stat_of(struct gpu_model *g, const char *api, int kind, int64_t start_ns,
					  size_t *cap)
{
	struct gpu_sync_stat *y;

	for (size_t i = 0; i < g->nsync_stats; i++)
		if (!strcmp(g->sync_stats[i].api, api))
			return &g->sync_stats[i];
	if (GROW(g->sync_stats, g->nsync_stats, *cap))
		return NULL;
	y = &g->sync_stats[g->nsync_stats++];
	memset(y, 0, sizeof(*y));
	y->api = pool_dup(g, api);
	y->is_copy = kind == 1;
	y->first_ns = start_ns;
	return y;
}

static int load_syncs(struct gpu_model *g, sqlite3 *db)
{
	int64_t cur_pid = -1, cur_tid = -1, outer_end = -1;
	size_t cap = 0;
	sqlite3_stmt *s;
	int rc;

	/*
	 * Candidates by name in SQL, exact classification in C.  A driver call
	 * made inside a runtime call on the same thread (cudaMemcpy ->
	 * cuMemcpy) is the same wait: only the outer one counts.
	 */
	s = db_prepare(db,
		"SELECT c.pid, c.tid, c.start_ns, c.end_ns, n.text, coalesce(c.external_id, 0)"
		" FROM gpu_api_calls c JOIN strings n ON n.id = c.name_id"
		" WHERE n.text LIKE '%Synchronize%' OR n.text LIKE 'cudaMemcpy%' OR n.text LIKE 'cuMemcpy%'"
		" ORDER BY c.pid, c.tid, c.start_ns, c.end_ns DESC");
	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(s, 0), tid = sqlite3_column_int64(s, 1);
		int64_t st = sqlite3_column_int64(s, 2), en = sqlite3_column_int64(s, 3);
		const char *api = db_col_text(s, 4);
		int kind = gpu_sync_kind(api);
		struct gpu_sync_stat *y = NULL;

		if (!kind)
			continue;
		if (pid != cur_pid || tid != cur_tid) {
			cur_pid = pid, cur_tid = tid, outer_end = -1;
		}
		if (en <= outer_end)
			continue;       /* nested in the previous sync call of this thread */
		outer_end = en;
		if (!(y = sync_stat_of(g, api, kind, st, &cap)))
			break;
		y->count++;
		y->total_ns += en - st;
		y->with_op += sqlite3_column_int64(s, 5) != 0;
		if (st < y->first_ns)
			y->first_ns = st;
		if (en > y->last_ns)
			y->last_ns = en;
	}
	if (finish(db, s, rc))
		return -1;
	if (!g->nsync_stats)
		return 0;
	qsort(g->sync_stats, g->nsync_stats, sizeof(*g->sync_stats), cmp_sync);
	return load_sync_sites(g, db);
}

/* The host op and line that issued each synchronous API the most. */
static int load_sync_sites(struct gpu_model *g, sqlite3 *db)
{
	sqlite3_stmt *s = db_prepare(db, host_op_sql);

	if (!s)
		return -1;
	for (size_t i = 0; i < g->nsync_stats; i++) {
		struct gpu_sync_stat *y = &g->sync_stats[i];

		if (!y->with_op)
			continue;
		sqlite3_reset(s);
		sqlite3_bind_text(s, 1, y->api, -1, SQLITE_STATIC);
		if (sqlite3_step(s) == SQLITE_ROW) {
			y->top_op = db_col_pooled(s, 0, g->pool);
			y->site.file = db_col_pooled(s, 1, g->pool);
			y->site.line = sqlite3_column_int(s, 2);
			y->site.func = db_col_pooled(s, 3, g->pool);
		}
	}
	sqlite3_finalize(s);
	return 0;
}

/* ---- kernels per host op ---------------------------------------------- */

static int load_ops(struct gpu_model *g, sqlite3 *db)
{
	size_t cap = 0;
	sqlite3_stmt *s;
	int rc;

	/* Nothing to join without external ids (no TensorFlow op launched anything). */
	s = db_prepare(db, "SELECT count(*) FROM (SELECT 1 FROM gpu_external_ids LIMIT 1)");
	if (!s)
		return -1;
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW && sqlite3_column_int64(s, 0) == 0) {
		sqlite3_finalize(s);
		return 0;
	}
	sqlite3_finalize(s);
	/* Group on integer ids, then name the groups (one op type may be several ids' worth). */
	s = db_prepare(db,
		"SELECT coalesce(es.text, fs.text), t.tab, sum(t.n), sum(t.ns) FROM"
		" (SELECT x.event_table AS tab, eo.op_id AS op, fc.name_id AS fn,"
		"  count(*) AS n, sum(a.end_ns - a.start_ns) AS ns"
		"  FROM gpu_activity a"
		"  JOIN gpu_api_calls c ON c.pid = a.pid AND c.correlation_id = a.correlation_id"
		"  JOIN gpu_external_ids x ON x.pid = c.pid AND x.external_id = c.external_id"
		"  LEFT JOIN eager_ops eo ON x.event_table = 'eager_ops' AND eo.id = x.event_id"
		"  LEFT JOIN function_calls fc ON x.event_table = 'function_calls' AND fc.id = x.event_id"
		"  WHERE a.kind = 'kernel' AND c.external_id <> 0 GROUP BY 1, 2, 3) t"
		" LEFT JOIN strings es ON es.id = t.op LEFT JOIN strings fs ON fs.id = t.fn"
		" GROUP BY 1, 2 ORDER BY 4 DESC, 1");
	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct gpu_op_stat *o;

		if (!db_col_text(s, 0))
			continue;
		if (GROW(g->op_stats, g->nop_stats, cap))
			break;
		o = &g->op_stats[g->nop_stats++];
		o->op = db_col_pooled(s, 0, g->pool);
		o->table = db_col_pooled(s, 1, g->pool);
		o->kernels = sqlite3_column_int64(s, 2);
		o->kernel_ns = sqlite3_column_int64(s, 3);
	}
	return finish(db, s, rc);
}

/* ---- entry points ----------------------------------------------------- */

static int setup_buckets(struct gpu_model *g, const struct gpu_options *opt)
{
	int64_t span = g->run_end_ns - g->run_start_ns;

	if (span <= 0)
		return 0;
	g->bucket_ns = opt && opt->bucket_ns > 0 ? opt->bucket_ns : (span + 99) / 100;
	if (g->bucket_ns < 1)
		g->bucket_ns = 1;
	g->nbuckets = (size_t)((span + g->bucket_ns - 1) / g->bucket_ns);
	if (g->nbuckets > 100000) {          /* a width too fine for the run: cap it */
		g->nbuckets = 100000;
		g->bucket_ns = (span + 99999) / 100000;
	}
	g->buckets = calloc(g->nbuckets, sizeof(*g->buckets));
	if (!g->buckets)
		return error("out of memory");
	for (size_t i = 0; i < g->nbuckets; i++)
		g->buckets[i].start_ns = g->run_start_ns + (int64_t)i * g->bucket_ns;
	return 0;
}

int gpu_model_load(struct gpu_model *g, struct recording *rec, const struct gpu_options *opt)
{
	sqlite3 *db = rec->db;
	struct spans gaps = { NULL, 0, 0 };
	struct gap_names *names = NULL;
	size_t max_gaps = opt && opt->max_gaps ? opt->max_gaps : 10;

	memset(g, 0, sizeof(*g));
	g->pool = calloc(1, sizeof(*g->pool));
	if (!g->pool)
		return error("out of memory");
	if (load_status(g, db) || load_totals(g, db))
		goto fail;
	if (!g->has_data && !g->api_calls)
		return 0;
	if (load_kernels(g, db) || load_copies(g, db) || load_streams(g, db) ||
	    setup_buckets(g, opt) || load_busy(g, db, &gaps))
		goto fail;
	gap_percentile(g, &gaps);
	if (pick_top_gaps(g, &gaps, max_gaps))
		goto fail;
	names = calloc(g->ntop_gaps ? g->ntop_gaps : 1, sizeof(*names));
	if (!names || load_host_overlap(g, db, &gaps, names) || load_gap_details(g, db, names))
		goto fail;
	if (load_latency(g, db) || load_syncs(g, db) || load_ops(g, db))
		goto fail;
	free(names);
	free(gaps.v);
	return 0;
fail:
	free(names);
	free(gaps.v);
	gpu_model_release(g);
	return -1;
}

void gpu_model_release(struct gpu_model *g)
{
	if (g->pool)
		strpool_release(g->pool);
	free(g->pool);
	free(g->kernel_stats);
	free(g->copy_stats);
	free(g->streams);
	free(g->buckets);
	free(g->top_gaps);
	free(g->sync_stats);
	free(g->op_stats);
	memset(g, 0, sizeof(*g));
}
