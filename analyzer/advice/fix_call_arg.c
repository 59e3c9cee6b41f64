/*
 * fix_call_arg.c - python-value and dtype retraces (fix_edit.h): the
 * retraced argument wrapped at the user's call, tf.constant(ARG, DTYPE) or
 * tf.cast(ARG, DTYPE), in the dtype every recorded graph computes it with.
 */
#include "fix_edit.h"
#include "graph_dtype.h"
#include "model_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Python float literal (repr of a float)? */
static int is_float_repr(const char *v)
{
	char *end;

	if (!v || !*v || !strpbrk(v, ".eE") || strpbrk(v, "'\"[("))
		return 0;
	strtod(v, &end);
	return *end == '\0';
}

/* Python int literal (repr of an int, not a bool)? */
static int is_int_repr(const char *v)
{
	size_t n = v ? (v[0] == '-') : 0;

	return v && v[n] && strspn(v + n, "0123456789") == strlen(v + n);
}

/* The arguments of the call that made trace t: its inputs' top-level names (seed[0] and seed[1] are one). */
static size_t top_inputs(const struct model_trace *t)
{
	size_t n = 0, prevlen = 0;
	const char *prev = NULL;

	for (size_t i = 0; i < t->ninputs; i++) {
		const char *x = t->inputs[i].name ? t->inputs[i].name : "";
		size_t xl = strcspn(x, "[.");

		if (!prev || xl != prevlen || strncmp(prev, x, xl))
			n++;
		prev = x;
		prevlen = xl;
	}
	return n;
}

/* The repr of a Python str ('text', with its quotes; a repr over 200 characters ends in "...")? */
static int is_str_repr(const char *v)
{
	size_t n = v ? strlen(v) : 0;

	return n >= 2 && (v[0] == '\'' || v[0] == '"') && (v[n - 1] == v[0] || (n > 3 && !strcmp(v + n - 3, "...")));
}

/*
 * A flat list argument of Python numbers or strings in trace t (inputs
 * name[0], name[1], ...: TFP's seed=[i, 1], a batch of sentences), of
 * which leaf is one: its name, its position among the call's arguments,
 * and the dtype tf.constant gives the list (int32 for ints, float32 for
 * floats, string for str; mixed is refused); 0 or -1.
 */
static int value_list_arg(const struct model_trace *t, const char *leaf, char *name, size_t cap, int *pos,
			  char *dtype, size_t dcap)
{
	size_t n = strcspn(leaf, "[."), prevlen = 0;
	const char *prev = NULL;
	int floats = 0, strs = 0, leaves = 0, params = 0;

	if (leaf[n] != '[' || !n || n >= cap)
		return -1;
	memcpy(name, leaf, n);
	name[n] = '\0';
	for (size_t i = 0; i < t->ninputs; i++) {
		const struct model_trace_input *x = &t->inputs[i];
		size_t xl = x->name ? strcspn(x->name, "[.") : 0;
		char *end;

		if (!x->name)
			return -1;
		if (!prev || xl != prevlen || strncmp(prev, x->name, xl))
			params++;  /* the next top-level argument */
		prev = x->name;
		prevlen = xl;
		if (xl != n || strncmp(x->name, name, n))
			continue;
		*pos = params - 1;
		if (x->name[n] != '[' || (strtol(x->name + n + 1, &end, 10), end == x->name + n + 1) || strcmp(end, "]") ||
		    !x->kind || strcmp(x->kind, "python"))
			return -1;  /* nested deeper, or not a Python value */
		floats += is_float_repr(x->value);
		strs += is_str_repr(x->value);
		if (!is_float_repr(x->value) && !is_int_repr(x->value) && !is_str_repr(x->value))
			return -1;
		leaves++;
	}
	if (!leaves || (floats && floats != leaves) || (strs && strs != leaves))
		return -1;
	snprintf(dtype, dcap, "%s", strs ? "string" : floats ? "float32" : "int32");
	return 0;
}

/*
 * The dtype to wrap the retraced argument in: the one every recorded graph
 * computes it with (graph_dtype.h: a python-value's graph constant, a dtype
 * argument's Cast), never another; and its input in trace t.  0, or -1
 * with f's no_edit set.
 */
