/*
 * input.c - time that is true per thread, and input pipelines.
 *
 * Owns: m->threads, m->datasets, m->graph_readers, the session's input and
 * black-box eager totals, the black boxes' eager ops and thread, the
 * functions' made_by, and m->sites / m->ops rebuilt from eager dispatch.
 *
 * Why it exists: not every eager op is eager dispatch.  A read of a tf.data
 * iterator (IteratorGetNext) is time spent waiting for input; the ops a
 * py_function's Python body dispatches run inside that black box, usually
 * on tf.data's threads.  And a share of "the run" means something only for
 * one thread: the times of several threads added against one wall clock
 * can exceed 100%.  One scan of eager_ops keyed by (thread, op, line) gives
 * all three splits; ops inside black boxes are found through the
 * (pid, tid, start_ns) index, one range per black-box run.
 */
#include "call_times.h"
#include "eager_runs.h"
#include "model_internal.h"
#include "code_facts.h"
#include "recording.h"
#include "scan.h"
#include "db.h"
#include "duration.h"
#include "checked.h"
#include "pathdisp.h"
#include "functiondef.h"
#include "strbuf.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * After rekey(), every eager group has k1 = pid << 32 | tid and
 * k2 = op << 32 | site.  The scan itself reads raw columns and one shift
 * (expressions per row cost the scan a fifth of its time); a thread's pid
 * comes from the threads table (tids are unique in a pid namespace).
 */
#define SCAN_K1 "callsite_id"
#define SCAN_K2 "(op_id << 32) | tid"
#define KEY_PID(k) ((k) >> 32)
#define KEY_LOW(k) ((k) & 0xffffffffLL)

/* Eager ops that read an iterator: the program waits for its input pipeline. */
static const char *const input_wait_ops[] = {
	"IteratorGetNext", "IteratorGetNextSync", "IteratorGetNextAsOptional",
	"MultiDeviceIteratorGetNextFromShard", NULL,
};

static int is_input_wait(const char *op)
{
	for (size_t i = 0; op && input_wait_ops[i]; i++)
		if (!strcmp(op, input_wait_ops[i]))
			return 1;
	return 0;
}

/*
 * The wait of a group of iterator reads: the reads alone.  The Python
 * before each (python_ns: the loop's own code, the iterator's __next__)
 * ran on the reading thread, with nothing to wait for; counted as waiting
 * it made a clean prefetched loop with a short step 10-14% input-bound.
 */
static int64_t read_wait_ns(const struct scan_group *g)
{
	return g->total_ns - (g->python_ns < g->total_ns ? g->python_ns : g->total_ns);
}

int model_is_input_wait(const char *op)
{
	return is_input_wait(op);
}

/*
 * Dataset ops as the user wrote them: op-name prefix, transformation,
 * whether it runs its function in parallel, whether it is a source (its
 * inputs are tensors, not a dataset: nothing upstream).  Internal ones
 * (ModelDataset, OptionsDataset, ...) are not listed and not shown.
 */
static const struct {
	const char *prefix, *name;
	int parallel, source;
} dataset_ops[] = {
	{ "TensorSliceDataset", "from_tensor_slices", 0, 1 }, { "TensorDataset", "from_tensors", 0, 1 },
	{ "ParallelMapDataset", "map", 1, 0 }, { "MapDataset", "map", 0, 0 },
	{ "ParallelBatchDataset", "batch", 1, 0 }, { "BatchDataset", "batch", 0, 0 },
	{ "PaddedBatchDataset", "padded_batch", 0, 0 }, { "PrefetchDataset", "prefetch", 0, 0 },
	{ "CacheDataset", "cache", 0, 0 }, { "ShuffleAndRepeatDataset", "shuffle", 0, 0 },
	{ "ShuffleDataset", "shuffle", 0, 0 }, { "RepeatDataset", "repeat", 0, 0 },
	{ "FlatMapDataset", "flat_map", 0, 0 }, { "ParallelInterleaveDataset", "interleave", 1, 0 },
	{ "InterleaveDataset", "interleave", 0, 0 }, { "ParallelFilterDataset", "filter", 1, 0 },
	{ "FilterDataset", "filter", 0, 0 }, { "GeneratorDataset", "from_generator", 0, 1 },
	{ "RangeDataset", "range", 0, 1 }, { "TakeDataset", "take", 0, 0 }, { "SkipDataset", "skip", 0, 0 },
	{ "TFRecordDataset", "TFRecordDataset", 0, 1 }, { "TextLineDataset", "TextLineDataset", 0, 1 },
	{ "UnbatchDataset", "unbatch", 0, 0 }, { "ZipDataset", "zip", 0, 0 },
	{ "ConcatenateDataset", "concatenate", 0, 0 },
};

static int dataset_op_kind(const char *op)
{
	for (size_t i = 0; op && i < sizeof(dataset_ops) / sizeof(dataset_ops[0]); i++)
		if (!strncmp(op, dataset_ops[i].prefix, strlen(dataset_ops[i].prefix)))
			return (int)i;
	return -1;
}

int model_dataset_kind(const char *op, const char **name, int *parallel)
{
	int kind = dataset_op_kind(op);

	if (kind < 0)
		return 0;
	*name = dataset_ops[kind].name;
	*parallel = dataset_ops[kind].parallel;
	return 1;
}

int model_dataset_is_source(const char *op)
{
	int kind = dataset_op_kind(op);

	return kind >= 0 && dataset_ops[kind].source;
}

static const char *role_name(const char *role)
{
	if (role && (!strcmp(role, "python-main") || !strcmp(role, "main")))
		return "main";
	if (role && !strcmp(role, "tf-data"))
		return "tf.data";
	return "other";
}

struct input_state {
	struct model *m;
	const struct model_lookup *lk;
	struct scan_result r;           /* groups: k1 pid << 32 | tid, k2 op << 32 | site */
	size_t capthreads;
	int64_t *tids;                  /* the threads table: tid, pid pairs */
	size_t ntids;
	struct pipelines *pipelines;    /* schema 8: the datasets' handles, NULL before */
};

/* The threads table's (tid, pid) pairs, read once. */
static int load_tids(struct input_state *st)
{
	sqlite3_stmt *s = db_prepare(st->m->rec->db, "SELECT tid, pid FROM threads ORDER BY tid");
	size_t cap = 0;
	int rc;

	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		if (grow_array((void **)&st->tids, &cap, st->ntids + 2, sizeof(*st->tids))) {
			sqlite3_finalize(s);
			return error("out of memory");
		}
		st->tids[st->ntids++] = sqlite3_column_int64(s, 0);
		st->tids[st->ntids++] = sqlite3_column_int64(s, 1);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : error("cannot read recording: %s", sqlite3_errmsg(st->m->rec->db));
}

