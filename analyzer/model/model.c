/* model.c - load a recording into the model, see model.h. */
#include "model_internal.h"
#include "call_times.h"
#include "code_facts.h"
#include "idmap.h"
#include "recording.h"
#include "scan.h"
#include "pitfalls.h"
#include "db.h"
#include "checked.h"
#include "pathdisp.h"
#include "util.h"
#include "strpool.h"
#include "saving_reads.h"
#include "eager_runs.h"
#include "trace_index.h"
#include "srcfile.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

struct model_source_list {
	struct metric_source *v;
	size_t n, cap;
};

static const char *const cause_names[CAUSE__COUNT] = {
	[CAUSE_NONE] = NULL,
	[CAUSE_SHAPE] = "shape",
	[CAUSE_DTYPE] = "dtype",
	[CAUSE_PYTHON_VALUE] = "python-value",
	[CAUSE_PYTHON_OBJECT] = "python-object",
	[CAUSE_NEW_FUNCTION_OBJECT] = "new-function-object",
	[CAUSE_INPUT_STRUCTURE] = "input-structure",
	[CAUSE_UNKNOWN] = "unknown",
};

const char *retrace_cause_name(enum retrace_cause cause)
{
	return cause > CAUSE_NONE && cause < CAUSE__COUNT ? cause_names[cause] : NULL;
}

enum retrace_cause retrace_cause_parse(const char *name)
{
	for (int c = CAUSE_NONE + 1; name && c < CAUSE__COUNT; c++)
		if (!strcmp(cause_names[c], name))
			return (enum retrace_cause)c;
	return CAUSE_NONE;
}

static const char *const severity_names[] = { "info", "warning", "error" };

const char *severity_name(enum severity sev)
{
	return sev <= SEV_ERROR ? severity_names[sev] : "error";
}

int severity_parse(const char *name)
{
	for (int i = 0; name && i <= SEV_ERROR; i++)
		if (!strcmp(severity_names[i], name))
			return i;
	return -1;
}

/* The pool: every string of the model, interned, freed together. */

const char *model_strndup(struct model *m, const char *s, size_t len)
{
	return strpool_intern(m->pool, s, len);
}

const char *model_strdup(struct model *m, const char *s)
{
	return strpool_str(m->pool, s);
}

const char *model_vstrf(struct model *m, const char *fmt, va_list ap)
{
	return strpool_vprintf(m->pool, fmt, ap);
}

const char *model_strf(struct model *m, const char *fmt, ...)
{
	va_list ap;
	const char *r;

	va_start(ap, fmt);
	r = model_vstrf(m, fmt, ap);
	va_end(ap);
	return r;
}

/* Loading. */

struct id_text {
	int64_t id;
	const char *text;
};

struct callsite {
	int64_t id;
	const char *file;
	int line;
	const char *func;
	int64_t parent;     /* next frame out toward user code, 0 = none */
	int library;
};

struct loader {
	struct model *m;
	sqlite3 *db;
	struct id_text *strings;
	size_t nstrings, capstrings;
	struct callsite *sites;
	size_t nsites, capsites;
	struct graph_fn *gfs;
	size_t ngfs, capgfs;
	int owners_made;              /* trace_owner and gf_by_name made (on first need) */
	struct idmap trace_owner;     /* traces.id -> function index */
	struct idmap gf_by_name;      /* pooled name pointer -> the first graph function of that name */
};

static int cmp_id_text(const void *a, const void *b)
{
	int64_t x = ((const struct id_text *)a)->id, y = ((const struct id_text *)b)->id;

	return x < y ? -1 : x > y;
}

/*
 * Where id sits in an array of n rows sorted by id from first when the ids
 * have no gaps (as the writer makes them), else SIZE_MAX: one look instead
 * of a binary search's twenty cache misses in a million rows.
 */
static size_t dense_slot(int64_t first, int64_t id, size_t n)
{
	uint64_t at = (uint64_t)id - (uint64_t)first;

	return id >= first && at < n ? (size_t)at : SIZE_MAX;
}

static const char *str_of(const struct loader *l, int64_t id)
{
	struct id_text key = { id, NULL }, *hit;
	size_t at = l->nstrings ? dense_slot(l->strings[0].id, id, l->nstrings) : SIZE_MAX;

	if (at != SIZE_MAX && l->strings[at].id == id)
		return l->strings[at].text;
	hit = bsearch(&key, l->strings, l->nstrings, sizeof(key), cmp_id_text);
	return hit ? hit->text : NULL;
}

static int cmp_callsite(const void *a, const void *b)
{
	int64_t x = ((const struct callsite *)a)->id, y = ((const struct callsite *)b)->id;

	return x < y ? -1 : x > y;
}

static const struct callsite *callsite_of(const struct loader *l, int64_t id)
{
	struct callsite key = { .id = id };
	size_t at = l->nsites ? dense_slot(l->sites[0].id, id, l->nsites) : SIZE_MAX;

	if (at != SIZE_MAX && l->sites[at].id == id)
		return &l->sites[at];
	return bsearch(&key, l->sites, l->nsites, sizeof(key), cmp_callsite);
}

/*
 * The user frame of a site's chain, or NULL when the chain has none.  The
 * chain is untrusted: bounded, so a cycle cannot loop.
 */
static const struct callsite *user_frame_of(const struct loader *l, const struct callsite *c)
{
	for (int depth = 0; c && c->library && depth < 16; depth++)
		c = c->parent > 0 ? callsite_of(l, c->parent) : NULL;
	return c && !c->library ? c : NULL;
}

/* Location of a recorded site: its user frame, with the innermost library frame beside it. */
static struct source_loc loc_of_site(const struct loader *l, const struct callsite *c, const char **func)
{
	const struct callsite *u = c ? user_frame_of(l, c) : NULL;
	struct source_loc loc = { NULL, 0, NULL, 0, 0 };

	if (!c)
		return loc;
	if (!u) {
		u = c;
		loc.library_only = 1;
	}
	loc.file = u->file;
	loc.line = u->line;
	if (u != c) {
		loc.lib_file = c->file;
		loc.lib_line = c->line;
	}
	if (func)
		*func = u->func;
	return loc;
}

static struct source_loc loc_of_callsite(const struct loader *l, int64_t id)
{
	return loc_of_site(l, callsite_of(l, id), NULL);
}

/*
 * Who passed a python-value retrace's argument.  The chain's innermost
 * library frame is often a decorator helper of the library (GPflow's
 * check_shapes, TFP's deprecation wrappers: `return fn(*args, **kwargs)`),
 * not the line that passed the value: the source lines say which.
 */

/* Two files' lines at a time: a retrace's library file and the user's. */
struct line_cache {
	struct srcfile sf[2];
	const char *path[2];
	int ok[2], next;
};

/* Line n of file as it reads now, or NULL (unreadable: a library's file is not fingerprinted). */
static const char *cached_line(struct line_cache *lc, const struct model *m, const char *file, int n)
{
	int i;

	if (!file || n <= 0)
		return NULL;
	for (i = 0; i < 2; i++)
		if (lc->path[i] && !strcmp(lc->path[i], file))
			return lc->ok[i] ? srcfile_line(&lc->sf[i], n) : NULL;
	i = lc->next;
	lc->next ^= 1;
	if (lc->ok[i])
		srcfile_release(&lc->sf[i]);
	lc->path[i] = file;
	lc->ok[i] = srcfile_load(&lc->sf[i], file, m->session.cwd) == 0;
	return lc->ok[i] ? srcfile_line(&lc->sf[i], n) : NULL;
}

static void line_cache_release(struct line_cache *lc)
{
	for (int i = 0; i < 2; i++)
		if (lc->ok[i])
			srcfile_release(&lc->sf[i]);
}

/* 1 when a line forwards its own caller's arguments (`fn(*args, **kwargs)`): a `*` right after `(` or `,`. */
static int forwards_args(const char *s)
{
	char prev = 0;

	for (; *s && *s != '#'; s++) {
		if (*s == '*' && (prev == '(' || prev == ','))
			return 1;
		if (!isspace((unsigned char)*s))
			prev = *s;
	}
	return 0;
}

/*
 * 1 when a line passes the keyword argument name (`weight=...`, not
 * `weight==`); name's leading identifier.  The text, for a file without
 * the parser's facts (user_passes()).
 */
static int passes_keyword(const char *s, const char *name)
{
	size_t n = 0;

	while (name && (isalnum((unsigned char)name[n]) || name[n] == '_'))
		n++;
	for (const char *p = s; n && p && *p && *p != '#'; p++) {
		const char *q = p + n;

		if (strncmp(p, name, n) || (p > s && (isalnum((unsigned char)p[-1]) || p[-1] == '_' || p[-1] == '.')))
			continue;
		while (*q == ' ')
			q++;
		if (q[0] == '=' && q[1] != '=')
			return 1;
	}
	return 0;
}

/* arg's leading identifier ("hp" of "hp['lr']") into out. */
static void leading_name(const char *arg, char *out, size_t cap)
{
	size_t n = 0;

	while (arg && n < cap - 1 && (isalnum((unsigned char)arg[n]) || arg[n] == '_'))
		out[n] = arg[n], n++;
	out[n] = '\0';
}

