/*
 * explain.c - name the cause of each retrace.
 *
 * A retrace happens because no cache entry of the tf.function object matched
 * the call.  The closest earlier entry of the same object (fewest differing
 * arguments) is the one the user expected to hit; the difference between
 * the two signatures is the cause.  A trace on a tf.function object never
 * seen before is a new-function-object retrace whatever its arguments.
 */
#include "model_internal.h"
#include "code_facts.h"
#include "trace_index.h"
#include "recording.h"
#include "db.h"
#include "strbuf.h"
#include "util.h"
#include "idmap.h"
#include "pathdisp.h"

#include <stdio.h>
#include <string.h>

static int eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static int is_tensor_kind(const char *kind)
{
	return kind && (!strcmp(kind, "tensor") || !strcmp(kind, "variable"));
}

static int is_kind(const char *kind, const char *what)
{
	return kind && !strcmp(kind, what);
}

/* Whether the argument lists differ in number or nesting (names). */
static int structure_differs(const struct model_trace *a, const struct model_trace *b)
{
	if (a->ninputs != b->ninputs)
		return 1;
	for (size_t i = 0; i < a->ninputs; i++)
		if (!eq(a->inputs[i].name, b->inputs[i].name))
			return 1;
	return 0;
}

static size_t count_substr(const char *s, const char *needle)
{
	size_t n = 0;

	for (; s && (s = strstr(s, needle)); s += strlen(needle))
		n++;
	return n;
}

/* A nested argument recorded as one value: "List: List[TensorSpec(...), ...]". */
static int is_structured(const char *v)
{
	return v && (strstr(v, "TensorSpec(") || !strncmp(v, "List", 4) || !strncmp(v, "Dict", 4) ||
		     !strncmp(v, "Tuple", 5) || !strncmp(v, "NamedTuple", 10));
}

/* Copy v without the "key=(...)" or "key=word" parts, to compare the rest. */
static void strip_attr(char *out, size_t len, const char *v, const char *key)
{
	size_t o = 0, klen = strlen(key);

	while (*v && o + 1 < len) {
		if (!strncmp(v, key, klen)) {
			v += klen;
			if (*v == '(') {
				int depth = 0;

				do {
					depth += *v == '(';
					depth -= *v == ')';
					v++;
				} while (*v && depth > 0);
			} else {
				while (*v && *v != ',' && *v != ')')
					v++;
			}
			continue;
		}
		out[o++] = *v++;
	}
	out[o] = '\0';
}

/* What differs between two nested values: structure, else dtype, else shape. */
static enum retrace_cause structured_diff(const char *a, const char *b)
{
	char sa[2048], sb[2048];

	if (count_substr(a, "TensorSpec(") != count_substr(b, "TensorSpec(") || strcspn(a, "[:") != strcspn(b, "[:") ||
	    strncmp(a, b, strcspn(a, "[:")))
		return CAUSE_INPUT_STRUCTURE;
	strip_attr(sa, sizeof(sa), a, "shape=");
	strip_attr(sb, sizeof(sb), b, "shape=");
	if (!strcmp(sa, sb))
		return CAUSE_SHAPE;
	strip_attr(sa, sizeof(sa), a, "dtype=");
	strip_attr(sb, sizeof(sb), b, "dtype=");
	if (!strcmp(sa, sb))
		return CAUSE_DTYPE;
	return CAUSE_INPUT_STRUCTURE;
}

/* "List of 3 tensors" for a nested value, else the value. */
static const char *structure_summary(struct model *m, const char *v)
{
	size_t n = count_substr(v, "TensorSpec(");
	size_t kind = strcspn(v, ":[");

	if (!is_structured(v))
		return v;
	return model_strf(m, "%.*s of %zu tensor%s", (int)kind, v, n, n == 1 ? "" : "s");
}

/* "Config" from "Config at 0x7f..." (the type name of an object argument). */
static const char *object_type(struct model *m, const char *v)
{
	const char *at = v ? strstr(v, " at 0x") : NULL;

	return at ? model_strndup(m, v, (size_t)(at - v)) : v;
}

