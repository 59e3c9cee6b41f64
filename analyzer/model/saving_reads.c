/* saving_reads.c - the savings' reads of the recording, once per model (saving_reads.h). */
#include "saving_reads.h"
#include "checked.h"
#include "db.h"
#include "idmap.h"
#include "model.h"
#include "recording.h"
#include "scan.h"
#include "util.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One eager op of the first SAVING_DISPATCH_OPS, as the dispatch medians read it. */
struct dispatch_op {
	int64_t op_id, start, ns;
	unsigned char op_null, start_null, ns_null;
	int named;              /* op_id is a strings.id (the median's join) */
	const char *text;       /* that string, NULL when none (not owned: in names[]) */
};

struct call_list;
struct graph_owner;

struct saving_reads {
	struct call_steps *steps;   /* per m->functions[i]; NULL until read */
	size_t nsteps;
	int calls_read;             /* lists and calls[] read (or unreadable: none) */
	int steps_read;             /* steps made from the lists (which are then freed) */
	int64_t (*calls)[4];        /* every graph call: pid, tid, start, end; by thread, then start */
	size_t ncalls, calls_cap;
	/*
	 * Each function's calls in time order (lists[], by function id: fns),
	 * kept from the scan until the steps are made: the scan may run while
	 * the model loads (eager_runs.c), before m->functions takes its order.
	 */
	struct idmap fns;
	struct call_list *lists;
	size_t nlists;
	struct idmap owner_ix;      /* graph function id -> owners[] */
	struct graph_owner *owners;
	struct calls_part *parts;   /* the model load's scan's parts (saving_calls_walk()) */
	int nparts;
	struct scan_walk walk;
	int ops_read;               /* ops[] holds the first kept ops (or there are none) */
	int have_ops;               /* the recording has an eager ops table */
	struct dispatch_op *ops;
	size_t nops;
	char **names;               /* the op types' texts, owned */
	size_t nnames, names_cap;
};

/* One graph call of a function, in row order (seq) for ties in start. */
struct call_row {
	int64_t start, end;
	uint32_t owner;         /* graph_owner index: the trace */
	uint32_t seq;
};

struct call_list {
	struct call_row *v;
	size_t n, cap;
};

/* What a graph function's calls count for: the function and process of its trace. */
struct graph_owner {
	int64_t trace_id, pid;
	size_t list;
};

static struct saving_reads *reads_of(struct model *m)
{
	if (!m->saving_reads)
		m->saving_reads = calloc(1, sizeof(*m->saving_reads));
	return m->saving_reads;
}

static int cmp_call_row(const void *a, const void *b)
{
	const struct call_row *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * The graph functions whose trace is a function's in fns (function id ->
 * list): owners[] and owner_ix (graph function id -> owners index).
 */
static int read_owners(sqlite3 *db, const struct idmap *fns, struct idmap *owner_ix, struct graph_owner **owners,
		       size_t *nowners)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT g.id, g.trace_id, t.function_id, t.pid FROM graph_functions g"
				     " JOIN traces t ON t.id = g.trace_id");
	size_t cap = 0, list;

	if (!s)
		return -1;
	while (sqlite3_step(s) == SQLITE_ROW) {
		if (sqlite3_column_type(s, 2) == SQLITE_NULL || sqlite3_column_type(s, 3) == SQLITE_NULL ||
		    !idmap_get(fns, sqlite3_column_int64(s, 2), &list))
			continue;  /* c.pid = t.pid and t.function_id = ? hold for no call */
		if (ARRAY_GROW(*owners, *nowners, cap) || idmap_put(owner_ix, sqlite3_column_int64(s, 0), *nowners) < 0)
			break;
		(*owners)[*nowners].trace_id = sqlite3_column_int64(s, 1);
		(*owners)[*nowners].pid = sqlite3_column_int64(s, 3);
		(*owners)[*nowners].list = list;
		++*nowners;
	}
	sqlite3_finalize(s);
	return 0;
}

/*
 * One part of the scan of function_calls: its rows in row order, every call
 * (calls[]) and each function's (lists[], per r->lists).  One part when
 * the calls are read on their own, one per rowid range when they ride along
 * the model load's scan (saving_calls_walk()); join_parts() puts them
 * together in order.
 */
struct calls_part {
	const struct saving_reads *r;
	int64_t (*calls)[4];
	size_t ncalls, calls_cap;
	struct call_list *lists;
	uint32_t seq;           /* rows seen */
	int oom;
};

