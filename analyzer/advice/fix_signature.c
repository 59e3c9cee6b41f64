/*
 * fix_signature.c - edits of a tf.function's decorator (fix_edit.h): an
 * input_signature (or reduce_retracing=True) for shape retraces, and
 * jit_compile=True where the graph ops model advises XLA.  The def, its
 * parameters and the decorator's arguments come from the parser's facts;
 * a file without them is read from the def's and decorator's lines.
 */
#include "fix_edit.h"
#include "pathdisp.h"

#include <stdio.h>
#include <string.h>

/* Legacy: the parameters of "def name(a, b=1):" on line s; -1 when not one line or not plain names. */
static int def_params(const char *s, const char *name, struct fix_param *ps)
{
	struct text_arg args[FIX_MAX_ARGS];
	const char *p = s + text_indent(s);
	long open, close;
	int n, k = 0;

	if (!strncmp(p, "async ", 6))
		p += 6;
	if (strncmp(p, "def ", 4))
		return -1;
	p += 4 + strspn(p + 4, " ");
	if (strncmp(p, name, strlen(name)) || p[strlen(name)] != '(')
		return -1;
	open = (long)(p - s) + (long)strlen(name);
	if ((close = text_match_close(s, (size_t)open)) < 0)
		return -1;
	if ((n = text_split_args(s, (size_t)open, (size_t)close, args)) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		size_t len = text_ident_len(s + args[i].start);

		if (!len || len >= sizeof(ps[0].name))
			return -1;   /* *args, **kw, or odd */
		if (i == 0 && ((len == 4 && !strncmp(s + args[i].start, "self", 4)) ||
			       (len == 3 && !strncmp(s + args[i].start, "cls", 3))))
			continue;
		memcpy(ps[k].name, s + args[i].start, len);
		ps[k].name[len] = '\0';
		k++;
	}
	return k;
}

/*
 * The parameters of the def of name at line def, self or cls first left
 * out: from the parser's facts (any layout; *args, **kw or keyword-only
 * ones refused), else from the def's one line of text; -1 when refused.
 */
int fix_params_of(const struct fixctx *c, const struct loaded *l, const char *file, long def, const char *name,
		     struct fix_param *ps)
{
	const char *names[FIX_MAX_ARGS], *kinds[FIX_MAX_ARGS];
	int n, k = 0;

	if (!fix_positions(c, l, file))
		return def_params(srcfile_line(&l->sf, def), name, ps);  /* no position facts: the def line's text */
	if ((n = facts_params(c->m, file, (int)def, names, kinds, FIX_MAX_ARGS)) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (strncmp(kinds[i], "arg", 3) && strncmp(kinds[i], "posonly", 7))
			return -1;
		if (i == 0 && (!strcmp(names[i], "self") || !strcmp(names[i], "cls")))
			continue;
		if (strlen(names[i]) >= sizeof(ps[0].name))
			return -1;
		snprintf(ps[k++].name, sizeof(ps[0].name), "%s", names[i]);
	}
	return k;
}

/*
 * The first traced trace of fn, when every traced input of every trace is a
 * tensor named as the def's parameters ps[0..np); else NULL.
 */
static const struct model_trace *plain_tensor_traces(const struct model_function *fn, const struct fix_param *ps, int np)
{
	const struct model_trace *t0 = NULL;

	for (size_t i = 0; i < fn->ntraces; i++) {
		const struct model_trace *t = &fn->traces[i];

		if (!t->ok)
			continue;
		if ((int)t->ninputs != np)
			return NULL;
		for (int a = 0; a < np; a++)
			if (!t->inputs[a].name || strcmp(t->inputs[a].name, ps[a].name) ||
			    strcmp(t->inputs[a].kind, "tensor") || !t->inputs[a].dtype || !t->inputs[a].shape)
				return NULL;
		if (!t0)
			t0 = t;
	}
	return t0;
}