/* The position of parameter name among the traced function's (its recorded inputs' order), -1 unknown. */
static int input_position(const struct model_trace *t, const char *name)
{
	char prev[128] = "", cur[128];
	int params = 0;

	for (size_t i = 0; i < t->ninputs; i++) {
		leading_name(t->inputs[i].name, cur, sizeof(cur));
		if (!strcmp(cur, prev))
			continue;  /* another leaf of the same argument */
		snprintf(prev, sizeof(prev), "%s", cur);
		if (!strcmp(cur, name))
			return params;
		params++;
	}
	return -1;
}

/* The library frame of c's chain that the user's frame called (its parent is the user's), or NULL. */
static const struct callsite *called_frame(const struct loader *l, const struct callsite *c)
{
	for (int depth = 0; c && c->library && depth < 16; depth++) {
		const struct callsite *up = c->parent > 0 ? callsite_of(l, c->parent) : NULL;

		if (up && !up->library)
			return c;
		c = up;
	}
	return NULL;
}

enum { PASS_UNKNOWN, PASS_FORWARD, PASS_NAME, PASS_OTHER };

/* A Python name (not a literal such as 2, False or None). */
static int is_name(const char *s)
{
	if (!isalpha((unsigned char)*s) && *s != '_')
		return 0;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_')
			return 0;
	return strcmp(s, "True") && strcmp(s, "False") && strcmp(s, "None");
}

/*
 * What library line p passes as the traced function fname's argument name
 * (its pos-th): its caller's `*args`/`**kwargs` (PASS_FORWARD), a name
 * (PASS_NAME, into v: a parameter of its own function), anything else: a
 * literal, an expression, nothing (PASS_OTHER); PASS_UNKNOWN without the
 * parser's facts of the line (an older recording).
 */
static int library_passes_what(const struct loader *l, struct line_cache *lc, const struct callsite *p,
			       const char *fname, const char *name, int pos, char *v, size_t cap)
{
	const char *text = cached_line(lc, l->m, p->file, p->line);
	const struct code_fact *call = code_call_on(l->m, p->file, p->line, fname, NULL), *a;
	int end = 0;
	size_t n;

	if (!call)
		return text && forwards_args(text) ? PASS_FORWARD : PASS_UNKNOWN;
	if (!(a = code_call_arg(l->m, call, name, pos)))
		return PASS_OTHER;
	if (a->name[0] == '*')
		return PASS_FORWARD;
	if (!text || a->line != p->line || a->end_line != p->line || sscanf(a->detail, "%d", &end) != 1 ||
	    a->col < 0 || end <= a->col || (size_t)end > strlen(text) || (n = (size_t)(end - a->col)) >= cap)
		return PASS_UNKNOWN;
	memcpy(v, text + a->col, n);
	v[n] = '\0';
	return is_name(v) ? PASS_NAME : PASS_OTHER;
}

/*
 * Whether the user's call at t's call site passes the retraced argument
 * that library line p passed on to fn: by name, or by position in the
 * signature of the library function the user called (a decorator's
 * `wrapper(*args, **kwargs)` passes the positions on to fn's own).  A
 * library line that passes its own value (`penalty(y, False)`) makes it the
 * library's whatever the user passes.  The line's text for a file without
 * the parser's facts.
 */
static int user_passes(const struct loader *l, struct line_cache *lc, const struct model_trace *t,
		       const struct model_function *fn, const struct callsite *p)
{
	char name[128], v[260];
	const struct callsite *o = called_frame(l, callsite_of(l, t->callsite_id));
	const struct code_fact *sig, *call;
	int pos, what, by_kw, k = -1, star = 0;

	leading_name(t->why.argument, name, sizeof(name));
	pos = input_position(t, name);
	what = library_passes_what(l, lc, p, fn->name, name, pos, v, sizeof(v));
	if (what == PASS_OTHER)
		return 0;
	if (what != PASS_NAME)
		snprintf(v, sizeof(v), "%s", name);  /* forwarded: the traced function's own name and place */
	by_kw = code_call_passes_keyword(l->m, t->callsite.file, t->callsite.line, v);
	if (by_kw < 0)
		return passes_keyword(cached_line(lc, l->m, t->callsite.file, t->callsite.line), v);
	if (by_kw || !o)
		return by_kw;
	if ((sig = code_signature(l->m, o->file, o->func, o->line)))
		k = code_sig_position(sig, v, &star);
	if (k < 0 && (!sig || star) && what == PASS_FORWARD)
		k = pos;
	call = k >= 0 ? code_call_on(l->m, t->callsite.file, t->callsite.line, o->func, fn->name) : NULL;
	return call && code_call_arg(l->m, call, NULL, k) != NULL;
}

/*
 * The library frame that made the call: from the innermost library frame
 * out, the first whose line does not forward its arguments; one whose line
 * cannot be read is taken as it is.  NULL when c is no library frame.
 */
static const struct callsite *passing_frame(const struct loader *l, struct line_cache *lc, const struct callsite *c)
{
	for (int depth = 0; c && c->library && depth < 16; depth++) {
		const char *text = cached_line(lc, l->m, c->file, c->line);
		const struct callsite *up = c->parent > 0 ? callsite_of(l, c->parent) : NULL;

		if (!text || !forwards_args(text) || !up || !up->library)
			return c;
		c = up;
	}
	return NULL;
}

/* Each python-value retrace that library code passed: that line as its library frame, why.library_passes. */
static void blame_library_passers(const struct loader *l)
{
	struct line_cache lc = { 0 };

	for (size_t i = 0; i < l->m->nfunctions; i++)
		for (size_t k = 1; k < l->m->functions[i].ntraces; k++) {
			const struct model_function *fn = &l->m->functions[i];
			struct model_trace *t = &l->m->functions[i].traces[k];
			const struct callsite *p;

			if (t->why.cause != CAUSE_PYTHON_VALUE || !t->callsite_id ||
			    !(t->callsite.lib_file || t->callsite.library_only) ||
			    !(p = passing_frame(l, &lc, callsite_of(l, t->callsite_id))))
				continue;
			if (t->callsite.library_only) {
				t->callsite.file = p->file;
				t->callsite.line = p->line;
			} else {
				t->callsite.lib_file = p->file;
				t->callsite.lib_line = p->line;
			}
			t->why.library_passes = t->callsite.library_only || !user_passes(l, &lc, t, fn, p);
		}
	line_cache_release(&lc);
}

static int cmp_graph_fn(const void *a, const void *b)
{
	int64_t x = ((const struct graph_fn *)a)->id, y = ((const struct graph_fn *)b)->id;

	return x < y ? -1 : x > y;
}

static struct graph_fn *graph_fn_of(const struct loader *l, int64_t id)
{
	struct graph_fn key = { .id = id };
	size_t at = l->ngfs ? dense_slot(l->gfs[0].id, id, l->ngfs) : SIZE_MAX;

	if (at != SIZE_MAX && l->gfs[at].id == id)
		return &l->gfs[at];
	return l->ngfs ? bsearch(&key, l->gfs, l->ngfs, sizeof(key), cmp_graph_fn) : NULL; /* gfs is NULL then */
}

/* Finish a row loop: the step must have ended with SQLITE_DONE. */
static int step_finished(sqlite3 *db, sqlite3_stmt *s, int rc)
{
	if (rc != SQLITE_DONE)
		return error("cannot read recording: %s", sqlite3_errmsg(db));
	(void)s;
	return 0;
}

static int load_strings(struct loader *l)
{
	sqlite3_stmt *s = db_prepare(l->db, "SELECT id, text FROM strings ORDER BY id");
	int rc, ret = -1;

	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (ARRAY_GROW(l->strings, l->nstrings, l->capstrings))
			goto cleanup;
		l->strings[l->nstrings].id = sqlite3_column_int64(s, 0);
		l->strings[l->nstrings].text = db_col_pooled(s, 1, l->m->pool);
		l->nstrings++;
	}
	ret = step_finished(l->db, s, rc);
cleanup:
	sqlite3_finalize(s);
	return ret;
}

static int load_callsites(struct loader *l)
{
	sqlite3_stmt *s = NULL;
	int rc, ret = -1, chains;

	/* Version 1 recordings have no chains: every site is a user frame. */
	chains = sqlite3_prepare_v2(l->db, "SELECT id, file_id, line, func_id, parent_id, library FROM callsites"
				    " ORDER BY id", -1, &s, NULL) == SQLITE_OK;
	if (!chains) {
		sqlite3_finalize(s);
		s = db_prepare(l->db, "SELECT id, file_id, line, func_id FROM callsites ORDER BY id");
	}
	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct callsite *c;

		if (ARRAY_GROW(l->sites, l->nsites, l->capsites))
			goto cleanup;
		c = &l->sites[l->nsites++];
		c->id = sqlite3_column_int64(s, 0);
		c->file = str_of(l, sqlite3_column_int64(s, 1));
		c->line = sqlite3_column_int(s, 2);
		c->func = str_of(l, sqlite3_column_int64(s, 3));
		c->parent = chains ? sqlite3_column_int64(s, 4) : 0;
		c->library = chains && sqlite3_column_int(s, 5) != 0;
	}
	ret = step_finished(l->db, s, rc);
