/* trace_index.c - lookups for explaining retraces; see trace_index.h. */
#include "trace_index.h"
#include "model_internal.h"
#include "recording.h"
#include "db.h"
#include "util.h"

#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

/* ---- a trace's graph functions and their constants ---- */

static int cmp_by_trace(const void *a, const void *b, void *gfs_arg)
{
	const struct graph_fn *gfs = gfs_arg;
	int64_t x = gfs[*(const size_t *)a].trace_id, y = gfs[*(const size_t *)b].trace_id;

	if (x != y)
		return x < y ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : *(const size_t *)a > *(const size_t *)b;
}

int graph_index_init(struct graph_index *x, struct model *m, const struct graph_fn *gfs, size_t ngfs,
		     struct const_table *ct)
{
	memset(x, 0, sizeof(*x));
	x->m = m;
	x->gfs = gfs;
	x->ngfs = ngfs;
	x->ct = ct ? ct : &x->own;
	if (!ngfs)
		return 0;
	x->by_trace = malloc(ngfs * sizeof(*x->by_trace));
	if (!x->by_trace)
		return -1;
	for (size_t i = 0; i < ngfs; i++)
		x->by_trace[i] = i;
	qsort_r(x->by_trace, ngfs, sizeof(*x->by_trace), cmp_by_trace, (void *)gfs);
	/* a trace's first graph function in by_trace: one probe, not a binary search of a million */
	for (size_t i = 0; i < ngfs; i++)
		if ((!i || gfs[x->by_trace[i]].trace_id != gfs[x->by_trace[i - 1]].trace_id) &&
		    idmap_put(&x->traces, gfs[x->by_trace[i]].trace_id, i) < 0) {
			graph_index_release(x);
			return -1;
		}
	return 0;
}

void graph_index_release(struct graph_index *x)
{
	free(x->by_trace);
	const_table_release(&x->own);
	idmap_release(&x->traces);
	memset(x, 0, sizeof(*x));
}

size_t graph_index_of_trace(const struct graph_index *x, int64_t trace_id, const size_t **idx)
{
	size_t first, hi;

	*idx = NULL;
	if (!idmap_get(&x->traces, trace_id, &first))
		return 0;
	for (hi = first; hi < x->ngfs && x->gfs[x->by_trace[hi]].trace_id == trace_id; hi++)
		;
	*idx = x->by_trace + first;
	return hi - first;
}

/*
 * Constants in rowid order (tmp, their group in grp) into c->consts grouped
 * by graph function, rowid order kept within a group: a counting sort.
 */
static int group_constants(struct const_table *c, const struct graph_constant *tmp, const size_t *grp)
{
	size_t at = 0, *fill = alloc_zeroed(c->nspans, sizeof(*fill));

	if (!fill || !(c->consts = alloc_zeroed(c->nconsts, sizeof(*c->consts)))) {
		free(fill);
		return -1;
	}
	for (size_t g = 0; g < c->nspans; g++) {
		c->spans[g].first = fill[g] = at;
		at += c->spans[g].n;
	}
	for (size_t i = 0; i < c->nconsts; i++)
		c->consts[fill[grp[i]]++] = tmp[i];
	free(fill);
	return 0;
}

/* One graph_constants row (its graph function gf) into tmp/grp and c's spans.  0 or -1. */
static int add_constant(struct const_table *c, sqlite3_stmt *s, struct strpool *pool,
			struct graph_constant **tmp, size_t **grp, size_t caps[3])
{
	int64_t gf = sqlite3_column_int64(s, 0);
	size_t g;