static int call_arg_dtype(struct fixctx *c, struct finding *f, const struct model_function *fn,
			  const struct model_trace *t, const struct model_trace_input **in, char *dtype, size_t cap)
{
	char why[512];
	int rc;

	*in = NULL;
	for (size_t i = 0; i < t->ninputs; i++)
		if (t->inputs[i].name && !strcmp(t->inputs[i].name, t->why.argument))
			*in = &t->inputs[i];
	if (!*in || strpbrk(t->why.argument, "[."))
		return fix_no_edit(c, f, "%s is part of a nested argument (not a flat list of Python numbers or strings)",
				   t->why.argument), -1;
	rc = f->cause == CAUSE_PYTHON_VALUE
		     ? graph_value_dtype(c->m, fn, t->why.argument, dtype, cap, why, sizeof(why))
		     : graph_arg_dtype(c->m, fn, t->why.argument, dtype, cap, why, sizeof(why));
	if (rc)
		fix_no_edit(c, f, "%s", why);
	return rc;
}

/*
 * Legacy: the call of fn on line s: by its name first, else (called through another
 * name: step = tf.function(f); step(x)) the only call with nargs arguments.
 * Sets *open and *close to its brackets; -1 when there is none.
 */
static int find_fn_call(const char *s, const char *name, size_t nargs, long *open, long *close)
{
	struct text_arg args[FIX_MAX_ARGS];
	int found = 0;

	for (long at = 0; (*open = text_find_call(s, name, (size_t)at)) >= 0; at = *open + 1)
		if ((*close = text_match_close(s, (size_t)*open)) >= 0)
			return 0;
	for (size_t i = 0; s[i]; i++) {
		long cl;

		if (s[i] != '(' || !i || !text_ident_char((unsigned char)s[i - 1]) || (cl = text_match_close(s, i)) < 0)
			continue;
		if (text_split_args(s, i, (size_t)cl, args) == (int)nargs) {
			found++;
			*open = (long)i;
			*close = cl;
		}
	}
	return found == 1 ? 0 : -1;
}

/* Legacy: index among args[0..n) of the argument named name or at position pos, or -1 when the line's call does not show it. */
static int pick_arg(const char *s, const struct text_arg *args, int n, const char *name, int pos)
{
	int pick = -1;

	for (int i = 0; i < n; i++)
		if (s[args[i].start] == '*')
			return -1;  /* f(*batch): positions are not the line's */
	for (int i = 0; i < n; i++)
		if (args[i].kw_len == strlen(name) && !strncmp(s + args[i].start, name, args[i].kw_len))
			pick = i;
	if (pick >= 0)
		return pick;
	if (pos >= n || args[pos].kw_len)
		return -1;
	for (int i = 0; i < pos; i++)
		if (args[i].start != args[i].value)
			return -1;  /* a keyword before it: positions no longer line up */
	return pos;
}

/* The argument of call named name or at position pos, or NULL when the call does not show it. */
static const struct code_arg *fact_arg(const struct code_call *call, const char *name, int pos)
{
	char want[16];

	for (int i = 0; i < call->nargs; i++)
		if (!strcmp(call->args[i].name, name))
			return &call->args[i];
	snprintf(want, sizeof(want), "#%d", pos);
	for (int i = 0; i < call->nargs; i++) {
		if (!strcmp(call->args[i].name, "*"))
			return NULL;  /* f(*batch): positions are not the call's */
		if (!strcmp(call->args[i].name, want))
			return &call->args[i];
	}
	return NULL;
}

/*
 * edit_call_arg at the parser's positions: the argument's exact span
 * becomes TF.WRAP(<its text>, TF.DTYPE), whatever the call's layout.
 */
static void call_arg_at_facts(struct fixctx *c, struct finding *f, const struct model_function *fn,
			      const struct model_trace *t, const struct loaded *l, const char *tf, const char *dtype,
			      const char *argname, int pos)
{
	struct code_call call;
	const struct code_arg *a = NULL;
	struct strbuf text = STRBUF_INIT;
	struct edit e = { .after = STRBUF_INIT };

	if (facts_call_at(c->m, t->callsite.file, t->callsite.line, fn->name, top_inputs(t), &call) ||
	    !(a = fact_arg(&call, argname, pos)) || !fix_span_in(l, &a->value)) {
		fix_no_edit(c, f, "the parser shows no one call of %s at %s:%d with %s in it", fn->name,
			    t->callsite.file, t->callsite.line, argname);
		return;
	}
	strbuf_addf(&text, "%s.%s(", tf, f->cause == CAUSE_PYTHON_VALUE ? "constant" : "cast");
	fix_span_text(l, &a->value, &text);
	strbuf_addf(&text, ", %s.%s)", tf, dtype);
	fix_splice(l, &a->value, text.buf, &e);
	e.file = t->callsite.file;
	fix_store_edit(c, f, l, &e);
	strbuf_release(&e.after);
	strbuf_release(&text);
}