/* Severity order of per-argument causes: the first found in this order wins. */
static enum retrace_cause input_diff(const struct model_trace_input *x, const struct model_trace_input *y)
{
	if (!eq(x->kind, y->kind)) {
		if (is_kind(x->kind, "python") || is_kind(y->kind, "python"))
			return CAUSE_PYTHON_VALUE;
		return CAUSE_INPUT_STRUCTURE;
	}
	if (is_tensor_kind(x->kind)) {
		if (!eq(x->dtype, y->dtype))
			return CAUSE_DTYPE;
		if (!eq(x->shape, y->shape))
			return CAUSE_SHAPE;
		return CAUSE_NONE;
	}
	if (is_kind(x->kind, "python"))
		return eq(x->value, y->value) ? CAUSE_NONE : CAUSE_PYTHON_VALUE;
	if (is_kind(x->kind, "object")) {
		if (eq(x->value, y->value))
			return CAUSE_NONE;
		if (is_structured(x->value) && is_structured(y->value))
			return structured_diff(x->value, y->value);
		return CAUSE_PYTHON_OBJECT;
	}
	return CAUSE_NONE;
}

static int cause_rank(enum retrace_cause c)
{
	switch (c) {
	case CAUSE_INPUT_STRUCTURE: return 5;
	case CAUSE_DTYPE: return 4;
	case CAUSE_SHAPE: return 3;
	case CAUSE_PYTHON_VALUE: return 2;
	case CAUSE_PYTHON_OBJECT: return 1;
	default: return 0;
	}
}

static size_t trace_distance(const struct model_trace *a, const struct model_trace *b)
{
	size_t d = 0;

	if (structure_differs(a, b))
		return 1000 + (a->ninputs > b->ninputs ? a->ninputs - b->ninputs : b->ninputs - a->ninputs);
	for (size_t i = 0; i < a->ninputs; i++)
		d += input_diff(&a->inputs[i], &b->inputs[i]) != CAUSE_NONE;
	if (!d && !eq(a->signature, b->signature))
		d = 1;
	return d;
}

/* "(x, y, lr)" */
static const char *arg_list(struct model *m, const struct model_trace *t)
{
	struct strbuf sb = STRBUF_INIT;
	const char *out;

	strbuf_addch(&sb, '(');
	for (size_t i = 0; i < t->ninputs; i++)
		strbuf_addf(&sb, "%s%s", i ? ", " : "", t->inputs[i].name ? t->inputs[i].name : "?");
	strbuf_addch(&sb, ')');
	out = model_strdup(m, sb.buf);
	strbuf_release(&sb);
	return out;
}

/* "dimension 0" or "dimensions 0, 2" or "rank" between two "[a,b]" shapes. */
static void shape_dims(struct strbuf *sb, const char *a, const char *b)
{
	int da[64], db[64], na = 0, nb = 0, first = 1;
	char ta[64][24], tb[64][24];
	const char *p;

	for (p = a; p && *p && na < 64; ) {
		size_t n;

		while (*p == '[' || *p == ',' || *p == ' ')
			p++;
		n = strcspn(p, ",]");
		if (!n)
			break;
		snprintf(ta[na], sizeof(ta[na]), "%.*s", (int)n, p);
		da[na] = na;
		na++;
		p += n;
	}
	for (p = b; p && *p && nb < 64; ) {
		size_t n;

		while (*p == '[' || *p == ',' || *p == ' ')
			p++;
		n = strcspn(p, ",]");
		if (!n)
			break;
		snprintf(tb[nb], sizeof(tb[nb]), "%.*s", (int)n, p);
		db[nb] = nb;
		nb++;
		p += n;
	}
	if (na != nb) {
		strbuf_addf(sb, " (rank %d -> %d)", na, nb);
		return;
	}
	for (int i = 0; i < na; i++) {
		if (!strcmp(ta[da[i]], tb[db[i]]))
			continue;
		strbuf_addf(sb, "%s%d", first ? " (dimension " : ", ", i);
		first = 0;
	}
	if (!first)
		strbuf_addch(sb, ')');
}