	if (ARRAY_GROW(*tmp, c->nconsts, caps[0]) || ARRAY_GROW(*grp, c->nconsts, caps[1]))
		return -1;
	if (!idmap_get(&c->groups, gf, &g)) {
		if (ARRAY_GROW(c->spans, c->nspans, caps[2]) || idmap_put(&c->groups, gf, c->nspans) < 0)
			return -1;
		c->spans[g = c->nspans++].n = 0;
	}
	c->spans[g].n++;
	(*grp)[c->nconsts] = g;
	(*tmp)[c->nconsts].node = db_col_pooled(s, 1, pool);
	(*tmp)[c->nconsts++].value = db_col_pooled(s, 2, pool);
	return 0;
}

/*
 * graph_constants has no index on graph_function_id: one pass in rowid
 * order (an ORDER BY sorted a million graphs' constants in SQLite's
 * sorter), grouped here.  Strings into pool.  0, or -1 with err set.
 */
static int read_constants(struct const_table *c, sqlite3 *db, struct strpool *pool, char *err, size_t errlen)
{
	static const char sql[] = "SELECT graph_function_id, node_name, coalesce(value, '') FROM graph_constants";
	sqlite3_stmt *s = NULL;
	struct graph_constant *tmp = NULL;
	size_t *grp = NULL, caps[3] = { 0, 0, 0 };
	int rc = SQLITE_ERROR, ret = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "%s in '%s'", sqlite3_errmsg(db), sql);  /* db_prepare's words */
		goto out;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		if (add_constant(c, s, pool, &tmp, &grp, caps))
			goto oom;
	if (rc != SQLITE_DONE)
		snprintf(err, errlen, "cannot read graph constants: %s", sqlite3_errmsg(db));
	else if (group_constants(c, tmp, grp))
		goto oom;
	else
		ret = 0;
	goto out;
oom:
	snprintf(err, errlen, "out of memory reading graph constants");
out:
	sqlite3_finalize(s);
	free(tmp);
	free(grp);
	return ret;
}

static void *const_worker(void *arg)
{
	struct const_table *c = arg;
	sqlite3 *db = NULL;

	if (db_open_readonly(c->path, SQLITE_OPEN_NOMUTEX, &db) != SQLITE_OK)
		snprintf(c->err, sizeof(c->err), "cannot open '%s': %s", c->path, db ? sqlite3_errmsg(db) : "out of memory");
	else
		read_constants(c, db, &c->pool, c->err, sizeof(c->err));
	sqlite3_close(db);
	return NULL;
}

void const_table_start(struct const_table *c, const char *path)
{
	memset(c, 0, sizeof(*c));
	c->path = path;
	if (path && pthread_create(&c->thread, NULL, const_worker, c) == 0)
		c->state = 1;
}

int const_table_wait(struct const_table *c, struct model *m)
{
	if (c->state == 0) {  /* no worker: read here, into the model's pool */
		c->state = read_constants(c, m->rec->db, m->pool, c->err, sizeof(c->err)) ? -1 : 2;
	} else if (c->state == 1) {
		pthread_join(c->thread, NULL);
		strpool_adopt(m->pool, &c->pool);
		c->state = c->err[0] ? -1 : 2;
	}
	if (c->state < 0 && c->err[0]) {
		error("%s", c->err);
		c->err[0] = '\0';  /* said once */
	}
	return c->state < 0 ? -1 : 0;
}

void const_table_release(struct const_table *c)
{
	if (c->state == 1)
		pthread_join(c->thread, NULL);
	free(c->consts);
	free(c->spans);
	idmap_release(&c->groups);
	strpool_release(&c->pool);
	memset(c, 0, sizeof(*c));
}

int graph_index_constants(struct graph_index *x, int64_t gf_id, const struct graph_constant **out, size_t *n)
{
	struct const_table *c = x->ct;
	size_t span;

	*out = NULL;
	*n = 0;
	if (const_table_wait(c, x->m))
		return -1;
	if (idmap_get(&c->groups, gf_id, &span)) {
		*out = c->consts + c->spans[span].first;
		*n = c->spans[span].n;
	}
	return 0;
}

/* ---- the nearest earlier trace ---- */