/* One graph call (its columns as stored) into part p. */
static void call_add(struct calls_part *p, sqlite3_value *graph_fn, sqlite3_value *pid, sqlite3_value *tid,
		     sqlite3_value *start, sqlite3_value *end)
{
	const struct saving_reads *r = p->r;
	const struct graph_owner *o;
	struct call_list *l;
	size_t ix;

	p->seq++;
	if (p->oom || ARRAY_GROW(p->calls, p->ncalls, p->calls_cap)) {
		p->oom = 1;
		return;
	}
	/* as sqlite3_column_int64() reads them: NULL is 0 */
	p->calls[p->ncalls][0] = sqlite3_value_int64(pid);
	p->calls[p->ncalls][1] = sqlite3_value_int64(tid);
	p->calls[p->ncalls][2] = sqlite3_value_int64(start);
	p->calls[p->ncalls][3] = sqlite3_value_int64(end);
	p->ncalls++;
	/* the join with graph_functions and traces (c.pid = t.pid): a NULL matches nothing */
	if (sqlite3_value_type(graph_fn) == SQLITE_NULL || sqlite3_value_type(pid) == SQLITE_NULL ||
	    !idmap_get(&r->owner_ix, sqlite3_value_int64(graph_fn), &ix) ||
	    (o = &r->owners[ix])->pid != sqlite3_value_int64(pid))
		return;
	l = &p->lists[o->list];
	if (ARRAY_GROW(l->v, l->n, l->cap)) {
		p->oom = 1;
		return;
	}
	/* ORDER BY start_ns puts a NULL first */
	l->v[l->n].start = sqlite3_value_type(start) == SQLITE_NULL ? INT64_MIN : sqlite3_value_int64(start);
	l->v[l->n].end = sqlite3_value_int64(end);
	l->v[l->n].owner = (uint32_t)ix;
	l->v[l->n++].seq = p->seq;
}

/*
 * agprof_call(graph_function_id, pid, tid, start_ns, end_ns), one row inside
 * SQLite: a step and five column reads per call cost more.
 */
static void call_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	(void)argc;
	call_add(sqlite3_user_data(ctx), argv[0], argv[1], argv[2], argv[3], argv[4]);
}

static void call_final(sqlite3_context *ctx)
{
	sqlite3_result_null(ctx);
}

/*
 * One table scan of function_calls in row order, on a connection of its
 * own (no mutex per call), into p.  A recording that cannot be read leaves
 * what was read.
 */
static void scan_calls(struct model *m, struct calls_part *p)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;

	if (db_open_readonly(m->rec->path, SQLITE_OPEN_NOMUTEX, &db) != SQLITE_OK)
		goto cleanup;
	if (sqlite3_create_function(db, "agprof_call", 5, SQLITE_UTF8, p, NULL, call_step, call_final) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT agprof_call(graph_function_id, pid, tid, start_ns, end_ns) FROM function_calls",
			       -1, &s, NULL) != SQLITE_OK)
		goto cleanup;
	while (sqlite3_step(s) == SQLITE_ROW)
		;
cleanup:
	sqlite3_finalize(s);
	sqlite3_close(db);
}

static void parts_free(struct calls_part *parts, int nparts)
{
	for (int i = 0; parts && i < nparts; i++) {
		for (size_t l = 0; parts[i].lists && l < parts[i].r->nlists; l++)
			free(parts[i].lists[l].v);
		free(parts[i].lists);
		free(parts[i].calls);
	}
	free(parts);
}

static struct calls_part *parts_new(const struct saving_reads *r, int nparts)
{
	struct calls_part *parts = calloc((size_t)nparts, sizeof(*parts));

	for (int i = 0; parts && i < nparts; i++) {
		parts[i].r = r;
		if (!(parts[i].lists = calloc(r->nlists ? r->nlists : 1, sizeof(*parts[i].lists)))) {
			parts_free(parts, nparts);
			return NULL;
		}
	}
	return parts;
}

/*
 * Move *more (n items of size, room for more_cap) onto the end of *v (*len
 * items, *cap room): taken as it is when *v is empty, else copied after
 * *len (a realloc that grows a large block in place) and freed.  Either
 * way *more is NULL after; 0, or -1 with *more the caller's.  Taking
 * the first part's array saves touching a fresh copy of it: on this VM
 * zeroing fresh pages was 15% of the report's CPU on 10M events.
 */