/* The scalar constants of the graph functions built by trace_id, in their order. */
static int load_constants(struct graph_index *gx, int64_t trace_id, struct graph_constant **out, size_t *n)
{
	const size_t *idx;
	size_t ng = graph_index_of_trace(gx, trace_id, &idx), cap = 0;

	*out = NULL;
	*n = 0;
	for (size_t g = 0; g < ng; g++) {
		const struct graph_constant *c;
		size_t nc;

		if (graph_index_constants(gx, gx->gfs[idx[g]].id, &c, &nc))
			return -1;
		for (size_t i = 0; i < nc; i++) {
			if (ARRAY_GROW(*out, *n, cap))
				return -1;
			(*out)[(*n)++] = c[i];
		}
	}
	return 0;
}

static int same_number(const char *a, const char *b)
{
	char *ea, *eb;
	double x, y;

	if (!a || !b)
		return 0;
	x = strtod(a, &ea);
	y = strtod(b, &eb);
	if (ea == a || eb == b)
		return !strcmp(a, b);
	return x == y || (x != 0 && (x - y) / x < 1e-6 && (x - y) / x > -1e-6);
}

/* By node name, then position: the first constant of a name comes first. */
static int cmp_by_node(const void *x, const void *y, void *consts)
{
	const struct graph_constant *k = consts;
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	const char *a = k[i].node ? k[i].node : "", *b = k[j].node ? k[j].node : "";
	int c = strcmp(a, b);

	return c ? c : (i > j) - (i < j);
}

static int constants_by_node(const struct graph_constant *c, size_t n, size_t **out)
{
	*out = n ? malloc(n * sizeof(**out)) : NULL;
	if (n && !*out)
		return -1;
	for (size_t i = 0; i < n; i++)
		(*out)[i] = i;
	if (n)
		qsort_r(*out, n, sizeof(**out), cmp_by_node, (void *)c);
	return 0;
}

/* The first constant of c (in rowid order) named node, or NULL. */
static const struct graph_constant *first_of_node(const struct graph_constant *c, const size_t *by_node, size_t n,
						  const char *node)
{
	size_t lo = 0, hi = n;
	const char *want = node ? node : "";

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *at = c[by_node[mid]].node ? c[by_node[mid]].node : "";

		if (strcmp(at, want) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < n && eq(c[by_node[lo]].node, node))
		return &c[by_node[lo]];
	return NULL;
}

/*
 * Find the graph constant that changed between the traces' graphs,
 * preferring one whose new value equals the argument's new value.
 * Also reports whether the graphs' constants are all equal.
 */
static int diff_constants(struct graph_index *gx, const struct model_trace *a, const struct model_trace *b,
			  const char *want_after, struct retrace_explanation *why, int *identical)
{
	struct graph_constant *ca = NULL, *cb = NULL;
	size_t na = 0, nb = 0, *by_node = NULL;
	int found = 0, ret = -1;

	*identical = 1;
	if (load_constants(gx, a->id, &ca, &na) || load_constants(gx, b->id, &cb, &nb) ||
	    constants_by_node(ca, na, &by_node))
		goto cleanup;
	if (na != nb)
		*identical = 0;
	for (size_t i = 0; i < nb; i++) {
		const struct graph_constant *old = first_of_node(ca, by_node, na, cb[i].node);

		if (!old) {
			*identical = 0;
			continue;
		}
		if (eq(old->value, cb[i].value))
			continue;
		*identical = 0;
		if (found == 2)
			continue;
		if (!found || same_number(cb[i].value, want_after)) {
			why->const_name = cb[i].node;
			why->const_before = old->value;
			why->const_after = cb[i].value;
			found = same_number(cb[i].value, want_after) ? 2 : 1;
		}
	}
	ret = 0;
cleanup:
	free(ca);
	free(cb);
	free(by_node);
	return ret;
}

