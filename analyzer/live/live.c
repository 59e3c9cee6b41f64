/* live.c - see live.h. */
#include "live.h"
#include "model_internal.h"
#include "checked.h"
#include "db.h"
#include "idmap.h"
#include "recording.h"
#include "strpool.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define WINDOW_NS 1000000000LL
/*
 * The launcher commits every 250 ms (writer/run_writer.c): a window ending
 * at the clock's now would miss up to a quarter of its second.
 */
#define COMMIT_LAG_NS 300000000LL
/* A call-site chain is untrusted: at most this many frames out to user code. */
#define MAX_FRAMES 16

/* A callsites row read on first use; user: the index of its user frame (or itself when none), -1 unknown. */
struct live_site {
	const char *file, *func;
	int line, library;
	int64_t parent;
	long user;
};

/* What the window's rows name: call sites and strings, read once each. */
struct live_cache {
	struct strpool pool;
	struct idmap site_ix, str_ix;
	struct live_site *sites;
	size_t nsites, capsites;
	const char **strs;
	size_t nstrs, capstrs;
	sqlite3_stmt *site_q, *str_q;
};

/* strings.id -> text (pooled), NULL when none. */
static const char *cache_str(struct live_cache *c, sqlite3 *db, int64_t id)
{
	const char *text = NULL;
	size_t ix;

	if (idmap_get(&c->str_ix, id, &ix))
		return c->strs[ix];
	if (!c->str_q && !(c->str_q = db_prepare(db, "SELECT text FROM strings WHERE id = ?1")))
		return NULL;
	sqlite3_bind_int64(c->str_q, 1, id);
	if (sqlite3_step(c->str_q) == SQLITE_ROW)
		text = db_col_pooled(c->str_q, 0, &c->pool);
	sqlite3_reset(c->str_q);
	if (ARRAY_GROW(c->strs, c->nstrs, c->capstrs) || idmap_put(&c->str_ix, id, c->nstrs) < 0)
		return text;
	c->strs[c->nstrs++] = text;
	return text;
}

/* The cached row of callsites.id, read now if new; -1 when there is none. */
static long cache_site(struct live_cache *c, sqlite3 *db, int64_t id)
{
	struct live_site s = { .user = -1 };
	size_t ix;
	int found;

	if (idmap_get(&c->site_ix, id, &ix))
		return (long)ix;
	if (!c->site_q && !(c->site_q = db_prepare(db, "SELECT file_id, line, func_id, parent_id, library"
							   " FROM callsites WHERE id = ?1")))
		return -1;
	sqlite3_bind_int64(c->site_q, 1, id);
	found = sqlite3_step(c->site_q) == SQLITE_ROW;
	if (found) {
		int64_t file = sqlite3_column_int64(c->site_q, 0), func = sqlite3_column_int64(c->site_q, 2);

		s.line = sqlite3_column_int(c->site_q, 1);
		s.parent = sqlite3_column_int64(c->site_q, 3);
		s.library = sqlite3_column_int(c->site_q, 4) != 0;
		sqlite3_reset(c->site_q);
		s.file = cache_str(c, db, file);
		s.func = cache_str(c, db, func);
	}
	sqlite3_reset(c->site_q);
	if (!found || ARRAY_GROW(c->sites, c->nsites, c->capsites) || idmap_put(&c->site_ix, id, c->nsites) < 0)
		return -1;
	c->sites[c->nsites] = s;
	return (long)c->nsites++;
}

/*
 * Where a call site points the user at, as the model does (loc_of_site in
 * model.c): its first user frame out, else the site itself, library_only.
 */
static struct source_loc cache_loc(struct live_cache *c, sqlite3 *db, int64_t id, const char **func)
{
	struct source_loc loc = { NULL, 0, NULL, 0, 0 };
	long ix = id > 0 ? cache_site(c, db, id) : -1, u = ix;

	*func = NULL;
	if (ix < 0)
		return loc;
	if (c->sites[ix].user < 0) {
		for (int depth = 0; u >= 0 && c->sites[u].library && depth < MAX_FRAMES; depth++)
			u = c->sites[u].parent > 0 ? cache_site(c, db, c->sites[u].parent) : -1;
		c->sites[ix].user = u >= 0 && !c->sites[u].library ? u : ix;
	}
	u = c->sites[ix].user;
	loc.library_only = c->sites[u].library;
	loc.file = c->sites[u].file;
	loc.line = c->sites[u].line;
	if (u != ix) {
		loc.lib_file = c->sites[ix].file;
		loc.lib_line = c->sites[ix].line;
	}
	*func = c->sites[u].func;
	return loc;
}

