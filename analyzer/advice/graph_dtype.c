/* graph_dtype.c - see graph_dtype.h. */
#include "graph_dtype.h"
#include "db.h"
#include "functiondef.h"
#include "model.h"
#include "recording.h"

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FOLLOW 4    /* Identity nodes followed from an argument to its real consumers */

/* The inference FunctionDef trace t built, parsed into fd; -1 when not recorded or unreadable. */
static int trace_graph(struct model *m, const struct model_trace *t, struct functiondef *fd)
{
	sqlite3_stmt *s;
	int rc = -1;

	if (!m->rec || !(s = db_prepare(m->rec->db, "SELECT function_def FROM graph_functions WHERE trace_id = ?"
					" AND role = 'inference' AND function_def IS NOT NULL ORDER BY id LIMIT 1")))
		return -1;
	sqlite3_bind_int64(s, 1, t->id);
	if (sqlite3_step(s) == SQLITE_ROW)
		rc = functiondef_parse(fd, sqlite3_column_blob(s, 0), (size_t)sqlite3_column_bytes(s, 0));
	sqlite3_finalize(s);
	return rc;
}

static const struct model_trace_input *input_named(const struct model_trace *t, const char *arg)
{
	for (size_t i = 0; i < t->ninputs; i++)
		if (t->inputs[i].name && !strcmp(t->inputs[i].name, arg))
			return &t->inputs[i];
	return NULL;
}

/* Does node input ref ("x", "x:0", "mul:z:0") read the output named name ("x", "Identity:output:0")? */
static int reads(const char *ref, const char *name)
{
	size_t n = strlen(name);

	return !strncmp(ref, name, n) && (!ref[n] || (!strchr(name, ':') && !strcmp(ref + n, ":0")));
}

/*
 * What the nodes reading name compute it as: the DstT when every one is a
 * Cast to one dtype (Identity nodes followed), else own (its own dtype);
 * NULL when nothing reads it.
 */
static const char *computed_as(const struct functiondef *fd, const char *name, const char *own, int depth)
{
	const char *as = NULL;
	char out[256];

	for (size_t i = 0; i < fd->nnodes; i++) {
		const struct fdef_node *n = &fd->nodes[i];
		const char *x = NULL;
		int hit = 0;

		for (size_t k = 0; k < n->ninputs; k++)
			hit |= reads(n->inputs[k], name);
		if (!hit || !n->op)
			continue;
		if (!strcmp(n->op, "Cast") && n->dst_type)
			x = n->dst_type;
		else if (!strcmp(n->op, "Identity") && n->name && depth < MAX_FOLLOW &&
			 snprintf(out, sizeof(out), "%s:output:0", n->name) < (int)sizeof(out))
			x = computed_as(fd, out, own, depth + 1);
		else
			return own;
		if (x && as && strcmp(x, as))
			return own;
		as = x ? x : as;
	}
	return as;
}

/* The FunctionDef argument of tensor input in (its place among the tensor and variable inputs), or NULL. */
static const struct fdef_input *graph_input(const struct functiondef *fd, const struct model_trace *t,
					    const struct model_trace_input *in)
{
	size_t k = 0;

	for (size_t i = 0; i < t->ninputs && &t->inputs[i] != in; i++)
		k += t->inputs[i].kind && (!strcmp(t->inputs[i].kind, "tensor") || !strcmp(t->inputs[i].kind, "variable"));
	if (k >= fd->ninputs || !fd->inputs[k].name || !fd->inputs[k].dtype || strcmp(fd->inputs[k].dtype, in->dtype))
		return NULL;
	return &fd->inputs[k];
}

/* Merge dtype x of one graph into dtype (empty: none yet); -1 with why when they differ. */
static int agree(char *dtype, size_t cap, const char *x, const char *arg, char *why, size_t wcap)
{
	if (!*dtype) {
		snprintf(dtype, cap, "%s", x);
		return 0;
	}
	if (!strcmp(dtype, x))
		return 0;
	snprintf(why, wcap, "the graphs compute %s as %s in one and %s in another: converting it to one dtype"
		 " would change what one of them computes", arg, dtype, x);
	return -1;
}