/* The most nodes among the graph functions trace_id built, -1 when none. */
static int64_t most_nodes(const struct graph_index *gx, int64_t trace_id)
{
	const size_t *idx;
	size_t ng = graph_index_of_trace(gx, trace_id, &idx);
	int64_t n = -1;

	for (size_t g = 0; g < ng; g++)
		if (gx->gfs[idx[g]].node_count > n)
			n = gx->gfs[idx[g]].node_count;
	return n;
}

static int graph_nodes_equal(const struct graph_index *gx, int64_t ta, int64_t tb)
{
	return most_nodes(gx, ta) == most_nodes(gx, tb);
}

/* What the classifiers of one retrace share: trace b of f, compared with trace a. */
struct retrace_ctx {
	struct model *m;
	struct graph_index *gx;     /* graph functions and constants by trace */
	struct trace_finder *finder; /* f's earlier traces by their arguments */
	struct model_function *f;
	const struct model_trace *a, *b;
	struct retrace_explanation *why;
	int object_seen;    /* an earlier trace came from b's tf.function object */
	struct strbuf sb;   /* the detail being built */
};

/*
 * A classifier names the cause when it recognises it: 1 (why filled), 0
 * (not this cause: the next one is asked), -1 on error.  They are asked in
 * the order of the table in explain_one: the first that answers wins.
 */
typedef int (*retrace_classifier)(struct retrace_ctx *c);

/*
 * The closest earlier trace (fewest differing arguments, the latest on
 * ties): of the same tf.function object when there is one.  Sets c->a and
 * object_seen.
 */
static void pick_compared(struct retrace_ctx *c, size_t k)
{
	size_t best = trace_finder_nearest(c->finder, k, &c->object_seen);

	c->why->compared_with = best;
	c->a = &c->f->traces[best];
}

/*
 * A first call that creates tf.Variables traces twice: once creating them,
 * once more without.  This trace belongs to the earlier one's call, and to
 * its cause.
 */
static int classify_followup(struct retrace_ctx *c)
{
	const struct model_trace *a = c->a;
	struct retrace_explanation *why = c->why;

	if (!c->object_seen || a->function_object != c->b->function_object || a->variables_created <= 0 ||
	    trace_distance(a, c->b) != 0)
		return 0;
	why->cause = a->why.cause != CAUSE_NONE ? a->why.cause : CAUSE_UNKNOWN;
	why->followup = 1;
	why->argument = a->why.argument;
	why->before = a->why.before;
	why->after = a->why.after;
	why->detail = model_strf(c->m, "second trace of one call: the trace before created %d tf.Variable%s, so "
				 "TensorFlow traced again without creating them%s%s",
				 a->variables_created, a->variables_created == 1 ? "" : "s",
				 a->why.detail ? "; that trace: " : "", a->why.detail ? a->why.detail : "");
	return 1;
}

/*
 * A trace inside a running trace of the same tf.function object, on the
 * same thread: the function calls itself while traced (the guide's
 * recursive tf.function, or recursion on a Python value).  One call, one
 * trace tree: part of the outer trace's time, not a retrace of its own.
 */
static int classify_nested(struct retrace_ctx *c)
{
	const struct model_function *f = c->f;
	size_t k = (size_t)(c->b - f->traces), j = trace_finder_enclosing(c->finder, k);
	const struct model_trace *o;

	if (j == SIZE_MAX)
		return 0;
	o = &f->traces[j];
	c->why->compared_with = j;
	c->why->cause = o->why.cause != CAUSE_NONE ? o->why.cause : CAUSE_UNKNOWN;
	c->why->followup = 1;
	c->why->nested = 1;
	c->why->detail = model_strf(c->m, "traced again inside its own trace #%zu (%s calls itself while traced):"
				    " part of that trace, not a retrace", j + 1, f->name);
	return 1;
}