/* The pid of thread tid; 0 when the threads table does not have it. */
static int64_t pid_of(const struct input_state *st, int64_t tid)
{
	size_t lo = 0, hi = st->ntids / 2;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (st->tids[2 * mid] == tid)
			return st->tids[2 * mid + 1];
		if (st->tids[2 * mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* Eager groups from the scan's (site, op << 32 | tid) to (pid << 32 | tid, op << 32 | site). */
static void rekey(struct input_state *st)
{
	for (size_t i = 0; i < st->r.ngroups; i++) {
		struct scan_group *g = &st->r.groups[i];
		int64_t site = g->k1 > 0 && g->k1 <= 0xffffffffLL ? g->k1 : 0, tid = KEY_LOW(g->k2);

		g->k1 = model_group_key(pid_of(st, tid), tid);
		g->k2 = model_group_key(g->k2 >> 32, site);
	}
}

/*
 * Whether TensorFlow prefetches at the end of a pipeline that does not:
 * tf.data's inject_prefetch optimization, on by default since 2.12 (while
 * autotuning, which is the default).
 */
static int tf_injects_prefetch(const struct model *m)
{
	const char *v = m->session.tf_version;
	int major, minor;

	return v && sscanf(v, "%d.%d", &major, &minor) == 2 && (major > 2 || (major == 2 && minor >= 12));
}

static int cmp_group(const void *a, const void *b)
{
	const struct scan_group *x = a, *y = b;

	if (x->k1 != y->k1)
		return x->k1 < y->k1 ? -1 : 1;
	return x->k2 < y->k2 ? -1 : x->k2 > y->k2;
}

static struct scan_group *group_of(struct input_state *st, int64_t thread, int64_t op_site)
{
	struct scan_group key = { .k1 = thread, .k2 = op_site };

	return bsearch(&key, st->r.groups, st->r.ngroups, sizeof(key), cmp_group);
}

static const char *op_of(struct input_state *st, const struct scan_group *g)
{
	const char *op = st->lk->str(st->lk->ctx, g->k2 >> 32);

	return op ? op : "?";
}

static struct model_thread *thread_of(struct input_state *st, int64_t pid, int64_t tid)
{
	struct model *m = st->m;
	struct model_thread *t;

	for (size_t i = 0; i < m->nthreads; i++)
		if (m->threads[i].pid == pid && m->threads[i].tid == tid)
			return &m->threads[i];
	if (ARRAY_GROW(m->threads, m->nthreads, st->capthreads))
		return NULL;
	t = &m->threads[m->nthreads++];
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tid = tid;
	t->role = "other";
	t->first_ns = t->input_first_ns = INT64_MAX;
	t->last_ns = t->input_last_ns = INT64_MIN;
	return t;
}

/* Ops dispatched inside black-box runs: out of their groups, into their black box. */
static int take_blackbox_ops(struct input_state *st)
{
	struct model *m = st->m;
	struct strbuf sql = STRBUF_INIT;
	sqlite3_stmt *s;
	int rc;

	/*
	 * One index range per black-box run, and only for runs on threads that
	 * dispatched eager ops at all: a py_function that runs no TensorFlow
	 * op costs nothing here.
	 */
	strbuf_addstr(&sql, "SELECT b.blackbox_node_id, e.pid, e.tid, e.op_id, coalesce(e.callsite_id, 0), count(*),"
			    " sum(e.end_ns - e.start_ns) FROM blackbox_execs b CROSS JOIN eager_ops e"
			    " ON e.pid = b.pid AND e.tid = b.tid AND e.start_ns >= b.start_ns AND e.start_ns < b.end_ns");
	if (db_has_table(m->rec->db, "eager_op_blocks")) {
		/* schema 6, no index on the ops: the run's blocks give an id range (CROSS JOIN: the runs outside) */
		char ids[1200];

		scan_eager_block_ids(ids, sizeof(ids), "e.id", "b.pid", "b.tid", "b.start_ns", "b.end_ns",
				     "(SELECT coalesce(max(max(max_start_ns - min_start_ns, 0)), 0) FROM eager_op_blocks)");
		strbuf_addstr(&sql, ids);
	}
	strbuf_addstr(&sql, " WHERE b.pid * 4294967296 + b.tid IN (");
	for (size_t i = 0, n = 0; i < st->r.ngroups; i++)
		if (i == 0 || st->r.groups[i].k1 != st->r.groups[i - 1].k1)
			strbuf_addf(&sql, "%s%lld", n++ ? "," : "", (long long)st->r.groups[i].k1);
	strbuf_addstr(&sql, ") GROUP BY 1, 2, 3, 4, 5");
	s = st->r.ngroups ? db_prepare(m->rec->db, sql.buf) : NULL;
	strbuf_release(&sql);
	if (!st->r.ngroups)
		return 0;
	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(s, 1), tid = sqlite3_column_int64(s, 2);
		int64_t n = sqlite3_column_int64(s, 5), ns = sqlite3_column_int64(s, 6);
		struct scan_group *g = group_of(st, model_group_key(pid, tid),
						model_group_key(sqlite3_column_int64(s, 3), sqlite3_column_int64(s, 4)));
		struct model_blackbox *b = model_blackbox_of_node(m, sqlite3_column_int64(s, 0));
		struct model_thread *t = thread_of(st, pid, tid);

		if (!g || !t)
			continue;
		n = n < g->count ? n : g->count;
		ns = ns < g->total_ns ? ns : g->total_ns;
		g->count -= n;
		g->total_ns -= ns;
		if (b) {
			b->eager_ops += n;
			b->eager_ns = dur_add(b->eager_ns, ns);
		}
		t->blackbox_eager_ops += n;
		m->session.blackbox_eager_ops += n;
		m->session.blackbox_eager_ns = dur_add(m->session.blackbox_eager_ns, ns);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE ? 0 : error("cannot read recording: %s", sqlite3_errmsg(m->rec->db));
}

static void span_add(int64_t *first, int64_t *last, int64_t a, int64_t b)
{
	if (a < *first)
		*first = a;
	if (b > *last)
		*last = b;
}

static int cmp_site_group(const void *a, const void *b)
{
	const struct scan_group *x = a, *y = b;
	int64_t sx = KEY_LOW(x->k2), sy = KEY_LOW(y->k2);

	if (sx != sy)
		return sx < sy ? -1 : 1;
	return x->count > y->count ? -1 : x->count < y->count;
}

static int cmp_op_group(const void *a, const void *b)
{
	const struct scan_group *x = a, *y = b;
	int64_t ox = x->k2 >> 32, oy = y->k2 >> 32;

	return ox < oy ? -1 : ox > oy;
}

int model_cmp_sites(const void *a, const void *b)
{
	const struct model_eager_site *x = a, *y = b;
	int c;

	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	if ((c = strcmp(x->loc.file ? x->loc.file : "", y->loc.file ? y->loc.file : "")))
		return c;
	return x->loc.line - y->loc.line;
}

static int cmp_ops(const void *a, const void *b)
{
	const struct model_eager_op *x = a, *y = b;

	if (x->total_ns != y->total_ns)
		return x->total_ns < y->total_ns ? 1 : -1;
	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/*
 * Fold dispatch groups (sorted by site) into sites.  thread_only >= 0
 * keeps one thread's groups.  Returns the number of sites or -1.
 */
static long fold_sites(struct input_state *st, const struct scan_group *gs, size_t n,
		       struct model_eager_site **out)
{
	struct model_eager_site *sites = NULL;
	size_t nsites = 0, cap = 0;

	for (size_t i = 0; i < n; i++) {
		const struct scan_group *g = &gs[i];
		struct model_eager_site *site;

		if (!nsites || i == 0 || KEY_LOW(g->k2) != KEY_LOW(gs[i - 1].k2)) {
			if (ARRAY_GROW(sites, nsites, cap)) {
				free(sites);
				return -1;
			}
			site = &sites[nsites++];
			memset(site, 0, sizeof(*site));
			if (KEY_LOW(g->k2) > 0)
				site->loc = st->lk->site(st->lk->ctx, KEY_LOW(g->k2), &site->func);
			site->first_ns = INT64_MAX;
			site->last_ns = INT64_MIN;
		}
		site = &sites[nsites - 1];
		/* Sorted by count within a site: the first group is its top op. */
		if (!site->top_op)
			site->top_op = op_of(st, g);
		site->count += g->count;
		site->total_ns = dur_add(site->total_ns, g->total_ns);
		span_add(&site->first_ns, &site->last_ns, g->first_ns, g->last_ns);
	}
	nsites = model_merge_sites_by_user_line(sites, nsites);
	if (nsites > 1)
		qsort(sites, nsites, sizeof(*sites), model_cmp_sites);
	*out = sites;
	return (long)nsites;
}

const char *model_format_sites(struct model *m, const struct model_eager_site *sites, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	const char *out;

	for (size_t i = 0; i < n && i < 5; i++) {
		const struct model_eager_site *s = &sites[i];
		const char *file = s->loc.file ? strrchr(s->loc.file, '/') : NULL;

		file = file ? file + 1 : s->loc.file;
		if (file)
			strbuf_addf(&sb, "%s%s:%d (%lld ops, ", i ? "; " : "", file, s->loc.line, (long long)s->count);
		else
			strbuf_addf(&sb, "%s%s (%lld ops, ", i ? "; " : "", MODEL_NO_FRAME, (long long)s->count);
		strbuf_add_duration(&sb, s->total_ns);
		strbuf_addch(&sb, ')');
	}
	out = model_strdup(m, sb.buf ? sb.buf : "");
	strbuf_release(&sb);
	return out;
}

double model_thread_wait_ns(const struct model *m, int64_t pid, int64_t tid, int64_t a, int64_t b)
{
	return cpu_intervals_thread_wait(m->cpu_samples, pid, tid, a, b);
}

/*
 * The steady cost of eager group g (scan_group_steady_ns()): its thread's
 * share of the group's span spent waiting for a CPU (m->cpu_samples) is
 * taken out of a dispatch long by nature.
 */
static int64_t group_steady_ns(const struct model *m, const struct scan_group *g)
{
	int64_t a = g->first_ns, b = g->last_ns;
	double wait = b > a ? model_thread_wait_ns(m, KEY_PID(g->k1), KEY_LOW(g->k1), a, b) : 0;

	return scan_group_steady_ns(g, b > a ? wait / (double)(b - a) : 0);
}

/*
 * Split the groups into input waits and dispatch: add both to their thread
 * and the session, copy the dispatch groups to d (*nd of them).  0 or -1.
 */
static int split_dispatch(struct input_state *st, struct scan_group *d, size_t *nd)
{
	struct model *m = st->m;

	m->session.eager_ops = m->session.eager_ns = 0;
	m->session.input_waits = m->session.input_ns = 0;
	for (size_t i = 0; i < st->r.ngroups; i++) {
		struct scan_group *g = &st->r.groups[i];
		const char *op = op_of(st, g);
		struct model_thread *t = thread_of(st, KEY_PID(g->k1), KEY_LOW(g->k1));

		if (!t)
			return -1;
		span_add(&t->first_ns, &t->last_ns, g->first_ns, g->last_ns);
		if (!g->count)
			continue;
		if (is_input_wait(op)) {
			t->input_waits += g->count;
			t->input_ns = dur_add(t->input_ns, read_wait_ns(g));
			span_add(&t->input_first_ns, &t->input_last_ns, g->first_ns, g->last_ns);
			m->session.input_waits += g->count;
			m->session.input_ns = dur_add(m->session.input_ns, read_wait_ns(g));
			continue;
		}
		t->eager_ops += g->count;
		t->eager_ns = dur_add(t->eager_ns, group_steady_ns(m, g));
		t->eager_wall_ns = dur_add(t->eager_wall_ns, g->total_ns);
		m->session.eager_ops += g->count;
		m->session.eager_ns = dur_add(m->session.eager_ns, g->total_ns);
		d[(*nd)++] = *g;
	}
	return 0;
}

/* m->ops from the dispatch groups d (sorted here by op).  0 or -1. */
static int fold_ops(struct input_state *st, struct scan_group *d, size_t nd)
{
	struct model *m = st->m;
	size_t capops = 0;

	qsort(d, nd, sizeof(*d), cmp_op_group);
	free(m->ops);
	m->ops = NULL;
	m->nops = 0;
	for (size_t i = 0; i < nd; i++) {
		struct model_eager_op *o;

		if (i == 0 || d[i].k2 >> 32 != d[i - 1].k2 >> 32) {
			if (ARRAY_GROW(m->ops, m->nops, capops))
				return -1;
			o = &m->ops[m->nops++];
			memset(o, 0, sizeof(*o));
			o->op = op_of(st, &d[i]);
		}
		o = &m->ops[m->nops - 1];
		o->count += d[i].count;
		o->total_ns = dur_add(o->total_ns, d[i].total_ns);
		o->slow_path += d[i].flagged < d[i].count ? d[i].flagged : d[i].count;
		o->failed += d[i].failed < d[i].count ? d[i].failed : d[i].count;
	}
	if (m->nops > 1)
		qsort(m->ops, m->nops, sizeof(*m->ops), cmp_ops);
	return 0;
}

/* Thread t's busiest lines: its own dispatch groups only.  0 or -1. */
static int thread_top_sites(struct input_state *st, struct model_thread *t, const struct scan_group *d, size_t nd)
{
	struct scan_group *mine = calloc(nd ? nd : 1, sizeof(*mine));
	struct model_eager_site *sites = NULL;
	size_t n = 0;
	long ns;

	if (!mine)
		return -1;
	for (size_t i = 0; i < nd; i++)
		if (KEY_PID(d[i].k1) == t->pid && KEY_LOW(d[i].k1) == t->tid) {
			mine[n] = d[i];
			mine[n++].total_ns = group_steady_ns(st->m, &d[i]);  /* its lines' times as its eager_ns */
		}
	qsort(mine, n, sizeof(*mine), cmp_site_group);
	ns = fold_sites(st, mine, n, &sites);
	free(mine);
	if (ns < 0)
		return -1;
	if (ns > 0) {
		t->top_loc = sites[0].loc;
		t->top_func = sites[0].func;
		t->top_op = sites[0].top_op;
		t->top_count = sites[0].count;
		t->top_first_ns = sites[0].first_ns;
		t->top_last_ns = sites[0].last_ns;
	}
	t->top_sites = model_format_sites(st->m, sites, (size_t)ns);
	free(sites);
	return 0;
}

static int cmp_eager_key(const void *a, const void *b)
{
	const struct model_eager_key *x = a, *y = b;
	const int64_t kx[4] = { x->pid, x->tid, x->op_id, x->site_id }, ky[4] = { y->pid, y->tid, y->op_id, y->site_id };

	for (int i = 0; i < 4; i++)
		if (kx[i] != ky[i])
			return kx[i] < ky[i] ? -1 : 1;
	return 0;
}

/* m->eager_keys from the dispatch groups d: each with its steady cost.  0 or -1. */
static int eager_keys(struct model *m, const struct scan_group *d, size_t nd)
{
	free(m->eager_keys);
	m->neager_keys = 0;
	if (!(m->eager_keys = calloc(nd ? nd : 1, sizeof(*m->eager_keys))))
		return -1;
	for (size_t i = 0; i < nd; i++)
		m->eager_keys[m->neager_keys++] = (struct model_eager_key){
			.pid = KEY_PID(d[i].k1), .tid = KEY_LOW(d[i].k1), .op_id = d[i].k2 >> 32, .site_id = KEY_LOW(d[i].k2),
			.count = d[i].count, .steady_ns = group_steady_ns(m, &d[i]),
		};
	qsort(m->eager_keys, m->neager_keys, sizeof(*m->eager_keys), cmp_eager_key);
	return 0;
}

int64_t model_eager_key_op_ns(const struct model *m, int64_t pid, int64_t tid, int64_t op_id, int64_t site_id)
{
	const struct model_eager_key want = { .pid = pid, .tid = tid, .op_id = op_id, .site_id = site_id };
	const struct model_eager_key *k = m->neager_keys ? bsearch(&want, m->eager_keys, m->neager_keys,
								   sizeof(want), cmp_eager_key) : NULL;

	return k && k->count > 0 ? k->steady_ns / k->count : -1;
}

/* Rebuild m->sites and m->ops from the dispatch groups; fill per-thread dispatch. */
static int rebuild_dispatch(struct input_state *st)
{
	struct model *m = st->m;
	struct scan_group *d = calloc(st->r.ngroups ? st->r.ngroups : 1, sizeof(*d));
	size_t nd = 0;
	long ns;
	int ret = -1;

	if (!d)
		return error("out of memory");
	cpu_intervals_free(m->cpu_samples);
	if (cpu_intervals_load(m, 1, &m->cpu_samples)) {
		free(d);
		return -1;
	}
	if (split_dispatch(st, d, &nd) || eager_keys(m, d, nd))
		goto cleanup;
	/* Sites over all threads. */
	qsort(d, nd, sizeof(*d), cmp_site_group);
	free(m->sites);
	m->sites = NULL;
	m->nsites = 0;
	if ((ns = fold_sites(st, d, nd, &m->sites)) < 0)
		goto cleanup;
	m->nsites = (size_t)ns;
	if (fold_ops(st, d, nd))
		goto cleanup;
	for (size_t k = 0; k < m->nthreads; k++)
		if (thread_top_sites(st, &m->threads[k], d, nd))
			goto cleanup;
	ret = 0;
cleanup:
	if (ret)
		error("out of memory");
	free(d);
	return ret;
}

/* The line reading the iterator most, per thread. */
static void input_lines(struct input_state *st)
{
	for (size_t k = 0; k < st->m->nthreads; k++) {
		struct model_thread *t = &st->m->threads[k];
		int64_t best = 0;

		for (size_t i = 0; i < st->r.ngroups; i++) {
			const struct scan_group *g = &st->r.groups[i];

			if (KEY_PID(g->k1) != t->pid || KEY_LOW(g->k1) != t->tid || g->count <= best ||
			    !is_input_wait(op_of(st, g)))
				continue;
			best = g->count;
			t->input_loc = KEY_LOW(g->k2) > 0 ? st->lk->site(st->lk->ctx, KEY_LOW(g->k2), &t->input_func)
							  : (struct source_loc){ .file = NULL };
		}
	}
}

/* Thread t's loop over the pipeline that ends at stage last: found or added (NULL: out of memory). */
static struct model_input_loop *loop_of(struct model *m, const struct model_thread *t, long last, size_t *cap)
{
	struct model_input_loop *l;

	for (size_t i = 0; i < m->ninput_loops; i++)
		if (m->input_loops[i].thread == t && m->input_loops[i].last == last)
			return &m->input_loops[i];
	if (ARRAY_GROW(m->input_loops, m->ninput_loops, *cap))
		return NULL;
	l = &m->input_loops[m->ninput_loops++];
	memset(l, 0, sizeof(*l));
	l->thread = t;
	l->last = last;
	l->first_ns = INT64_MAX;
	l->last_ns = INT64_MIN;
	return l;
}

/* Each stage of the pipeline ending at last: that pipeline, and whether it ends prefetched. */
static void mark_pipeline(struct model *m, long last)
{
	int prefetched = tf_injects_prefetch(m);

	for (long i = last, hops = 0; i >= 0 && hops < 64; i = m->datasets[i].upstream, hops++)
		prefetched |= !strcmp(m->datasets[i].transformation, "prefetch");
	for (long i = last, hops = 0; i >= 0 && hops < 64; i = m->datasets[i].upstream, hops++) {
		m->datasets[i].pipeline = last;
		m->datasets[i].prefetched = prefetched;
	}
}

/*
 * Schema 8: each thread's iterator reads split by the pipeline they read
 * (m->input_loops), so that a quick pipeline read first does not stand for
 * the slow one the loop waited for.  After thread_facts (m->threads final).
 */
static int input_loops(struct input_state *st)
{
	struct model *m = st->m;
	size_t cap = 0;

	for (size_t i = 0; st->pipelines && i < st->r.ngroups; i++) {
		const struct scan_group *g = &st->r.groups[i];
		struct model_thread *t;
		struct model_input_loop *l;

		if (!g->count || !is_input_wait(op_of(st, g)))
			continue;
		if (!(t = thread_of(st, KEY_PID(g->k1), KEY_LOW(g->k1))) ||
		    !(l = loop_of(m, t, pipelines_read_end(st->pipelines, t->pid, t->tid, g->first_ns, g->last_ns), &cap)))
			return error("out of memory");
		l->waits += g->count;
		l->wait_ns = dur_add(l->wait_ns, read_wait_ns(g));
		l->startup_ns = dur_add(l->startup_ns, pipelines_startup_ns(st->pipelines, t->pid, t->tid, g->first_ns,
									    g->last_ns));
		span_add(&l->first_ns, &l->last_ns, g->first_ns, g->last_ns);
		if (g->count > l->loc_reads && KEY_LOW(g->k2) > 0) {
			l->loc_reads = g->count;
			l->loc = st->lk->site(st->lk->ctx, KEY_LOW(g->k2), &l->func);
		}
	}
	for (size_t i = 0; i < m->ninput_loops; i++)
		if (m->input_loops[i].last >= 0)
			mark_pipeline(m, m->input_loops[i].last);
	return 0;
}

static int cmp_count_desc(const void *a, const void *b)
{
	const struct scan_group *x = a, *y = b;

	return x->count < y->count ? 1 : x->count > y->count ? -1 : 0;
}

/* Thread names and roles, black-box runs per thread and node. */
static int thread_facts(struct input_state *st)
{
	struct model *m = st->m;
	sqlite3 *db = m->rec->db;
	sqlite3_stmt *s = db_prepare(db, "SELECT pid, tid, role, name FROM threads");
	struct scan_result b = { 0 };
	/* Index in m->threads + 1 of each black box's thread (m->threads may move). */
	size_t *bb_thread = calloc(m->nblackboxes ? m->nblackboxes : 1, sizeof(*bb_thread));
	int rc = SQLITE_DONE, ret = -1;

	if (!s || !bb_thread) {
		error("out of memory");
		goto cleanup;
	}
	if (scan_table(m->rec->path, "blackbox_execs", "blackbox_node_id", "tid", "0", "1", &b))
		goto cleanup;
	/* Most runs first: a black box's thread is the one that ran it most. */
	if (b.ngroups > 1)
		qsort(b.groups, b.ngroups, sizeof(*b.groups), cmp_count_desc);
	for (size_t i = 0; i < b.ngroups; i++) {
		const struct scan_group *g = &b.groups[i];
		struct model_thread *t = thread_of(st, pid_of(st, g->k2), g->k2);
		struct model_blackbox *bb = model_blackbox_of_node(m, g->k1);

		if (!t) {
			error("out of memory");
			goto cleanup;
		}
		t->blackbox_execs += g->count;
		t->blackbox_ns = dur_add(t->blackbox_ns, g->total_ns);
		span_add(&t->first_ns, &t->last_ns, g->first_ns, g->last_ns);
		if (bb && !bb_thread[bb - m->blackboxes])
			bb_thread[bb - m->blackboxes] = (size_t)(t - m->threads) + 1;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t pid = sqlite3_column_int64(s, 0), tid = sqlite3_column_int64(s, 1);

		for (size_t i = 0; i < m->nthreads; i++) {
			struct model_thread *t = &m->threads[i];

			if (t->pid != pid || t->tid != tid)
				continue;
			t->role = role_name((const char *)sqlite3_column_text(s, 2));
			t->name = sqlite3_column_text(s, 3) ? model_strdup(m, (const char *)sqlite3_column_text(s, 3)) : NULL;
		}
	}
	if (rc != SQLITE_DONE) {
		error("cannot read recording: %s", sqlite3_errmsg(db));
		goto cleanup;
	}
	for (size_t j = 0; j < m->nblackboxes; j++)
		if (bb_thread[j])
			m->blackboxes[j].thread = m->threads[bb_thread[j] - 1].role;
	ret = 0;
cleanup:
	free(bb_thread);
	sqlite3_finalize(s);
	scan_result_release(&b);
	return ret;
}

void model_thread_span(const struct model *m, const struct model_thread *t, int64_t *a, int64_t *b)
{
	int is_main = !strcmp(t->role, "main");

	*a = is_main ? m->session.first_tf_ns : t->first_ns;
	*b = is_main ? m->session.end_ns : t->last_ns;
}

double model_eager_share(int64_t eager_ns, int64_t own_ns)
{
	return own_ns <= 0 || eager_ns <= 0 ? 0 : eager_ns >= own_ns ? 1 : (double)eager_ns / (double)own_ns;
}

int64_t model_thread_own_ns(const struct model *m, const struct model_thread *t, int64_t from, int64_t to,
			    int64_t *wait_ns)
{
	int is_main = !strcmp(t->role, "main");
	int64_t a, b, active;
	double wait;

	model_thread_span(m, t, &a, &b);
	a = a > from ? a : from;
	b = b < to ? b : to;
	/* The main thread runs the whole active session (capture windows: their time); a pool thread, its events. */
	active = b <= a ? 0 : is_main ? model_recorded_ns(m, a, b) : b - a;
	wait = active ? model_thread_wait_ns(m, t->pid, t->tid, a, b) : 0;
	/* the file's numbers: at most the thread's time */
	*wait_ns = wait <= 0 ? 0 : wait >= (double)active ? active : (int64_t)wait;
	return active - *wait_ns;
}

/*
 * Each thread's eager share, of its time less its waits for a CPU
 * (m->cpu_samples, read with the dispatch): the steady eager cost has
 * none either, so that a machine loaded by other work lengthens both
 * alike.  The session's: the same sums over the threads that dispatched
 * eager ops (docs/rules.md, *The eager share under load*): with one such
 * thread, its share; with several, the share of their time together.
 */
static void thread_shares(struct model *m)
{
	int64_t eager = 0, own_all = 0;

	for (size_t i = 0; i < m->nthreads; i++) {
		struct model_thread *t = &m->threads[i];
		int64_t own;

		if (t->first_ns == INT64_MAX)
			t->first_ns = t->last_ns = 0;
		if (t->input_first_ns == INT64_MAX)
			t->input_first_ns = t->input_last_ns = 0;
		own = model_thread_own_ns(m, t, INT64_MIN, INT64_MAX, &t->cpu_wait_ns);
		t->active_ns = own + t->cpu_wait_ns;
		t->eager_share = model_eager_share(t->eager_ns, own);
		if (t->eager_ops > 0) {
			eager = dur_add(eager, t->eager_ns);
			own_all = dur_add(own_all, own);
		}
	}
	m->session.eager_steady_ns = eager;
	m->session.eager_share = model_eager_share(eager, own_all);
}

/* The transformations the program built, in order; their functions by name. */
/* m->datasets: one per dataset-op dispatch group, per process in the order built.  0 or -1. */
static int collect_dataset_ops(struct input_state *st)
{
	struct model *m = st->m;
	size_t cap = 0;

	for (size_t i = 0; i < st->r.ngroups; i++) {
		const struct scan_group *g = &st->r.groups[i];
		const char *op = op_of(st, g);
		int kind = dataset_op_kind(op);
		struct model_dataset_op *d;

		if (kind < 0 || !g->count)
			continue;
		if (ARRAY_GROW(m->datasets, m->ndatasets, cap))
			return error("out of memory");
		d = &m->datasets[m->ndatasets++];
		memset(d, 0, sizeof(*d));
		d->op = op;
		d->transformation = dataset_ops[kind].name;
		d->parallel = dataset_ops[kind].parallel;
		d->pid = KEY_PID(g->k1);
		d->tid = KEY_LOW(g->k1);
		d->start_ns = g->first_ns;
		d->built = g->count;
		d->upstream = d->pipeline = -1;
		d->prefetched = tf_injects_prefetch(m);
		if (KEY_LOW(g->k2) > 0)
			d->loc = st->lk->site(st->lk->ctx, KEY_LOW(g->k2), &d->func);
	}
	/* Per process, in the order built (insertion sort: a pipeline has a handful). */
	for (size_t i = 1; i < m->ndatasets; i++)
		for (size_t j = i; j > 0 && (m->datasets[j].pid < m->datasets[j - 1].pid ||
					     (m->datasets[j].pid == m->datasets[j - 1].pid &&
					      m->datasets[j].start_ns < m->datasets[j - 1].start_ns)); j--) {
			struct model_dataset_op t = m->datasets[j];

			m->datasets[j] = m->datasets[j - 1];
			m->datasets[j - 1] = t;
		}
	return 0;
}

/*
 * Give the graph function name (after "Dataset_"), registered in pid at
 * created, to the first dataset op built after it that it can belong to.
 * Functions come oldest first, so a later one takes the op from an earlier
 * one registered strictly before it: TensorFlow traces a map's function
 * right before it builds the op,
 * and a function whose op was not recorded (Keras's validation pipeline,
 * built inside its own code) must not take the next pipeline's map.
 */
static void attach_dataset_function(struct model *m, const char *name, int64_t created, int64_t pid)
{
	int gen = !strncmp(name, "from_generator_", 15);

	for (size_t i = 0; i < m->ndatasets; i++) {
		struct model_dataset_op *d = &m->datasets[i];
		size_t tl = strlen(d->transformation);

		if (d->pid != pid || d->start_ns < created || (d->function && d->function_ns >= created))
			continue;
		if (gen && !strcmp(d->transformation, "flat_map")) {
			d->transformation = "from_generator";
			d->function = "from_generator";
		} else if (!gen && !strncmp(name, d->transformation, tl) && name[tl] == '_') {
			const char *fn = name + tl + 1, *end = fn + strlen(fn);

			while (end > fn && end[-1] >= '0' && end[-1] <= '9')
				end--;
			if (end > fn && end[-1] == '_')
				end--;
			d->function = end > fn ? model_strndup(m, fn, (size_t)(end - fn)) : NULL;
		} else {
			continue;
		}
		d->function_ns = created;
		return;
	}
}

/*
 * from_generator is from_tensors(...).flat_map(...) inside TensorFlow: the
 * from_tensors built at the same line just before it is no stage the user
 * wrote, so the pipeline does not show it.
 */
static void drop_generator_seeds(struct model *m)
{
	for (size_t i = 1; i < m->ndatasets; i++) {
		const struct model_dataset_op *d = &m->datasets[i], *p = &m->datasets[i - 1];

		if (strcmp(d->transformation, "from_generator") || strcmp(p->transformation, "from_tensors") ||
		    p->pid != d->pid || p->loc.line != d->loc.line || !p->loc.file || !d->loc.file ||
		    strcmp(p->loc.file, d->loc.file))
			continue;
		memmove(&m->datasets[i - 1], &m->datasets[i], (m->ndatasets - i) * sizeof(*m->datasets));
		m->ndatasets--;
	}
}

static int load_datasets(struct input_state *st)
{
	struct model *m = st->m;
	sqlite3_stmt *s;
	int rc = pipelines_load(m, st->lk, st->r.groups, st->r.ngroups, &st->pipelines);

	/* before schema 8: one dataset per dataset-op group, in the order built */
	if (rc < 0 || (rc > 0 && collect_dataset_ops(st)))
		return -1;
	/*
	 * A transformation's function is traced and registered right before its
	 * dataset op runs: "__inference_Dataset_map_augment_15" goes to the
	 * first map built after it.  from_generator is a flat_map inside.
	 */
	s = db_prepare(m->rec->db,
		"SELECT s.text, g.created_ns, g.pid FROM graph_functions g JOIN strings s ON s.id = g.name_id"
		" WHERE s.text LIKE '%Dataset!_%' ESCAPE '!' ORDER BY g.created_ns");
	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *text = db_col_text(s, 0);
		const char *name = text ? strstr(text, "Dataset_") : NULL;  /* LIKE ignores case */

		if (name)
			attach_dataset_function(m, name + 8, sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2));
	}
	sqlite3_finalize(s);
	if (!st->pipelines)
		drop_generator_seeds(m);
	return rc == SQLITE_DONE ? 0 : error("cannot read recording: %s", sqlite3_errmsg(m->rec->db));
}

/* The dataset transformation that made a tf.data graph function, or NULL. */
static struct model_dataset_op *dataset_of_graph(struct model *m, const char *graph_function)
{
	const char *name = graph_function ? strstr(graph_function, "Dataset_") : NULL;

	if (!name)
		return NULL;
	name += 8;
	for (size_t i = 0; i < m->ndatasets; i++) {
		struct model_dataset_op *d = &m->datasets[i];
		size_t tl = strlen(d->transformation);

		if (!d->function)
			continue;
		if (!strcmp(d->transformation, "from_generator") ? !strncmp(name, "from_generator_", 15)
		    : (!strncmp(name, d->transformation, tl) && name[tl] == '_' &&
		       !strncmp(name + tl + 1, d->function, strlen(d->function))))
			return d;
	}
	return NULL;
}

/*
 * The dataset that a tf.data graph function (after "Dataset_") registered
 * in pid at created belongs to: the first of its transformation built
 * after it (TensorFlow traces a transformation's functions right before it
 * makes the op; a generator's are in its flat_map), or NULL.
 */
static struct model_dataset_op *dataset_made_after(struct model *m, const char *name, int64_t created, int64_t pid)
{
	int gen = !strncmp(name, "from_generator_", 15);

	for (size_t i = 0; i < m->ndatasets; i++) {
		struct model_dataset_op *d = &m->datasets[i];
		size_t tl = strlen(d->transformation);

		if (d->pid == pid && d->start_ns >= created &&
		    (gen ? !strcmp(d->transformation, "from_generator")
			 : !strncmp(name, d->transformation, tl) && name[tl] == '_'))
			return d;
	}
	return NULL;
}

/* The dataset of black box b, from its graph function's creation (else its name: a recording without times). */
static struct model_dataset_op *dataset_of_blackbox(struct model *m, sqlite3_stmt *s, const struct model_blackbox *b)
{
	struct model_dataset_op *d = NULL;
	const char *name = b->graph_function ? strstr(b->graph_function, "Dataset_") : NULL;

	if (!name)
		return NULL;
	sqlite3_bind_text(s, 1, b->graph_function, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW)
		d = dataset_made_after(m, name + 8, sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1));
	sqlite3_reset(s);
	return d ? d : dataset_of_graph(m, b->graph_function);
}

/* Black box b's runs into a, the same node of the same line's dataset (built again, traced again). */
static void blackbox_fold(struct model_blackbox *a, struct model_blackbox *b)
{
	a->execs += b->execs;
	a->total_ns = dur_add(a->total_ns, b->total_ns);
	a->eager_ops += b->eager_ops;
	a->eager_ns = dur_add(a->eager_ns, b->eager_ns);
	if (b->execs && (b->first_ns < a->first_ns || !a->execs))
		a->first_ns = b->first_ns;
	if (b->last_ns > a->last_ns)
		a->last_ns = b->last_ns;
	b->execs = b->total_ns = b->eager_ops = b->eager_ns = 0;
}

/*
 * The first tf.data black box before b made at b's line by the same
 * transformation, or NULL; without a dataset (built where no op was
 * recorded), the first of the same function and node, as any retrace.
 */
static struct model_blackbox *blackbox_same_line(struct model *m, const struct model_blackbox *b)
{
	for (struct model_blackbox *p = m->blackboxes; p < b; p++) {
		if (!p->in_tf_data || !p->node_name || !b->node_name || strcmp(p->node_name, b->node_name))
			continue;
		if (!b->made_by ? !p->made_by && p->function && b->function && !strcmp(p->function, b->function)
		    : p->made_by && !strcmp(p->made_by, b->made_by) && p->loc.file && b->loc.file &&
		      p->loc.line == b->loc.line && !strcmp(p->loc.file, b->loc.file))
			return p;
	}
	return NULL;
}

/*
 * Black boxes in tf.data functions: the transformation that made them, its
 * line; a generator's per-element runs (its next()) on its dataset.
 */
static int blackbox_datasets(struct model *m)
{
	sqlite3_stmt *s = db_prepare(m->rec->db, "SELECT g.created_ns, g.pid FROM graph_functions g"
				     " JOIN strings s ON s.id = g.name_id WHERE s.text = ?1 LIMIT 1");

	if (!s)
		return -1;
	for (size_t j = 0; j < m->nblackboxes; j++) {
		struct model_blackbox *b = &m->blackboxes[j], *same;
		struct model_dataset_op *d = b->in_tf_data ? dataset_of_blackbox(m, s, b) : NULL;
		int gen;

		if (!d) {
			if (b->in_tf_data && (same = blackbox_same_line(m, b)))
				blackbox_fold(same, b);
			continue;
		}
		gen = !strcmp(d->transformation, "from_generator");
		b->made_by = gen ? model_strf(m, "from_generator (%s)", b->function ? b->function : "?")
				 : model_strf(m, "%s(%s)", d->transformation, d->function);
		if (d->loc.file)
			b->loc = d->loc;
		if (!gen || (b->function && !strcmp(b->function, "generator_next_fn"))) {
			d->blackbox_execs += b->execs;
			d->blackbox_ns = dur_add(d->blackbox_ns, b->total_ns);
		}
		if ((same = blackbox_same_line(m, b)))
			blackbox_fold(same, b);
	}
	sqlite3_finalize(s);
	return 0;
}

/* Functions TensorFlow or Keras defines: what made them. */
static int function_makers(struct model *m)
{
	sqlite3_stmt *s = db_prepare(m->rec->db,
		"SELECT g.function_id, s.text FROM graph_functions g JOIN strings s ON s.id = g.name_id"
		" WHERE g.function_id IS NOT NULL AND s.text LIKE '%Dataset!_%' ESCAPE '!' ORDER BY g.id");
	int rc;

	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0);
		struct model_dataset_op *d = dataset_of_graph(m, (const char *)sqlite3_column_text(s, 1));

		for (size_t i = 0; d && i < m->nfunctions; i++) {
			struct model_function *f = &m->functions[i];

			if (f->id != id || f->made_by)
				continue;
			f->made_by = !strcmp(d->transformation, "from_generator")
					     ? "tf.data from_generator"
					     : model_strf(m, "tf.data %s(%s)", d->transformation, d->function);
		}
	}
	sqlite3_finalize(s);
	for (size_t i = 0; i < m->nfunctions; i++) {
		struct model_function *f = &m->functions[i];
		const char *file = f->def.file;

		if (f->made_by || !file || !path_is_installed(file))
			continue;
		/* the library and the function's own name: Keras traces several (one_step_on_data, ...) */
		f->made_by = f->tf_data ? "tf.data"
					: model_strf(m, "%s %s", strstr(file, "/keras/") ? "Keras" : "TensorFlow", f->name);
	}
	return rc == SQLITE_DONE ? 0 : error("cannot read recording: %s", sqlite3_errmsg(m->rec->db));
}