/*
 * Merge shape "[32,10]" into dims[0..*rank): with *rank < 0 the dims are
 * taken as they are, else a dim that differs becomes None.  0, or -1 when
 * not a shape of that rank.
 */
static int merge_dims(const char *p, char dims[][24], int *rank)
{
	int r = 0;

	if (*p++ != '[')
		return -1;
	while (*p && *p != ']') {
		size_t len = strcspn(p, ",]");

		if (r == FIX_MAX_ARGS || len == 0 || len >= sizeof(dims[0]) || (*rank >= 0 && r >= *rank))
			return -1;
		if (*rank < 0) {
			memcpy(dims[r], p, len);
			dims[r][len] = '\0';
		} else if (strlen(dims[r]) != len || strncmp(dims[r], p, len)) {
			snprintf(dims[r], sizeof(dims[r]), "None");
		}
		r++;
		p += len + (p[len] == ',');
	}
	if (*rank >= 0 && r != *rank)
		return -1;
	*rank = r;
	return 0;
}

/* Does every traced shape of argument a parse ("[..]" or "?"), with more than one rank among them? */
static int rank_changes(const struct model_function *fn, int a)
{
	int first = -2, changes = 0;

	for (size_t i = 0; i < fn->ntraces; i++) {
		const struct model_trace *t = &fn->traces[i];
		char dims[FIX_MAX_ARGS][24];
		int rank = -1;

		if (!t->ok)
			continue;
		if (strcmp(t->inputs[a].shape, "?") && merge_dims(t->inputs[a].shape, dims, &rank))
			return 0;
		if (first != -2 && rank != first)
			changes = 1;
		first = rank;
	}
	return changes;
}

/*
 * input_signature of f from its traces: one TensorSpec per parameter, None
 * in every dimension that differed, shape=None for a parameter whose rank
 * changed (reduce_retracing would trace again for a new rank; one spec of
 * unknown rank serves them all); 0, or -1 when one cannot be written
 * (non-tensor or nested arguments, names that are not the def's, dtypes
 * that differ).
 */
static int build_signature(const struct model_function *fn, const struct fix_param *ps, int np, const char *tf,
			   struct strbuf *sig)
{
	const struct model_trace *t0 = plain_tensor_traces(fn, ps, np);

	if (!t0)
		return -1;
	strbuf_addf(sig, "input_signature=[");
	for (int a = 0; a < np; a++) {
		char dims[FIX_MAX_ARGS][24];
		int rank = -1, any_rank = rank_changes(fn, a);

		if (!any_rank && merge_dims(t0->inputs[a].shape, dims, &rank))
			return -1;
		for (size_t i = 0; i < fn->ntraces; i++) {
			const struct model_trace *t = &fn->traces[i];

			if (t->ok && (strcmp(t->inputs[a].dtype, t0->inputs[a].dtype) ||
				      (!any_rank && merge_dims(t->inputs[a].shape, dims, &rank))))
				return -1;
		}
		strbuf_addf(sig, "%s%s.TensorSpec(shape=", a ? ", " : "", tf);
		if (any_rank)
			strbuf_addstr(sig, "None");
		else
			strbuf_addch(sig, '[');
		for (int d = 0; d < rank; d++)
			strbuf_addf(sig, "%s%s", d ? ", " : "", dims[d]);
		strbuf_addf(sig, "%s, dtype=%s.%s, name='%s')", any_rank ? "" : "]", tf, t0->inputs[a].dtype, ps[a].name);
	}
	strbuf_addch(sig, ']');
	return 0;
}

/* Legacy: the @tf.function line above def line def_line, or 0. */
static long find_decorator(const struct loaded *l, long def_line, const char *tf)
{
	size_t ind = text_indent(srcfile_line(&l->sf, def_line));
	char want[80];

	snprintf(want, sizeof(want), "@%s.function", tf);
	for (long n = def_line - 1; n >= 1; n--) {
		const char *s = srcfile_line(&l->sf, n);

		if (text_indent(s) != ind || s[ind] != '@')
			return 0;
		if (!strncmp(s + ind, want, strlen(want)) && !text_ident_char((unsigned char)s[ind + strlen(want)]))
			return n;
	}
	return 0;
}