cleanup:
	sqlite3_finalize(s);
	return ret;
}

static const char *meta(struct loader *l, const char *key)
{
	char *v = db_meta_get(l->db, key);
	const char *r = model_strdup(l->m, v);

	free(v);
	return r;
}

static int64_t meta_int(struct loader *l, const char *key, int64_t dflt)
{
	const char *v = meta(l, key);

	return v && *v ? strtoll(v, NULL, 10) : dflt;
}

/*
 * The events in table's buckets (eager ops: schema 5, graph calls and
 * black-box runs: schema 7), summed from the rows (few: one per key and
 * second), so that a recording whose launcher was killed before the finish
 * (no meta) says them too.
 */
static int64_t bucket_count(struct loader *l, const char *table)
{
	char q[160];
	sqlite3_stmt *st;
	int64_t n = 0;

	snprintf(q, sizeof(q), "SELECT CAST(min(total(min(max(count, 0), 4294967296)), 4e18) AS INTEGER) FROM %s",
		 table);
	if ((st = db_prepare(l->db, q)) && sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

/* session.cpu_wait_share: the samples' sums (a recording without them: none). */
static int load_cpu_wait(sqlite3 *db, struct model_session *s)
{
	sqlite3_stmt *st;

	if (!db_has_table(db, "cpu_samples"))
		return 0;
	if (!(st = db_prepare(db, "SELECT count(*), total(max(run_ns, 0)), total(max(wait_ns, 0)) FROM cpu_samples")))
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int64(st, 0) > 0) {
		double run = sqlite3_column_double(st, 1), wait = sqlite3_column_double(st, 2);

		s->cpu_sampled = 1;
		s->cpu_wait_share = run + wait > 0 ? wait / (run + wait) : 0;
	}
	sqlite3_finalize(st);
	return 0;
}

static int load_session(struct loader *l)
{
	struct model_session *s = &l->m->session;
	sqlite3_stmt *st;

	s->argv = meta(l, "argv");
	s->cwd = meta(l, "cwd");
	s->command_mac = meta(l, "command_mac");
	s->host = meta(l, "host");
	s->agprof_version = meta(l, "agprof_version");
	s->python_version = meta(l, "python_version");
	s->tf_version = meta(l, "tf_version");
	s->tf_status = meta(l, "tf_status");
	s->gpu_status = meta(l, "gpu_status");
	s->gpu_detail = meta(l, "gpu_detail");
	s->exit_status = (int)meta_int(l, "exit_status", 0);
	s->exit_known = meta(l, "exit_status") != NULL;
	s->cut_short = meta(l, "cut_short");
	s->attached = meta(l, "attached");
	s->incomplete = meta(l, "incomplete");
	s->exit_signal = (int)meta_int(l, "exit_signal", 0);
	s->start_ns = ts_clamp(meta_int(l, "start_ns", 0));
	s->end_ns = ts_clamp(meta_int(l, "end_ns", 0));
	s->dropped_events = meta_int(l, "dropped_events", 0);
	s->capture = meta(l, "capture");
	s->capture_calls = meta_int(l, "capture_calls", 0);
	s->aggregate_reason = meta(l, "aggregate_reason");
	s->aggregate_from_ns = ts_clamp(meta_int(l, "aggregate_from_ns", 0));
	/* no meta when the launcher was killed (SIGKILL) before the finish: the buckets say it */
	s->aggregated_eager_ops = meta_int(l, "aggregated_eager_ops", -1);
	if (s->aggregated_eager_ops < 0)
		s->aggregated_eager_ops = bucket_count(l, "eager_op_buckets");
	s->aggregated_calls = bucket_count(l, "function_call_buckets");
	s->aggregated_blackbox_execs = bucket_count(l, "blackbox_buckets");
	s->max_events = meta_int(l, "max_events", 0);
	s->max_size_bytes = meta_int(l, "max_size_bytes", 0);
	if (model_load_windows(l->m, l->db) != 0)
		return -1;
	st = db_prepare(l->db, "SELECT count(*), (SELECT tf_detail FROM processes WHERE tf_detail IS NOT NULL LIMIT 1),"
			       " (SELECT tf_status FROM processes WHERE tf_status = 'hooked' LIMIT 1),"
			       " min(start_ns), max(end_ns), coalesce(sum(dropped_events), 0) FROM processes");
	if (!st)
		return -1;
	if (sqlite3_step(st) == SQLITE_ROW) {
		s->processes = sqlite3_column_int64(st, 0);
		s->tf_detail = db_col_pooled(st, 1, l->m->pool);
		if (!s->tf_status || (sqlite3_column_type(st, 2) != SQLITE_NULL && strcmp(s->tf_status, "hooked")))
			s->tf_status = db_col_pooled(st, 2, l->m->pool) ? db_col_pooled(st, 2, l->m->pool) : s->tf_status;
		if (!s->start_ns && sqlite3_column_type(st, 3) != SQLITE_NULL)
			s->start_ns = ts_clamp(sqlite3_column_int64(st, 3));
		if (!s->end_ns && sqlite3_column_type(st, 4) != SQLITE_NULL)
			s->end_ns = ts_clamp(sqlite3_column_int64(st, 4));
		if (!s->dropped_events)
			s->dropped_events = sqlite3_column_int64(st, 5);
	}
	sqlite3_finalize(st);
	if (load_cpu_wait(l->db, s))
		return -1;
	s->wall_ns = s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0;
	s->first_tf_ns = INT64_MAX; /* lowered by every TensorFlow event loaded */
	return 0;
}

static struct model_function *function_by_id(struct model *m, int64_t id)
{
	/* Functions are loaded ordered by id and sorted only at the end. */
	size_t lo = 0, hi = m->nfunctions;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (m->functions[mid].id == id)
			return &m->functions[mid];
		if (m->functions[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static int load_functions(struct loader *l)
{
	struct model *m = l->m;
	sqlite3_stmt *s = db_prepare(l->db, "SELECT id, pid, name_id, file_id, line FROM functions ORDER BY id");
	size_t cap = 0;
	int rc, ret = -1;

	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct model_function *f;

		if (ARRAY_GROW(m->functions, m->nfunctions, cap))
			goto cleanup;
		f = &m->functions[m->nfunctions++];
		memset(f, 0, sizeof(*f));
		f->id = sqlite3_column_int64(s, 0);
		f->pid = sqlite3_column_int64(s, 1);
		f->name = str_of(l, sqlite3_column_int64(s, 2));
		if (!f->name)
			f->name = "?";
		f->def.file = sqlite3_column_type(s, 3) == SQLITE_NULL ? NULL : str_of(l, sqlite3_column_int64(s, 3));
		f->def.line = sqlite3_column_int(s, 4);
		f->has_input_signature = 1;
		f->first_ns = INT64_MAX;
		f->last_ns = INT64_MIN;
	}
	ret = step_finished(l->db, s, rc);
cleanup:
	sqlite3_finalize(s);
	return ret;
}

/* A row of load_traces' query as t. */
static void trace_of_row(struct loader *l, sqlite3_stmt *s, struct model_trace *t)
{
	const char *sig;

	memset(t, 0, sizeof(*t));
	t->id = sqlite3_column_int64(s, 0);
	t->start_ns = ts_clamp(sqlite3_column_int64(s, 2));
	t->end_ns = ts_clamp(sqlite3_column_int64(s, 3));
	t->function_object = sqlite3_column_int64(s, 4);
	t->object_trace_no = sqlite3_column_int(s, 5);
	t->tf_name = sqlite3_column_type(s, 6) == SQLITE_NULL ? NULL : str_of(l, sqlite3_column_int64(s, 6));
	/* a new signature is what makes a trace: copied, not interned (a million of them) */
	sig = db_col_text(s, 7);
	t->signature = sig ? strpool_copy(l->m->pool, sig, (size_t)sqlite3_column_bytes(s, 7)) : NULL;
	if (sqlite3_column_type(s, 8) != SQLITE_NULL) {
		t->callsite_id = sqlite3_column_int64(s, 8);
		t->callsite = loc_of_callsite(l, t->callsite_id);
	}
	t->jit_compile = sqlite3_column_int(s, 9);
	t->reduce_retracing = sqlite3_column_int(s, 10);
	t->has_input_signature = sqlite3_column_int(s, 11);
	t->variables_created = sqlite3_column_int(s, 12);
	t->ok = !strcmp(db_col_text_or(s, 13, ""), "ok");
	t->pid = sqlite3_column_int64(s, 14);
	t->tid = sqlite3_column_int64(s, 15);
	t->collector_ns = ts_clamp(sqlite3_column_int64(s, 16));
}

/* The one integer a query gives, or -1. */
static int64_t query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s = db_prepare(db, sql);
	int64_t n = s && sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int64(s, 0) : -1;

	sqlite3_finalize(s);
	return n;
}

/* One trace_inputs row into the model's block, as the next input of t (a trace's rows come together). */
static void add_trace_input(struct model *m, sqlite3_stmt *in, struct model_trace *t)
{
	struct model_trace_input *x = &m->trace_inputs[m->ntrace_inputs++];

	if (!t->ninputs++)
		t->inputs = x;
	x->position = sqlite3_column_int(in, 1);
	x->name = db_col_pooled(in, 2, m->pool);
	x->kind = db_col_pooled(in, 3, m->pool);
	x->dtype = db_col_pooled(in, 4, m->pool);
	x->shape = db_col_pooled(in, 5, m->pool);
	x->value = db_col_pooled(in, 6, m->pool);
}

/*
 * trace_inputs' rows in the order sql gives into the model's block, by the
 * map where (traces.id -> function index << 32 | trace index).  With
 * in_order, the rows must come in (trace_id, position) order: 1 at the
 * first that does not (nothing is kept then).  0, 1 or -1.
 */
static int read_trace_inputs(struct loader *l, const struct idmap *where, const char *sql, size_t cap, int in_order)
{
	struct model *m = l->m;
	sqlite3_stmt *in = NULL;
	struct model_trace *t = NULL;
	int64_t last = 0, last_pos = 0;
	size_t at;
	int rc;

	/* a table without rowid (not agprof's writing) cannot be read in rowid order: read it by its key */
	if (in_order && sqlite3_prepare_v2(l->db, sql, -1, &in, NULL) != SQLITE_OK) {
		sqlite3_finalize(in);
		return 1;
	}
	if (!in && !(in = db_prepare(l->db, sql)))
		return -1;
	while ((rc = sqlite3_step(in)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(in, 0), pos = sqlite3_column_int64(in, 1);

		if (in_order && t && (id < last || (id == last && pos < last_pos))) {
			sqlite3_finalize(in);
			return 1;
		}
		last_pos = pos;
		if (!t || id != last) {
			last = id;
			t = idmap_get(where, id, &at) ? &m->functions[at >> 32].traces[at & UINT32_MAX] : NULL;
			if (t && t->ninputs)  /* its rows came earlier: not in key order, keep the first set */
				t = NULL;
		}
		if (t && m->ntrace_inputs < cap)  /* more rows than counted: a writer added some, left out */
			add_trace_input(m, in, t);
	}
	rc = step_finished(l->db, in, rc);
	sqlite3_finalize(in);
	return rc;
}

/*
 * Every trace's inputs in one pass over trace_inputs in its key's order
 * (a lookup per trace was a B-tree seek each: 28 us a trace on 100,000),
 * into one block of the model counted first: a block per trace cost 768
 * bytes a trace (a first capacity of 16) and a malloc each.  The writer
 * inserts the rows in key order, so the table is read in rowid order (a
 * scan, not an index walk with a table seek per row) and only when a row
 * is out of order again through the key.  traces.id is the table's rowid:
 * unique.  0 or -1.
 */
static int load_trace_inputs(struct loader *l)
{
	struct model *m = l->m;
	struct idmap where = IDMAP_INIT;
	int64_t rows = query_int(l->db, "SELECT count(*) FROM trace_inputs");
	size_t cap = rows > 0 ? (size_t)rows : 0;
	int ret = -1;

	for (size_t i = 0; i < m->nfunctions; i++)
		for (size_t k = 0; k < m->functions[i].ntraces && k <= UINT32_MAX; k++)
			if (idmap_put(&where, m->functions[i].traces[k].id, (i << 32) | k) < 0)
				goto cleanup;
	if (rows < 0 || !(m->trace_inputs = alloc_zeroed(cap, sizeof(*m->trace_inputs))))
		goto cleanup;
	ret = read_trace_inputs(l, &where, "SELECT trace_id, position, name, kind, dtype, shape, value"
				" FROM trace_inputs ORDER BY rowid", cap, 1);
	if (ret == 1) {
		m->ntrace_inputs = 0;
		for (size_t i = 0; i < m->nfunctions; i++)
			for (size_t k = 0; k < m->functions[i].ntraces; k++) {
				m->functions[i].traces[k].inputs = NULL;
				m->functions[i].traces[k].ninputs = 0;
			}
		ret = read_trace_inputs(l, &where, "SELECT trace_id, position, name, kind, dtype, shape, value"
					" FROM trace_inputs ORDER BY trace_id, position", cap, 0);
	}
cleanup:
	idmap_release(&where);
	return ret;
}

/*
 * Whether reading traces in rowid order gives each function's traces in
 * (start_ns, id) order, as ORDER BY function_id, start_ns, id would: the
 * writer inserts them as they start.  Then the load is a table scan, not
 * an index walk with a table seek per row.  Only integer keys and start
 * times that ts_clamp keeps count as in order.
 */
static int traces_in_rowid_order(struct loader *l)
{
	struct model *m = l->m;
	sqlite3_stmt *s = NULL;
	int64_t *last = calloc(2 * (m->nfunctions ? m->nfunctions : 1), sizeof(*last));
	int rc = SQLITE_ERROR;

	if (!last || sqlite3_prepare_v2(l->db, "SELECT function_id, start_ns, id FROM traces ORDER BY rowid", -1, &s,
					NULL) != SQLITE_OK)
		goto out;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct model_function *f = function_by_id(m, sqlite3_column_int64(s, 0));
		int64_t start = sqlite3_column_int64(s, 1), id = sqlite3_column_int64(s, 2), *at;

		if (!f)
			continue;
		at = &last[2 * (size_t)(f - m->functions)];
		if (sqlite3_column_type(s, 0) != SQLITE_INTEGER || sqlite3_column_type(s, 1) != SQLITE_INTEGER ||
		    ts_clamp(start) != start ||
		    (at[1] && (start < at[0] || (start == at[0] && id < at[1]))))
			break;
		at[0] = start;
		at[1] = id;
	}
out:
	sqlite3_finalize(s);
	free(last);
	return rc == SQLITE_DONE;
}

static int load_traces(struct loader *l)
{
	struct model *m = l->m;
	char q[512];
	sqlite3_stmt *s;
	size_t *caps = calloc(m->nfunctions ? m->nfunctions : 1, sizeof(size_t));
	int rc, ret = -1;

	/* collector_ns: 0 before schema 6 (compat.c) */
	snprintf(q, sizeof(q), "SELECT id, function_id, start_ns, end_ns, function_object, object_trace_no, tf_name_id,"
		 " signature, callsite_id, jit_compile, reduce_retracing, has_input_signature, variables_created, status,"
		 " pid, tid, collector_ns FROM traces ORDER BY %s",
		 traces_in_rowid_order(l) ? "rowid" : "function_id, start_ns, id");
	s = db_prepare(l->db, q);
	if (!s || !caps)
		goto cleanup;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct model_function *f = function_by_id(m, sqlite3_column_int64(s, 1));
		struct model_trace *t;

		if (!f)
			continue;
		if (ARRAY_GROW(f->traces, f->ntraces, caps[f - m->functions]))
			goto cleanup;
		t = &f->traces[f->ntraces++];
		trace_of_row(l, s, t);
	}
	ret = step_finished(l->db, s, rc);
	/* a doubled array is up to half empty: 230 MB of a million traces */
	for (size_t i = 0; !ret && i < m->nfunctions; i++) {
		struct model_function *f = &m->functions[i];
		struct model_trace *fit = f->ntraces ? realloc_array(f->traces, f->ntraces, sizeof(*fit)) : NULL;

		if (fit)
			f->traces = fit;
	}
	if (!ret)
		ret = load_trace_inputs(l);
cleanup:
	free(caps);
	sqlite3_finalize(s);
	return ret;
}

static int load_graph_functions(struct loader *l)
{
	sqlite3_stmt *s = db_prepare(l->db,
		"SELECT id, name_id, role, trace_id, function_id, parent_id, jit_compile, node_count"
		" FROM graph_functions ORDER BY id");
	int rc, ret = -1;

	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct graph_fn *g;

		if (ARRAY_GROW(l->gfs, l->ngfs, l->capgfs))
			goto cleanup;
		g = &l->gfs[l->ngfs++];
		g->id = sqlite3_column_int64(s, 0);
		g->name = str_of(l, sqlite3_column_int64(s, 1));
		g->role = db_col_pooled(s, 2, l->m->pool);
		g->trace_id = sqlite3_column_int64(s, 3);
		g->function_id = sqlite3_column_int64(s, 4);
		g->parent_id = sqlite3_column_int64(s, 5);
		g->jit_compile = sqlite3_column_int(s, 6);
		g->node_count = sqlite3_column_int64(s, 7);
	}
	ret = step_finished(l->db, s, rc);
cleanup:
	sqlite3_finalize(s);
	return ret;
}

