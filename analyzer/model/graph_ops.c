/*
 * graph_ops.c - see graph_ops.h.  Reads kernels and graph_nodes (schema v4)
 * with four aggregate queries; the per-call union of kernel spans is the one
 * pass over kernel rows, in call and start order.  Since schema v5 the
 * kernels table holds the sampled calls only and kernel_totals counts every
 * execution: counts come from the totals, a node's kernel time is its count
 * times its mean duration in the sampled calls (the timed executions),
 * busy time (and so the executor overhead) is the sampled calls' share of
 * their wall time applied to all calls.
 */
#include "graph_ops.h"
#include "db.h"
#include "strbuf.h"
#include "functiondef.h"
#include "idmap.h"
#include "model_internal.h"
#include "recording.h"
#include "scan.h"
#include "util.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Overall ops kept (the rest are summed in the types). */
#define OVERALL_OPS_MAX 200

struct call_sum;

struct loader {
	struct model *m;
	struct graph_ops_model *g;
	struct idmap fn_index;      /* graph_functions.id -> index in g->fns */
	struct call_sum *first;     /* per function, its first call (call_done) */
	int totals;                 /* kernel_totals has rows (schema v5) */
};

static int cmp_op(const void *a, const void *b)
{
	const struct graph_op *x = a, *y = b;

	return x->total_ns != y->total_ns ? (x->total_ns < y->total_ns ? 1 : -1) : strcmp(x->name, y->name);
}

static int cmp_type(const void *a, const void *b)
{
	const struct graph_op_type *x = a, *y = b;

	return x->total_ns != y->total_ns ? (x->total_ns < y->total_ns ? 1 : -1) : strcmp(x->op_type, y->op_type);
}

static int cmp_fn(const void *a, const void *b)
{
	const struct graph_fn_ops *x = a, *y = b;
	int64_t wx = x->overhead_ns + x->kernel_ns, wy = y->overhead_ns + y->kernel_ns;

	return wx != wy ? (wx < wy ? 1 : -1) : (x->id > y->id) - (x->id < y->id);
}

/*
 * Finalize s after its loop ended with rc: 0 when it ran to SQLITE_DONE;
 * otherwise one error line (a loop left early ran out of memory).
 */
static int stmt_end(sqlite3 *db, sqlite3_stmt *s, int rc)
{
	int ret = 0;

	if (rc == SQLITE_ROW)
		ret = error("out of memory");
	else if (rc != SQLITE_DONE)
		ret = error("cannot read the recording's kernels: %s", sqlite3_errmsg(db));
	sqlite3_finalize(s);
	return ret;
}

/*
 * A total() column (a float, which a hostile recording cannot make overflow),
 * clamped to [0, INT64_MAX]: a time or a count; NaN and negative totals are 0.
 */
static int64_t col_total(sqlite3_stmt *s, int col)
{
	double v = sqlite3_column_double(s, col);

	return v >= 9.0e18 ? INT64_MAX : v > 0 ? (int64_t)v : 0;
}

/* Whether kernel_totals (schema v5) has rows: a v4 recording, or a merge of them, has none. */
static int has_totals(sqlite3 *db)
{
	sqlite3_stmt *s = NULL;
	int yes;

	if (!db_has_table(db, "kernel_totals") ||
	    sqlite3_prepare_v2(db, "SELECT 1 FROM kernel_totals LIMIT 1", -1, &s, NULL) != SQLITE_OK) {
		sqlite3_finalize(s);
		return 0;
	}
	yes = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return yes;
}

static const char *pooled(struct model *m, sqlite3_stmt *s, int col)
{
	const char *t = db_col_text(s, col);

	return t ? model_strdup(m, t) : NULL;
}

/*
 * The graph functions a kernel row or total names (through its call or its
 * node), with their user function's name: the only ones the steps below
 * look up.  A loop that retraces each step has a million graph functions
 * and a few with kernels.  0 or -1.
 */
static int load_fns(struct loader *l, sqlite3 *db)
{
	char q[1024];
	sqlite3_stmt *s;
	size_t cap = 0;
	int rc;

	snprintf(q, sizeof(q), "SELECT g.id, s.text, g.jit_compile, fs.text, g.node_count, g.function_id"
		 " FROM graph_functions g"
		 " JOIN strings s ON s.id = g.name_id LEFT JOIN functions f ON f.id = g.function_id"
		 " LEFT JOIN strings fs ON fs.id = f.name_id WHERE g.id IN ("
		 "SELECT c.graph_function_id FROM kernels k JOIN function_calls c ON c.id = k.call_id"
		 " UNION SELECT n.graph_function_id FROM kernels k JOIN graph_nodes n ON n.id = k.node_id%s)"
		 " ORDER BY g.id", l->totals ?
		 " UNION SELECT c.graph_function_id FROM kernel_totals k JOIN function_calls c ON c.id = k.call_id"
		 " UNION SELECT graph_function_id FROM kernel_totals"
		 " UNION SELECT n.graph_function_id FROM kernel_totals k JOIN graph_nodes n ON n.id = k.node_id" : "");
	s = db_prepare(db, q);
	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct graph_fn_ops *f;

		if (ARRAY_GROW(l->g->fns, l->g->nfns, cap) || idmap_put(&l->fn_index, sqlite3_column_int64(s, 0), l->g->nfns) < 0)
			break;
		f = &l->g->fns[l->g->nfns++];
		memset(f, 0, sizeof(*f));
		f->id = sqlite3_column_int64(s, 0);
		f->graph_function = pooled(l->m, s, 1);
		f->jit_compile = sqlite3_column_int(s, 2);
		f->function = pooled(l->m, s, 3);
		f->nodes = sqlite3_column_int64(s, 4);
		f->function_id = sqlite3_column_int64(s, 5);
	}
	return stmt_end(db, s, rc);
}