static int take_append(void *v, size_t *len, size_t *cap, void *more, size_t n, size_t more_cap, size_t size)
{
	void **pv = v, **pm = more;

	if (!*len) {
		free(*pv);
		*pv = *pm;
		*len = n;
		*cap = more_cap;
		*pm = NULL;
		return 0;
	}
	if (*len + n > *cap) {
		void *nv = realloc(*pv, (*len + n) * size);

		if (!nv)
			return -1;
		*pv = nv;
		*cap = *len + n;
	}
	if (n)
		memcpy((char *)*pv + *len * size, *pm, n * size);
	*len += n;
	free(*pm);
	*pm = NULL;
	return 0;
}

/* Every graph call by thread, then start (cmp_thread_start); usually in that order already. */
static void sort_thread_calls(struct saving_reads *r)
{
	for (size_t i = 1; i < r->ncalls; i++)
		if (cmp_thread_start(r->calls[i - 1], r->calls[i]) > 0) {
			sort_array(r->calls, r->ncalls, sizeof(*r->calls), cmp_thread_start);
			return;
		}
}

/* Each function's calls in time order: ties in row order. */
static void sort_lists(struct call_list *lists, size_t nlists)
{
	for (size_t i = 0; i < nlists; i++)
		for (size_t k = 1; k < lists[i].n; k++)
			if (lists[i].v[k - 1].start > lists[i].v[k].start) {
				sort_array(lists[i].v, lists[i].n, sizeof(*lists[i].v), cmp_call_row);
				break;
			}
}

/*
 * The parts, in row order, become r's calls and lists (each part's seq
 * after the rows of those before it); the parts are freed.  0 or -1.
 */
static int join_parts(struct saving_reads *r, struct calls_part *parts, int nparts)
{
	uint32_t rows = 0;
	int ret = -1;

	for (int i = 0; i < nparts; i++) {
		struct calls_part *p = &parts[i];

		if (p->oom || take_append(&r->calls, &r->ncalls, &r->calls_cap, &p->calls, p->ncalls, p->calls_cap,
					  sizeof(*p->calls)))
			goto cleanup;
		for (size_t l = 0; l < r->nlists; l++) {
			struct call_list *pl = &p->lists[l];

			for (size_t k = 0; k < pl->n; k++)
				pl->v[k].seq += rows;
			if (take_append(&r->lists[l].v, &r->lists[l].n, &r->lists[l].cap, &pl->v, pl->n, pl->cap,
					sizeof(*pl->v)))
				goto cleanup;
		}
		rows += p->seq;
	}
	sort_thread_calls(r);
	sort_lists(r->lists, r->nlists);
	ret = 0;
cleanup:
	parts_free(parts, nparts);
	return ret;
}

/*
 * fn's traces by id: *first maps an id to its first trace, next[i] the
 * following trace of the same id (ids are untrusted: duplicates are kept
 * apart, as the scan over every trace did).  0, or -1 out of memory.
 */
static int traces_by_id(const struct model_function *fn, struct idmap *first, size_t **next)
{
	size_t *last = fn->ntraces ? malloc(fn->ntraces * sizeof(*last)) : NULL;

	*next = fn->ntraces ? malloc(fn->ntraces * sizeof(**next)) : NULL;
	if (fn->ntraces && (!last || !*next)) {
		free(last);
		return -1;
	}
	for (size_t i = 0; i < fn->ntraces; i++) {
		size_t head;

		(*next)[i] = SIZE_MAX;
		if (idmap_get(first, fn->traces[i].id, &head)) {
			(*next)[last[head]] = i;
			last[head] = i;
		} else if (idmap_put(first, fn->traces[i].id, i) < 0) {
			free(last);
			return -1;
		} else {
			last[i] = i;
		}
	}
	free(last);
	return 0;
}

/*
 * The steps of fn from its calls in time order: a trace's first call gives
 * that trace's first end, every other call a plain span.
 */
