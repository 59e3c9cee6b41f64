/* graph_dtype.c - see graph_dtype.h. */
#include "graph_dtype.h"
#include "db.h"
#include "functiondef.h"
#include "model.h"
#include "recording.h"

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

int graph_value_dtype(struct model *m, const struct model_function *fn, const char *arg, char *dtype, size_t cap,
		      char *why, size_t wcap)
{
	struct candidates c = { 0 };
	int first = 1;

	*dtype = '\0';
	for (size_t i = 0; i < fn->ntraces; i++) {
		const struct model_trace *t = &fn->traces[i];
		const struct model_trace_input *in = input_named(t, arg);
		struct functiondef fd;
		double v;

		if (!t->ok || !in || !in->kind || strcmp(in->kind, "python"))
			continue;
		if (number(in->value, &v))
			return snprintf(why, wcap, "%s is not a number (%s)", arg, in->value ? in->value : "?"), -1;
		if (trace_graph(m, t, &fd) != 0)
			return snprintf(why, wcap, "the graph of a trace of %s is not in the recording", fn->name), -1;
		keep_matching(&c, &fd, v, first);
		functiondef_release(&fd);
		first = 0;
	}
	if (c.n && c.other[0])
		return snprintf(why, wcap, "the graphs hold %s's value as %s in one and as %s in another (%s computes in"
				" the dtype of the number it is given): one tensor dtype would change what one of them"
				" computes", arg, c.dtype[0], c.other, fn->name), -1;
	if (!c.n)
		return snprintf(why, wcap, "no constant of %s's value is in every graph of %s (Python code uses it, not"
				" only TensorFlow ops): as a tensor it may change what %s does", arg, fn->name, fn->name), -1;
	for (size_t j = 1; j < c.n; j++)
		if (strcmp(c.dtype[j], c.dtype[0]))
			return snprintf(why, wcap, "the graphs hold %s's value as %s and as %s: which one a tensor should be"
					" is not in the recording", arg, c.dtype[0], c.dtype[j]), -1;
	snprintf(dtype, cap, "%s", c.dtype[0]);
	return 0;
}