/* The statements end with each refresh: the caller may close the connection between refreshes. */
static void cache_end_refresh(struct live_cache *c)
{
	sqlite3_finalize(c->site_q);
	sqlite3_finalize(c->str_q);
	c->site_q = c->str_q = NULL;
}

static void cache_release(struct live_cache *c)
{
	if (!c)
		return;
	cache_end_refresh(c);
	strpool_release(&c->pool);
	idmap_release(&c->site_ix);
	idmap_release(&c->str_ix);
	free(c->sites);
	free(c->strs);
	free(c);
}

/* One integer from sql (its first column), dflt when NULL or on error. */
static int64_t query_int(sqlite3 *db, const char *sql, int64_t arg, int64_t dflt)
{
	sqlite3_stmt *s = db_prepare(db, sql);
	int64_t v = dflt;

	if (!s)
		return dflt;
	if (sqlite3_bind_parameter_count(s) > 0)
		sqlite3_bind_int64(s, 1, arg);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* The newest retrace over every function (follow-ups are TensorFlow's, not the program's). */
static void find_last_retrace(struct live *lv)
{
	lv->last_fn = NULL;
	lv->last_retrace = NULL;
	for (size_t i = 0; i < lv->m.nfunctions; i++) {
		const struct model_function *f = &lv->m.functions[i];

		for (size_t k = 1; k < f->ntraces; k++) {
			const struct model_trace *t = &f->traces[k];

			if (t->why.cause == CAUSE_NONE || t->why.followup)
				continue;
			if (!lv->last_retrace || t->start_ns > lv->last_retrace->start_ns) {
				lv->last_fn = f;
				lv->last_retrace = t;
			}
		}
	}
}

/* Load the model again when a trace was committed since (or the run ended: the end facts). 0 or -1. */
static int reload_traces(struct live *lv, int force)
{
	int64_t mark = query_int(lv->rec->db, "SELECT max(id) FROM traces", 0, 0);

	if (lv->m.pool && mark == lv->trace_mark && !force)
		return 0;
	if (lv->m.pool)
		model_release(&lv->m);
	if (model_load_parts(&lv->m, lv->rec, lv->parts))
		return -1;
	lv->trace_mark = mark;
	find_last_retrace(lv);
	return 0;
}

/* Graph call rows committed since the last refresh: a seek on the rowid. */
static void count_new_calls(struct live *lv)
{
	sqlite3_stmt *s = db_prepare(lv->rec->db, "SELECT count(*), max(id) FROM function_calls WHERE id > ?1");

	if (!s)
		return;
	sqlite3_bind_int64(s, 1, lv->call_mark);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 1) != SQLITE_NULL) {
		lv->calls_total = sat_add64(lv->calls_total, ts_clamp(sqlite3_column_int64(s, 0)));
		lv->call_mark = sqlite3_column_int64(s, 1);
	}
	sqlite3_finalize(s);
}

/* The line of a call site in the window, added if new; NULL when out of memory. */
static struct live_line *window_line(struct live *lv, int64_t site)
{
	struct live_window *w = &lv->win;
	const char *func;
	struct source_loc loc = cache_loc(lv->cache, lv->rec->db, site, &func);

	for (size_t i = 0; i < w->nlines; i++) {
		struct live_line *l = &w->lines[i];

		if (l->loc.file != loc.file || l->loc.line != loc.line)
			continue;
		if (!l->loc.lib_file && loc.lib_file) {
			/* the first library frame a site of the line went through */
			l->loc.lib_file = loc.lib_file;
			l->loc.lib_line = loc.lib_line;
		}
		return l;
	}
	if (ARRAY_GROW(w->lines, w->nlines, w->caplines))
		return NULL;
	memset(&w->lines[w->nlines], 0, sizeof(w->lines[0]));
	w->lines[w->nlines].loc = loc;
	w->lines[w->nlines].func = func;
	return &w->lines[w->nlines++];
}