static int steps_from_calls(const struct model_function *fn, const struct graph_owner *owners,
			    const struct call_row *v, size_t n, struct call_steps *cs)
{
	unsigned char *seen = fn->ntraces ? calloc(fn->ntraces, 1) : NULL;
	struct idmap first = IDMAP_INIT;
	size_t *next = NULL;
	int64_t *plain = NULL;
	size_t cap = 0, nseen = 0;  /* once every trace's first call is seen, no call is one */
	int ret = -1;

	if ((fn->ntraces && !seen) || traces_by_id(fn, &first, &next))
		goto cleanup;
	for (size_t k = 0; k < n && k < SAVING_MAX_CALLS; k++) {
		size_t i;
		int is_first = 0;

		if (nseen < fn->ntraces && idmap_get(&first, owners[v[k].owner].trace_id, &i))
			for (; i != SIZE_MAX; i = next[i])
				if (!seen[i]) {
					seen[i] = 1;
					nseen++;
					is_first = 1;
					cs->first_end[i] = v[k].end;
				}
		if (!is_first && v[k].start >= 0 && v[k].end >= v[k].start) {  /* a negative start: untrusted, skipped */
			if (ARRAY_GROW(plain, cs->nplain, cap))
				goto cleanup;
			plain[cs->nplain++] = v[k].end - v[k].start;
		}
	}
	cs->typical = cs->nplain ? nth_int64(plain, cs->nplain, (cs->nplain - 1) / 2) : 0;
	ret = 0;
cleanup:
	free(plain);
	free(seen);
	free(next);
	idmap_release(&first);
	return ret;
}

/* Every function's first ends, all -1 (no call read yet). */
static int steps_alloc(struct model *m, struct saving_reads *r)
{
	if (!(r->steps = calloc(m->nfunctions ? m->nfunctions : 1, sizeof(*r->steps))))
		return -1;
	r->nsteps = m->nfunctions;
	for (size_t i = 0; i < m->nfunctions; i++) {
		size_t n = m->functions[i].ntraces ? m->functions[i].ntraces : 1;

		if (!(r->steps[i].first_end = malloc(n * sizeof(int64_t))))
			return -1;
		for (size_t k = 0; k < n; k++)
			r->steps[i].first_end[k] = -1;
	}
	return 0;
}

/* What the scan needs first: each function's list (by id, fns), the graph functions' owners.  0 or -1. */
static int calls_prepare(struct model *m, struct saving_reads *r)
{
	size_t nowners = 0;

	if (r->lists)
		return 0;
	if (!(r->lists = calloc(m->nfunctions ? m->nfunctions : 1, sizeof(*r->lists))))
		return -1;
	for (size_t i = 0; i < m->nfunctions; i++)
		if (idmap_put(&r->fns, m->functions[i].id, r->nlists) == 0)
			r->nlists++;
	/* owners unreadable: no call is any function's, as the query per function found none */
	if (m->rec && (read_owners(m->rec->db, &r->fns, &r->owner_ix, &r->owners, &nowners) || nowners > UINT32_MAX))
		idmap_release(&r->owner_ix);
	return 0;
}

/*
 * Read the graph calls once: every function's in time order (r->lists),
 * and all of them by thread (r->calls, for eager_runs.c).  0 or -1 (out of
 * memory).
 */
static int read_calls(struct model *m, struct saving_reads *r)
{
	struct calls_part *part;

	r->calls_read = 1;
	if (calls_prepare(m, r) || !(part = parts_new(r, 1)))
		return -1;
	/* unreadable calls leave every function without any, as the query per function did */
	if (m->rec)
		scan_calls(m, part);
	return join_parts(r, part, 1);
}

static void lists_release(struct saving_reads *r)
{
	for (size_t i = 0; r->lists && i < r->nlists; i++)
		free(r->lists[i].v);
	free(r->lists);
	r->lists = NULL;
	r->nlists = 0;
	free(r->owners);
	r->owners = NULL;
	idmap_release(&r->owner_ix);
	idmap_release(&r->fns);
}

/* Every function's steps from its calls (in m->functions' final order); then the lists go.  0 or -1. */
static int make_steps(struct model *m, struct saving_reads *r)
{
	size_t l;

	r->steps_read = 1;
	if (steps_alloc(m, r))
		return -1;
	for (size_t i = 0; i < m->nfunctions; i++)
		if (idmap_get(&r->fns, m->functions[i].id, &l) &&
		    steps_from_calls(&m->functions[i], r->owners, r->lists[l].v, r->lists[l].n, &r->steps[i]))
			return -1;
	lists_release(r);
	return 0;
}

static void steps_release(struct saving_reads *r)
{
	for (size_t i = 0; r->steps && i < r->nsteps; i++)
		free(r->steps[i].first_end);
	free(r->steps);
	r->steps = NULL;
	r->nsteps = 0;
}