/*
 * Graph functions that read an iterator inside the graph (Keras' train
 * function): the recorded FunctionDef has an IteratorGetNext node.  The
 * blob is searched first, so only candidates are parsed.
 */
static int graph_readers(struct model *m, const struct model_lookup *lk)
{
	sqlite3 *db = m->rec->db;
	sqlite3_stmt *s = db_prepare(db,
		"SELECT g.id, s.text, g.function_def, g.function_id FROM graph_functions g"
		" JOIN strings s ON s.id = g.name_id"
		" WHERE instr(g.function_def, CAST('IteratorGetNext' AS BLOB)) > 0 ORDER BY g.id");
	struct strbuf q = STRBUF_INIT;
	sqlite3_stmt *c;
	size_t cap = 0;
	int rc = SQLITE_DONE, ret = -1;

	/* the calls past the recording's budget too (scan_all_calls); the first call, a row, gives the line */
	strbuf_addf(&q, "SELECT CAST(min(total(n), 4e18) AS INTEGER), CAST(min(total(ns), 4e18) AS INTEGER),"
		    " (SELECT callsite_id FROM function_calls WHERE graph_function_id = ?1 AND callsite_id IS NOT NULL"
		    "  ORDER BY start_ns LIMIT 1) FROM %s WHERE graph_function_id = ?1", scan_all_calls(db));
	c = db_prepare(db, q.buf);
	strbuf_release(&q);
	if (!s || !c)
		goto cleanup;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct functiondef fd;
		struct model_graph_reader *r;
		const char *func;
		int reads = 0;

		if (functiondef_parse(&fd, sqlite3_column_blob(s, 2), (size_t)sqlite3_column_bytes(s, 2)) != 0)
			continue;
		for (size_t i = 0; i < fd.nnodes; i++)
			reads |= fd.nodes[i].op && is_input_wait(fd.nodes[i].op);
		functiondef_release(&fd);
		if (!reads)
			continue;
		if (ARRAY_GROW(m->graph_readers, m->ngraph_readers, cap))
			goto cleanup;
		r = &m->graph_readers[m->ngraph_readers++];
		memset(r, 0, sizeof(*r));
		r->graph_function = model_strdup(m, (const char *)sqlite3_column_text(s, 1));
		for (size_t i = 0; i < m->nfunctions; i++)
			if (m->functions[i].id == sqlite3_column_int64(s, 3))
				r->function = m->functions[i].name;
		sqlite3_bind_int64(c, 1, sqlite3_column_int64(s, 0));
		if (sqlite3_step(c) == SQLITE_ROW) {
			r->calls = sqlite3_column_int64(c, 0);
			r->calls_ns = sqlite3_column_int64(c, 1);
			if (sqlite3_column_int64(c, 2) > 0)
				r->site = lk->site(lk->ctx, sqlite3_column_int64(c, 2), &func);
		}
		sqlite3_reset(c);
		/* a graph never run reads nothing: the trace TensorFlow redid because it created variables, a nested one */
		if (!r->calls)
			m->ngraph_readers--;
	}
	ret = rc == SQLITE_DONE ? 0 : -1;