static int classify_new_object(struct retrace_ctx *c)
{
	if (c->object_seen || c->b->object_trace_no > 1)
		return 0;
	c->why->cause = CAUSE_NEW_FUNCTION_OBJECT;
	c->why->detail = model_strf(c->m, "a new tf.function object wraps %s (its first trace; %zu objects so far)",
				    c->f->name, c->f->function_objects > 0 ? c->f->function_objects : (size_t)2);
	return 1;
}

static int classify_structure(struct retrace_ctx *c)
{
	const struct model_trace *a = c->a, *b = c->b;
	struct retrace_explanation *why = c->why;

	if (!structure_differs(a, b))
		return 0;
	why->cause = CAUSE_INPUT_STRUCTURE;
	why->before = arg_list(c->m, a);
	why->after = arg_list(c->m, b);
	for (size_t i = 0; i < a->ninputs || i < b->ninputs; i++) {
		const char *na = i < a->ninputs ? a->inputs[i].name : NULL;
		const char *nb = i < b->ninputs ? b->inputs[i].name : NULL;

		if (!eq(na, nb)) {
			why->argument = nb ? nb : na;
			break;
		}
	}
	why->detail = model_strf(c->m, "arguments %s -> %s", why->before, why->after);
	return 1;
}

/* Describers of one argument that changed from x to y, by cause: fill before/after and the detail.  0 or -1. */
typedef int (*input_describer)(struct retrace_ctx *c, const struct model_trace_input *x,
			       const struct model_trace_input *y);

static int describe_shape(struct retrace_ctx *c, const struct model_trace_input *x, const struct model_trace_input *y)
{
	c->why->before = x->shape;
	c->why->after = y->shape;
	strbuf_addf(&c->sb, "%s: %s -> %s", y->name, x->shape, y->shape);
	shape_dims(&c->sb, x->shape, y->shape);
	return 0;
}

static int describe_dtype(struct retrace_ctx *c, const struct model_trace_input *x, const struct model_trace_input *y)
{
	c->why->before = x->dtype;
	c->why->after = y->dtype;
	strbuf_addf(&c->sb, "%s: %s -> %s", y->name, x->dtype, y->dtype);
	return 0;
}

static int describe_python_value(struct retrace_ctx *c, const struct model_trace_input *x,
				 const struct model_trace_input *y)
{
	struct retrace_explanation *why = c->why;
	int identical;

	why->before = is_kind(x->kind, "python") ? x->value : model_strf(c->m, "<%s>", x->kind);
	why->after = is_kind(y->kind, "python") ? y->value : model_strf(c->m, "<%s>", y->kind);
	strbuf_addf(&c->sb, "%s: %s -> %s", y->name, why->before, why->after);
	if (diff_constants(c->gx, c->a, c->b, y->value, why, &identical))
		return -1;
	if (why->const_name)
		strbuf_addf(&c->sb, " (graph constant %s: %s -> %s)", why->const_name, why->const_before,
			    why->const_after);
	return 0;
}

static int describe_python_object(struct retrace_ctx *c, const struct model_trace_input *x,
				  const struct model_trace_input *y)
{
	c->why->before = x->value;
	c->why->after = y->value;
	if (eq(object_type(c->m, x->value), object_type(c->m, y->value)))
		strbuf_addf(&c->sb, "%s: a new %s object that compares unequal to the earlier one (%s -> %s)", y->name,
			    object_type(c->m, y->value), x->value, y->value);
	else
		strbuf_addf(&c->sb, "%s: %s -> %s", y->name, x->value, y->value);
	return 0;
}

/* Any other difference (the kind of argument changed) is a change of structure. */
static int describe_kind(struct retrace_ctx *c, const struct model_trace_input *x, const struct model_trace_input *y)
{
	c->why->before = x->kind;
	c->why->after = y->kind;
	strbuf_addf(&c->sb, "%s: %s -> %s", y->name, x->kind, y->kind);
	c->why->cause = CAUSE_INPUT_STRUCTURE;
	return 0;
}