static struct graph_fn_ops *fn_of(struct loader *l, int64_t id)
{
	size_t i;

	return idmap_get(&l->fn_index, id, &i) && i < l->g->nfns ? &l->g->fns[i] : NULL;
}

/* Union of one call's kernel spans, fed in start order. */
struct span_union {
	int64_t busy, cur_start, cur_end;
};

static void union_add(struct span_union *u, int64_t start, int64_t end)
{
	if (end < start)
		end = start;
	if (u->cur_end > u->cur_start && start <= u->cur_end) {
		if (end > u->cur_end)
			u->cur_end = end;
		return;
	}
	u->busy = sat_add64(u->busy, sat_sub64(u->cur_end, u->cur_start));
	u->cur_start = start, u->cur_end = end;
}

static int64_t union_done(struct span_union *u)
{
	int64_t busy = sat_add64(u->busy, sat_sub64(u->cur_end, u->cur_start));

	memset(u, 0, sizeof(*u));
	return busy;
}

/* One call's numbers, summed into its graph function. */
struct call_sum {
	int64_t start, end, kernels, kernel_ns, busy;
};

static void fn_add(struct graph_fn_ops *f, const struct call_sum *c)
{
	int64_t wall = c->end > c->start ? sat_sub64(c->end, c->start) : 0;

	f->calls++;
	f->call_ns = sat_add64(f->call_ns, wall);
	f->busy_ns = sat_add64(f->busy_ns, c->busy < wall ? c->busy : wall);
	if (wall > 0) {  /* the calls are the repetitions of overhead_share's measure (its _se) */
		double share = (double)(wall - (c->busy < wall ? c->busy : wall)) / (double)wall;

		f->share_sum += share;
		f->share_sq += share * share;
		f->share_n++;
	}
	f->kernels = sat_add64(f->kernels, c->kernels);
	f->kernel_ns = sat_add64(f->kernel_ns, c->kernel_ns);
	if (!f->first_ns || c->start < f->first_ns)
		f->first_ns = c->start;
	if (c->end > f->last_ns)
		f->last_ns = c->end;
}

/*
 * The calls with kernels that start in [?1, ?2), each graph function's first
 * such call left out when it has others (call_done's rule: it instantiates).
 */
static const char busy_in_sql[] =
	"SELECT k.call_id, c.start_ns, c.end_ns, k.start_ns, k.end_ns FROM kernels k"
	" JOIN function_calls c ON c.id = k.call_id WHERE c.start_ns >= ?1 AND c.start_ns < ?2"
	" AND k.call_id NOT IN (SELECT min(k2.call_id) FROM kernels k2 JOIN function_calls c2 ON c2.id = k2.call_id"
	"  GROUP BY c2.graph_function_id HAVING count(DISTINCT k2.call_id) > 1)"
	" ORDER BY k.call_id, k.start_ns";

int graph_ops_busy_in(const struct model *m, int64_t from, int64_t to, int64_t *call_ns, int64_t *busy_ns)
{
	sqlite3_stmt *s = db_prepare(m->rec->db, busy_in_sql);
	struct span_union u = { 0, 0, 0 };
	struct call_sum c = { 0, 0, 0, 0, 0 };
	struct graph_fn_ops sum = { 0 };
	int64_t call = -1;
	int rc;

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, from);
	sqlite3_bind_int64(s, 2, to);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t ks = sqlite3_column_int64(s, 3), ke = sqlite3_column_int64(s, 4);

		if (sqlite3_column_int64(s, 0) != call) {
			if (call >= 0) {
				c.busy = union_done(&u);
				fn_add(&sum, &c);
			}
			call = sqlite3_column_int64(s, 0);
			c.start = sqlite3_column_int64(s, 1), c.end = sqlite3_column_int64(s, 2);
		}
		union_add(&u, ks > c.start ? ks : c.start, ke < c.end ? ke : c.end);  /* as load_calls */
	}
	if (call >= 0) {
		c.busy = union_done(&u);
		fn_add(&sum, &c);
	}
	*call_ns = sum.call_ns;
	*busy_ns = sum.busy_ns;
	return stmt_end(m->rec->db, s, rc);
}

/*
 * Calls come in id order, so a function's first call comes first: it is
 * kept aside (l->first) and counted only when no other call follows.
 */