/* fn_decorator from the parser's facts: the def line, and the decorator's span (*span, checked); l or NULL. */
static const struct loaded *fn_decorator_at_facts(struct fixctx *c, struct finding *f, const struct model_function *fn,
						  const struct loaded *l, const char *tf, long *def,
						  struct code_span *span)
{
	char want[80];

	snprintf(want, sizeof(want), "%s.function", tf);
	if (!(*def = facts_def_line(c->m, fn->def.file, fn->def.line, fn->name))) {
		fix_no_edit(c, f, "the parser shows no def of %s at line %d of '%s'", fn->name, fn->def.line,
			    fn->def.file);
		return NULL;
	}
	if (facts_decorator(c->m, fn->def.file, (int)*def, want, span) || !fix_span_in(l, span)) {
		fix_no_edit(c, f, "%s is not decorated with @%s.function at its def", fn->name, tf);
		return NULL;
	}
	return l;
}

/*
 * fn's file (editable), its def line into *def and its @tf.function line
 * into *dec (from the text), or 0 with the decorator's span in *span (from
 * the parser's facts); NULL after fix_no_edit() when there is none.
 */
static const struct loaded *fn_decorator(struct fixctx *c, struct finding *f, const struct model_function *fn,
					 char *tf, size_t cap, long *def, long *dec, struct code_span *span)
{
	const struct loaded *l;
	const char *dl;

	if (fn->library) {  /* a library's def is never the user's to edit, even inside the working directory */
		fix_no_edit(c, f, "%s is a library's function ('%s'): agprof writes no edit in a library's code",
			    fn->name, fn->def.file ? path_display(fn->def.file, c->m->session.cwd) : "?");
		return NULL;
	}
	if (!(l = fix_editable(c, f, fn->def.file, tf, cap)))
		return NULL;
	*dec = 0;
	if (fix_positions(c, l, fn->def.file))
		return fn_decorator_at_facts(c, f, fn, l, tf, def, span);
	/* legacy: no position facts for the file: the lines above the def, read as text */
	/* co_firstlineno is the first decorator's line: the def follows the decorators */
	for (*def = fn->def.line; (dl = srcfile_line(&l->sf, *def)) && dl[text_indent(dl)] == '@' && *def < fn->def.line + 8;)
		(*def)++;
	if (!dl || strncmp(dl + text_indent(dl), "def ", 4)) {
		fix_no_edit(c, f, "line %ld of '%s' is not the def of %s", *def, fn->def.file, fn->name);
		return NULL;
	}
	if (!(*dec = find_decorator(l, *def, tf))) {
		fix_no_edit(c, f, "%s is not decorated with @%s.function at its def", fn->name, tf);
		return NULL;
	}
	return l;
}

/*
 * Legacy: the start of a new decorator line dec (`@TF.function...`): its
 * indentation and "@TF.function(" into after; returns what follows
 * ".function" on the line (nothing, or the arguments).
 */
static const char *decorator_open(const struct loaded *l, long dec, const char *tf, struct strbuf *after)
{
	const char *s = srcfile_line(&l->sf, dec);
	size_t ind = text_indent(s);

	strbuf_add(after, s, ind);
	strbuf_addf(after, "@%s.function(", tf);
	return s + ind + 1 + strlen(tf) + strlen(".function");
}

/* What decorator_at_facts adds to a @tf.function decorator. */
struct decorator_option {
	const char *text;       /* "jit_compile=True", "input_signature=[...]" */
	const char *key;        /* the keyword that means it is there already */
	const char *relaxed;    /* a keyword the option replaces when its value is True (reduce_retracing), or NULL */
	const char *already;    /* the reason when key (or relaxed, not to be replaced) is there */
};

