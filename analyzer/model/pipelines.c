/*
 * pipelines.c - tf.data pipelines told apart by their handles (schema 8).
 *
 * Owns: m->datasets when the recording has dataset_ops (one per dataset
 * the program made, with the stage it reads), and the iterators: which
 * pipeline each one was made over, and which one a thread was reading at
 * a given time.
 *
 * Why it exists: two pipelines built in one function, or one after the
 * other on one thread, are not one pipeline.  The collector recorded the
 * address of each dataset op's input and output handles: a dataset's
 * output is the next stage's input, MakeIterator binds a dataset to an
 * iterator, and a read names the iterator it reads.  An address can be
 * reused once its handle is freed, so a handle means the latest op that
 * made it before it was used.
 */
#include "model_internal.h"
#include "recording.h"
#include "scan.h"
#include "db.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct link {
	int64_t pid, tid, start_ns, end_ns, input, input2, output;
	const char *op;
	long ds;                        /* its entry in m->datasets, -1: a stage TensorFlow adds */
};

struct pipelines {
	struct link *v;
	size_t n;
};

/* The op that made handle h in pid before t (the latest), or NULL. */
static const struct link *maker(const struct pipelines *p, int64_t pid, int64_t h, int64_t t)
{
	const struct link *best = NULL;

	for (size_t i = 0; h && i < p->n; i++)
		if (p->v[i].pid == pid && p->v[i].output == h && p->v[i].start_ns < t &&
		    (!best || p->v[i].start_ns > best->start_ns))
			best = &p->v[i];
	return best;
}

/* The user's stage behind handle h (the stages TensorFlow adds are passed through), -1: none. */
static long stage_of(const struct pipelines *p, int64_t pid, int64_t h, int64_t t)
{
	const struct link *l;

	for (int hops = 0; hops < 64 && (l = maker(p, pid, h, t)); hops++) {
		if (l->ds >= 0)
			return l->ds;
		h = l->input;
		t = l->start_ns;
	}
	return -1;
}

/* The eager-op group that ran link l (same thread and op, l's start inside it): its line. */
static void link_site(const struct model_lookup *lk, const struct scan_group *g, size_t ng, int64_t op_id,
		      const struct link *l, struct model_dataset_op *d)
{
	for (size_t i = 0; i < ng; i++) {
		int64_t site = g[i].k2 & 0xffffffffLL;

		if (g[i].k1 != model_group_key(l->pid, l->tid) || g[i].k2 >> 32 != op_id ||
		    l->start_ns < g[i].first_ns || l->start_ns > g[i].last_ns)
			continue;
		if (site > 0)
			d->loc = lk->site(lk->ctx, site, &d->func);
		return;
	}
}