static void call_done(struct loader *l, struct graph_fn_ops *f, struct call_sum *c, struct span_union *u)
{
	size_t i = f ? (size_t)(f - l->g->fns) : 0;

	c->busy = union_done(u);
	if (f && !f->first_left_out) {
		f->first_left_out = 1;
		f->first_call_ns = c->end > c->start ? sat_sub64(c->end, c->start) : 0;
		l->first[i] = *c;
	} else if (f) {
		fn_add(f, c);
	}
	memset(c, 0, sizeof(*c));
}

/* Per call: wall time, kernel runs, busy time; summed per graph function.  0 or -1. */
static int load_calls(struct loader *l, sqlite3 *db)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT k.call_id, c.graph_function_id, c.start_ns, c.end_ns, k.start_ns, k.end_ns"
					 " FROM kernels k JOIN function_calls c ON c.id = k.call_id ORDER BY k.call_id, k.start_ns");
	struct span_union u = { 0, 0, 0 };
	struct call_sum c = { 0, 0, 0, 0, 0 };
	struct graph_fn_ops *f = NULL;
	int64_t call = -1;
	int rc;

	l->first = calloc(l->g->nfns + 1, sizeof(*l->first));
	if (!s || !l->first) {
		sqlite3_finalize(s);
		return -1;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t ks = sqlite3_column_int64(s, 4), ke = sqlite3_column_int64(s, 5);

		if (sqlite3_column_int64(s, 0) != call) {
			if (call >= 0)
				call_done(l, f, &c, &u);
			call = sqlite3_column_int64(s, 0);
			f = fn_of(l, sqlite3_column_int64(s, 1));
			c.start = sqlite3_column_int64(s, 2), c.end = sqlite3_column_int64(s, 3);
		}
		/* a kernel is counted within its call only */
		union_add(&u, ks > c.start ? ks : c.start, ke < c.end ? ke : c.end);
		c.kernels++;
		c.kernel_ns = sat_add64(c.kernel_ns, ke > ks ? sat_sub64(ke, ks) : 0);
	}
	if (call >= 0)
		call_done(l, f, &c, &u);
	for (size_t i = 0; i < l->g->nfns; i++) {
		f = &l->g->fns[i];
		if (f->first_left_out && f->calls == 0) {
			fn_add(f, &l->first[i]);
			f->first_left_out = 0;
		}
		f->overhead_ns = f->call_ns > f->busy_ns ? f->call_ns - f->busy_ns : 0;
	}
	return stmt_end(db, s, rc);
}

/*
 * The calls whose detail the collector cut (meta kernel_cut_calls: a call of
 * more than 65,536 kernels on a thread, an MCMC sampler's while loop) have
 * no kernel rows, only their totals.  A function with no other sampled call
 * gets them as its sampled calls, so that its row is not lost: kernel time
 * is the timed kernels' mean times the count, and busy time that sum within
 * the call's wall, an upper bound (kernels on two threads overlap), so the
 * dispatch overhead read from it is a lower bound.  0 or -1.
 */
static int load_cut_calls(struct loader *l, sqlite3 *db)
{
	char *cut = db_meta_get(db, "kernel_cut_calls");
	sqlite3_stmt *s;
	int rc;

	if (!cut)
		return 0;
	free(cut);
	s = db_prepare(db, "SELECT c.graph_function_id, c.start_ns, c.end_ns, CAST(min(total(k.count), 4e18) AS INTEGER),"
			   " total(k.timed), total(k.timed_ns) FROM function_calls c JOIN kernel_totals k ON k.call_id = c.id"
			   " WHERE c.kernel_detail = 0 AND c.graph_function_id IS NOT NULL GROUP BY c.id"
			   " HAVING total(k.timed) > 0 ORDER BY c.id");
	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct graph_fn_ops *f = fn_of(l, sqlite3_column_int64(s, 0));
		struct call_sum c = { sqlite3_column_int64(s, 1), sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3), 0, 0 };
		double ns = sqlite3_column_double(s, 5) * (double)c.kernels / sqlite3_column_double(s, 4);

		if (!f || f->sampled_from_cut != f->calls || f->first_left_out)
			continue;  /* a function with calls detailed: they speak for it (scale_to_all_calls) */
		c.kernel_ns = ns > 0 && ns < 4e18 ? (int64_t)ns : 0;
		c.busy = c.kernel_ns;
		fn_add(f, &c);
		f->sampled_from_cut++;
	}
	return stmt_end(db, s, rc);
}

/* f's sums from its sampled calls to all its calls (calls, call_ns: of all; row s: their first and last). */
static void scale_fn(struct graph_fn_ops *f, sqlite3_stmt *s, int64_t calls, int64_t call_ns)
{
	if (f->first_left_out) {
		calls--;
		call_ns = sat_sub64(call_ns, f->first_call_ns);
	}
	f->sampled_calls = f->calls;
	if (f->call_ns > 0)
		f->busy_ns = (int64_t)((double)call_ns * ((double)f->busy_ns / (double)f->call_ns));
	f->calls = calls;
	f->call_ns = call_ns;
	f->first_ns = sqlite3_column_int64(s, 2);
	f->last_ns = sqlite3_column_int64(s, 3);
	f->overhead_ns = f->call_ns > f->busy_ns ? f->call_ns - f->busy_ns : 0;
}