cleanup:
	if (ret)
		error("cannot read recording: %s", sqlite3_errmsg(db));
	sqlite3_finalize(s);
	sqlite3_finalize(c);
	return ret;
}

/* AGPROF_TIMING=1: the time of each part since the previous one (bench/report); NULL starts anew. */
static void timing(const char *what)
{
	static double last;
	double now;

	if (!getenv("AGPROF_TIMING"))
		return;
	now = monotonic_seconds();
	if (last > 0 && what)
		fprintf(stderr, "agprof:   %-22s %.3f s\n", what, now - last);
	last = now;
}

int model_load_input(struct model *m, const struct model_lookup *lk, int64_t *rows, int64_t *first_ns,
		     int64_t *last_ns)
{
	struct input_state st = { .m = m, .lk = lk };
	const struct scan_walk *walk;
	int ret = -1, rc;

	timing(NULL);
	if (load_tids(&st))
		return -1;
	/* the eager-hotspot savings' walk rides along (eager_runs.h): no second pass over the rows */
	walk = eager_runs_walk(m);
	timing("eager runs' reads");
	rc = scan_table_walk(m->rec->path, "eager_ops", SCAN_K1, SCAN_K2, "slow_path", "ok", walk, &st.r);
	eager_runs_walked(m, rc == 0);
	if (rc) {
		free(st.tids);
		return -1;
	}
	timing("eager_ops scan");
	rekey(&st);
	*rows = st.r.rows;
	*first_ns = st.r.first_ns;
	*last_ns = st.r.last_ns;
	if (st.r.ngroups > 1)
		qsort(st.r.groups, st.r.ngroups, sizeof(*st.r.groups), cmp_group);
	if (take_blackbox_ops(&st) || (timing("in black boxes"), rebuild_dispatch(&st)) ||
	    (timing("dispatch"), thread_facts(&st)))
		goto cleanup;
	timing("threads");
	input_lines(&st);
	if (load_datasets(&st))
		goto cleanup;
	if (blackbox_datasets(m) || input_loops(&st) || graph_readers(m, lk))
		goto cleanup;
	timing("datasets, readers");
	ret = 0;
cleanup:
	scan_result_release(&st.r);
	pipelines_release(st.pipelines);
	free(st.tids);
	return ret;
}