static const input_describer describers[CAUSE__COUNT] = {
	[CAUSE_SHAPE] = describe_shape,
	[CAUSE_DTYPE] = describe_dtype,
	[CAUSE_PYTHON_VALUE] = describe_python_value,
	[CAUSE_PYTHON_OBJECT] = describe_python_object,
};

/* A nested argument recorded whole: describe the containers. */
static void describe_nested(struct retrace_ctx *c, enum retrace_cause cause, const struct model_trace_input *x,
			    const struct model_trace_input *y)
{
	struct retrace_explanation *why = c->why;

	why->before = structure_summary(c->m, x->value);
	why->after = structure_summary(c->m, y->value);
	strbuf_addf(&c->sb, "%s: %s -> %s", y->name, why->before, why->after);
	if (cause != CAUSE_INPUT_STRUCTURE) {
		why->before = x->value;
		why->after = y->value;
	}
}

/* The argument whose difference ranks highest (shape, dtype, value, ...), described by its cause. */
static int classify_input_diff(struct retrace_ctx *c)
{
	enum retrace_cause cause = CAUSE_NONE;
	const struct model_trace_input *x, *y;
	size_t at = 0;

	for (size_t i = 0; i < c->b->ninputs; i++) {
		enum retrace_cause d = input_diff(&c->a->inputs[i], &c->b->inputs[i]);

		if (cause_rank(d) > cause_rank(cause)) {
			cause = d;
			at = i;
		}
	}
	if (cause == CAUSE_NONE)
		return 0;
	x = &c->a->inputs[at];
	y = &c->b->inputs[at];
	c->why->cause = cause;
	c->why->argument = y->name;
	if (is_kind(x->kind, "object") && is_kind(y->kind, "object") && cause != CAUSE_PYTHON_OBJECT)
		describe_nested(c, cause, x, y);
	else if ((describers[cause] ? describers[cause] : describe_kind)(c, x, y))
		return -1;
	/* a detail names the values: new at nearly every retrace, not worth interning */
	c->why->detail = c->sb.buf ? strpool_copy(c->m->pool, c->sb.buf, strlen(c->sb.buf)) : NULL;
	return 1;
}

/* Same visible signature: an object argument that compared unequal. */
static int classify_unequal_object(struct retrace_ctx *c)
{
	const struct model_trace *a = c->a, *b = c->b;
	struct retrace_explanation *why = c->why;

	for (size_t i = 0; i < b->ninputs; i++) {
		int identical;

		if (!is_kind(b->inputs[i].kind, "object"))
			continue;
		if (diff_constants(c->gx, a, b, NULL, why, &identical))
			return -1;
		why->const_name = why->const_before = why->const_after = NULL;
		why->cause = CAUSE_PYTHON_OBJECT;
		why->argument = b->inputs[i].name;
		why->before = a->inputs[i].value;
		why->after = b->inputs[i].value;
		why->detail = model_strf(c->m, "%s: a %s object that is new or compares unequal at each call%s",
					 b->inputs[i].name, b->inputs[i].value ? b->inputs[i].value : "Python",
					 identical && graph_nodes_equal(c->gx, a->id, b->id) ? " (graphs identical)"
													: "");
		return 1;
	}
	return 0;
}

/* Nothing recognised: say what the signatures show. */
static int classify_unknown(struct retrace_ctx *c)
{
	const struct model_trace *a = c->a, *b = c->b;

	c->why->cause = CAUSE_UNKNOWN;
	if (!eq(a->signature, b->signature) && a->signature && b->signature) {
		c->why->before = a->signature;
		c->why->after = b->signature;
		c->why->detail = model_strf(c->m, "signature %s -> %s", a->signature, b->signature);
	} else {
		c->why->detail = model_strdup(c->m, "no difference in the recorded signature");
	}
	return 1;
}

/*
 * A trace whose user line is an export (tf.saved_model.save, a concrete
 * function asked for): the export's, listed apart and counted as no retrace
 * (a follow-up), so that the user's own retraces are the finding's.
 */