/* Eager ops of one (op, call site) in the window. */
static void add_eager(struct live *lv, int64_t op_id, int64_t site, int64_t n, int64_t ns)
{
	const char *op = cache_str(lv->cache, lv->rec->db, op_id);
	struct live_line *l = window_line(lv, site);

	/* a recording's counts and times are untrusted: none below zero */
	n = n > 0 ? n : 0;
	ns = ns > 0 ? ns : 0;
	if (model_is_input_wait(op)) {
		lv->win.input_waits = sat_add64(lv->win.input_waits, n);
		lv->win.input_ns = sat_add64(lv->win.input_ns, ns);
		if (l) {
			l->input_waits = sat_add64(l->input_waits, n);
			l->input_ns = sat_add64(l->input_ns, ns);
		}
		return;
	}
	lv->win.eager_ops = sat_add64(lv->win.eager_ops, n);
	lv->win.eager_ns = sat_add64(lv->win.eager_ns, ns);
	if (!l)
		return;
	l->eager_ops = sat_add64(l->eager_ops, n);
	l->eager_ns = sat_add64(l->eager_ns, ns);
	if (ns > l->top_op_ns || !l->top_op) {
		l->top_op = op;
		l->top_op_ns = ns;
	}
}

static void add_calls(struct live *lv, int64_t site, int64_t n, int64_t ns)
{
	struct live_line *l = window_line(lv, site);

	n = n > 0 ? n : 0;
	ns = ns > 0 ? ns : 0;
	lv->win.calls = sat_add64(lv->win.calls, n);
	lv->win.call_ns = sat_add64(lv->win.call_ns, ns);
	if (l) {
		l->calls = sat_add64(l->calls, n);
		l->call_ns = sat_add64(l->call_ns, ns);
	}
}

/*
 * The share of a bucket (its events from start to end) inside the window:
 * a bucket holds one second of one key's events, counted by its span.
 */
static double bucket_share(const struct live_window *w, int64_t start, int64_t end)
{
	start = ts_clamp(start);
	end = ts_clamp(end);
	int64_t a = start > w->from_ns ? start : w->from_ns, b = end < w->to_ns ? end : w->to_ns;

	if (end <= start)
		return start >= w->from_ns && start < w->to_ns;
	return b > a ? (double)(b - a) / (double)(end - start) : 0.0;
}

/* A bucket's count or time v scaled by its share f of the window, within [0, TS_MAX_NS]. */
static int64_t scaled(int64_t v, double f)
{
	double x = (double)ts_clamp(v) * f + 0.5;

	return x < (double)TS_MAX_NS ? (int64_t)x : TS_MAX_NS;
}

/* Graph calls in the window: rows by the start_ns index, buckets by theirs.  0 or -1. */
static int window_calls(struct live *lv)
{
	static const char rows[] = "SELECT callsite_id, count(*), sum(end_ns - start_ns) FROM function_calls"
				   " WHERE start_ns >= ?1 AND start_ns < ?2 GROUP BY callsite_id";
	static const char buckets[] = "SELECT callsite_id, count, total_ns, start_ns, end_ns FROM function_call_buckets"
				      " WHERE start_ns >= ?1 - 1000000000 AND start_ns < ?2";
	sqlite3 *db = lv->rec->db;
	sqlite3_stmt *s = db_prepare(db, rows);
	int rc;

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, lv->win.from_ns);
	sqlite3_bind_int64(s, 2, lv->win.to_ns);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		add_calls(lv, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2));
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return error("cannot read recording: %s", sqlite3_errmsg(db));
	if (!db_has_table(db, "function_call_buckets") || !(s = db_prepare(db, buckets)))
		return 0;
	sqlite3_bind_int64(s, 1, lv->win.from_ns);
	sqlite3_bind_int64(s, 2, lv->win.to_ns);
	while (sqlite3_step(s) == SQLITE_ROW) {
		double f = bucket_share(&lv->win, sqlite3_column_int64(s, 3), sqlite3_column_int64(s, 4));

		if (f > 0)
			add_calls(lv, sqlite3_column_int64(s, 0), scaled(sqlite3_column_int64(s, 1), f),
				  scaled(sqlite3_column_int64(s, 2), f));
	}
	sqlite3_finalize(s);
	return 0;
}

/*
 * The id range of the eager ops that can start in the window: each block
 * of eager_op_blocks bounds its rows' starts; the blocks are read from the
 * last one seen on (their id is a seek), and the ids of one commit's
 * blocks interleave, so the range is one commit interval plus the window.
 */