/*
 * Schema v5: from the sampled calls (load_calls) to all of them.  A
 * function's calls, wall time and first/last come from function_calls
 * (less the first call when load_calls left it out), its busy time is the
 * sampled calls' busy share of their wall time applied to all calls' wall
 * time; its kernels and kernel time are its ops' (totals_to_fns).  0 or -1.
 */
static int scale_to_all_calls(struct loader *l, sqlite3 *db)
{
	char q[640];
	sqlite3_stmt *s;
	int rc = SQLITE_DONE;

	/*
	 * the calls past the recording's budget too (schema 7: scan_all_calls);
	 * one indexed look-up per function with kernels, not a GROUP BY of every call
	 */
	snprintf(q, sizeof(q), "SELECT CAST(min(total(c.n), 4e18) AS INTEGER), total(c.ns),"
		 " min(c.start_ns), max(c.end_ns) FROM %s c WHERE c.graph_function_id = ?1", scan_all_calls(db));
	if (!(s = db_prepare(db, q)))
		return -1;
	for (size_t i = 0; i < l->g->nfns && rc == SQLITE_DONE; i++) {
		struct graph_fn_ops *f = &l->g->fns[i];
		int64_t calls, call_ns;

		if (f->calls <= 0)
			continue;  /* no sampled call: nothing to scale from */
		sqlite3_bind_int64(s, 1, f->id);
		if ((rc = sqlite3_step(s)) != SQLITE_ROW)
			break;
		calls = sqlite3_column_int64(s, 0), call_ns = col_total(s, 1);
		if (calls >= f->calls)
			scale_fn(f, s, calls, call_ns);
		rc = sqlite3_reset(s) == SQLITE_OK ? SQLITE_DONE : SQLITE_ERROR;
	}
	return stmt_end(db, s, rc);
}

/* Schema v5: a function's kernels and kernel time are those of its ops (from the totals). */
static void totals_to_fns(struct graph_ops_model *g)
{
	for (size_t i = 0; i < g->nfns; i++) {
		struct graph_fn_ops *f = &g->fns[i];

		if (!f->sampled_calls)
			continue;
		f->kernels = 0;
		for (size_t o = 0; o < f->nops; o++)
			f->kernels = sat_add64(f->kernels, f->ops[o].count > 0 ? f->ops[o].count : 0);
		f->kernel_ns = f->op_kernel_ns;
	}
}

/*
 * Names of fused kernels.  Grappler replaces Conv2D and the
 * BiasAdd (and activation) after it with one kernel (_FusedConv2D, oneDNN's
 * _MklNativeFusedConv2D) named after the last op it fuses: the recording
 * ties its kernels to the FunctionDef node of that name (BiasAdd), so
 * slow-op said "BiasAdd took 100% of conv_fn's kernel time".  The kernel's
 * own type survives in the unlinked graph_nodes row of its name; the
 * FunctionDef's inputs, walked back from the named node to the op the
 * kernel is built on, say which ops it covers: "Conv2D+BiasAdd+Relu".
 *
 * The SQL expression, over graph_nodes n, of the kernel's own type when it is
 * a fused kernel named after n (NULL otherwise): one more column of a query.
 */
#define GRAPH_FUSED_TYPE_SQL \
	"(SELECT u.op_type FROM graph_nodes u WHERE u.pid = n.pid AND u.name = n.name AND u.graph_function_id IS NULL" \
	" AND u.op_type != n.op_type AND u.op_type LIKE '%Fused%' LIMIT 1)"

#define MAX_CHAIN 6     /* ops one fused kernel covers: a conv, a bias, an add, an activation, ... */

/* "_MklNativeFusedConv2D" -> "Conv2D": the op the fused kernel is built on. */
static const char *base_op(const char *t)
{
	static const char *const parts[] = { "_", "Mkl", "Native", "Fused" };

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++)
		if (!strncmp(t, parts[i], strlen(parts[i])))
			t += strlen(parts[i]);
	return t;
}

static const struct fdef_node *node_named(const struct functiondef *fd, const char *name, size_t len)
{
	for (size_t i = 0; i < fd->nnodes; i++)
		if (fd->nodes[i].name && strlen(fd->nodes[i].name) == len && !strncmp(fd->nodes[i].name, name, len))
			return &fd->nodes[i];
	return NULL;
}

/* The first data input's node of n in fd, or NULL ("conv:output:0" -> node conv; an argument: NULL). */
static const struct fdef_node *producer(const struct functiondef *fd, const struct fdef_node *n)
{
	for (size_t k = 0; k < n->ninputs; k++)
		if (n->inputs[k][0] != '^')
			return node_named(fd, n->inputs[k], strcspn(n->inputs[k], ":"));
	return NULL;
}

/* ops[] from the base op up to node, walked back through first inputs; how many, 0 when not reached. */
static size_t chain(const struct functiondef *fd, const char *node, const char *base, const char **ops)
{
	const struct fdef_node *n = node_named(fd, node, strlen(node));
	size_t k = 0;

	for (; n && n->op && k < MAX_CHAIN; n = producer(fd, n)) {
		ops[k++] = n->op;
		if (!strcmp(n->op, base))
			return k;
	}
	return 0;
}