int graph_arg_dtype(struct model *m, const struct model_function *fn, const char *arg, char *dtype, size_t cap,
		    char *why, size_t wcap)
{
	*dtype = '\0';
	for (size_t i = 0; i < fn->ntraces; i++) {
		const struct model_trace *t = &fn->traces[i];
		const struct model_trace_input *in = input_named(t, arg);
		const struct fdef_input *gi;
		struct functiondef fd;
		const char *as;
		int bad;

		if (!t->ok || !in || !in->kind || strcmp(in->kind, "tensor") || !in->dtype)
			continue;
		if (trace_graph(m, t, &fd) != 0)
			return snprintf(why, wcap, "the graph of a trace of %s is not in the recording", fn->name), -1;
		gi = graph_input(&fd, t, in);
		as = gi ? computed_as(&fd, gi->name, in->dtype, 0) : NULL;
		bad = !gi ? (snprintf(why, wcap, "the graph's argument for %s is not found", arg), -1)
			  : as ? agree(dtype, cap, as, arg, why, wcap) : 0;
		functiondef_release(&fd);
		if (bad)
			return -1;
	}
	if (!*dtype)
		return snprintf(why, wcap, "no graph of %s reads %s", fn->name, arg), -1;
	return 0;
}

/* Is Const node n's value the Python number v (as its dtype stores it)? */
static int const_is(const struct fdef_node *n, double v)
{
	char *end;
	double c;

	if (!n->const_value || !n->const_dtype || !n->name)
		return 0;
	c = strtod(n->const_value, &end);
	if (*end || end == n->const_value)
		return 0;
	if (!strcmp(n->const_dtype, "float32"))
		return (float)c == (float)v;
	if (!strcmp(n->const_dtype, "float64") || strstr(n->const_dtype, "int"))
		return c == v;
	return 0;  /* half precision, bool, complex: not compared */
}

/* Python number repr ("3", "-0.5", "1e-3"; not True/False) as a double; -1 when not one. */
static int number(const char *repr, double *v)
{
	char *end;

	if (!repr || !*repr || strpbrk(repr, "'\"[(TFN"))
		return -1;
	*v = strtod(repr, &end);
	return *end || !isfinite(*v) ? -1 : 0;
}

#define MAX_CANDIDATES 16

/* Const nodes that hold the argument's value in every graph so far: one node name in each. */
struct candidates {
	size_t n;
	char name[MAX_CANDIDATES][128];
	char dtype[MAX_CANDIDATES][16];
	char other[16];         /* a dtype the same node had in another graph, or "" */
};

/* Keep the candidates whose node in fd holds v (first: take every such node); note another dtype. */
static void keep_matching(struct candidates *c, const struct functiondef *fd, double v, int first)
{
	size_t k = 0;

	if (first) {
		for (size_t i = 0; i < fd->nnodes && c->n < MAX_CANDIDATES; i++)
			if (const_is(&fd->nodes[i], v) && strlen(fd->nodes[i].name) < sizeof(c->name[0]) &&
			    strlen(fd->nodes[i].const_dtype) < sizeof(c->dtype[0])) {
				strcpy(c->name[c->n], fd->nodes[i].name);
				strcpy(c->dtype[c->n++], fd->nodes[i].const_dtype);
			}
		return;
	}
	for (size_t j = 0; j < c->n; j++) {
		int keep = 0;

		for (size_t i = 0; i < fd->nnodes && !keep; i++) {
			const struct fdef_node *n = &fd->nodes[i];

			keep = const_is(n, v) && !strcmp(n->name, c->name[j]);
			if (keep && strcmp(n->const_dtype, c->dtype[j]))
				snprintf(c->other, sizeof(c->other), "%s", n->const_dtype);
		}
		if (keep && k != j) {
			strcpy(c->name[k], c->name[j]);
			strcpy(c->dtype[k], c->dtype[j]);
		}
		k += keep;
	}
	c->n = k;
}

/*
 * The dtype of the constants equal to the value in every graph (c): 0, -1
 * with why when they disagree, 1 when there are none.
 */
