/* timeline_lanes.c - the background scan that finds the lanes and fills their density bins; tracks; polling. */
#include "timeline_internal.h"
#include "scan.h"
#include "checked.h"
#include "db.h"
#include "duration.h"
#include "recording.h"
#include "strbuf.h"
#include "util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/*
 * The scan reads the tables with a scan query in the catalog (common/
 * kinds.c), and only the columns the bins need: id, pid, tid (stream),
 * start_ns, end_ns, then device and copy (GPU) or count and total_ns
 * (buckets).  Every column costs time on ten million rows; the rest of a
 * long event is read by id when one is met.  GPU kernels and copies come
 * from one scan.
 */
#define NSCAN_TABLES agp_nkinds

/* ---- the scan ---- */



static int lane_key_eq(const struct lane_key *a, const struct lane_key *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->device == b->device && a->kind == b->kind;
}


/* Rows a task stands for in the progress share: its id range, at most one chunk's worth. */
static int64_t task_rows(const struct scan_task *t)
{
	uint64_t n = (uint64_t)t->hi - (uint64_t)t->lo;

	return n >= SCAN_CHUNK_ROWS ? SCAN_CHUNK_ROWS : (int64_t)n + 1;
}



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

int64_t tl_bin_of(const struct timeline *tl, int64_t t)
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
	int64_t b0 = tl_bin_of(tl, s->start_ns), b1 = tl_bin_of(tl, s->end_ns > s->start_ns ? s->end_ns - 1 : s->start_ns);
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

/*
 * An eager_op_buckets row (schema 5: ops past the recording's budget): its
 * count and busy time spread over the bins it spans, pro rata (the ops'
 * own times are not known); the lane remembers the aggregated span, where
 * it is always drawn as density (there are no rows to draw one by one).
 */
static void lane_add_bucket(struct timeline *tl, struct tl_lane *l, const struct tl_slice *s, int64_t count,
			    int64_t busy)
{
	int64_t b0 = tl_bin_of(tl, s->start_ns), b1 = tl_bin_of(tl, s->end_ns > s->start_ns ? s->end_ns - 1 : s->start_ns);
	int64_t span = s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 1, given_n = 0, given_b = 0;

	pthread_mutex_lock(&tl->loader->lock);
	if (!l->agg_t1 || s->start_ns < l->agg_t0)
		l->agg_t0 = s->start_ns;
	if (s->end_ns + 1 > l->agg_t1)
		l->agg_t1 = s->end_ns + 1;
	pthread_mutex_unlock(&tl->loader->lock);
	if (busy > span)
		busy = span;  /* one thread: at most the bucket's span */
	if (count > UINT32_MAX)
		count = UINT32_MAX;  /* the file's number; the bins are 32-bit */
	for (int64_t b = b0; b <= b1; b++) {
		int64_t a = tl->start_ns + b * tl->bin_ns, e = a + tl->bin_ns, part, n, d;

		a = a > s->start_ns ? a : s->start_ns;
		e = e < s->end_ns ? e : s->end_ns;
		part = e > a ? e - a : 0;
		/* the last bin takes the rest: the counts add up exactly */
		n = b == b1 ? count - given_n : (int64_t)((__int128)count * part / span);
		d = b == b1 ? busy - given_b : (int64_t)((__int128)busy * part / span);
		n = n > 0 ? n : 0, d = d > 0 ? d : 0;
		given_n += n, given_b += d;
		__atomic_fetch_add(&l->count[b], (uint32_t)n, __ATOMIC_RELAXED);
		__atomic_fetch_add(&l->coarse_count[b / TL_COARSE], (uint32_t)n, __ATOMIC_RELAXED);
		__atomic_fetch_add(&l->busy[b], (uint64_t)d, __ATOMIC_RELAXED);
		__atomic_fetch_add(&l->coarse_busy[b / TL_COARSE], (uint64_t)d, __ATOMIC_RELAXED);
	}
}

int tl_is_retrace(const struct timeline *tl, int64_t trace_id);