int model_input_finish(struct model *m)
{
	int ret;

	timing(NULL);
	thread_shares(m);
	ret = function_makers(m);
	timing("threads' shares, made_by");
	return ret;
}

/*
 * The spread of a share within the run (model_internal.h): the thread's
 * share in each of SHARE_BLOCKS blocks of [a, b), input waits apart from
 * the rest.  Input waits: equal blocks of the wall clock, each wait's time
 * spread over the blocks it overlaps (a long wait is not one block's).
 * Eager dispatch, on the share's own clock (thread_shares()): blocks of
 * equal time less the thread's waits for a CPU, each op's steady cost
 * (model_eager_key_op_ns()) in the block it starts in, a bucket's spread
 * over its span.  Equal wall-clock blocks beside a CPU hog were mostly
 * the loop's (its waits), which made its spread small and the finding an
 * error where a quiet run's was a borderline warning.
 */
#define SHARE_BLOCKS 20
#define SHARE_SUBS (SHARE_BLOCKS * 100)  /* the blocks' bounds are found to 1/100 of a block */

struct share_blocks {
	int64_t a, b;
	double sublen;                        /* (b - a) / SHARE_SUBS */
	unsigned char block_of[SHARE_SUBS];   /* each wall-clock part's block */
	double own[SHARE_BLOCKS];             /* each block's time (less waits for a CPU on the own clock) */
	double sum[SHARE_BLOCKS];             /* the measure in it */
};