static int value_dtype(const struct candidates *c, const struct model_function *fn, const char *arg, char *dtype,
		       size_t cap, char *why, size_t wcap)
{
	if (c->n && c->other[0])
		return snprintf(why, wcap, "the graphs hold %s's value as %s in one and as %s in another (%s computes in"
				" the dtype of the number it is given): one tensor dtype would change what one of them"
				" computes", arg, c->dtype[0], c->other, fn->name), -1;
	if (!c->n)
		return 1;
	for (size_t j = 1; j < c->n; j++)
		if (strcmp(c->dtype[j], c->dtype[0]))
			return snprintf(why, wcap, "the graphs hold %s's value as %s and as %s: which one a tensor should be"
					" is not in the recording", arg, c->dtype[0], c->dtype[j]), -1;
	snprintf(dtype, cap, "%s", c->dtype[0]);
	return 0;
}

/*
 * A Const node that moves in lockstep with the argument across the traces:
 * c = v + off (step + 1) or c = scale * v (2 * n), one off or scale in every
 * graph.  Python arithmetic on the argument at trace time makes such a
 * constant instead of one equal to the value; the argument as a tensor of
 * the constant's dtype computes the same arithmetic in the graph.  Only
 * said from 3 or more distinct values (2 points fit many a line by chance).
 */
struct lockstep {
	char name[128];
	char dtype[16];
	double c0, v0;          /* the constant and the value in the first graph */
	double off, scale;      /* c - v; c / v from the first nonzero value (scale NAN until then) */
	int off_ok, scale_ok;
	int other;              /* the same node had another dtype in a graph */
};

struct locksteps {
	size_t n;
	struct lockstep *s;
	size_t distinct;        /* distinct values seen, counted up to 3 */
	double seen[3];
};

/* Const node n as a number of a dtype compared here (ints, float32, float64); -1 when not one. */
static int const_number(const struct fdef_node *n, double *c)
{
	char *end;

	if (!n->const_value || !n->const_dtype || !n->name ||
	    (strcmp(n->const_dtype, "float32") && strcmp(n->const_dtype, "float64") && !strstr(n->const_dtype, "int")))
		return -1;
	*c = strtod(n->const_value, &end);
	return *end || end == n->const_value || !isfinite(*c) ? -1 : 0;
}

/* Does constant c (of dtype, the first graph's being c0) hold the predicted want, to its dtype's rounding? */
static int holds(double c, double want, double c0, const char *dtype)
{
	double eps = !strcmp(dtype, "float32") ? FLT_EPSILON : !strcmp(dtype, "float64") ? DBL_EPSILON : 0;

	return fabs(c - want) <= 4 * eps * fmax(fmax(fabs(c), fabs(want)), fabs(c0));
}

/* Count v among the distinct values seen (up to 3). */
static void count_value(struct locksteps *ls, double v)
{
	for (size_t i = 0; i < ls->distinct; i++)
		if (ls->seen[i] == v)
			return;
	if (ls->distinct < 3)
		ls->seen[ls->distinct++] = v;
}

/* The first graph: every numeric scalar Const is a candidate; -1 when out of memory. */
static int lockstep_start(struct locksteps *ls, const struct functiondef *fd, double v)
{
	double c;

	count_value(ls, v);
	if (!fd->nnodes || !(ls->s = calloc(fd->nnodes, sizeof(*ls->s))))
		return fd->nnodes ? -1 : 0;
	for (size_t i = 0; i < fd->nnodes; i++) {
		const struct fdef_node *n = &fd->nodes[i];
		struct lockstep *x = &ls->s[ls->n];

		if (const_number(n, &c) || strlen(n->name) >= sizeof(x->name) || strlen(n->const_dtype) >= sizeof(x->dtype))
			continue;
		strcpy(x->name, n->name);
		strcpy(x->dtype, n->const_dtype);
		x->c0 = c;
		x->v0 = v;
		x->off = c - v;
		x->scale = v != 0 ? c / v : NAN;
		x->off_ok = 1;
		x->scale_ok = v != 0 || holds(c, 0, c, x->dtype);
		ls->n++;
	}
	return 0;
}