static void mark_export(struct model *m, struct model_trace *t)
{
	const struct code_fact *e;

	if (t->why.followup || !(e = code_export_call(m, t->callsite.file, t->callsite.line)))
		return;
	t->why.followup = 1;
	t->why.export_call = e->name;
	t->why.detail = model_strf(m, "made by %s() at line %d, not by a call of yours; %s", e->name, e->line,
				   t->why.detail);
}

static int explain_one(struct model *m, struct graph_index *gx, struct trace_finder *finder,
		       struct model_function *f, size_t k)
{
	static const retrace_classifier classifiers[] = {
		classify_nested, classify_followup, classify_new_object, classify_structure,
		classify_input_diff, classify_unequal_object, classify_unknown,
	};
	struct retrace_ctx c = { .m = m, .gx = gx, .finder = finder, .f = f,
				 .b = &f->traces[k], .why = &f->traces[k].why, .sb = STRBUF_INIT };
	int r = 0;

	pick_compared(&c, k);
	for (size_t i = 0; r == 0 && i < sizeof(classifiers) / sizeof(classifiers[0]); i++)
		r = classifiers[i](&c);
	strbuf_release(&c.sb);
	if (r < 0)
		return -1;
	if (!c.why->detail)
		c.why->detail = "";
	mark_export(m, &f->traces[k]);
	if (c.why->followup)  /* TensorFlow's second trace of a variable-creating call is that call's, not a retrace */
		f->followups++;
	else if (!f->per_object || c.why->cause != CAUSE_NEW_FUNCTION_OBJECT)
		f->cause_counts[c.why->cause]++;
	return 0;
}

/* Explain f's traces after its first, each against the nearest earlier one.  0 or -1. */
static int explain_function(struct model *m, struct graph_index *gx, struct model_function *f)
{
	struct trace_finder finder;
	int ret = -1;

	if (trace_finder_init(&finder, f, trace_distance) || (f->ntraces && trace_finder_add(&finder, 0)))
		goto oom;
	for (size_t k = 1; k < f->ntraces; k++) {
		if (explain_one(m, gx, &finder, f, k))
			goto cleanup;
		if (trace_finder_add(&finder, k))
			goto oom;
	}
	ret = 0;
	goto cleanup;
oom:
	error("out of memory explaining the retraces of %s", f->name ? f->name : "?");
cleanup:
	trace_finder_release(&finder);
	return ret;
}

static int cmp_loc(const void *x, const void *y)
{
	const struct source_loc *a = *(const struct source_loc *const *)x, *b = *(const struct source_loc *const *)y;
	int c = strcmp(a->file ? a->file : "", b->file ? b->file : "");

	return c ? c : (a->line > b->line) - (a->line < b->line);
}

/*
 * f->object_calls_traced: the most calls one tf.function object of f
 * traced (follow-ups apart); TensorFlow's and Keras' own functions are
 * judged per object (f->per_object).  0 or -1.
 */
static int busiest_object(struct model_function *f)
{
	struct idmap counts = IDMAP_INIT;
	int ret = 0;

	f->object_calls_traced = 0;
	for (size_t k = 0; k < f->ntraces && !ret; k++) {
		size_t n = 0;

		if (f->traces[k].why.followup)
			continue;
		idmap_get(&counts, f->traces[k].function_object, &n);
		if (idmap_set(&counts, f->traces[k].function_object, ++n))
			ret = -1;
		if (n > f->object_calls_traced)
			f->object_calls_traced = n;
	}
	idmap_release(&counts);
	return ret;
}

/* f->line_traces: the most traces (follow-ups and nested ones apart) that one user line made.  0 or -1. */
static int busiest_line(struct model_function *f)
{
	const struct source_loc **v = f->ntraces ? malloc(f->ntraces * sizeof(*v)) : NULL;
	size_t n = 0, run = 0;

	f->line_traces = 0;
	if (f->ntraces && !v)
		return -1;
	for (size_t k = 0; k < f->ntraces; k++)
		if (!f->traces[k].why.followup)
			v[n++] = &f->traces[k].callsite;
	if (n)
		qsort(v, n, sizeof(*v), cmp_loc);
	for (size_t i = 0; i < n; i++) {
		run = i && !cmp_loc(&v[i - 1], &v[i]) ? run + 1 : 1;
		if (run > f->line_traces)
			f->line_traces = run;
	}
	free(v);
	return 0;
}