/* The whole row of a long event, read by id on the scan's connection. */
static int scan_long(struct timeline *tl, sqlite3 *db, sqlite3_stmt **find, enum tl_kind kind, int64_t id,
		     struct tl_slice *s)
{
	char sql[512];
	int rc;

	if (!find[kind]) {
		snprintf(sql, sizeof(sql), "%s WHERE id = ?1", tl_lane_def(kind)->slice);
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
	tl_row_to_slice(tl, find[kind], kind, s);
	if (s->kind == TL_TRACE && tl_is_retrace(tl, s->id))
		s->flags |= TL_SLICE_RETRACE;
	sqlite3_reset(find[kind]);
	return 0;
}

static int scan_one(struct scan_worker *w, sqlite3 *db, sqlite3_stmt **find, const struct scan_task *task)
{
	struct timeline *tl = w->tl;
	const struct agp_kind *t = task->table;
	sqlite3_stmt *st = NULL;
	int gpu = t->scan_lane == TL_KERNEL, aggregate = t->flags & AGP_KIND_AGGREGATE, rc, n = 0;
	int64_t long_ns = sat_mul64(TL_LONG_BINS, tl->bin_ns);

	if (sqlite3_prepare_v2(db, t->scan, -1, &st, NULL) != SQLITE_OK) {
		loader_fail(tl->loader, "%.100s in '%.140s'", sqlite3_errmsg(db), t->scan);
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
		key.kind = gpu && sqlite3_column_int(st, 6) ? TL_COPY : t->scan_lane;
		key.pid = sqlite3_column_int64(st, 1);
		key.tid = sqlite3_column_int64(st, 2);
		key.device = gpu ? sqlite3_column_int64(st, 5) : -1;
		if (!aggregate && s.end_ns - s.start_ns > long_ns) {
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
		if (aggregate) {
			int64_t count = sqlite3_column_int64(st, 5);

			*events = sat_add64(*events, count);
			lane_add_bucket(tl, l, &s, count, sqlite3_column_int64(st, 6));
			continue;
		}
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

void *tl_scan_thread(void *arg)
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

/* 0 for a table the scan does not read (the ones older schemas lack are empty: compat.c). */
static int scan_table_present(const struct timeline *tl, size_t t)
{
	(void)tl;
	return agp_kinds[t].scan != NULL;
}

/*
 * Split each event table into rowid ranges, interleaved across tables so
 * that the first moments of the scan meet every table (and so every lane
 * that is busy through the run).
 */
int tl_make_tasks(struct timeline *tl, struct tl_loader *ld)
{
	int64_t lo[AGP_MAX_KINDS], hi[AGP_MAX_KINDS];
	int has[AGP_MAX_KINDS];
	size_t alloc = 0;

	for (size_t t = 0; t < NSCAN_TABLES; t++) {
		lo[t] = 0, hi[t] = -1;
		if (scan_table_present(tl, t) && scan_id_range(tl->rec->db, agp_kinds[t].table, &lo[t], &hi[t]))
			return -1;
		has[t] = hi[t] >= lo[t];
	}
	/*
	 * Chunk k of a table is visited in bit-reversed order (0, 1/2, 1/4,
	 * 3/4 of the rows, ...): the first seconds of the scan sketch the whole
	 * run, which the rest refines.
	 */
	int64_t nchunks[AGP_MAX_KINDS], most = 0;
	uint64_t chunk[AGP_MAX_KINDS];
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
			ld->tasks[ld->ntasks].table = &agp_kinds[t];
			ld->tasks[ld->ntasks].lo = a;
			ld->tasks[ld->ntasks].hi = (uint64_t)hi[t] - (uint64_t)a > chunk[t] - 1
							   ? (int64_t)((uint64_t)a + chunk[t] - 1) : hi[t];
			ld->rows_total += task_rows(&ld->tasks[ld->ntasks]);
			ld->ntasks++;
		}
	}
	return 0;
}

/*
 * Tables without an index on start_ns: kernels, and schema 6's eager ops
 * (eager_op_rows: rows in time order per thread, no index at all).
 */
static int span_by_ids(const struct timeline *tl, size_t t)
{
	return (agp_kinds[t].flags & AGP_KIND_NO_START_INDEX) ||
	       (agp_kinds[t].view_over && db_has_table(tl->rec->db, agp_kinds[t].view_over));
}

/* Span of the recording: meta start/end, widened to every event's start. */
int tl_find_span(struct timeline *tl)
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

		if (!scan_table_present(tl, t))
			continue;
		/*
		 * Two queries: SQLite answers min() or max() alone from the start_ns
		 * index, but both in one statement with a full scan.  Ends are
		 * covered by the slack below.
		 */
		for (int m = 0; m < 2; m++) {
			snprintf(sql, sizeof(sql), "SELECT %s(start_ns) FROM %s", m ? "max" : "min", agp_kinds[t].table);
			/*
			 * kernels has no start_ns index (its per-thread one cannot answer
			 * min or max, and millions of rows make a scan cost the first
			 * frame): its first and last rows by id stand in, drained in time
			 * order per thread; a kernel outside the span counts in an edge bin.
			 */
			if (span_by_ids(tl, t))
				snprintf(sql, sizeof(sql), "SELECT %s(start_ns) FROM (SELECT start_ns FROM %s"
					 " ORDER BY id %s LIMIT 4096)", m ? "max" : "min", agp_kinds[t].table,
					 m ? "DESC" : "ASC");
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

/*
 * A merged recording's process (agprof merge, processes.rank): its command
 * becomes "rank N: command" and it is ordered by rank, so that each rank's
 * processes form one group, the ranks in order.
 */
static void rank_label(struct tl_track *t, int64_t rank)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "rank %lld: %s", (long long)rank, t->command ? t->command : "?");
	if (strbuf_failed(&sb))
		return;
	free(t->command);
	t->command = strbuf_detach(&sb);
	t->proc_start = rank;
}

/* Role and name of a thread, its process's start (for ordering) and command. */
static void thread_info(struct timeline *tl, struct tl_track *t)
{
	sqlite3_stmt *st;

	t->proc_start = INT64_MAX;
	/* processes.rank is schema 4: NULL in older recordings (compat.c) */
	st = db_prepare(tl->rec->db, "SELECT start_ns, argv, rank FROM processes WHERE pid = ?1");
	if (st) {
		sqlite3_bind_int64(st, 1, t->pid);
		if (sqlite3_step(st) == SQLITE_ROW) {
			if (sqlite3_column_type(st, 0) != SQLITE_NULL)
				t->proc_start = sqlite3_column_int64(st, 0);
			if (sqlite3_column_type(st, 1) != SQLITE_NULL)
				t->command = command_of((const char *)sqlite3_column_text(st, 1));
			if (sqlite3_column_type(st, 2) == SQLITE_INTEGER)
				rank_label(t, sqlite3_column_int64(st, 2));
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

/* The published lane of an event, or 0 when none. */
int tl_lane_of(const struct timeline *tl, enum tl_kind kind, int64_t pid, int64_t tid, int64_t device, uint32_t *lane)
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
	sort_array(tl->tracks, tl->ntracks, sizeof(*tl->tracks), track_cmp);
	for (size_t j = 0; j < tl->ntracks; j++)
		for (size_t k = 0; k < tl->tracks[j].nlanes; k++)
			tl->lanes[tl->tracks[j].lanes[k]].track = j;
	for (size_t i = 0; i < tl->nretraces; i++) {
		struct tl_mark *m = &tl->retraces[i];
		tl_lane_of(tl, TL_TRACE, m->pid, m->tid, -1, &m->slice.lane);
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
		sort_array(l->longs, l->nlongs, sizeof(*l->longs), tl_slice_cmp);
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
		tl->load_seconds = monotonic_seconds() - ld->t_start;
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