/*
 * The maps behind owner_of_graph_fn and graph_fn_named, made once (a scan
 * of every trace per graph function was quadratic in a loop that retraces).
 * Names are pooled: the same text is the same pointer.  0 or -1.
 */
static int make_owner_maps(struct loader *l)
{
	if (l->owners_made)
		return l->owners_made > 0 ? 0 : -1;
	l->owners_made = -1;
	for (size_t i = 0; i < l->m->nfunctions; i++)
		for (size_t k = 0; k < l->m->functions[i].ntraces; k++)
			if (idmap_put(&l->trace_owner, l->m->functions[i].traces[k].id, i) < 0)
				return -1;
	for (size_t j = 0; j < l->ngfs; j++)
		if (l->gfs[j].name && idmap_put(&l->gf_by_name, (int64_t)(uintptr_t)l->gfs[j].name, j) < 0)
			return -1;
	l->owners_made = 1;
	return 0;
}

static void release_owner_maps(struct loader *l)
{
	idmap_release(&l->trace_owner);
	idmap_release(&l->gf_by_name);
	l->owners_made = 0;
}

/* The first graph function named name (a pooled string), or NULL. */
static struct graph_fn *graph_fn_named(struct loader *l, const char *name)
{
	size_t j;

	if (!name || make_owner_maps(l) || !idmap_get(&l->gf_by_name, (int64_t)(uintptr_t)name, &j))
		return NULL;
	return &l->gfs[j];
}