static void calls_release(struct saving_reads *r)
{
	steps_release(r);
	lists_release(r);
	free(r->calls);
	r->calls = NULL;
	r->ncalls = r->calls_cap = 0;
}

/* The graph calls, read once; NULL when out of memory. */
static struct saving_reads *calls_reads(struct model *m)
{
	struct saving_reads *r = reads_of(m);

	if (r && !r->calls_read && read_calls(m, r))
		calls_release(r);
	return r && (r->lists || r->steps) ? r : NULL;
}

/* The graph calls and the steps made from them, once; NULL when out of memory. */
static struct saving_reads *steps_reads(struct model *m)
{
	struct saving_reads *r = calls_reads(m);

	if (r && !r->steps_read && make_steps(m, r))
		calls_release(r);
	return r && r->steps ? r : NULL;
}

/* scan_walk.parts: the load scan's parts (those of an earlier scan go). */
static void *walk_parts(void *ctx, int nparts)
{
	struct saving_reads *r = ctx;

	parts_free(r->parts, r->nparts);
	r->nparts = (r->parts = parts_new(r, nparts)) ? nparts : 0;
	return r->parts;
}

/* scan_walk.row: agprof_group(graph_function_id, name_id, start_ns, end_ns, flag, ok, python, pid, tid). */
static void walk_row(void *part, sqlite3_value **argv)
{
	call_add(part, argv[0], argv[7], argv[8], argv[2], argv[3]);
}

const struct scan_walk *saving_calls_walk(struct model *m)
{
	struct saving_reads *r = reads_of(m);

	if (!r || r->calls_read || !m->rec || calls_prepare(m, r))
		return NULL;
	r->walk = (struct scan_walk){ .kind = SCAN_WALK_TABLE, .columns = "pid, tid", .ctx = r, .parts = walk_parts,
				      .part_size = sizeof(struct calls_part), .row = walk_row };
	return &r->walk;
}

void saving_calls_walked(struct model *m, int scan_ok)
{
	struct saving_reads *r = m->saving_reads;

	if (!r || r->calls_read || !r->parts)
		return;  /* not walked: read on first use */
	if (scan_ok) {
		r->calls_read = 1;
		if (join_parts(r, r->parts, r->nparts))
			calls_release(r);
	} else {
		parts_free(r->parts, r->nparts);
	}
	r->parts = NULL;
	r->nparts = 0;
}

int saving_thread_calls(struct model *m, const int64_t (**calls)[4], size_t *n)
{
	struct saving_reads *r = calls_reads(m);

	*n = r ? r->ncalls : 0;
	*calls = r ? (const int64_t (*)[4])r->calls : NULL;
	return r ? 0 : -1;
}

const struct call_steps *saving_call_steps(struct model *m, const struct model_function *fn)
{
	struct saving_reads *r;
	size_t i = (size_t)(fn - m->functions);

	if (fn < m->functions || i >= m->nfunctions || !(r = steps_reads(m)))
		return NULL;
	return i < r->nsteps ? &r->steps[i] : NULL;
}

/* The text of strings.id op_id into *text (owned by r->names); 0 when no such string, 1, -1 out of memory. */
static int op_name(sqlite3 *db, struct saving_reads *r, int64_t op_id, const char **text)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT text FROM strings WHERE id = ?1");
	int found = 0;

	*text = NULL;
	if (!s)
		return 0;
	sqlite3_bind_int64(s, 1, op_id);
	if (sqlite3_step(s) == SQLITE_ROW) {
		const char *t = (const char *)sqlite3_column_text(s, 0);

		found = 1;
		if (t) {
			if (ARRAY_GROW(r->names, r->nnames, r->names_cap) || !(r->names[r->nnames] = strdup(t)))
				found = -1;
			else
				*text = r->names[r->nnames++];
		}
	}
	sqlite3_finalize(s);
	return found;
}

/* Whether op ids and texts of the ops are known: each distinct op_id's string looked up once. */
static int name_ops(sqlite3 *db, struct saving_reads *r)
{
	struct idmap seen = IDMAP_INIT;
	size_t ix;
	int ret = 0;

	for (size_t i = 0; i < r->nops && ret == 0; i++) {
		struct dispatch_op *o = &r->ops[i];
		int found;

		if (o->op_null)
			continue;
		if (idmap_get(&seen, o->op_id, &ix)) {
			o->named = r->ops[ix].named;
			o->text = r->ops[ix].text;
			continue;
		}
		if ((found = op_name(db, r, o->op_id, &o->text)) < 0 || idmap_put(&seen, o->op_id, i) < 0)
			ret = -1;
		o->named = found > 0;
	}
	idmap_release(&seen);
	return ret;
}

