/* timeline.c - the timeline of a recording: kinds, strings and maps, retraces, open and release; see timeline.h. */
#include "timeline_internal.h"
#include "checked.h"
#include "db.h"
#include "recording.h"
#include "scan.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct agp_lane *tl_lane_def(enum tl_kind kind)
{
	static const struct agp_lane *def[TL_NKINDS];

	/* the catalog is constant: racing threads store the same pointer */
	if ((unsigned)kind >= TL_NKINDS)
		return NULL;
	if (!__atomic_load_n(&def[kind], __ATOMIC_RELAXED))
		__atomic_store_n(&def[kind], agp_lane_find(kind), __ATOMIC_RELAXED);
	return def[kind];
}

const char *tl_kind_name(enum tl_kind kind)
{
	const struct agp_lane *l = tl_lane_def(kind);

	return l ? l->long_name : "?";
}

const char *tl_kind_short(enum tl_kind kind)
{
	const struct agp_lane *l = tl_lane_def(kind);

	return l ? l->short_name : "?";
}

/*
 * Every query on an event table (a lane's slice query, common/kinds.c)
 * returns the same columns, so that one function turns a row into a slice:
 *   0 id, 1 pid, 2 tid (GPU: stream), 3 start_ns, 4 end_ns,
 *   5 aux (traces: function_id, calls: graph_function_id, CPU kernels: call_id, else -1),
 *   6 name_id (-1 none; CPU kernels: node_id, their names live in graph_nodes), 7 device (-1 for threads), 8 failed, 9 copy (GPU)
 * The lane's filter selects one lane's rows: ?1 pid, ?2 tid, ?6 device;
 * search is the column matched against the ids of matching strings.
 */

/* ---- strings and small maps ---- */

const char *timeline_string(const struct timeline *tl, int64_t id)
{
	size_t i;

	if (!idmap_get(&tl->strings.at, id, &i))
		return NULL;
	return tl->strings.text[i];
}

/* The text of row id of t, or NULL. */
static const char *id_text(const struct tl_idrows *t, int64_t id)
{
	size_t i;

	return idmap_get(&t->at, id, &i) ? t->text[i] : NULL;
}