/* The user function a graph function belongs to: its own link, its trace's, or its parent's. */
static struct model_function *owner_of_graph_fn(struct loader *l, struct graph_fn *g)
{
	size_t i;

	for (int depth = 0; g && depth < 32; depth++) {
		if (g->function_id)
			return function_by_id(l->m, g->function_id);
		if (g->trace_id && !make_owner_maps(l) && idmap_get(&l->trace_owner, g->trace_id, &i))
			return &l->m->functions[i];
		g = g->parent_id ? graph_fn_of(l, g->parent_id) : NULL;
	}
	return NULL;
}

/* Functions whose executions are not the user-level call itself. */
static int graph_role_is_call(const char *role)
{
	return role && (!strcmp(role, "inference") || !strcmp(role, "forward") || !strcmp(role, "loaded") ||
			!strcmp(role, "other"));
}

static void span_add(int64_t *first, int64_t *last, int64_t a, int64_t b)
{
	if (a < *first)
		*first = a;
	if (b > *last)
		*last = b;
}

static void first_event(struct model_session *s, int64_t t)
{
	if (t < s->first_tf_ns)
		s->first_tf_ns = t;
}

static int load_function_calls(struct loader *l)
{
	struct model *m = l->m;
	struct scan_result r;
	int rc;

	/* the savings' read of every call rides along (saving_reads.h): no second pass */
	rc = scan_table_walk(m->rec->path, "function_calls", "graph_function_id", "name_id", "0", "ok",
			     saving_calls_walk(m), &r);
	saving_calls_walked(m, rc == 0);
	if (rc)
		return -1;
	m->session.function_calls = r.rows;
	m->session.function_call_ns = r.total_ns;
	for (size_t i = 0; i < r.ngroups; i++) {
		struct scan_group *g = &r.groups[i];
		struct graph_fn *gf = g->k1 > 0 ? graph_fn_of(l, g->k1) : NULL;
		struct model_function *f = NULL;

		if (!gf)  /* unregistered in this process: match the TensorFlow name */
			gf = graph_fn_named(l, str_of(l, g->k2));
		if (gf)
			f = owner_of_graph_fn(l, gf);
		if (!f)
			continue;
		if (!gf || graph_role_is_call(gf->role))
			f->calls += g->count;
		f->calls_failed += g->failed;
		f->exec_ns = dur_add(f->exec_ns, g->total_ns);
		span_add(&f->first_ns, &f->last_ns, g->first_ns, g->last_ns);
	}
	if (r.rows) {
		span_add(&m->session.start_ns, &m->session.end_ns, r.first_ns, r.last_ns);
		first_event(&m->session, r.first_ns);
	}
	scan_result_release(&r);
	return 0;
}

static const char *lookup_str(void *ctx, int64_t id)
{
	return str_of(ctx, id);
}

static struct source_loc lookup_site(void *ctx, int64_t id, const char **func)
{
	const struct callsite *c = callsite_of(ctx, id);

	*func = c ? c->func : NULL;
	return loc_of_site(ctx, c, func);
}