/* One op's columns as sqlite3_column_*() give them (NULL reads as 0) into o. */
static void dispatch_op_set(struct dispatch_op *o, sqlite3_stmt *s, int op_col, int start_col, int ns_col)
{
	memset(o, 0, sizeof(*o));
	o->op_id = sqlite3_column_int64(s, op_col);
	o->op_null = sqlite3_column_type(s, op_col) == SQLITE_NULL;
	o->start = sqlite3_column_int64(s, start_col);
	o->start_null = sqlite3_column_type(s, start_col) == SQLITE_NULL;
	o->ns = sqlite3_column_int64(s, ns_col);
	o->ns_null = sqlite3_column_type(s, ns_col) == SQLITE_NULL;
}

/* eager_op_keys (a few thousand rows) by id: op_id, base_ns and their NULLs in keys[] */
static int read_dispatch_keys(sqlite3 *db, struct idmap *ix, struct dispatch_op **keys, size_t *nkeys)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT id, op_id, base_ns, 0 FROM eager_op_keys");
	size_t cap = 0;
	int ret = s ? 0 : -1;

	while (ret == 0 && sqlite3_step(s) == SQLITE_ROW) {
		if (ARRAY_GROW(*keys, *nkeys, cap) || idmap_put(ix, sqlite3_column_int64(s, 0), *nkeys) < 0)
			ret = -1;
		else
			dispatch_op_set(&(*keys)[(*nkeys)++], s, 1, 2, 3);
	}
	sqlite3_finalize(s);
	return ret;
}

/*
 * Schema 6: what the view's row order gives (eager_op_rows by id, each
 * joined to its key) without the view's per-row seek into eager_op_keys,
 * the keys read once: a third of the view's time.
 */
static void read_dispatch_rows(sqlite3 *db, struct saving_reads *r)
{
	struct idmap ix = IDMAP_INIT;
	struct dispatch_op *keys = NULL;
	size_t nkeys = 0, k;
	sqlite3_stmt *s = NULL;

	if (read_dispatch_keys(db, &ix, &keys, &nkeys) == 0 &&
	    (s = db_prepare(db, "SELECT key, start, dur FROM eager_op_rows ORDER BY id")))
		while (r->nops < SAVING_DISPATCH_OPS && sqlite3_step(s) == SQLITE_ROW) {
			struct dispatch_op *o = &r->ops[r->nops];
			const struct dispatch_op *key;

			/* the join drops a row whose key is NULL or no key's id */
			if (sqlite3_column_type(s, 0) == SQLITE_NULL || !idmap_get(&ix, sqlite3_column_int64(s, 0), &k))
				continue;
			key = &keys[k];
			dispatch_op_set(o, s, 0, 1, 2);
			/* start_ns = base_ns + start, end_ns - start_ns = (base + start + dur) - (base + start) */
			o->op_id = key->op_id;
			o->op_null = key->op_null;
			o->start_null |= key->start_null;
			o->start = sat_add64(key->start, o->start);
			o->ns_null |= o->start_null;
			r->nops++;
		}
	sqlite3_finalize(s);
	free(keys);
	idmap_release(&ix);
}

/*
 * The first SAVING_DISPATCH_OPS kept ops, in the order the view (schema 6)
 * or the table yields them without ORDER BY: row order.  0 or -1.
 */
static int read_dispatch(struct model *m, struct saving_reads *r)
{
	sqlite3 *db = m->rec ? m->rec->db : NULL;
	sqlite3_stmt *s = NULL;
	int rows;

	r->ops_read = 1;
	if (!db)
		return 0;
	/* schema 6: eager_op_rows with its keys; older schemas: the eager_ops table */
	rows = db_has_table(db, "eager_op_rows");
	if (!rows && (!db_has_table(db, "eager_ops") ||
		      sqlite3_prepare_v2(db, "SELECT op_id, start_ns, end_ns - start_ns FROM eager_ops LIMIT ?1", -1, &s,
					 NULL) != SQLITE_OK))
		return 0;
	if (!(r->ops = malloc(SAVING_DISPATCH_OPS * sizeof(*r->ops)))) {
		sqlite3_finalize(s);
		return 0;
	}
	r->have_ops = 1;
	if (rows) {
		read_dispatch_rows(db, r);
		return name_ops(db, r);
	}
	sqlite3_bind_int64(s, 1, SAVING_DISPATCH_OPS);
	while (r->nops < SAVING_DISPATCH_OPS && sqlite3_step(s) == SQLITE_ROW)
		dispatch_op_set(&r->ops[r->nops++], s, 0, 1, 2);
	sqlite3_finalize(s);
	return name_ops(db, r);
}