static int eager_id_range(struct live *lv, int64_t *lo, int64_t *hi)
{
	sqlite3_stmt *s = db_prepare(lv->rec->db, "SELECT min(first_id), max(last_id), min(id) FROM eager_op_blocks"
						  " WHERE id >= ?3 AND max_start_ns >= ?1 AND min_start_ns < ?2");
	int ok;

	if (!s)
		return -1;
	if (lv->win.from_ns < lv->block_from)
		lv->block_mark = 0;  /* the window went back: read every block again */
	sqlite3_bind_int64(s, 1, lv->win.from_ns);
	sqlite3_bind_int64(s, 2, lv->win.to_ns);
	sqlite3_bind_int64(s, 3, lv->block_mark);
	ok = sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL;
	if (ok) {
		*lo = sqlite3_column_int64(s, 0);
		*hi = sqlite3_column_int64(s, 1);
		/* blocks before it ended before this window, so before every later one */
		lv->block_mark = sqlite3_column_int64(s, 2);
		lv->block_from = lv->win.from_ns;
	}
	sqlite3_finalize(s);
	return ok;
}

/* Eager ops in the window: rows through their blocks' id range, then the buckets.  0 or -1. */
static int window_eager(struct live *lv)
{
	static const char rows[] = "SELECT k.op_id, k.callsite_id, count(*), sum(r.dur) FROM eager_op_rows r"
				   " JOIN eager_op_keys k ON k.id = r.key WHERE r.id BETWEEN ?3 AND ?4"
				   " AND k.base_ns + r.start >= ?1 AND k.base_ns + r.start < ?2 GROUP BY k.op_id, k.callsite_id";
	static const char old_rows[] = "SELECT op_id, callsite_id, count(*), sum(end_ns - start_ns) FROM eager_ops"
				       " WHERE start_ns >= ?1 AND start_ns < ?2 AND ?3 <= ?4 GROUP BY op_id, callsite_id";
	static const char buckets[] = "SELECT op_id, callsite_id, count, total_ns, start_ns, end_ns FROM eager_op_buckets"
				      " WHERE start_ns >= ?1 - 1000000000 AND start_ns < ?2";
	sqlite3 *db = lv->rec->db;
	int64_t lo = 0, hi = -1;
	int v6 = db_has_table(db, "eager_op_blocks"), rc = SQLITE_DONE;
	sqlite3_stmt *s;

	if (v6 && eager_id_range(lv, &lo, &hi) < 0)
		return -1;
	if (!v6)
		hi = 0;  /* schemas 1-5: one scan (never live: the launcher writes the current schema) */
	if (lo <= hi) {
		if (!(s = db_prepare(db, v6 ? rows : old_rows)))
			return -1;
		sqlite3_bind_int64(s, 1, lv->win.from_ns);
		sqlite3_bind_int64(s, 2, lv->win.to_ns);
		sqlite3_bind_int64(s, 3, lo);
		sqlite3_bind_int64(s, 4, hi);
		while ((rc = sqlite3_step(s)) == SQLITE_ROW)
			add_eager(lv, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2),
				  sqlite3_column_int64(s, 3));
		sqlite3_finalize(s);
	}
	if (rc != SQLITE_DONE)
		return error("cannot read recording: %s", sqlite3_errmsg(db));
	if (!db_has_table(db, "eager_op_buckets") || !(s = db_prepare(db, buckets)))
		return 0;
	sqlite3_bind_int64(s, 1, lv->win.from_ns);
	sqlite3_bind_int64(s, 2, lv->win.to_ns);
	while (sqlite3_step(s) == SQLITE_ROW) {
		double f = bucket_share(&lv->win, sqlite3_column_int64(s, 4), sqlite3_column_int64(s, 5));

		if (f > 0)
			add_eager(lv, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
				  scaled(sqlite3_column_int64(s, 2), f), scaled(sqlite3_column_int64(s, 3), f));
	}
	sqlite3_finalize(s);
	return 0;
}

static int cmp_lines(const void *a, const void *b)
{
	const struct live_line *x = a, *y = b;

	if (x->cost_ns != y->cost_ns)
		return x->cost_ns < y->cost_ns ? 1 : -1;
	return x->loc.line - y->loc.line;
}

/* Traces started in the window, from the model. */
static int64_t window_traces(const struct live *lv)
{
	int64_t n = 0;

	for (size_t i = 0; i < lv->m.nfunctions; i++)
		for (size_t k = 0; k < lv->m.functions[i].ntraces; k++) {
			int64_t t = lv->m.functions[i].traces[k].start_ns;

			n += t >= lv->win.from_ns && t < lv->win.to_ns;
		}
	return n;
}