/* Blocks of [a, b) of equal time: less thread (pid, tid)'s waits for a CPU when own_clock. */
static void blocks_init(const struct model *m, struct share_blocks *sb, int64_t pid, int64_t tid, int64_t a,
			int64_t b, int own_clock)
{
	double part[SHARE_SUBS], total = 0, at = 0;

	memset(sb, 0, sizeof(*sb));
	sb->a = a;
	sb->b = b;
	sb->sublen = (double)(b - a) / SHARE_SUBS;
	for (int j = 0; j < SHARE_SUBS; j++) {
		double lo = (double)a + j * sb->sublen;
		double wait = own_clock ? cpu_intervals_thread_wait(m->cpu_samples, pid, tid, (int64_t)lo,
								    (int64_t)(lo + sb->sublen)) : 0;

		total += part[j] = wait < sb->sublen ? sb->sublen - wait : 0;
	}
	for (int j = 0; j < SHARE_SUBS; j++) {
		int k = total > 0 ? (int)((at + part[j] / 2) / total * SHARE_BLOCKS) : j / (SHARE_SUBS / SHARE_BLOCKS);

		k = k < 0 ? 0 : k >= SHARE_BLOCKS ? SHARE_BLOCKS - 1 : k;
		sb->block_of[j] = (unsigned char)k;
		sb->own[k] += total > 0 ? part[j] : sb->sublen;
		at += part[j];
	}
}