static struct saving_reads *dispatch_reads(struct model *m)
{
	struct saving_reads *r = reads_of(m);

	if (r && !r->ops_read && read_dispatch(m, r))
		r->have_ops = 0;
	return r && r->have_ops ? r : NULL;
}

/*
 * The lower median of the chosen ops' dispatch as SQL's ORDER BY ns LIMIT 1
 * OFFSET (count - 1) / 2 gives it (a NULL sorts first and reads as none);
 * -1 when none.  pick(o, ctx) chooses.
 */
static int64_t lower_median_of(const struct saving_reads *r, int (*pick)(const struct dispatch_op *, const void *),
			       const void *ctx, size_t *count)
{
	int64_t *ns = malloc((r->nops ? r->nops : 1) * sizeof(*ns)), v = -1;
	size_t n = 0, nulls = 0, at;

	if (!ns)
		return -1;
	for (size_t i = 0; i < r->nops; i++)
		if (pick(&r->ops[i], ctx)) {
			if (r->ops[i].ns_null)
				nulls++;
			else
				ns[n++] = r->ops[i].ns;
		}
	at = n + nulls ? (n + nulls - 1) / 2 : 0;
	if (n + nulls && at >= nulls)
		v = nth_int64(ns, n, at - nulls);
	free(ns);
	*count = n + nulls;
	return v;
}

static int64_t lower_median(const struct saving_reads *r, int (*pick)(const struct dispatch_op *, const void *),
			    const void *ctx)
{
	size_t n;

	return lower_median_of(r, pick, ctx, &n);
}

/* An op of type ctx (NULL: any op with a name), as the median's join with strings. */
static int pick_type(const struct dispatch_op *o, const void *ctx)
{
	return o->named && (!ctx || (o->text && !strcmp(o->text, ctx)));
}

int64_t saving_median_dispatch(struct model *m, const char *op)
{
	const struct saving_reads *r = dispatch_reads(m);

	return r ? lower_median(r, pick_type, op) : -1;
}

/* An op type's first start, and the first of all: for pick_cold(). */
struct cold_ctx {
	struct idmap first;     /* op_id -> index of its first start in start[] */
	int64_t *start;
	int64_t min_start;
	int any;
};

static int pick_cold(const struct dispatch_op *o, const void *ctx)
{
	const struct cold_ctx *c = ctx;
	size_t ix;

	return !o->op_null && !o->start_null && c->any && o->start > c->min_start &&
	       idmap_get(&c->first, o->op_id, &ix) && c->start[ix] == o->start;
}

/* Each op type's first start, and the first of all, into c; 0, or -1 when out of memory. */
static int first_starts(const struct saving_reads *r, struct cold_ctx *c)
{
	size_t n = 0, ix;

	if (!(c->start = malloc((r->nops ? r->nops : 1) * sizeof(*c->start))))
		return -1;
	for (size_t i = 0; i < r->nops; i++) {
		const struct dispatch_op *o = &r->ops[i];

		if (o->start_null)
			continue;  /* min() skips a NULL; a NULL start joins nothing */
		if (!c->any || o->start < c->min_start)
			c->min_start = o->start;
		c->any = 1;
		if (o->op_null)
			continue;
		if (!idmap_get(&c->first, o->op_id, &ix)) {
			if (idmap_put(&c->first, o->op_id, n) < 0)
				return -1;
			c->start[n++] = o->start;
		} else if (o->start < c->start[ix]) {
			c->start[ix] = o->start;
		}
	}
	return 0;
}

int64_t saving_cold_dispatch(struct model *m)
{
	const struct saving_reads *r = dispatch_reads(m);
	struct cold_ctx c = { .first = IDMAP_INIT };
	int64_t v = -1;

	if (r && first_starts(r, &c) == 0)
		v = lower_median(r, pick_cold, &c);
	idmap_release(&c.first);
	free(c.start);
	return v;
}