const char *timeline_slice_name(const struct timeline *tl, const struct tl_slice *s)
{
	const char *name = s->kind == TL_CPUK ? id_text(&tl->nodes, s->name_id) : timeline_string(tl, s->name_id);

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

/*
 * Load strings, functions, graph_functions and graph nodes, found by id
 * through maps.  Graph nodes are few (one per op of each traced graph, not
 * per execution): their names are what a CPU kernel shows and is searched by.
 */
static int load_maps(struct timeline *tl)
{
	if (load_id_rows(tl, "SELECT id, text FROM strings", &tl->strings, 1) < 0 ||
	    load_id_rows(tl, "SELECT id, name_id FROM functions", &tl->functions, 0) < 0 ||
	    load_id_rows(tl, "SELECT id, coalesce(function_id, -1) FROM graph_functions", &tl->graph_fns, 0) < 0)
		return -1;
	if (load_id_rows(tl, "SELECT id, name FROM graph_nodes", &tl->nodes, 1) < 0 ||
	    load_id_rows(tl, "SELECT id, op_type FROM graph_nodes", &tl->node_types, 1) < 0)
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

/* Column layout of the lanes' slice queries: see above. */
void tl_row_to_slice(const struct timeline *tl, sqlite3_stmt *st, enum tl_kind kind, struct tl_slice *s)
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

int tl_slice_cmp(const void *a, const void *b)
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

int tl_is_retrace(const struct timeline *tl, int64_t trace_id)
{
	/* tl->retraces is by time; a by-id copy lives right after it */
	const struct tl_mark *by_id = tl->retraces ? tl->retraces + tl->nretraces : NULL;

	return by_id && bsearch(&trace_id, by_id, tl->nretraces, sizeof(*by_id), mark_id_cmp) != NULL;
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
		sort_array(tl->retraces + tl->nretraces, tl->nretraces, sizeof(*tl->retraces), mark_sort_id);
	}
	return 0;
}

static sqlite3_stmt *prepare_kind(struct timeline *tl, enum tl_kind kind, const char *tail)
{
	char sql[6144];  /* schema 6's eager tails are long (eager_block_tails) */

	snprintf(sql, sizeof(sql), "%s WHERE %s %s", tl_lane_def(kind)->slice, tl_lane_def(kind)->filter, tail);
	return db_prepare(tl->rec->db, sql);
}

/*
 * Schema 6: eager_op_rows has no index on start_ns; a lane's window is read
 * from the id range of its thread's blocks that can hold it (eager_op_blocks,
 * scan_eager_block_ids()); ?7 is the widest block's span.  The event just
 * before t starts at or after the latest block start before t (that block
 * holds an event there); the one just after t at or before the first block
 * start after t.
 */
static void eager_block_tails(char tails[3][1400])
{
	char ids[1200];

	scan_eager_block_ids(ids, sizeof(ids), "id", "?1", "?2", "?3", "?4", "?7");
	snprintf(tails[0], sizeof(tails[0]), "%s AND start_ns >= ?3 AND start_ns < ?4 ORDER BY start_ns LIMIT ?5", ids);
	scan_eager_block_ids(ids, sizeof(ids), "id", "?1", "?2",
			     "(SELECT max(min_start_ns) FROM eager_op_blocks WHERE pid = ?1 AND tid = ?2 AND min_start_ns < ?3)",
			     "?3", "?7");
	snprintf(tails[1], sizeof(tails[1]), "%s AND start_ns < ?3 ORDER BY start_ns DESC LIMIT 1", ids);
	scan_eager_block_ids(ids, sizeof(ids), "id", "?1", "?2", "?3 + 1",
			     "coalesce((SELECT min(min_start_ns) FROM eager_op_blocks WHERE pid = ?1 AND tid = ?2"
			     " AND min_start_ns > ?3) + 1, 9223372036854775807)",
			     "?7");
	snprintf(tails[2], sizeof(tails[2]), "%s AND start_ns > ?3 ORDER BY start_ns LIMIT 1", ids);
}

/* The range and step statements of kind k: by its start_ns index, or by schema 6's blocks. */
static int prepare_kind_queries(struct timeline *tl, enum tl_kind k)
{
	static const char *const index_tails[3] = {
		"AND start_ns >= ?3 AND start_ns < ?4 ORDER BY start_ns LIMIT ?5",
		"AND start_ns < ?3 ORDER BY start_ns DESC LIMIT 1",
		"AND start_ns > ?3 ORDER BY start_ns LIMIT 1",
	};
	char tails[3][1400];
	int blocks = k == TL_EAGER && db_has_table(tl->rec->db, "eager_op_blocks");
	sqlite3_stmt **st[3] = { &tl->range[k], &tl->step[0][k], &tl->step[1][k] };
	int64_t w = blocks ? scan_eager_block_span(tl->rec->db) : 0;

	if (blocks)
		eager_block_tails(tails);
	for (int i = 0; i < 3; i++) {
		if (!(*st[i] = prepare_kind(tl, k, blocks ? tails[i] : index_tails[i])))
			return -1;
		if (blocks)
			sqlite3_bind_int64(*st[i], 7, w);  /* kept: the statements are reset, never cleared */
	}
	return 0;
}

int timeline_open(struct timeline *tl, struct recording *rec, uint32_t nbins)
{
	struct tl_loader *ld;
	double t_start = monotonic_seconds();

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
	if (load_maps(tl) < 0 || tl_find_span(tl) < 0 || load_retraces(tl) < 0)
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
		if (prepare_kind_queries(tl, (enum tl_kind)k))
			goto fail;
	}
	if (tl_make_tasks(tl, ld) < 0)
		goto fail;
	ld->nthreads = scan_threads();
	if ((size_t)ld->nthreads > ld->ntasks)
		ld->nthreads = (int)ld->ntasks;
	tl->threads_used = ld->nthreads;
	ld->joined = 0;
	ld->running = ld->nthreads;
	int nstarted = 0;
	for (int i = 0; i < ld->nthreads; i++) {
		ld->started[i] = pthread_create(&ld->threads[i], NULL, tl_scan_thread, tl) == 0;
		if (ld->started[i])
			nstarted++;
		else
			__atomic_fetch_sub(&ld->running, 1, __ATOMIC_RELEASE);
	}
	if (ld->ntasks && !nstarted) {
		error("cannot start a thread to read '%s'", rec->path);
		goto fail;
	}
	tl->open_seconds = monotonic_seconds() - t_start;
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
	id_rows_release(&tl->nodes);
	id_rows_release(&tl->node_types);
	strpool_release(&tl->pool);
	for (int k = 0; k < TL_NKINDS; k++) {
		sqlite3_finalize(tl->range[k]);
		sqlite3_finalize(tl->step[0][k]);
		sqlite3_finalize(tl->step[1][k]);
	}
	memset(tl, 0, sizeof(*tl));
}