/*
 * What fused kernel type kernel_type, named after node node (op node_op) of
 * graph function gf, computes: "Conv2D+BiasAdd" (a string of m's pool).
 */
static const char *graph_fused_name(struct model *m, int64_t gf, const char *node, const char *node_op,
				    const char *kernel_type)
{
	const char *base = base_op(kernel_type), *ops[MAX_CHAIN];
	struct strbuf sb = STRBUF_INIT;
	struct functiondef fd;
	sqlite3_stmt *s = m->rec ? db_prepare(m->rec->db, "SELECT function_def FROM graph_functions WHERE id = ?") : NULL;
	size_t n = 0;
	const char *name;

	if (s) {
		sqlite3_bind_int64(s, 1, gf);
		if (sqlite3_step(s) == SQLITE_ROW &&
		    functiondef_parse(&fd, sqlite3_column_blob(s, 0), (size_t)sqlite3_column_bytes(s, 0)) == 0) {
			n = chain(&fd, node, base, ops);
			for (size_t i = n; i-- > 0;)
				strbuf_addf(&sb, "%s%s", i + 1 < n ? "+" : "", ops[i]);
			functiondef_release(&fd);
		}
		sqlite3_finalize(s);
	}
	if (!n)  /* the graph does not show the chain: the base and the op it is named after */
		strbuf_addf(&sb, "%s+%s", base, node_op);
	name = model_strdup(m, sb.buf ? sb.buf : kernel_type);
	strbuf_release(&sb);
	return name;
}

/*
 * One node's row (graph function, name, op type, file, line, count, time),
 * its kernel's own type in column fused: a fused kernel is named for what
 * it fuses (graph_fused_name()), not for the node it took its name from.
 */
static void op_from_row(struct model *m, sqlite3_stmt *s, struct graph_op *op, int fused)
{
	memset(op, 0, sizeof(*op));
	op->name = db_col_text(s, 1) ? pooled(m, s, 1) : "?";
	op->op_type = db_col_text(s, 2) ? pooled(m, s, 2) : "?";
	if (db_col_text(s, fused) && db_col_text(s, 1) && db_col_text(s, 2))
		op->op_type = graph_fused_name(m, sqlite3_column_int64(s, 0), op->name, op->op_type, db_col_text(s, fused));
	op->loc.file = pooled(m, s, 3);
	op->loc.line = op->loc.file ? sqlite3_column_int(s, 4) : 0;
	op->count = sqlite3_column_int64(s, 5);
	op->total_ns = col_total(s, 6);
}

/* Add op's time to its type in types[]; 0 or -1. */
static int add_type(struct graph_op_type **types, size_t *n, size_t *cap, const struct graph_op *op)
{
	size_t i;

	for (i = 0; i < *n; i++)
		if (!strcmp((*types)[i].op_type, op->op_type))
			break;
	if (i == *n) {
		if (ARRAY_GROW(*types, *n, *cap))
			return -1;
		memset(&(*types)[i], 0, sizeof((*types)[i]));
		(*types)[i].op_type = op->op_type;
		(*n)++;
	}
	(*types)[i].count = sat_add64((*types)[i].count, op->count);
	(*types)[i].total_ns = sat_add64((*types)[i].total_ns, op->total_ns);
	return 0;
}

/* Sort ops and types; each type's line is that of its longest-running node with one. */
static void finish_ops(struct graph_op *ops, size_t nops, struct graph_op_type *types, size_t ntypes)
{
	sort_array(ops, nops, sizeof(*ops), cmp_op);
	sort_array(types, ntypes, sizeof(*types), cmp_type);
	for (size_t t = 0; t < ntypes; t++)
		for (size_t i = 0; i < nops && !types[t].loc.file; i++)
			if (ops[i].loc.file && !strcmp(ops[i].op_type, types[t].op_type))
				types[t].loc = ops[i].loc;
}

/* total(): a float sum, which a hostile recording cannot make overflow (clamped when read) */
#define NODE_COLS "n.name, n.op_type, n.file, n.line, count(*), total(max(k.end_ns - k.start_ns, 0)), " GRAPH_FUSED_TYPE_SQL

/* Each function's first call with kernels, when others have some: left out of its sums (as load_calls). */
/*
 * (IN builds the kernels' call ids once: a recording whose launcher and
 * keeper were both killed has no kernels_call index, and EXISTS scanned
 * every kernel per call.)
 */
#define FIRST_CALLS "SELECT min(c2.id) FROM function_calls c2 WHERE c2.id IN (SELECT k2.call_id FROM kernels k2)" \
		    " GROUP BY c2.graph_function_id HAVING count(*) > 1"

/*
 * Per graph function and node, from the kernel rows (schema v4) or the
 * totals less the first call's rows (v5).
 */
static const char fn_ops_sql[] =
	"SELECT c.graph_function_id, " NODE_COLS " FROM kernels k"
	" JOIN function_calls c ON c.id = k.call_id LEFT JOIN graph_nodes n ON n.id = k.node_id"
	" WHERE k.call_id NOT IN (" FIRST_CALLS ") GROUP BY c.graph_function_id, k.node_id";