/* A warm dispatch: not its op type's first (which creates the kernel), of type c->type (NULL: any named). */
struct warm_ctx {
	struct cold_ctx cold;
	const char *type;
};

static int pick_warm(const struct dispatch_op *o, const void *ctx)
{
	const struct warm_ctx *w = ctx;
	size_t ix;

	return pick_type(o, w->type) && !o->op_null && !o->start_null &&
	       idmap_get(&w->cold.first, o->op_id, &ix) && w->cold.start[ix] != o->start;
}

int64_t saving_warm_dispatch(struct model *m, const char *op)
{
	const struct saving_reads *r = dispatch_reads(m);
	struct warm_ctx w = { .cold = { .first = IDMAP_INIT }, .type = op };
	int64_t v = -1, any;
	size_t n = 0, nany;

	/* a few samples of one type on a loaded machine were 11 ms each, not tens of us: then every warm op's */
	if (r && first_starts(r, &w.cold) == 0 && ((v = lower_median_of(r, pick_warm, &w, &n)) < 0 ||
						   n < WARM_SAMPLES_MIN) && op) {
		w.type = NULL;
		any = lower_median_of(r, pick_warm, &w, &nany);
		if (any >= 0 && nany > n)
			v = any;
	}
	idmap_release(&w.cold.first);
	free(w.cold.start);
	return v;
}

/* The lower median of op_prices' cpu_ns for key over the valid rows of min_samples or more (saving_op_price()). */
static int64_t op_price_rows(struct model *m, const char *key, int64_t min_samples, int64_t *samples)
{
	sqlite3 *db = m->rec ? m->rec->db : NULL;
	sqlite3_stmt *s;
	int64_t price[OP_PRICE_ROWS], v = -1;
	size_t n = 0;

	*samples = 0;
	if (!db || !key || !db_has_table(db, "op_prices") ||
	    sqlite3_prepare_v2(db, "SELECT p.cpu_ns, p.samples FROM op_prices p JOIN strings s ON s.id = p.op_id"
			       " WHERE s.text = ?1 AND typeof(p.cpu_ns) = 'integer' AND typeof(p.samples) = 'integer'"
			       " AND p.samples >= ?2 AND p.cpu_ns > 0 AND p.cpu_ns <= ?3 LIMIT ?4", -1, &s, NULL) != SQLITE_OK)
		return -1;  /* a table without those columns: no price, silently (the recording is the user's) */
	sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 2, min_samples);
	sqlite3_bind_int64(s, 3, OP_PRICE_MAX_NS);
	sqlite3_bind_int64(s, 4, OP_PRICE_ROWS);
	while (n < OP_PRICE_ROWS && sqlite3_step(s) == SQLITE_ROW) {
		price[n++] = sqlite3_column_int64(s, 0);
		*samples = sat_add64(*samples, sqlite3_column_int64(s, 1));
	}
	sqlite3_finalize(s);
	if (n)
		v = nth_int64(price, n, (n - 1) / 2);
	else
		*samples = 0;
	return v;
}

int64_t saving_op_price(struct model *m, const char *op, int64_t *samples)
{
	return op_price_rows(m, op, OP_PRICE_SAMPLES_MIN, samples);
}

int64_t saving_first_price(struct model *m, const char *op, int64_t *samples)
{
	char key[128];

	*samples = 0;
	if (!op || (size_t)snprintf(key, sizeof(key), "%s:first", op) >= sizeof(key))
		return -1;
	return op_price_rows(m, key, OP_FIRST_SAMPLES_MIN, samples);
}

int64_t saving_added_price(struct model *m, const char *op, enum price_source *from, int64_t *samples)
{
	int64_t v = saving_op_price(m, op, samples);

	*from = PRICE_CALIBRATED;
	if (v > 0)
		return v;
	v = saving_warm_dispatch(m, op);
	*from = v < 0 ? PRICE_NONE : PRICE_RECORDED;
	return v > 0 ? v : 0;
}

void saving_reads_release(struct saving_reads *r)
{
	if (!r)
		return;
	calls_release(r);
	parts_free(r->parts, r->nparts);
	free(r->ops);
	for (size_t i = 0; i < r->nnames; i++)
		free(r->names[i]);
	free(r->names);
	free(r);
}