/* The main cause: the most frequent, the more specific on ties. */
static void main_cause(struct model_function *f)
{
	size_t best = 0;

	for (int c = CAUSE_NONE + 1; c < CAUSE__COUNT; c++)
		if (f->cause_counts[c] > best ||
		    (f->cause_counts[c] == best && best && c != CAUSE_UNKNOWN && f->main_cause == CAUSE_UNKNOWN)) {
			best = f->cause_counts[c];
			f->main_cause = (enum retrace_cause)c;
		}
}

/* A retrace's span, for mark_inside(). */
struct span_of {
	int64_t pid, tid, start, end;
	struct model_function *fn;
	struct model_trace *t;
};

static int cmp_span(const void *x, const void *y)
{
	const struct span_of *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->end > b->end ? -1 : a->end < b->end;  /* the outer one first */
}

/* Looked back from a retrace at most this many earlier ones on its thread: nesting is shallow. */
#define INSIDE_LOOKBACK 64

/*
 * retrace_why.inside: each avoidable retrace inside another function's
 * avoidable retrace on the same thread, by their spans.  0 or -1 (out of
 * memory: none marked).
 */
static int mark_inside(struct model *m)
{
	struct span_of *v;
	size_t n = 0, total = 0;

	for (size_t i = 0; i < m->nfunctions; i++)
		total += m->functions[i].ntraces;
	if (!total)
		return 0;
	if (!(v = calloc(total, sizeof(*v))))
		return -1;
	for (size_t i = 0; i < m->nfunctions; i++)
		for (size_t k = 1; k < m->functions[i].ntraces; k++) {
			struct model_trace *t = &m->functions[i].traces[k];

			if (!t->why.followup && t->end_ns >= t->start_ns)
				v[n++] = (struct span_of){ t->pid, t->tid, t->start_ns, t->end_ns, &m->functions[i], t };
		}
	sort_array(v, n, sizeof(*v), cmp_span);
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j-- > 0 && i - j <= INSIDE_LOOKBACK && v[j].pid == v[i].pid && v[j].tid == v[i].tid;)
			if (v[j].fn != v[i].fn && v[j].end >= v[i].end) {
				v[i].t->why.inside = v[j].fn->name;  /* a name: the functions are sorted later */
				break;
			}
	free(v);
	return 0;
}

int model_explain_retraces(struct model *m, const struct graph_fn *gfs, size_t ngfs, struct const_table *ct)
{
	struct graph_index gx;
	int64_t recorded;
	int ret = -1;

	if (graph_index_init(&gx, m, gfs, ngfs, ct))
		return error("out of memory indexing graph functions");
	for (size_t i = 0; i < m->nfunctions; i++) {
		struct model_function *f = &m->functions[i];

		f->per_object = f->library && !f->tf_data && f->def.file && path_is_framework(f->def.file);
		if (explain_function(m, &gx, f))
			goto cleanup;
		f->retrace_ns = 0;
		for (size_t k = 1; k < f->ntraces; k++)
			if (!f->traces[k].why.followup)
				f->retrace_ns += f->traces[k].end_ns - f->traces[k].start_ns;
		/* the session's is a union (model_trace_union_ns): nested retraces once */
		main_cause(f);
		if (busiest_line(f) || busiest_object(f))
			goto cleanup;
	}
	if (mark_inside(m))
		goto cleanup;
	m->session.retrace_ns = model_trace_union_ns(m, 1, &recorded);
	m->session.retrace_share = m->session.active_ns ? (double)recorded / (double)m->session.active_ns : 0;
	if (m->session.retrace_share > 1)
		m->session.retrace_share = 1;
	ret = 0;
cleanup:
	graph_index_release(&gx);
	return ret;
}