/* One later graph (value v): keep the candidates whose node of the same name still moves with v. */
static void lockstep_keep(struct locksteps *ls, const struct functiondef *fd, double v)
{
	size_t k = 0;

	count_value(ls, v);
	for (size_t j = 0; j < ls->n; j++) {
		struct lockstep *x = &ls->s[j];
		const struct fdef_node *n = NULL;
		double c;

		for (size_t i = 0; i < fd->nnodes && !n; i++)
			if (fd->nodes[i].name && !strcmp(fd->nodes[i].name, x->name))
				n = &fd->nodes[i];
		if (!n || const_number(n, &c))
			continue;
		x->other |= strcmp(n->const_dtype, x->dtype) != 0;
		x->off_ok &= holds(c, v + x->off, x->c0, x->dtype);
		if (!isnan(x->scale))
			x->scale_ok &= holds(c, v * x->scale, x->c0, x->dtype);
		else if (v != 0)
			x->scale = c / v;
		else
			x->scale_ok &= holds(c, 0, x->c0, x->dtype);
		if (x->off_ok || (x->scale_ok && x->scale != 0))
			ls->s[k++] = *x;
	}
	ls->n = k;
}

/*
 * The dtype of the lockstep constants that survived every graph (ls), into
 * dtype; 0, or -1 with why when there are none (or too few values to say)
 * or they disagree.
 */
static int lockstep_dtype(const struct locksteps *ls, const struct model_function *fn, const char *arg, char *dtype,
			  size_t cap, char *why, size_t wcap)
{
	if (!ls->n || ls->distinct < 3)
		return snprintf(why, wcap, "no constant of %s's value, nor one moving with it (%s + 1, 2 * %s), is in every"
				" graph of %s (Python code uses it, not only TensorFlow ops): as a tensor it may change"
				" what %s does", arg, arg, arg, fn->name, fn->name), -1;
	for (size_t j = 0; j < ls->n; j++)
		if (ls->s[j].other || strcmp(ls->s[j].dtype, ls->s[0].dtype))
			return snprintf(why, wcap, "the graphs hold constants moving with %s as %s and as %s: which one a"
					" tensor should be is not in the recording", arg, ls->s[0].dtype,
					ls->s[j].other ? "another dtype" : ls->s[j].dtype), -1;
	snprintf(dtype, cap, "%s", ls->s[0].dtype);
	return 0;
}

/* The Python number value of arg in trace t, when t traced with arg a Python value: 0, 1 (not one), -1 with why. */
static int python_number(const struct model_trace *t, const char *arg, double *v, char *why, size_t wcap)
{
	const struct model_trace_input *in = input_named(t, arg);

	if (!t->ok || !in || !in->kind || strcmp(in->kind, "python"))
		return 1;
	if (number(in->value, v))
		return snprintf(why, wcap, "%s is not a number (%s)", arg, in->value ? in->value : "?"), -1;
	return 0;
}

int graph_value_dtype(struct model *m, const struct model_function *fn, const char *arg, char *dtype, size_t cap,
		      char *why, size_t wcap)
{
	struct candidates c = { 0 };
	struct locksteps ls = { 0 };
	int first = 1, rc = -1;

	*dtype = '\0';
	for (size_t i = 0; i < fn->ntraces; i++) {
		const struct model_trace *t = &fn->traces[i];
		struct functiondef fd;
		double v;
		int got = python_number(t, arg, &v, why, wcap);

		if (got > 0)
			continue;
		if (got < 0)
			goto out;
		if (trace_graph(m, t, &fd) != 0) {
			snprintf(why, wcap, "the graph of a trace of %s is not in the recording", fn->name);
			goto out;
		}
		keep_matching(&c, &fd, v, first);
		if (first ? lockstep_start(&ls, &fd, v) : (lockstep_keep(&ls, &fd, v), 0)) {
			functiondef_release(&fd);
			snprintf(why, wcap, "out of memory");
			goto out;
		}
		functiondef_release(&fd);
		first = 0;
	}
	rc = value_dtype(&c, fn, arg, dtype, cap, why, wcap);
	if (rc > 0)
		rc = lockstep_dtype(&ls, fn, arg, dtype, cap, why, wcap);
out:
	free(ls.s);
	return rc;
}