static int cmp_dataset(const void *a, const void *b)
{
	const struct model_dataset_op *x = a, *y = b;

	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* A user stage from link l into m->datasets.  0 or -1. */
static int add_stage(struct model *m, const struct model_lookup *lk, const struct scan_group *g, size_t ng,
		     int64_t op_id, const struct link *l, size_t *cap)
{
	const char *name;
	int parallel;
	struct model_dataset_op *d;

	if (!model_dataset_kind(l->op, &name, &parallel))
		return 0;
	if (ARRAY_GROW(m->datasets, m->ndatasets, *cap))
		return -1;
	d = &m->datasets[m->ndatasets++];
	memset(d, 0, sizeof(*d));
	d->op = l->op;
	d->transformation = name;
	d->parallel = parallel;
	d->pid = l->pid;
	d->tid = l->tid;
	d->start_ns = l->start_ns;
	d->input = l->input;
	d->output = l->output;
	d->upstream = d->pipeline = -1;
	d->built = 1;  /* one entry per dataset made (before schema 8: one per line, with its count) */
	link_site(lk, g, ng, op_id, l, d);
	return 0;
}

/* Read dataset_ops into p, the user's stages into m->datasets.  0, 1 when there are none, or -1. */
static int read_links(struct model *m, const struct model_lookup *lk, const struct scan_group *g, size_t ng,
		      struct pipelines *p)
{
	sqlite3_stmt *s = db_prepare(m->rec->db, "SELECT pid, tid, op_id, start_ns, coalesce(input, 0),"
				     " coalesce(input2, 0), coalesce(output, 0), end_ns FROM dataset_ops ORDER BY start_ns, id");
	size_t cap = 0, capds = 0;
	int rc;

	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct link *l;

		if (ARRAY_GROW(p->v, p->n, cap)) {
			sqlite3_finalize(s);
			return error("out of memory");
		}
		l = &p->v[p->n++];
		l->pid = sqlite3_column_int64(s, 0);
		l->tid = sqlite3_column_int64(s, 1);
		l->op = lk->str(lk->ctx, sqlite3_column_int64(s, 2));
		l->op = l->op ? l->op : "?";
		l->start_ns = sqlite3_column_int64(s, 3);
		l->input = sqlite3_column_int64(s, 4);
		l->input2 = sqlite3_column_int64(s, 5);
		l->output = sqlite3_column_int64(s, 6);
		l->end_ns = sqlite3_column_int64(s, 7);
		l->ds = -1;
		if (l->output && add_stage(m, lk, g, ng, sqlite3_column_int64(s, 2), l, &capds)) {
			sqlite3_finalize(s);
			return error("out of memory");
		}
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return error("cannot read recording: %s", sqlite3_errmsg(m->rec->db));
	/* no stage (no dataset ops, or a TensorFlow without TFE_OpGetFlatInput): by time, as before schema 8 */
	return m->ndatasets ? 0 : 1;
}

/* Each link's stage and each stage's upstream, once m->datasets is in its final order. */
static void link_stages(struct model *m, struct pipelines *p)
{
	for (size_t i = 0; i < p->n; i++)
		for (size_t j = 0; p->v[i].output && j < m->ndatasets && p->v[i].ds < 0; j++)
			if (m->datasets[j].pid == p->v[i].pid && m->datasets[j].start_ns == p->v[i].start_ns &&
			    m->datasets[j].output == p->v[i].output)
				p->v[i].ds = (long)j;
	for (size_t j = 0; j < m->ndatasets; j++) {
		struct model_dataset_op *d = &m->datasets[j];

		/* a source's input is a tensor, whose address may be a freed dataset's (recordings before stop 43) */
		d->upstream = model_dataset_is_source(d->op) ? -1 : stage_of(p, d->pid, d->input, d->start_ns);
	}
}

int pipelines_load(struct model *m, const struct model_lookup *lk, const struct scan_group *g, size_t ng,
		   struct pipelines **out)
{
	struct pipelines *p = calloc(1, sizeof(*p));
	int rc;

	*out = NULL;
	if (!p)
		return error("out of memory");
	if ((rc = read_links(m, lk, g, ng, p)) == 1) {
		pipelines_release(p);
		free(m->datasets);
		m->datasets = NULL;
		m->ndatasets = 0;
		return 1;
	}
	if (rc < 0) {
		pipelines_release(p);
		return -1;
	}
	if (m->ndatasets > 1)
		qsort(m->datasets, m->ndatasets, sizeof(*m->datasets), cmp_dataset);
	link_stages(m, p);
	*out = p;
	return 0;
}

/* Whether link l is a thread's switch to reading another iterator. */
static int is_read(const struct link *l)
{
	return !l->output && !l->input2 && strstr(l->op, "IteratorGetNext");
}

long pipelines_read_end(const struct pipelines *p, int64_t pid, int64_t tid, int64_t first_ns, int64_t last_ns)
{
	const struct link *read = NULL, *make = NULL;

	/*
	 * The iterator the reads of [first_ns, last_ns] started on: the first
	 * switch inside that span (the reads' span starts with the Python before
	 * the first one), else the latest before it.
	 */
	for (size_t i = 0; p && i < p->n; i++) {
		const struct link *l = &p->v[i];

		if (l->pid != pid || l->tid != tid || !is_read(l) || l->start_ns > last_ns)
			continue;
		if (l->start_ns >= first_ns) {
			read = l;
			break;
		}
		read = l;
	}
	/* the MakeIterator that bound a dataset to that iterator last before */
	for (size_t i = 0; read && i < p->n; i++)
		if (p->v[i].pid == pid && p->v[i].input2 == read->input && p->v[i].start_ns < read->start_ns &&
		    !strcmp(p->v[i].op, "MakeIterator"))
			make = &p->v[i];
	return make ? stage_of(p, pid, make->input, make->start_ns) : -1;
}

/* Whether read link r is the first read of its iterator (no read of it since the MakeIterator before r). */
static int first_read(const struct pipelines *p, const struct link *r)
{
	int64_t made = INT64_MIN;

	for (const struct link *l = p->v; l < r; l++)
		if (l->pid == r->pid && l->input2 == r->input && !strcmp(l->op, "MakeIterator"))
			made = l->start_ns;
	for (const struct link *l = p->v; l < r; l++)
		if (l->pid == r->pid && is_read(l) && l->input == r->input && l->start_ns > made)
			return 0;
	return made > INT64_MIN;
}

int64_t pipelines_startup_ns(const struct pipelines *p, int64_t pid, int64_t tid, int64_t first_ns, int64_t last_ns)
{
	int64_t ns = 0;

	for (size_t i = 0; p && i < p->n; i++) {
		const struct link *l = &p->v[i];

		if (l->pid == pid && l->tid == tid && is_read(l) && l->start_ns >= first_ns && l->start_ns <= last_ns &&
		    first_read(p, l))
			ns += l->end_ns - l->start_ns;
	}
	return ns;
}

void pipelines_release(struct pipelines *p)
{
	if (p)
		free(p->v);
	free(p);
}