/* Where in the decorator call the option goes, into *at: before the first argument, or in empty brackets; 0 or -1. */
static int option_place(struct fixctx *c, struct finding *f, const struct model_function *fn, const struct loaded *l,
			const struct code_call *call, const struct decorator_option *o, struct code_span *at)
{
	for (int i = 0; i < call->nargs; i++) {
		const char *name = call->args[i].name;

		if (!strcmp(name, o->key) || (o->relaxed && !strcmp(name, o->relaxed)))
			return fix_no_edit(c, f, "the decorator of %s %s", fn->name, o->already), -1;
		if (name[0] == '#' || name[0] == '*')
			return fix_no_edit(c, f, "the decorator of %s passes arguments the parser cannot name",
					   fn->name), -1;
	}
	if (call->nargs)
		*at = (struct code_span){ call->args[0].line, call->args[0].col, call->args[0].line, call->args[0].col };
	else
		*at = (struct code_span){ call->span.end_line, call->span.end_col - 1, call->span.end_line,
					  call->span.end_col - 1 };
	if (!fix_span_in(l, at) || (!call->nargs && srcfile_line(&l->sf, at->line)[at->col] != ')'))
		return fix_no_edit(c, f, "the decorator of %s is not where the parser put it", fn->name), -1;
	return 0;
}

/* An option the relaxed keyword (reduce_retracing=True) of call gives way to: its span into *at; 0, or -1 when none. */
static int relaxed_place(const struct loaded *l, const struct code_call *call, const struct decorator_option *o,
			 struct code_span *at)
{
	struct strbuf v = STRBUF_INIT;
	int rc = -1;

	for (int i = 0; o->relaxed && i < call->nargs; i++) {
		const struct code_arg *a = &call->args[i];

		if (strcmp(a->name, o->relaxed) || !fix_span_in(l, &a->value))
			continue;
		fix_span_text(l, &a->value, &v);
		*at = (struct code_span){ a->line, a->col, a->value.end_line, a->value.end_col };
		rc = v.buf && !strcmp(v.buf, "True") && fix_span_in(l, at) ? 0 : -1;
	}
	strbuf_release(&v);
	return rc;
}

/*
 * Option o added to fn's @tf.function decorator at span, at the parser's
 * positions: a bare decorator becomes TF.function(OPTION); a call gets it
 * before its first (keyword) argument or in its empty brackets, wherever
 * its lines and comments are.  0 with f's edit stored, or -1 with no_edit.
 */
static int decorator_at_facts(struct fixctx *c, struct finding *f, const struct model_function *fn,
			      const struct loaded *l, const char *tf, const struct code_span *span,
			      const struct decorator_option *o, int pins_signature)
{
	struct code_call call;
	struct code_span at = *span;
	struct strbuf text = STRBUF_INIT;
	struct edit e = { .after = STRBUF_INIT, .file = fn->def.file, .pins_signature = pins_signature };

	if (facts_call_starting(c->m, fn->def.file, span->line, span->col, &call)) {
		strbuf_addf(&text, "%s.function(%s)", tf, o->text);  /* @tf.function, no brackets */
	} else if (pins_signature && relaxed_place(l, &call, o, &at) == 0) {
		strbuf_addstr(&text, o->text);  /* reduce_retracing=True did not stop the retraces */
	} else if (option_place(c, f, fn, l, &call, o, &at) == 0) {
		strbuf_addf(&text, "%s%s", o->text, call.nargs ? ", " : "");
	} else {
		return -1;
	}
	fix_splice(l, &at, text.buf, &e);
	fix_store_edit(c, f, l, &e);
	strbuf_release(&e.after);
	strbuf_release(&text);
	return 0;
}

/*
 * jit-compile: jit_compile=True added to fn's @tf.function line (the
 * decorator without arguments, or with them on that one line).
 */