/* python-value / dtype: wrap the argument at the call site (tf.constant / tf.cast). */
void fix_edit_call_arg(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	const struct model_trace *t = fix_first_retrace(fn, f->cause);
	const struct model_trace_input *in;
	struct text_arg args[FIX_MAX_ARGS];
	struct edit e = { .after = STRBUF_INIT };
	char tf[64], dtype[32], name[64];
	const struct loaded *l;
	const char *s, *argname;
	long open, close;
	int pick = -1, pos = 0;

	if (!t || !t->why.argument) {
		fix_no_edit(c, f, "the retrace's argument is not known");
		return;
	}
	if (t->why.library_passes) {
		fix_no_edit(c, f, "the library passes %s to %s itself (%s:%d), not your call: nothing in your code to edit",
			    t->why.argument, fn->name, t->callsite.lib_file ? t->callsite.lib_file : t->callsite.file,
			    t->callsite.library_only ? t->callsite.line : t->callsite.lib_line);
		return;
	}
	if (t->callsite.library_only || t->callsite.lib_file) {
		fix_no_edit(c, f, "%s is called from library code (%s:%d)", fn->name,
			    t->callsite.lib_file ? t->callsite.lib_file : t->callsite.file, t->callsite.lib_line);
		return;
	}
	if (f->cause == CAUSE_PYTHON_VALUE &&
	    value_list_arg(t, t->why.argument, name, sizeof(name), &pos, dtype, sizeof(dtype)) == 0) {
		argname = name;  /* the whole list becomes one tensor: tf.constant([i, 1], tf.int32) */
		f->recommendation = model_strf(c->m, "Pass %s, a list of Python values that change (%s: %s -> %s), as"
					       " one tensor (tf.constant(%s, tf.%s)) so that its values are an input of"
					       " the graph instead of constants baked into it.", name, t->why.argument,
					       t->why.before ? t->why.before : "?", t->why.after ? t->why.after : "?",
					       name, dtype);
	} else if (call_arg_dtype(c, f, fn, t, &in, dtype, sizeof(dtype)) == 0) {
		argname = t->why.argument;
		pos = in->position;
	} else {
		return;
	}
	if (!(l = fix_editable(c, f, t->callsite.file, tf, sizeof(tf))))
		return;
	if (fix_positions(c, l, t->callsite.file)) {
		call_arg_at_facts(c, f, fn, t, l, tf, dtype, argname, pos);
		return;
	}
	/* legacy: no position facts for the file: the one line's text, read as the narrow forms below */
	if (!(s = srcfile_line(&l->sf, t->callsite.line))) {
		fix_no_edit(c, f, "'%s' has no line %d now", t->callsite.file, t->callsite.line);
		return;
	}
	if (find_fn_call(s, fn->name, top_inputs(t), &open, &close) == 0)
		pick = pick_arg(s, args, text_split_args(s, (size_t)open, (size_t)close, args), argname, pos);
	if (pick < 0) {
		fix_no_edit(c, f, "the call of %s at %s:%d is not one call with %s in it", fn->name,
			    t->callsite.file, t->callsite.line, argname);
		return;
	}
	strbuf_add(&e.after, s, args[pick].value);
	strbuf_addf(&e.after, "%s.%s(", tf, f->cause == CAUSE_PYTHON_VALUE ? "constant" : "cast");
	strbuf_add(&e.after, s + args[pick].value, args[pick].end - args[pick].value);
	strbuf_addf(&e.after, ", %s.%s)%s\n", tf, dtype, s + args[pick].end);
	fix_store_line_edit(c, f, l, t->callsite.file, t->callsite.line, &e);
}