static int sub_of(const struct share_blocks *sb, double t)
{
	int j = (int)((t - (double)sb->a) / sb->sublen);

	return j < 0 ? 0 : j >= SHARE_SUBS ? SHARE_SUBS - 1 : j;
}

/* [s, e) (clipped to [a, b)) added to the blocks it overlaps, times w. */
static void spread(struct share_blocks *sb, int64_t s, int64_t e, double w)
{
	double from = (double)(s < sb->a ? sb->a : s), to = (double)(e > sb->b ? sb->b : e);

	for (int j = sub_of(sb, from); j < SHARE_SUBS && from < to; j++) {
		double hi = (double)sb->a + (j + 1) * sb->sublen, end = to < hi ? to : hi;

		if (end > from)
			sb->sum[sb->block_of[j]] += w * (end - from);
		from = end;
	}
}

/* Rows of from: start, end, weight, an input wait, op, site, its ops (count). */
static char *blocks_sql(const char *from, const char *weight, const char *count)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "SELECT start_ns, end_ns, %s, op_id IN (SELECT id FROM strings WHERE text IN (", weight);
	for (int i = 0; input_wait_ops[i]; i++)
		strbuf_addf(&sb, "%s'%s'", i ? ", " : "", input_wait_ops[i]);
	strbuf_addf(&sb, ")), op_id, callsite_id, %s FROM %s WHERE pid = ?1 AND tid = ?2 AND start_ns < ?4 AND end_ns > ?3",
		    count, from);
	return strbuf_failed(&sb) ? (strbuf_release(&sb), NULL) : strbuf_detach(&sb);
}