static int cmp_site_line(const void *a, const void *b)
{
	const struct model_eager_site *x = a, *y = b;
	int c = strcmp(x->loc.file ? x->loc.file : "", y->loc.file ? y->loc.file : "");

	if (c)
		return c;
	if (x->loc.line != y->loc.line)
		return x->loc.line < y->loc.line ? -1 : 1;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/*
 * Several recorded sites (one user line reaching TensorFlow through
 * different library lines) are one row: the user's line.  Its library frame
 * and top op are those of the busiest of them.  Returns the new count.
 */
size_t model_merge_sites_by_user_line(struct model_eager_site *sites, size_t nsites)
{
	size_t n = 0;

	if (nsites < 2)
		return nsites;
	qsort(sites, nsites, sizeof(*sites), cmp_site_line);
	for (size_t i = 0; i < nsites; i++) {
		struct model_eager_site *s = &sites[i], *d = n ? &sites[n - 1] : NULL;

		if (d && s->loc.file && d->loc.file && !strcmp(s->loc.file, d->loc.file) &&
		    s->loc.line == d->loc.line) {
			d->count += s->count;
			d->total_ns = dur_add(d->total_ns, s->total_ns);
			if (s->count)
				span_add(&d->first_ns, &d->last_ns, s->first_ns, s->last_ns);
			continue;
		}
		sites[n++] = *s;
	}
	return n;
}

/*
 * Eager ops, split by analyzer/model/input.c into dispatch (m->sites, m->ops),
 * iterator reads and ops run inside black boxes: one scan keyed by
 * (thread, op type, call site).  After the black boxes, which it charges.
 */
static int load_eager_split(struct loader *l)
{
	struct model_lookup lk = { l, lookup_str, lookup_site };
	int64_t rows = 0, first = 0, last = 0;

	if (model_load_input(l->m, &lk, &rows, &first, &last))
		return -1;
	if (rows) {
		span_add(&l->m->session.start_ns, &l->m->session.end_ns, first, last);
		first_event(&l->m->session, first);
	}
	return 0;
}

static int cmp_blackbox(const void *a, const void *b)
{
	const struct model_blackbox *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return x->execs < y->execs ? 1 : x->execs > y->execs ? -1 : 0;
}

struct source_loc model_function_user_loc(const struct model_function *f)
{
	if (f->def.file && !path_is_installed(f->def.file))
		return f->def;
	for (size_t k = 0; k < f->ntraces; k++)
		if (f->traces[k].callsite.file)
			return f->traces[k].callsite;
	return f->def;
}

/*
 * The user function behind a tf.data function: "__inference_Dataset_map_augment_15"
 * -> "augment".  NULL when name is not a tf.data function.
 */
static const char *dataset_function_name(struct model *m, const char *name)
{
	const char *p = name ? strstr(name, "Dataset_") : NULL, *end;

	if (!p)
		return NULL;
	p += strlen("Dataset_");
	if (!strncmp(p, "from_generator_", 15))
		p += 14;          /* its three functions: get_iterator_id_fn, ... */
	p = strchr(p, '_');   /* after the transformation: map, filter, flat_map... */
	if (!p)
		return NULL;
	if (!strncmp(p, "_map_", 5))  /* flat_map, parallel_map */
		p += 4;
	p++;
	end = p + strlen(p);
	while (end > p && end[-1] >= '0' && end[-1] <= '9')
		end--;
	if (end > p && end[-1] == '_')
		end--;
	return end > p ? model_strndup(m, p, (size_t)(end - p)) : NULL;
}

static struct model_blackbox *blackbox_by_id(struct model *m, int64_t id)
{
	for (size_t j = 0; j < m->nblackboxes; j++)
		if (m->blackboxes[j].id == id)
			return &m->blackboxes[j];
	return NULL;
}

/*
 * The same node in several graphs of one function (one per retrace) is one
 * black box from the user's point of view: the first such node.  Nodes of
 * different functions (from_generator's three) stay apart.
 */
static struct model_blackbox *blackbox_same_as(struct model *m, struct model_blackbox *b)
{
	for (struct model_blackbox *p = m->blackboxes; p < b; p++)
		/* tf.data's: one per dataset (input.c folds those of one line) */
		if (p->function && b->function && !strcmp(p->function, b->function) && p->in_tf_data == b->in_tf_data &&
		    (!p->in_tf_data || (p->graph_function && b->graph_function &&
					!strcmp(p->graph_function, b->graph_function))) &&
		    p->node_name && b->node_name && !strcmp(p->node_name, b->node_name) &&
		    p->op_type && b->op_type && !strcmp(p->op_type, b->op_type))
			return p;
	return b;
}

struct model_blackbox *model_blackbox_of_node(struct model *m, int64_t id)
{
	struct model_blackbox *b = id > 0 ? blackbox_by_id(m, id) : NULL;

	return b ? blackbox_same_as(m, b) : NULL;
}

/*
 * The user line that created black box b's node (columns 5 and 6: its
 * graph_nodes row's file and line), else b's def: the finding names the
 * tf.py_function call, not the decorator of the step holding it.  A line
 * inside an installed library is not the user's: the def stays.
 */
static struct source_loc blackbox_made_at(struct loader *l, sqlite3_stmt *s, const struct model_blackbox *b)
{
	struct source_loc at = { 0 };
	int line = sqlite3_column_int(s, 6);

	at.file = db_col_pooled(s, 5, l->m->pool);
	if (!at.file || line <= 0 || path_is_installed(at.file))
		return b->def;
	at.line = line;
	return at;
}

/*
 * One row of blackbox_nodes (graph_function_id, node_name, op_type, token,
 * id, then its node's file and line or NULLs) as a black box.  0 or -1.
 */
static int blackbox_node(struct loader *l, sqlite3_stmt *s, size_t *cap)
{
	struct model *m = l->m;
	struct model_blackbox *b;
	struct graph_fn *gf = graph_fn_of(l, sqlite3_column_int64(s, 0));
	struct model_function *f = gf ? owner_of_graph_fn(l, gf) : NULL;

	if (ARRAY_GROW(m->blackboxes, m->nblackboxes, *cap))
		return -1;
	b = &m->blackboxes[m->nblackboxes++];
	b->node_name = db_col_pooled(s, 1, m->pool);
	b->op_type = db_col_pooled(s, 2, m->pool);
	b->token = db_col_pooled(s, 3, m->pool);
	b->id = sqlite3_column_int64(s, 4);
	b->graph_function = gf ? gf->name : NULL;
	b->first_ns = INT64_MAX;
	b->last_ns = INT64_MIN;
	if (gf && dataset_function_name(m, gf->name)) {
		/* tf.data wraps the user's function in its own (wrapped_fn). */
		b->in_tf_data = 1;
		b->function = dataset_function_name(m, gf->name);
		if (f)
			b->loc = b->def = model_function_user_loc(f);
	} else if (f) {
		b->function = f->name;
		b->def = model_function_user_loc(f);
		b->loc = blackbox_made_at(l, s, b);
		f->blackbox_nodes++;
	}
	return 0;
}

/*
 * The black box that the runs of group g (node name id, resolved node id or
 * -op_type_id) count under; a new one for a node only seen running.  NULL
 * when memory is short.
 */
static struct model_blackbox *blackbox_of_group(struct loader *l, const struct scan_group *g, size_t *cap)
{
	struct model *m = l->m;
	const char *node = str_of(l, g->k1), *type = g->k2 < 0 && g->k2 != INT64_MIN ? str_of(l, -g->k2) : NULL;
	struct model_blackbox *hit = g->k2 > 0 ? blackbox_by_id(m, g->k2) : NULL;

	for (size_t j = 0; !hit && j < m->nblackboxes; j++) {
		struct model_blackbox *b = &m->blackboxes[j];

		/* A run whose node was not resolved: by name, the first such node. */
		if (node && b->node_name && !strcmp(node, b->node_name) &&
		    (!type || !b->op_type || !strcmp(type, b->op_type)))
			hit = b;
	}
	/*
	 * The same node name in several graphs (one per retrace of a
	 * function) is one black box from the user's point of view: the
	 * executions go to the first, which names the function.
	 */
	if (hit)
		return blackbox_same_as(m, hit);
	/* Executed but its graph was never seen (e.g. built before hooks). */
	if (ARRAY_GROW(m->blackboxes, m->nblackboxes, *cap))
		return NULL;
	hit = &m->blackboxes[m->nblackboxes++];
	hit->node_name = node;
	hit->op_type = type;
	hit->first_ns = INT64_MAX;
	hit->last_ns = INT64_MIN;
	return hit;
}

/*
 * Add each black box's runs to the function that owns it: the function
 * whose name and def it copied (names are interned: two functions may share
 * one name, the def tells them apart).
 */
static void charge_blackbox_functions(struct model *m)
{
	for (size_t j = 0; j < m->nblackboxes; j++) {
		struct model_blackbox *b = &m->blackboxes[j];
		struct model_function *f = NULL;

		if (b->first_ns == INT64_MAX)
			b->first_ns = b->last_ns = 0;
		for (size_t k = 0; b->function && !b->in_tf_data && k < m->nfunctions && !f; k++) {
			struct source_loc loc = model_function_user_loc(&m->functions[k]);

			if (m->functions[k].name == b->function && loc.file == b->def.file && loc.line == b->def.line)
				f = &m->functions[k];
		}
		if (f) {
			f->blackbox_execs += b->execs;
			f->blackbox_ns = dur_add(f->blackbox_ns, b->total_ns);
		}
	}
}

static int load_blackboxes(struct loader *l)
{
	struct model *m = l->m;
	/* graph_nodes (v4) holds the line that created each node; older recordings have none. */
	sqlite3_stmt *s = db_prepare(l->db, db_has_table(l->db, "graph_nodes")
		? "SELECT b.graph_function_id, b.node_name, b.op_type, b.token, b.id, n.file, n.line FROM blackbox_nodes b"
		  " LEFT JOIN graph_nodes n ON n.id = (SELECT min(u.id) FROM graph_nodes u"
		  " WHERE u.graph_function_id = b.graph_function_id AND u.name = b.node_name) ORDER BY b.id"
		: "SELECT graph_function_id, node_name, op_type, token, id, NULL, NULL FROM blackbox_nodes ORDER BY id");
	struct scan_result r = { 0 };
	size_t cap = 0;
	int rc, ret = -1;

	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if (blackbox_node(l, s, &cap))
			goto cleanup;
	if (step_finished(l->db, s, rc))
		goto cleanup;
	/* Keyed by the node each run was resolved to: several nodes share a name. */
	if (scan_table(m->rec->path, "blackbox_execs", "node_id", "coalesce(blackbox_node_id, -op_type_id)", "0", "1", &r))
		goto cleanup;
	m->session.blackbox_execs = r.rows;
	m->session.blackbox_ns = r.total_ns;
	for (size_t i = 0; i < r.ngroups; i++) {
		struct scan_group *g = &r.groups[i];
		struct model_blackbox *hit = blackbox_of_group(l, g, &cap);

		if (!hit)
			goto cleanup;
		hit->execs += g->count;
		hit->total_ns = dur_add(hit->total_ns, g->total_ns);
		span_add(&hit->first_ns, &hit->last_ns, g->first_ns, g->last_ns);
	}
	charge_blackbox_functions(m);
	if (m->nblackboxes > 1)
		qsort(m->blackboxes, m->nblackboxes, sizeof(*m->blackboxes), cmp_blackbox);
	ret = 0;
cleanup:
	sqlite3_finalize(s);
	scan_result_release(&r);
	return ret;
}

static int cmp_session_runs(const void *a, const void *b)
{
	const struct model_session_run *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return x->runs < y->runs ? 1 : x->runs > y->runs ? -1 : 0;
}

/*
 * TF1 Session steps by call site.  One row per step (not per op), so a plain
 * GROUP BY is cheap; recordings older than schema 2 have no such table.
 */
static int load_session_runs(struct loader *l)
{
	struct model *m = l->m;
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc, ret = -1;

	s = db_prepare(l->db, "SELECT callsite_id, max(kind), count(*), sum(end_ns - start_ns), sum(ok = 0),"
			      " max(feeds), max(fetches), max(targets), min(start_ns), max(end_ns)"
			      " FROM session_runs GROUP BY callsite_id");
	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct model_session_run *r;

		if (ARRAY_GROW(m->session_runs, m->nsession_runs, cap))
			goto cleanup;
		r = &m->session_runs[m->nsession_runs++];
		if (sqlite3_column_type(s, 0) != SQLITE_NULL) {
			const struct callsite *c = callsite_of(l, sqlite3_column_int64(s, 0));

			if (c) {
				r->loc.file = c->file;
				r->loc.line = c->line;
				r->func = c->func;
			}
		}
		r->kind = db_col_pooled(s, 1, m->pool);
		r->runs = sqlite3_column_int64(s, 2);
		r->total_ns = sqlite3_column_int64(s, 3);
		r->failed = sqlite3_column_int64(s, 4);
		r->feeds = sqlite3_column_int64(s, 5);
		r->fetches = sqlite3_column_int64(s, 6);
		r->targets = sqlite3_column_int64(s, 7);
		r->first_ns = sqlite3_column_int64(s, 8);
		r->last_ns = sqlite3_column_int64(s, 9);
		m->session.session_runs += r->runs;
		m->session.session_run_ns = dur_add(m->session.session_run_ns, r->total_ns);
		span_add(&m->session.start_ns, &m->session.end_ns, r->first_ns, r->last_ns);
		first_event(&m->session, r->first_ns);
	}
	if (step_finished(l->db, s, rc))
		goto cleanup;
	if (m->nsession_runs > 1)
		qsort(m->session_runs, m->nsession_runs, sizeof(*m->session_runs), cmp_session_runs);
	ret = 0;
cleanup:
	sqlite3_finalize(s);
	return ret;
}