/*
 * v5: count less the first call's, time = that count * the mean of the timed
 * executions less the first call's (all of them when it was the only one).
 */
static const char fn_ops_totals_sql[] =
	"SELECT e.gf, n.name, n.op_type, n.file, n.line, e.cnt - coalesce(f.cnt, 0),"
	" CASE WHEN e.tc - coalesce(f.cnt, 0) > 0 THEN max(e.tns - coalesce(f.ns, 0), 0) * (e.cnt - coalesce(f.cnt, 0))"
	"  / (e.tc - coalesce(f.cnt, 0)) WHEN e.tc > 0 THEN e.tns * (e.cnt - coalesce(f.cnt, 0)) / e.tc ELSE 0 END, "
	GRAPH_FUSED_TYPE_SQL
	" FROM (SELECT graph_function_id AS gf, node_id AS node, sum(count) AS cnt, sum(timed) AS tc,"
	"  total(timed_ns) AS tns FROM kernel_totals WHERE graph_function_id IS NOT NULL GROUP BY 1, 2) e"
	" LEFT JOIN graph_nodes n ON n.id = e.node"
	" LEFT JOIN (SELECT k.node_id AS node, c.graph_function_id AS gf, count(*) AS cnt,"
	"  total(max(k.end_ns - k.start_ns, 0)) AS ns FROM kernels k JOIN function_calls c ON c.id = k.call_id"
	"  WHERE k.call_id IN (" FIRST_CALLS ") GROUP BY 1, 2) f ON f.node IS e.node AND f.gf = e.gf";

/* Per graph function and node: runs and time (the first call left out).  0 or -1. */
static int load_fn_ops(struct loader *l, sqlite3 *db)
{
	sqlite3_stmt *s = db_prepare(db, l->totals ? fn_ops_totals_sql : fn_ops_sql);
	size_t *opcap = calloc(l->g->nfns + 1, sizeof(size_t)), *typecap = calloc(l->g->nfns + 1, sizeof(size_t));
	int rc = -1, step = SQLITE_DONE;

	if (!s || !opcap || !typecap)
		goto out;
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		struct graph_fn_ops *f = fn_of(l, sqlite3_column_int64(s, 0));
		size_t fi;

		if (!f)
			continue;
		fi = (size_t)(f - l->g->fns);
		if (ARRAY_GROW(f->ops, f->nops, opcap[fi])) {
			error("out of memory");
			goto out;
		}
		op_from_row(l->m, s, &f->ops[f->nops], 7);
		f->ops[f->nops].graph_function = f->graph_function;
		f->ops[f->nops].function = f->function;
		if (add_type(&f->types, &f->ntypes, &typecap[fi], &f->ops[f->nops])) {
			error("out of memory");
			goto out;
		}
		f->op_kernel_ns = sat_add64(f->op_kernel_ns, f->ops[f->nops].total_ns);
		f->nops++;
	}
	rc = stmt_end(db, s, step);
	s = NULL;
	for (size_t i = 0; i < l->g->nfns; i++)
		finish_ops(l->g->fns[i].ops, l->g->fns[i].nops, l->g->fns[i].types, l->g->fns[i].ntypes);
out:
	sqlite3_finalize(s);
	free(opcap);
	free(typecap);
	return rc;
}

/* Every kernel by node (eager and Session.run too), and the totals.  0 or -1. */
static int load_overall(struct loader *l, sqlite3 *db)
{
	sqlite3_stmt *s = db_prepare(db, l->totals ? "SELECT n.graph_function_id, n.name, n.op_type, n.file, n.line, e.cnt,"
						     " e.ns, e.call_cnt, " GRAPH_FUSED_TYPE_SQL " FROM (SELECT node_id AS node,"
						     " sum(count) AS cnt,"
						     " CASE WHEN sum(timed) > 0 THEN total(timed_ns) * sum(count) / sum(timed)"
						     " ELSE 0 END AS ns, total(CASE WHEN call_id IS NOT NULL THEN count END)"
						     " AS call_cnt FROM kernel_totals GROUP BY node_id) e"
						     " LEFT JOIN graph_nodes n ON n.id = e.node"
						   : "SELECT n.graph_function_id, n.name, n.op_type, n.file, n.line, count(*),"
						     " total(max(k.end_ns - k.start_ns, 0)), count(k.call_id), " GRAPH_FUSED_TYPE_SQL
						     " FROM kernels k"
						     " LEFT JOIN graph_nodes n ON n.id = k.node_id GROUP BY k.node_id");
	struct graph_ops_model *g = l->g;
	size_t opcap = 0, typecap = 0;
	int rc;

	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct graph_op op;
		const struct graph_fn_ops *f = fn_of(l, sqlite3_column_int64(s, 0));

		op_from_row(l->m, s, &op, 8);
		op.graph_function = f ? f->graph_function : NULL;
		op.function = f ? f->function : NULL;
		g->kernels = sat_add64(g->kernels, op.count);
		g->kernel_ns = sat_add64(g->kernel_ns, op.total_ns);
		g->call_kernels = sat_add64(g->call_kernels, col_total(s, 7));
		if (add_type(&g->types, &g->ntypes, &typecap, &op) || ARRAY_GROW(g->ops, g->nops, opcap))
			break;
		g->ops[g->nops++] = op;
	}
	finish_ops(g->ops, g->nops, g->types, g->ntypes);
	if (g->nops > OVERALL_OPS_MAX)
		g->nops = OVERALL_OPS_MAX;
	return stmt_end(db, s, rc);
}