/*
 * One row of blocks_sql() into the blocks: a wait's time; an eager op's
 * steady cost (its key's; none when its key has none).
 */
static void add_row(const struct model *m, sqlite3_stmt *st, int64_t pid, int64_t tid, int waits,
		    struct share_blocks *sb)
{
	int64_t s = sqlite3_column_int64(st, 0), e = sqlite3_column_int64(st, 1), op_ns;
	double w = sqlite3_column_double(st, 2), n = sqlite3_column_double(st, 6);

	if (e <= s || sqlite3_column_int(st, 3) != waits)
		return;
	if (waits) {
		if (w > 0)
			spread(sb, s, e, w < 1 ? w : 1);
		return;
	}
	op_ns = model_eager_key_op_ns(m, pid, tid, sqlite3_column_int64(st, 4), sqlite3_column_int64(st, 5));
	if (op_ns <= 0 || n <= 0)
		return;
	if (n == 1 && s >= sb->a)
		sb->sum[sb->block_of[sub_of(sb, (double)s)]] += (double)op_ns;
	else
		spread(sb, s, e, n * (double)op_ns / (double)(e - s));
}

/* weight: the share of a row's span its ops ran (1 for an op; a bucket's total over its span); count: its ops. */
static int add_blocks(const struct model *m, const char *from, const char *weight, const char *count, int64_t pid,
		      int64_t tid, int waits, struct share_blocks *sb)
{
	char *sql = blocks_sql(from, weight, count);
	sqlite3_stmt *st = sql ? db_prepare(m->rec->db, sql) : NULL;
	const int64_t key[4] = { pid, tid, sb->a, sb->b };
	int rc;

	free(sql);
	if (!st)
		return -1;
	for (int i = 0; i < 4; i++)
		sqlite3_bind_int64(st, i + 1, key[i]);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		add_row(m, st, pid, tid, waits, sb);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -1;
}

static double share_se_scan(const struct model *m, int64_t pid, int64_t tid, int64_t a, int64_t b, int waits)
{
	struct share_blocks *sb;
	double share[SHARE_BLOCKS], mean = 0, var = 0;

	if (b <= a || b - a < SHARE_SUBS || !m->rec || !(sb = malloc(sizeof(*sb))))
		return 0;
	blocks_init(m, sb, pid, tid, a, b, !waits);
	if (add_blocks(m, "eager_ops", "1.0", "1", pid, tid, waits, sb) ||
	    (db_has_table(m->rec->db, "eager_op_buckets") &&
	     add_blocks(m, "eager_op_buckets", "max(total_ns, 0) * 1.0 / (end_ns - start_ns)", "max(count, 0)", pid,
			tid, waits, sb))) {
		free(sb);
		return 0;
	}
	for (int i = 0; i < SHARE_BLOCKS; i++)
		mean += (share[i] = sb->own[i] > 0 ? sb->sum[i] / sb->own[i] : 0) / SHARE_BLOCKS;
	for (int i = 0; i < SHARE_BLOCKS; i++)
		var += (share[i] - mean) * (share[i] - mean) / (SHARE_BLOCKS - 1);
	free(sb);
	return sqrt(var / SHARE_BLOCKS);
}

/*
 * A span's standard error is scanned once: a rule reads the field at each
 * of its comparisons, and each read was a scan of the thread's ops (two
 * reads, 4 s each, of a 10M-event recording's 8M ops).
 */
struct share_se_memo {
	int64_t pid, tid, a, b;
	int waits;
	double se;
};

double model_share_se(const struct model *m, int64_t pid, int64_t tid, int64_t a, int64_t b, int waits)
{
	struct model *memo = (struct model *)m;  /* the memo only: what the model says is unchanged */
	struct share_se_memo *grown;
	double se;

	for (size_t i = 0; i < m->nshare_se; i++) {
		const struct share_se_memo *s = &m->share_se[i];

		if (s->pid == pid && s->tid == tid && s->a == a && s->b == b && s->waits == waits)
			return s->se;
	}
	se = share_se_scan(m, pid, tid, a, b, waits);
	grown = realloc(memo->share_se, (m->nshare_se + 1) * sizeof(*grown));
	if (grown) {
		grown[m->nshare_se] = (struct share_se_memo){ pid, tid, a, b, waits, se };
		memo->share_se = grown;
		memo->nshare_se++;
	}
	return se;
}

const struct model_dataset_op *model_padding_stage(const struct model *m, const char *file, int line)
{
	const struct code_fact *loop = file ? code_fact_around(m, "loop", file, line) : NULL;

	for (size_t i = 0; loop && i < m->ninput_loops; i++) {
		const struct model_input_loop *il = &m->input_loops[i];

		/* the loop reads its iterator at its own line (the for statement) */
		if (!il->loc.file || strcmp(il->loc.file, file) || il->loc.line < loop->line || il->loc.line > loop->end_line)
			continue;
		for (long k = il->last, hops = 0; k >= 0 && (size_t)k < m->ndatasets && hops < 64;
		     k = m->datasets[k].upstream, hops++)
			if (!strcmp(m->datasets[k].transformation, "padded_batch"))
				return &m->datasets[k];
	}
	return NULL;
}