static int same_str(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

int64_t model_trace_union_ns(const struct model *m, int retraces_only, int64_t *recorded_ns)
{
	size_t n = 0, cap = 0;
	int64_t (*spans)[4] = NULL, total = 0, recorded = 0, end = INT64_MIN;

	if (recorded_ns)
		*recorded_ns = 0;
	for (size_t i = 0; i < m->nfunctions; i++)
		cap += m->functions[i].ntraces;
	if (!cap || !(spans = calloc(cap, sizeof(*spans))))
		return 0;
	for (size_t i = 0; i < m->nfunctions; i++)
		/* a library's retraces are its own bookkeeping: the user's call is library-call's subject */
		for (size_t k = retraces_only ? 1 : 0; k < m->functions[i].ntraces && !(retraces_only && m->functions[i].library); k++) {
			const struct model_trace *t = &m->functions[i].traces[k];

			if ((retraces_only && t->why.followup) || t->end_ns <= t->start_ns)
				continue;
			spans[n][0] = t->pid;
			spans[n][1] = t->tid;
			spans[n][2] = t->start_ns;
			spans[n++][3] = t->end_ns;
		}
	sort_array(spans, n, sizeof(*spans), cmp_thread_start);
	for (size_t i = 0; i < n; i++) {
		int64_t from;

		if (!i || spans[i][0] != spans[i - 1][0] || spans[i][1] != spans[i - 1][1])
			end = INT64_MIN;  /* another thread: its traces add to the others' */
		from = spans[i][2] > end ? spans[i][2] : end;
		if (spans[i][3] > from) {
			total = dur_add(total, spans[i][3] - from);
			recorded = dur_add(recorded, model_recorded_ns(m, from, spans[i][3]));
		}
		if (spans[i][3] > end)
			end = spans[i][3];
	}
	free(spans);
	if (recorded_ns)
		*recorded_ns = recorded;
	return total;
}

/* The user line whose call made the first trace of trace k's tf.function object: one use of the function. */
static const struct source_loc *use_of(const struct model_function *f, size_t k)
{
	for (size_t j = 0; j < k; j++)
		if (f->traces[j].function_object == f->traces[k].function_object)
			return &f->traces[j].callsite;
	return &f->traces[k].callsite;
}

/*
 * The most traces creating tf.Variables among the objects of one use.  A
 * tf.function object may create its variables at its first trace only, so
 * several creating traces are several objects; made from one line (a layer
 * built in the loop) each creates the variables again, while objects
 * first called from different lines (TFP's minimize called for two
 * problems, each with its optimizer) are separate uses, each building its
 * state once.  Past MAX_USE_SCAN creating traces the quadratic scan is
 * skipped: that many is one use made in a loop.
 */
#define MAX_USE_SCAN 1000
static size_t creating_traces_of_one_use(const struct model_function *f, size_t creating)
{
	const struct source_loc **uses;
	size_t n = 0, most = 0;

	if (creating < 2 || creating > MAX_USE_SCAN || !(uses = malloc(creating * sizeof(*uses))))
		return creating;
	for (size_t k = 0; k < f->ntraces && n < creating; k++)
		if (f->traces[k].variables_created > 0)
			uses[n++] = use_of(f, k);
	for (size_t i = 0; i < n; i++) {
		size_t same = 0;

		for (size_t j = 0; j < n; j++)
			same += uses[j]->line == uses[i]->line && same_str(uses[j]->file, uses[i]->file);
		if (same > most)
			most = same;
	}
	free(uses);
	return most;
}

/*
 * Per thread, the latest end among f's traces so far: traces come in start
 * order, so trace k runs inside an earlier one of its thread (the function
 * calling itself while traced) when that end reaches past k's.
 */
struct thread_end {
	int64_t pid, tid, end;
};

static int inside_earlier_trace(const struct model_trace *t, struct thread_end **ends, size_t *n, size_t *cap)
{
	struct thread_end *e = NULL;
	int inside;

	for (size_t i = 0; i < *n && !e; i++)
		if ((*ends)[i].pid == t->pid && (*ends)[i].tid == t->tid)
			e = &(*ends)[i];
	if (!e) {
		if (ARRAY_GROW(*ends, *n, *cap))
			return 0;  /* out of memory: counted as not nested, the time once more */
		e = &(*ends)[(*n)++];
		*e = (struct thread_end){ t->pid, t->tid, INT64_MIN };
	}
	inside = e->end >= t->end_ns && e->end > t->start_ns;
	if (t->end_ns > e->end)
		e->end = t->end_ns;
	return inside;
}

static int cmp_text(const void *x, const void *y)
{
	const char *a = *(const char *const *)x, *b = *(const char *const *)y;

	if (!a || !b)
		return (a != NULL) - (b != NULL);
	return strcmp(a, b);
}

/* Distinct signatures among f's jit_compile traces (NULL is one of them). */
static size_t jit_shapes_of(const struct model_function *f)
{
	const char **v = f->ntraces ? malloc(f->ntraces * sizeof(*v)) : NULL;
	size_t n = 0, distinct = 0;

	if (!v)
		return 0;
	for (size_t k = 0; k < f->ntraces; k++)
		if (f->traces[k].jit_compile)
			v[n++] = f->traces[k].signature;
	if (n)
		qsort(v, n, sizeof(*v), cmp_text);
	for (size_t i = 0; i < n; i++)
		distinct += !i || cmp_text(&v[i - 1], &v[i]);
	free(v);
	return distinct;
}

static void function_totals(struct model *m)
{
	struct model_session *s = &m->session;

	for (size_t i = 0; i < m->nfunctions; i++) {
		struct model_function *f = &m->functions[i];
		struct idmap objects = IDMAP_INIT;
		struct thread_end *ends = NULL;
		size_t nobj = 0, nends = 0, cap = 0, seen;

		f->retraces = f->ntraces ? f->ntraces - 1 : 0;
		if (!f->ntraces)
			f->has_input_signature = 0;
		for (size_t k = 0; k < f->ntraces; k++) {
			struct model_trace *t = &f->traces[k];

			if (!inside_earlier_trace(t, &ends, &nends, &cap))  /* a trace tree's time once */
				f->trace_ns = dur_add(f->trace_ns, span_ns(t->start_ns, t->end_ns));
			if (t->start_ns < s->first_tf_ns)
				s->first_tf_ns = t->start_ns;
			if (k > 0)
				f->retrace_ns = dur_add(f->retrace_ns, span_ns(t->start_ns, t->end_ns));
			f->jit_compile |= t->jit_compile;
			f->reduce_retracing |= t->reduce_retracing;
			f->has_input_signature &= t->has_input_signature;
			f->variables_created += t->variables_created;
			f->traces_creating_variables += t->variables_created > 0;
			span_add(&f->first_ns, &f->last_ns, t->start_ns, t->end_ns);
			if (!idmap_get(&objects, t->function_object, &seen)) {
				nobj++;
				idmap_put(&objects, t->function_object, k);  /* out of memory: one object counted again */
			}
		}
		f->jit_shapes = jit_shapes_of(f);
		idmap_release(&objects);
		free(ends);
		f->function_objects = nobj;
		f->traces_creating_variables = creating_traces_of_one_use(f, f->traces_creating_variables);
		if (f->first_ns == INT64_MAX)
			f->first_ns = f->last_ns = 0;
	}
	s->trace_ns = model_trace_union_ns(m, 0, &s->trace_recorded_ns);  /* nested traces once */
	s->traces = 0;
	for (size_t i = 0; i < m->nfunctions; i++)
		s->traces += (int64_t)m->functions[i].ntraces;
	s->wall_ns = s->end_ns > s->start_ns ? s->end_ns - s->start_ns : 0;
	if (s->first_tf_ns == INT64_MAX || s->first_tf_ns < s->start_ns)
		s->first_tf_ns = s->start_ns;
	/* with capture windows, only their time: shares are of what was recorded */
	s->active_ns = model_recorded_ns(m, s->first_tf_ns, s->end_ns);
	/* s->eager_share: thread_shares() (input.c), from the dispatch read with the events */
	/* traces are recorded outside the windows too: the share is of the tracing inside them */
	s->trace_share = s->active_ns ? (double)s->trace_recorded_ns / (double)s->active_ns : 0;
	if (s->trace_share > 1)  /* threads tracing at once */
		s->trace_share = 1;
}

static int cmp_functions(const void *a, const void *b)
{
	const struct model_function *x = a, *y = b;

	if (x->ntraces != y->ntraces)
		return x->ntraces < y->ntraces ? 1 : -1;
	if (x->trace_ns + x->exec_ns != y->trace_ns + y->exec_ns)
		return x->trace_ns + x->exec_ns < y->trace_ns + y->exec_ns ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

int model_load_eager_site_counts(struct model *m)
{
	struct loader l = { .m = m, .db = m->rec->db };
	struct scan_result r = { 0 };
	size_t cap = 0;
	int ret = -1;

	if (m->nsites)
		return 0;
	/* one pass, hashed in C (scan.h): no index on callsite_id needed (schema 4 has none) */
	if (load_strings(&l) || load_callsites(&l) || scan_table(m->rec->path, "eager_ops", "callsite_id", "0", "0", "1", &r))
		goto cleanup;
	for (size_t i = 0; i < r.ngroups; i++) {
		const struct callsite *c = callsite_of(&l, r.groups[i].k1);
		struct model_eager_site *site;

		if (ARRAY_GROW(m->sites, m->nsites, cap))
			goto cleanup;
		site = &m->sites[m->nsites++];
		site->loc = loc_of_site(&l, c, &site->func);
		site->count = r.groups[i].count;
	}
	m->nsites = model_merge_sites_by_user_line(m->sites, m->nsites);
	if (m->nsites > 1)
		qsort(m->sites, m->nsites, sizeof(*m->sites), model_cmp_sites);
	ret = 0;
cleanup:
	scan_result_release(&r);
	free(l.strings);
	free(l.sites);
	return ret;
}

/*
 * A function is a library's when tf.data made it, or its def lies in
 * TensorFlow, an installed package, or a file the collector recorded as a
 * library frame of a call site: it knows the program's PYTHONPATH, editable
 * installs and vendored copies (docs/collector.md, "Frame
 * classification"), which a path read here cannot tell.  0 or -1.
 */
static int mark_library_functions(struct loader *l)
{
	const char **files = calloc(l->nsites + 1, sizeof(*files));
	size_t n = 0;

	if (!files)
		return error("out of memory");
	for (size_t i = 0; i < l->nsites; i++)
		if (l->sites[i].library && l->sites[i].file)
			files[n++] = l->sites[i].file;
	if (n > 1)
		qsort(files, n, sizeof(*files), cmp_text);
	for (size_t i = 0; i < l->m->nfunctions; i++) {
		struct model_function *f = &l->m->functions[i];

		f->library = f->tf_data || path_is_installed(f->def.file) || path_is_framework(f->def.file) ||
			     (f->def.file && n && bsearch(&f->def.file, files, n, sizeof(*files), cmp_text));
	}
	free(files);
	return 0;
}

int model_load(struct model *m, struct recording *rec)
{
	return model_load_parts(m, rec, MODEL_ALL);
}

/* The loading steps that parts asks for, in order.  0 or -1. */
static int run_load_steps(struct loader *l, unsigned parts)
{
	static const struct {
		const char *name;
		int (*fn)(struct loader *);
		unsigned part; /* 0: always; else read when any of these bits is asked for */
		unsigned unless; /* skipped when any of these bits is asked for */
	} steps[] = {
		{ "strings", load_strings, 0, 0 }, { "callsites", load_callsites, 0, 0 },
		{ "session", load_session, 0, 0 }, { "functions", load_functions, 0, 0 },
		{ "traces", load_traces, 0, 0 }, { "graph_functions", load_graph_functions, 0, 0 },
		{ "function_calls", load_function_calls, MODEL_EVENTS, 0 },
		/* the eager share's dispatch: the black boxes charge theirs (input.c) */
		{ "blackboxes", load_blackboxes, MODEL_ALL, 0 },
		{ "session_runs", load_session_runs, MODEL_EVENTS, 0 },
		{ "eager_ops", load_eager_split, MODEL_ALL, 0 },
	};
	/* AGPROF_TIMING=1 prints the time of each step (bench/report). */
	int timing = getenv("AGPROF_TIMING") != NULL;

	for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
		double t0 = timing ? monotonic_seconds() : 0;

		if ((steps[i].part && !(parts & steps[i].part)) || (parts & steps[i].unless))
			continue;
		if (steps[i].fn(l))
			return -1;
		if (timing)
			fprintf(stderr, "agprof: load %-16s %.3f s\n", steps[i].name, monotonic_seconds() - t0);
	}
	return 0;
}

int model_load_parts(struct model *m, struct recording *rec, unsigned parts)
{
	struct loader l = { 0 };
	struct const_table consts;
	int ret = -1;

	/* read on the other core while the rest loads (trace_index.h) */
	const_table_start(&consts, rec->path);
	memset(m, 0, sizeof(*m));
	m->rec = rec;
	m->pool = calloc(1, sizeof(*m->pool));
	m->sources = calloc(1, sizeof(*m->sources));
	if (!m->pool || !m->sources) {
		error("out of memory");
		goto cleanup;
	}
	l.m = m;
	l.db = rec->db;
	if (run_load_steps(&l, parts))
		goto cleanup;
	function_totals(m);
	for (size_t i = 0; i < l.ngfs; i++) {
		struct model_function *f = l.gfs[i].name && strstr(l.gfs[i].name, "_Dataset_")
						   ? owner_of_graph_fn(&l, &l.gfs[i]) : NULL;

		if (f)
			f->tf_data = 1;
	}
	if (mark_library_functions(&l))
		goto cleanup;
	if ((parts & MODEL_ALL) && model_input_finish(m))
		goto cleanup;
	/* the code facts first: a trace an export made is no retrace (explain.c) */
	if (model_load_code_facts(m) || model_explain_retraces(m, l.gfs, l.ngfs, &consts) || model_load_cells(m))
		goto cleanup;
	blame_library_passers(&l);
	if (m->nfunctions > 1)
		qsort(m->functions, m->nfunctions, sizeof(*m->functions), cmp_functions);
	if (model_register_builtin_sources(m))
		goto cleanup;
	if (pitfalls_register(m))  /* analyzer/model/pitfalls.c */
		goto cleanup;
	if (calls_register(m))  /* analyzer/model/calls.c */
		goto cleanup;
	ret = 0;
cleanup:
	const_table_release(&consts);
	release_owner_maps(&l);
	free(l.strings);
	free(l.sites);
	free(l.gfs);
	if (ret)
		model_release(m);
	return ret;
}

void model_release(struct model *m)
{
	free(m->share_se);
	free(m->cells);
	free(m->facts);
	if (m->sources) {
		for (size_t i = 0; i < m->sources->n; i++)
			if (m->sources->v[i].release)
				m->sources->v[i].release(m->sources->v[i].data);
		free(m->sources->v);
		free(m->sources);
	}
	for (size_t i = 0; i < m->nfunctions; i++)
		free(m->functions[i].traces);
	free(m->trace_inputs);
	free(m->functions);
	free(m->ops);
	free(m->sites);
	free(m->blackboxes);
	free(m->session_runs);
	free(m->windows);
	free(m->threads);
	free(m->datasets);
	free(m->graph_readers);
	free(m->input_loops);
	free(m->findings);
	saving_reads_release(m->saving_reads);
	eager_runs_release(m->eager_runs);
	free(m->eager_keys);
	cpu_intervals_free(m->cpu_samples);
	if (m->pool)
		strpool_release(m->pool);
	free(m->pool);
	memset(m, 0, sizeof(*m));
}

const char *model_empty_reason(const struct model *m)
{
	const struct model_session *s = &m->session;

	if (m->nfunctions || s->eager_ops || s->function_calls || s->session_runs)
		return NULL;
	return recording_empty_why(s->tf_status, s->tf_detail, s->exit_status);
}

int model_add_source(struct model *m, const struct metric_source *src)
{
	struct model_source_list *l = m->sources;

	if (ARRAY_GROW(l->v, l->n, l->cap))
		return error("out of memory");
	l->v[l->n++] = *src;
	return 0;
}

const struct metric_source *model_find_source(const struct model *m, const char *name)
{
	/* Later registrations win, so a module can replace a built-in source. */
	for (size_t i = m->sources ? m->sources->n : 0; i-- > 0;)
		if (!strcmp(m->sources->v[i].name, name))
			return &m->sources->v[i];
	return NULL;
}

const struct model_function *model_find_function(const struct model *m, const char *name)
{
	for (size_t i = 0; i < m->nfunctions; i++)
		if (!strcmp(m->functions[i].name, name))
			return &m->functions[i];
	return NULL;
}

const char *model_finding_site_function(const struct model *m, const struct finding *f)
{
	const char *func = NULL;

	for (size_t i = 0; i < m->nsites; i++)
		if (m->sites[i].loc.file && f->loc.file && !strcmp(m->sites[i].loc.file, f->loc.file) &&
		    m->sites[i].loc.line == f->loc.line)
			func = m->sites[i].func;
	return func;
}

const struct model_function *model_finding_function(const struct model *m, const struct finding *f)
{
	const struct model_function *found = NULL;

	if (f->fn || !f->function)
		return f->fn;
	for (size_t i = 0; i < m->nfunctions; i++)
		if (!strcmp(m->functions[i].name, f->function)) {
			if (found)
				return NULL;
			found = &m->functions[i];
		}
	return found;
}

struct finding *model_add_finding(struct model *m, const struct finding *f)
{
	struct finding *d;

	if (ARRAY_GROW(m->findings, m->nfindings, m->capfindings))
		return NULL;
	d = &m->findings[m->nfindings++];
	*d = *f;
	d->rule = model_strdup(m, f->rule);
	d->title = model_strdup(m, f->title);
	d->function = model_strdup(m, f->function);
	d->loc.file = model_strdup(m, f->loc.file);
	d->loc.lib_file = model_strdup(m, f->loc.lib_file);
	d->message = model_strdup(m, f->message);
	d->recommendation = model_strdup(m, f->recommendation);
	d->example_before = model_strdup(m, f->example_before);
	d->example_after = model_strdup(m, f->example_after);
	d->thread = model_strdup(m, f->thread);
	return d;
}

static int cmp_findings(const void *a, const void *b)
{
	const struct finding *x = a, *y = b;
	int c;

	/* Ranked by what fixing them saves, then by the time they cost; severity breaks ties. */
	if (x->saving_ns != y->saving_ns)
		return x->saving_ns < y->saving_ns ? 1 : -1;
	if (x->cost_ns != y->cost_ns)
		return x->cost_ns < y->cost_ns ? 1 : -1;
	if (x->severity != y->severity)
		return x->severity < y->severity ? 1 : -1;
	if ((c = strcmp(x->rule, y->rule)))
		return c;
	return strcmp(x->function ? x->function : "", y->function ? y->function : "");
}

void model_sort_findings(struct model *m)
{
	if (m->nfindings > 1)
		qsort(m->findings, m->nfindings, sizeof(*m->findings), cmp_findings);
}