/*
 * Whether a trace ran the top line's body more than once (trace_events'
 * node-line: a Python loop unrolled into the graph), for each function with
 * a top line.  Without trace_events (before its schema) it stays 0.
 */
static void load_top_line_repeats(struct loader *l, sqlite3 *db)
{
	sqlite3_stmt *s;

	if (sqlite3_prepare_v2(db, "SELECT coalesce(max(repeats), 0) FROM trace_events WHERE kind = 'node-line'"
			       " AND file = ?1 AND line = ?2", -1, &s, NULL) != SQLITE_OK)
		return;
	for (size_t i = 0; i < l->g->nfns; i++) {
		struct graph_fn_ops *f = &l->g->fns[i];

		if (!f->top_line.file)
			continue;
		sqlite3_bind_text(s, 1, f->top_line.file, -1, SQLITE_STATIC);
		sqlite3_bind_int(s, 2, f->top_line.line);
		if (sqlite3_step(s) == SQLITE_ROW)
			f->top_line_repeats = sqlite3_column_int64(s, 0);
		sqlite3_reset(s);
	}
	sqlite3_finalize(s);
}

/* Per graph function, the user line that created most of its nodes.  0 or -1. */
static int load_top_lines(struct loader *l, sqlite3 *db)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT graph_function_id, file, line, count(*) FROM graph_nodes"
					 " WHERE graph_function_id IS NOT NULL AND file IS NOT NULL GROUP BY 1, 2, 3");
	int rc;

	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct graph_fn_ops *f = fn_of(l, sqlite3_column_int64(s, 0));

		if (!f || f->calls == 0 || sqlite3_column_int64(s, 3) <= f->top_line_nodes)
			continue;
		f->top_line_nodes = sqlite3_column_int64(s, 3);
		f->top_line.file = pooled(l->m, s, 1);
		f->top_line.line = sqlite3_column_int(s, 2);
	}
	return stmt_end(db, s, rc);
}