/*
 * Whether the launcher wrote the run's end (or its keeper cut it short),
 * and the last activity known: the newest graph call, eager op (the last
 * blocks), bucket or trace, each by an index or the rowid; not the
 * process's end, after seconds of interpreter teardown.
 */
static void read_end(struct live *lv)
{
	static const struct {
		const char *table, *sql;
	} last[] = {
		{ "function_calls", "SELECT max(start_ns) FROM function_calls" },
		{ "traces", "SELECT max(end_ns) FROM traces" },
		{ "eager_op_blocks", "SELECT max(max_start_ns) FROM"
				     " (SELECT max_start_ns FROM eager_op_blocks ORDER BY id DESC LIMIT 64)" },
		{ "eager_op_buckets", "SELECT max(start_ns) FROM eager_op_buckets" },
		{ "function_call_buckets", "SELECT max(start_ns) FROM function_call_buckets" },
	};
	sqlite3 *db = lv->rec->db;

	lv->ended = query_int(db, "SELECT count(*) FROM meta WHERE key IN ('end_ns', 'cut_short')", 0, 0) > 0;
	lv->end_ns = 0;
	for (size_t i = 0; i < sizeof(last) / sizeof(last[0]); i++) {
		int64_t t = db_has_table(db, last[i].table) ? ts_clamp(query_int(db, last[i].sql, 0, 0)) : 0;

		if (t > lv->end_ns)
			lv->end_ns = t;
	}
	lv->end_ns++;  /* the window ends after it */
}

/* The window's lines by cost; empty ones (no cost) dropped. */
static void sort_lines(struct live_window *w)
{
	size_t n = 0;

	for (size_t i = 0; i < w->nlines; i++) {
		struct live_line *l = &w->lines[i];

		l->cost_ns = sat_add64(sat_add64(l->eager_ns, l->input_ns), l->call_ns);
		if (l->cost_ns > 0 || l->eager_ops || l->calls || l->input_waits)
			w->lines[n++] = *l;
	}
	w->nlines = n;
	if (n > 1)
		qsort(w->lines, n, sizeof(*w->lines), cmp_lines);
}

static double thread_cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int live_init(struct live *lv, struct recording *rec, unsigned parts)
{
	memset(lv, 0, sizeof(*lv));
	lv->rec = rec;
	lv->parts = parts;
	lv->trace_mark = -1;
	lv->cache = calloc(1, sizeof(*lv->cache));
	if (!lv->cache)
		return error("out of memory");
	/* a run's names are few; a hostile recording's are bounded (64 MiB) */
	lv->cache->pool.limit = 64u << 20;
	return 0;
}

int live_refresh(struct live *lv, int64_t to_ns)
{
	struct live_window *w = &lv->win;
	double cpu = thread_cpu_seconds();
	int was_ended = lv->ended, ret = -1;

	/* one read transaction: every query of this refresh sees the same commit */
	if (db_exec(lv->rec->db, "BEGIN"))
		return -1;
	read_end(lv);
	if (reload_traces(lv, lv->ended && !was_ended))
		goto cleanup;
	count_new_calls(lv);
	w->nlines = 0;
	w->calls = w->call_ns = w->eager_ops = w->eager_ns = w->input_waits = w->input_ns = 0;
	w->to_ns = to_ns <= 0 ? lv->end_ns : to_ns - COMMIT_LAG_NS;
	w->from_ns = w->to_ns - WINDOW_NS;
	if (window_calls(lv) || window_eager(lv) < 0)
		goto cleanup;
	w->traces = window_traces(lv);
	/* a window holds one second of the main thread at most; more is a recording's nonsense */
	w->eager_share = w->eager_ns < WINDOW_NS ? (double)w->eager_ns / (double)WINDOW_NS : 1.0;
	sort_lines(w);
	ret = 0;
cleanup:
	cache_end_refresh(lv->cache);
	sqlite3_exec(lv->rec->db, "COMMIT", NULL, NULL, NULL);
	lv->cpu_s = thread_cpu_seconds() - cpu;
	return ret;
}

void live_release(struct live *lv)
{
	if (lv->m.pool)
		model_release(&lv->m);
	cache_release(lv->cache);
	free(lv->win.lines);
	memset(lv, 0, sizeof(*lv));
}