/*
 * Keys are 64-bit hashes of what trace_distance compares.  A key names a
 * pool (the traces of one tf.function object, or all of them), a kind of
 * key and its parts.  Two different keys can hash alike: every trace a key
 * gives back is measured with the real distance, and a wrong one sends the
 * search to the one-by-one comparison, so the answer stays exact.
 */
enum key_kind { K_EXACT = 1, K_ARGS, K_WILD, K_SEEN, K_STRUCT, K_NINPUTS };
#define ALL_POOL INT64_MIN

static uint64_t mix(uint64_t h, uint64_t v)
{
	h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

static uint64_t mix_text(uint64_t h, const char *s)
{
	uint64_t t = 0xcbf29ce484222325ull;

	if (!s)
		return mix(h, 0x6e756c6cull);  /* NULL is not "" */
	for (; *s; s++)
		t = (t ^ (unsigned char)*s) * 0x100000001b3ull;
	return mix(h, t);
}

/* What trace_distance compares of one argument (explain.c's input_diff). */
static uint64_t arg_hash(const struct model_trace_input *in)
{
	uint64_t h = mix_text(1, in->kind);

	if (in->kind && (!strcmp(in->kind, "tensor") || !strcmp(in->kind, "variable")))
		return mix_text(mix_text(h, in->dtype), in->shape);
	if (in->kind && (!strcmp(in->kind, "python") || !strcmp(in->kind, "object")))
		return mix_text(h, in->value);
	return h;
}

static int64_t key_id(int64_t pool, enum key_kind kind, uint64_t h)
{
	return (int64_t)mix(mix((uint64_t)pool, (uint64_t)kind), h);
}

/* The hash of the arguments (their hashes ah[0..n)), leaving out position skip (SIZE_MAX: none). */
static uint64_t args_hash(const uint64_t *ah, size_t n, uint64_t st, size_t skip)
{
	uint64_t h = mix(st, skip);

	for (size_t i = 0; i < n; i++)
		if (i != skip)
			h = mix(h, ah[i]);
	return h;
}

/*
 * The parts of trace k's keys, in tf->kh (see enum key_slot): computed
 * once for the search and the add of the same trace, each argument's text
 * hashed once (the keys leaving one argument out hash every other).
 */
enum key_slot { KS_EXACT, KS_ARGS, KS_STRUCT, KS_NINPUTS, KS_PER_ARG };

static const uint64_t *key_parts(struct trace_finder *tf, size_t k)
{
	const struct model_trace *t = &tf->f->traces[k];
	uint64_t *kh = tf->kh, *ah = tf->kh + KS_PER_ARG + 2 * t->ninputs, st;

	if (tf->kh_of == k)
		return kh;
	st = mix(2, t->ninputs);
	for (size_t i = 0; i < t->ninputs; i++) {
		st = mix_text(st, t->inputs[i].name);
		ah[i] = arg_hash(&t->inputs[i]);
	}
	kh[KS_ARGS] = args_hash(ah, t->ninputs, st, SIZE_MAX);
	kh[KS_EXACT] = mix_text(kh[KS_ARGS], t->signature);
	kh[KS_STRUCT] = st;
	kh[KS_NINPUTS] = t->ninputs;
	for (size_t i = 0; i < t->ninputs; i++) {
		kh[KS_PER_ARG + 2 * i] = args_hash(ah, t->ninputs, st, i);           /* K_WILD */
		kh[KS_PER_ARG + 2 * i + 1] = mix(mix(st, i), ah[i]);                  /* K_SEEN */
	}
	tf->kh_of = k;
	return kh;
}

int trace_finder_init(struct trace_finder *tf, const struct model_function *f, trace_distance_fn distance)
{
	size_t most = 0;

	memset(tf, 0, sizeof(*tf));
	tf->f = f;
	tf->distance = distance;
	tf->scan_limit = 100000;
	tf->kh_of = SIZE_MAX;
	for (size_t k = 0; k < f->ntraces; k++)
		if (f->traces[k].ninputs > most)
			most = f->traces[k].ninputs;
	/* the parts of one trace's keys, then its arguments' hashes (most: bounded by the inputs in memory) */
	tf->kh = alloc_array(KS_PER_ARG + 3 * most, sizeof(*tf->kh));
	return tf->kh ? 0 : -1;
}

void trace_finder_release(struct trace_finder *tf)
{
	free(tf->open);
	free(tf->kh);
	idmap_release(&tf->keys);
	idmap_release(&tf->objects);
	memset(tf, 0, sizeof(*tf));
}

/* The key in slot i of key_parts' array, in pool. */
static int64_t slot_key(int64_t pool, const uint64_t *kh, size_t i)
{
	static const enum key_kind kinds[KS_PER_ARG] = { K_EXACT, K_ARGS, K_STRUCT, K_NINPUTS };

	if (i < KS_PER_ARG)
		return key_id(pool, kinds[i], kh[i]);
	return key_id(pool, (i - KS_PER_ARG) % 2 ? K_SEEN : K_WILD, kh[i]);
}

static int put_keys(struct trace_finder *tf, int64_t pool, size_t k)
{
	size_t nkeys = KS_PER_ARG + 2 * tf->f->traces[k].ninputs;
	const uint64_t *kh = key_parts(tf, k);

	/* fetch the slots together: one wait for memory, not one per key */
	for (size_t i = 0; i < nkeys; i++)
		idmap_prefetch(&tf->keys, slot_key(pool, kh, i));
	for (size_t i = 0; i < nkeys; i++)
		if (idmap_set(&tf->keys, slot_key(pool, kh, i), k))
			return -1;
	return 0;
}

int trace_finder_add(struct trace_finder *tf, size_t k)
{
	const struct model_trace *t = &tf->f->traces[k];
	size_t seen;

	if (!idmap_get(&tf->objects, t->function_object, &seen)) {
		if (idmap_put(&tf->objects, t->function_object, k) < 0)
			return -1;
		/* a second object: from now on every trace is kept under its object too */
		if (k > 0 && !tf->per_object) {
			tf->per_object = 1;
			for (size_t j = 0; j < k; j++)
				if (put_keys(tf, tf->f->traces[j].function_object, j))
					return -1;
		}
	}
	if (t->ninputs > tf->most_inputs)
		tf->most_inputs = t->ninputs;
	if (ARRAY_GROW(tf->open, tf->nopen, tf->open_cap))
		return -1;
	tf->open[tf->nopen++] = k;
	if (put_keys(tf, ALL_POOL, k))
		return -1;
	return tf->per_object ? put_keys(tf, t->function_object, k) : 0;
}

struct search {
	struct trace_finder *tf;
	size_t k;
	int64_t pool;           /* the object, or ALL_POOL */
	size_t best, best_d;    /* best_d SIZE_MAX: none yet */
	int wrong;              /* a key gave back a trace its distance denies */
};

static int in_pool(const struct search *s, size_t j)
{
	return s->pool == ALL_POOL || s->tf->f->traces[j].function_object == s->pool;
}

/* Offer the trace a key gave back, if it is one; want: the distance the key promises (SIZE_MAX: any). */
static void offer(struct search *s, enum key_kind kind, uint64_t h, size_t want)
{
	int64_t pool = s->tf->per_object ? s->pool : ALL_POOL;
	size_t j, d;

	if (!idmap_get(&s->tf->keys, key_id(pool, kind, h), &j))
		return;
	if (j >= s->k || !in_pool(s, j)) {
		s->wrong = 1;
		return;
	}
	d = s->tf->distance(&s->tf->f->traces[j], &s->tf->f->traces[s->k]);
	if (want != SIZE_MAX && d > want) {
		s->wrong = 1;
		return;
	}
	if (d < s->best_d || (d == s->best_d && j > s->best)) {
		s->best = j;
		s->best_d = d;
	}
}

/* Every trace of the pool, latest first, until one is as near as any can be. */
static void scan(struct search *s, size_t floor)
{
	size_t compared = 0;

	for (size_t j = s->k; j-- > 0 && compared < s->tf->scan_limit && s->best_d > floor;) {
		size_t d;

		if (!in_pool(s, j))
			continue;
		compared++;
		d = s->tf->distance(&s->tf->f->traces[j], &s->tf->f->traces[s->k]);
		if (d < s->best_d) {
			s->best = j;
			s->best_d = d;
		}
	}
}

/* No trace of the pool has b's argument list: the nearest count of arguments, latest on ties. */
static void nearest_ninputs(struct search *s, size_t most)
{
	size_t n = s->tf->f->traces[s->k].ninputs;

	for (size_t delta = 0; delta <= most && s->best_d == SIZE_MAX; delta++) {
		offer(s, K_NINPUTS, n + delta, SIZE_MAX);
		if (delta && delta <= n)
			offer(s, K_NINPUTS, n - delta, SIZE_MAX);
	}
}

size_t trace_finder_nearest(struct trace_finder *tf, size_t k, int *object_seen)
{
	const struct model_trace *b = &tf->f->traces[k];
	struct search s = { .tf = tf, .k = k, .pool = ALL_POOL, .best = k - 1, .best_d = SIZE_MAX };
	const uint64_t *kh = key_parts(tf, k);
	size_t unseen = 0, j, nkeys = KS_PER_ARG + 2 * b->ninputs;
	int64_t pool;

	*object_seen = idmap_get(&tf->objects, b->function_object, &j);
	if (*object_seen)
		s.pool = b->function_object;
	pool = tf->per_object ? s.pool : ALL_POOL;
	for (size_t i = 0; i < nkeys; i++)
		idmap_prefetch(&tf->keys, slot_key(pool, kh, i));
	offer(&s, K_EXACT, kh[KS_EXACT], 0);
	if (s.best_d == 0 && !s.wrong)
		return s.best;
	offer(&s, K_ARGS, kh[KS_ARGS], 1);
	for (size_t i = 0; i < b->ninputs; i++) {
		offer(&s, K_WILD, kh[KS_PER_ARG + 2 * i], 1);
		if (!idmap_get(&tf->keys, slot_key(pool, kh, KS_PER_ARG + 2 * i + 1), &j))
			unseen++;
	}
	if (s.best_d <= 1 && !s.wrong)
		return s.best;
	if (!idmap_get(&tf->keys, key_id(pool, K_STRUCT, kh[KS_STRUCT]), &j) && !s.wrong) {
		nearest_ninputs(&s, tf->most_inputs);
		if (s.best_d != SIZE_MAX && !s.wrong)
			return s.best;
	}
	/* at least two arguments differ from every trace, and at least `unseen` (values never seen there) */
	scan(&s, s.wrong ? 0 : (unseen > 2 ? unseen : 2));
	return s.best;
}

size_t trace_finder_enclosing(struct trace_finder *tf, size_t k)
{
	const struct model_trace *b = &tf->f->traces[k];
	size_t kept = 0, found = SIZE_MAX;

	/* a span that ended by b's start holds no later trace either: dropped */
	for (size_t i = 0; i < tf->nopen; i++)
		if (tf->f->traces[tf->open[i]].end_ns > b->start_ns)
			tf->open[kept++] = tf->open[i];
	tf->nopen = kept;
	for (size_t i = kept; i-- > 0 && found == SIZE_MAX;) {
		const struct model_trace *o = &tf->f->traces[tf->open[i]];

		if (tf->open[i] < k && o->function_object == b->function_object && o->pid == b->pid &&
		    o->tid == b->tid && o->start_ns <= b->start_ns && o->end_ns >= b->end_ns)
			found = tf->open[i];
	}
	return found;
}