/* The main process's kernel hook status; a recording before v4 has none. */
static void load_status(struct loader *l, sqlite3 *db)
{
	sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(db, "SELECT kernel_status, kernel_detail FROM processes WHERE kernel_status IS NOT NULL"
				   " ORDER BY pid = (SELECT min(pid) FROM processes) DESC, pid LIMIT 1", -1, &s, NULL) != SQLITE_OK) {
		sqlite3_finalize(s);
		return;
	}
	if (sqlite3_step(s) == SQLITE_ROW) {
		l->g->status = pooled(l->m, s, 0);
		l->g->detail = pooled(l->m, s, 1);
	}
	sqlite3_finalize(s);
	s = NULL;
	if (sqlite3_prepare_v2(db, "SELECT total(max(dropped_kernels, 0)) FROM processes", -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		l->g->dropped_kernels = col_total(s, 0);
	sqlite3_finalize(s);
	s = NULL;
	if (sqlite3_prepare_v2(db, "SELECT max(CAST(value AS INTEGER), 0) FROM meta WHERE key = 'kernels_refused'", -1, &s,
			       NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
		l->g->kernels_refused = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
}

/* Keep the graph functions that ran kernels, worst first. */
static void keep_fns_with_kernels(struct graph_ops_model *g)
{
	size_t n = 0;

	for (size_t i = 0; i < g->nfns; i++) {
		if (g->fns[i].calls > 0) {
			g->fns[n++] = g->fns[i];
		} else {
			free(g->fns[i].ops);
			free(g->fns[i].types);
		}
	}
	g->nfns = n;
	sort_array(g->fns, g->nfns, sizeof(*g->fns), cmp_fn);
}

void graph_ops_model_release(struct graph_ops_model *g)
{
	for (size_t i = 0; i < g->nfns; i++) {
		free(g->fns[i].ops);
		free(g->fns[i].types);
	}
	free(g->fns);
	free(g->ops);
	free(g->types);
	memset(g, 0, sizeof(*g));
}

int graph_ops_model_load(struct graph_ops_model *g, struct model *m)
{
	struct loader l = { m, g, IDMAP_INIT, NULL, 0 };
	sqlite3 *db = m->rec->db;
	int rc = 0;

	memset(g, 0, sizeof(*g));
	load_status(&l, db);
	l.totals = has_totals(db);
	g->sampled = l.totals;
	if (load_fns(&l, db) || load_calls(&l, db) || (l.totals && load_cut_calls(&l, db)) || (l.totals && scale_to_all_calls(&l, db)) || load_fn_ops(&l, db) ||
	    load_overall(&l, db) || load_top_lines(&l, db))
		rc = -1;
	else
		load_top_line_repeats(&l, db);
	if (l.totals)
		totals_to_fns(g);
	keep_fns_with_kernels(g);
	idmap_release(&l.fn_index);
	free(l.first);
	if (rc)
		graph_ops_model_release(g);
	return rc;
}

/* ---- steady times (graph_fn_steady) ------------------------------------ */

/*
 * Each node's runs at the median of its timed runs.  Why not the mean: the
 * sums above estimate a node's time as its
 * runs times the mean of its timed runs, and only the sampled calls are
 * timed (7 of GPflow's 200 SVGP steps).  On a loaded machine a kernel
 * descheduled for 2 ms is one timed run of a hundred, and that mean is then
 * multiplied by every run of the node: a 5 ms op type read 50 ms and
 * slow-op blamed it.  A median shrugs off a few descheduled runs; an op
 * that is slow on every run keeps its time.  Read on demand: the rule asks
 * for it only for its candidates, so one query per such function.
 */

static int cmp_op_name(const void *a, const void *b)
{
	const struct graph_op *const *x = a, *const *y = b;

	return strcmp((*x)->name, (*y)->name);
}

/* Its first call with kernels (left out of its sums, as FIRST_CALLS does), or 0. */
static int64_t first_call(sqlite3 *db, const struct graph_fn_ops *f)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT min(k.call_id) FROM kernels k JOIN function_calls c"
				     " ON c.id = k.call_id WHERE c.graph_function_id = ?1");
	int64_t id = 0;

	if (!s)
		return 0;
	sqlite3_bind_int64(s, 1, f->id);
	if (sqlite3_step(s) == SQLITE_ROW)
		id = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return id;
}

/* The op named name among byname[0..n), or NULL. */
static struct graph_op *op_named(struct graph_op **byname, size_t n, const char *name)
{
	struct graph_op key = { .name = name }, *k = &key, **hit;

	hit = n ? bsearch(&k, byname, n, sizeof(*byname), cmp_op_name) : NULL;
	return hit ? *hit : NULL;
}

/* Close one node's group: its op's steady time from the median of ns[0..n). */
static void settle(struct graph_op *op, int64_t *ns, size_t n)
{
	if (!op || !n)
		return;
	op->steady_ns = sat_mul64(nth_int64(ns, n, n / 2), op->count);
}

/* Each op's median run from the timed kernels of f's calls, the first left out.  0 or -1. */
static int read_medians(sqlite3 *db, struct graph_fn_ops *f, struct graph_op **byname)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT k.node_id, n.name, max(k.end_ns - k.start_ns, 0) AS d FROM kernels k"
				     " JOIN function_calls c ON c.id = k.call_id LEFT JOIN graph_nodes n ON n.id = k.node_id"
				     " WHERE c.graph_function_id = ?1 AND k.call_id IS NOT ?2 ORDER BY k.node_id");
	int64_t *ns = NULL, node = 0;
	size_t n = 0, cap = 0;
	struct graph_op *op = NULL;
	int step = SQLITE_DONE, rc = -1;

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, f->id);
	if (f->first_left_out)
		sqlite3_bind_int64(s, 2, first_call(db, f));
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(s, 0);
		const char *name = (const char *)sqlite3_column_text(s, 1);

		if (!n || id != node) {
			settle(op, ns, n);
			n = 0, node = id;
			op = op_named(byname, f->nops, name ? name : "?");
		}
		if (ARRAY_GROW(ns, n, cap)) {
			rc = error("out of memory");
			goto out;
		}
		ns[n++] = sqlite3_column_int64(s, 2);
	}
	settle(op, ns, n);
	rc = stmt_end(db, s, step);
	s = NULL;
out:
	sqlite3_finalize(s);
	free(ns);
	return rc;
}

int graph_fn_steady(const struct model *m, struct graph_fn_ops *f)
{
	struct graph_op **byname;
	int rc;

	if (f->steady_read)
		return f->steady_read > 0 ? 0 : -1;
	byname = alloc_array(f->nops, sizeof(*byname));
	rc = m->rec && byname ? 0 : -1;
	for (size_t i = 0; i < f->nops; i++) {
		f->ops[i].steady_ns = -1;
		if (byname)
			byname[i] = &f->ops[i];
	}
	if (!rc) {
		sort_array(byname, f->nops, sizeof(*byname), cmp_op_name);
		rc = read_medians(m->rec->db, f, byname);
	}
	f->op_steady_ns = 0;
	for (size_t t = 0; t < f->ntypes; t++)
		f->types[t].steady_ns = 0;
	for (size_t i = 0; i < f->nops; i++) {
		struct graph_op *op = &f->ops[i];

		if (op->steady_ns < 0 || rc)  /* no timed run of its own (or none read): its estimate as it is */
			op->steady_ns = op->total_ns;
		f->op_steady_ns = sat_add64(f->op_steady_ns, op->steady_ns);
		for (size_t t = 0; t < f->ntypes; t++)
			if (!strcmp(f->types[t].op_type, op->op_type))
				f->types[t].steady_ns = sat_add64(f->types[t].steady_ns, op->steady_ns);
	}
	free(byname);
	f->steady_read = rc ? -1 : 1;
	return rc;
}