void fix_edit_jit(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	static const struct decorator_option jit = { "jit_compile=True", "jit_compile", NULL,
						     "already sets jit_compile" };
	struct code_span span;
	struct edit e = { .after = STRBUF_INIT };
	char tf[64];
	const struct loaded *l;
	const char *rest;
	long dec, def, close;

	if (!(l = fn_decorator(c, f, fn, tf, sizeof(tf), &def, &dec, &span)))
		return;
	if (!dec) {
		decorator_at_facts(c, f, fn, l, tf, &span, &jit, 0);
		return;
	}
	rest = decorator_open(l, dec, tf, &e.after);
	strbuf_addstr(&e.after, "jit_compile=True");
	if (text_blank(rest)) {
		strbuf_addf(&e.after, ")%s\n", rest);
	} else if (rest[0] == '(' && !strstr(rest, "jit_compile") && (close = text_match_close(rest, 0)) > 0) {
		strbuf_addf(&e.after, "%s%s\n", close > 1 ? ", " : "", rest + 1);
	} else {
		fix_no_edit(c, f, "the decorator of %s %s", fn->name, strstr(rest, "jit_compile") ? "already sets jit_compile"
			    : "spans several lines");
		strbuf_release(&e.after);
		return;
	}
	fix_store_line_edit(c, f, l, fn->def.file, dec, &e);
}

/* retracing by shape: an input_signature (or reduce_retracing) on the decorator. */
void fix_edit_signature(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	struct fix_param ps[FIX_MAX_ARGS];
	struct strbuf sig = STRBUF_INIT;
	struct edit e = { .after = STRBUF_INIT };
	char tf[64];
	const struct loaded *l;
	const char *rest, *relax;
	struct code_span span;
	long dec, def;
	int np;

	if (!(l = fn_decorator(c, f, fn, tf, sizeof(tf), &def, &dec, &span)))
		return;
	if ((np = fix_params_of(c, l, fn->def.file, def, fn->name, ps)) < 0) {
		fix_no_edit(c, f, "line %ld of '%s' is not a `def %s(...)` of plain parameters", def, fn->def.file,
			    fn->name);
		return;
	}
	e.pins_signature = !build_signature(fn, ps, np, tf, &sig);
	if (!e.pins_signature) {
		strbuf_reset(&sig);
		strbuf_addstr(&sig, "reduce_retracing=True");
	}
	if (!dec) {
		struct decorator_option o = { sig.buf, "input_signature", "reduce_retracing",
					      "already pins or relaxes its inputs" };

		decorator_at_facts(c, f, fn, l, tf, &span, &o, e.pins_signature);
		goto cleanup;
	}
	rest = decorator_open(l, dec, tf, &e.after);
	if (text_blank(rest)) {
		strbuf_addf(&e.after, "%s)%s\n", sig.buf, rest);
	} else if (e.pins_signature && rest[0] == '(' && (relax = strstr(rest, "reduce_retracing=True")) &&
		   !strstr(rest, "input_signature")) {
		/* reduce_retracing did not stop the retraces: the signature replaces it */
		strbuf_add(&e.after, rest + 1, (size_t)(relax - rest - 1));
		strbuf_addf(&e.after, "%s%s\n", sig.buf, relax + strlen("reduce_retracing=True"));
	} else if (rest[0] == '(' && !strstr(rest, "input_signature") && !strstr(rest, "reduce_retracing")) {
		long close = text_match_close(rest, 0);

		if (close < 0) {
			fix_no_edit(c, f, "the decorator of %s spans several lines", fn->name);
			goto cleanup;
		}
		strbuf_addf(&e.after, "%s%s%s\n", sig.buf, close > 1 ? ", " : "", rest + 1);
	} else {
		fix_no_edit(c, f, "the decorator of %s already pins or relaxes its inputs", fn->name);
		goto cleanup;
	}
	e.file = fn->def.file;
	e.line = dec;
	e.nlines = 1;
	fix_store_edit(c, f, l, &e);
cleanup:
	strbuf_release(&sig);
	strbuf_release(&e.after);
}

