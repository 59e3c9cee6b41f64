/*
 * fix_hoist.c - new-function-object retraces (fix_edit.h): the statement
 * that builds the tf.function in a loop, `step = tf.function(f)`, moved
 * above the loop, so that one object keeps its traces.
 *
 * From the parser's facts (docs/schema.md, code_facts): the assignment's
 * statement and value spans (assign), the tf.function call and its
 * arguments (call-span, arg), the loops around it (loop), the names bound
 * in each loop (bind) and the blocks between (block).  The statement moves
 * above the outermost loop, from the innermost out, that binds no name its
 * value reads, with nothing but `with` blocks between; inside the same
 * def.  Its lines move whole, re-indented to the loop's, and the loop's
 * lines follow: the file keeps its number of lines.  A recording whose
 * facts predate assignments and bindings gets no edit (it says so); a file
 * without any facts is read as lines (hoist_legacy_text, the narrow form
 * `name = tf.function(f)` on one line directly in the loop).
 */
#include "fix_edit.h"
#include "model_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* The build and where it goes. */
struct hoist {
	const char *file;
	struct code_assign build;       /* step = tf.function(f) */
	struct code_call call;          /* tf.function(f) */
	const struct code_fact *loop;   /* the loop it goes above */
};

/* Whether call (a call fact) is TensorFlow's tf.function, as the file names it (tf.function, or function imported). */
static int is_tf_function(const struct code_fact *call, const char *tf)
{
	size_t n = strlen(tf);

	return !strcmp(call->detail, "tf") && (!strcmp(call->name, "function") ||
					       (!strncmp(call->name, tf, n) && !strcmp(call->name + n, ".function")));
}

/* The call fact (kind "call") starting at line:col of file, or NULL. */
static const struct code_fact *call_fact_at(const struct model *m, const char *file, int line, int col)
{
	for (const struct code_fact *f = NULL; (f = facts_next(m, f, file, "call"));)
		if (f->line == line && f->col == col)
			return f;
	return NULL;
}

/* Whether the function tf.function wraps (its first argument, or func=) is name, or an attribute ending in it. */
static int wraps(const struct loaded *l, const struct code_call *call, const char *name)
{
	struct strbuf text = STRBUF_INIT;
	size_t n = strlen(name);
	int yes = 0;

	for (int i = 0; i < call->nargs && !yes; i++) {
		const struct code_arg *a = &call->args[i];

		if ((strcmp(a->name, "#0") && strcmp(a->name, "func")) || !fix_span_in(l, &a->value))
			continue;
		strbuf_reset(&text);
		fix_span_text(l, &a->value, &text);
		yes = text.len >= n && !strcmp(text.buf + text.len - n, name) &&
		      (text.len == n || text.buf[text.len - n - 1] == '.') &&
		      strspn(text.buf, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789.") == text.len;
	}
	strbuf_release(&text);
	return yes;
}

/* The innermost for/while loop of file holding line and starting before it (not a comprehension), or NULL. */
static const struct code_fact *loop_around(const struct model *m, const char *file, int line)
{
	const struct code_fact *best = NULL;

	for (const struct code_fact *f = NULL; (f = facts_next(m, f, file, "loop"));)
		if (strcmp(f->name, "comprehension") && f->line < line && line <= f->end_line &&
		    (!best || f->line > best->line))
			best = f;
	return best;
}

/* Whether the assignment a is `NAME = tf.function(name...)`, the whole value the call; its call into *call. */
static int is_build(const struct fixctx *c, const struct loaded *l, const char *file, const struct code_assign *a,
		    const char *tf, const char *name, struct code_call *call)
{
	const struct code_fact *cf = call_fact_at(c->m, file, a->value.line, a->value.col);

	return cf && is_tf_function(cf, tf) && !facts_call_starting(c->m, file, a->value.line, a->value.col, call) &&
	       call->span.end_line == a->value.end_line && call->span.end_col == a->value.end_col && wraps(l, call, name);
}

/*
 * The one assignment building the tf.function of fn in a loop around the
 * call that traced it (t's call site), in the same def, at or above the
 * call: into h; 0, or -1 with f's no_edit.
 */
static int find_build(struct fixctx *c, struct finding *f, const struct model_function *fn,
		      const struct model_trace *t, const struct loaded *l, const char *tf, struct hoist *h)
{
	const struct code_fact *scope = code_fact_around(c->m, "function", h->file, t->callsite.line);
	int found = 0;

	for (const struct code_fact *af = NULL; (af = facts_next(c->m, af, h->file, "assign"));) {
		struct code_assign a;
		struct code_call call;
		const struct code_fact *loop;

		if (af->line > t->callsite.line || facts_assign_of(af, &a) ||
		    code_fact_around(c->m, "function", h->file, af->line) != scope ||
		    !is_build(c, l, h->file, &a, tf, fn->name, &call))
			continue;
		if (!(loop = loop_around(c->m, h->file, af->line)) || t->callsite.line > loop->end_line)
			continue;  /* built once, or in a loop the call is not in */
		if (found++)
			return fix_no_edit(c, f, "the parser shows more than one `... = %s.function(%s)` in the loop"
					   " around %s:%d (lines %d and %d)", tf, fn->name, h->file,
					   t->callsite.line, h->build.fact->line, af->line), -1;
		h->build = a;
		h->call = call;
		h->loop = loop;
	}
	if (!found)
		fix_no_edit(c, f, "the parser shows no `NAME = %s.function(%s)` in a loop around the call at %s:%d",
			    tf, fn->name, h->file, t->callsite.line);
	return found ? 0 : -1;
}

/* Whether span's lines hold nothing else: blanks before it, at most a comment after it. */
static int whole_lines(const struct loaded *l, const struct code_span *sp)
{
	return fix_span_in(l, sp) && strspn(srcfile_line(&l->sf, sp->line), " \t") >= (size_t)sp->col &&
	       text_blank(srcfile_line(&l->sf, sp->end_line) + sp->end_col);
}

/* A call in the build's value other than TensorFlow's (make_step(lr)): run once if moved; NULL when none. */
static const struct code_fact *other_call(const struct model *m, const struct hoist *h)
{
	const struct code_span *v = &h->build.value;

	for (const struct code_fact *f = NULL; (f = facts_next(m, f, h->file, "call"));) {
		int after_start = f->line > v->line || (f->line == v->line && f->col >= v->col);
		int before_end = f->line < v->end_line || (f->line == v->end_line && f->col < v->end_col);

		if (after_start && before_end && strcmp(f->detail, "tf"))
			return f;
	}
	return NULL;
}

/* A `global`/`nonlocal` of file naming one of the names the build reads (set elsewhere, at any time), or NULL. */
static const struct code_fact *global_read(const struct model *m, const struct hoist *h)
{
	for (const struct code_fact *f = NULL; (f = facts_next(m, f, h->file, "global"));) {
		char name[128];

		for (const char *p = f->name; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
			snprintf(name, sizeof(name), "%.*s", (int)strcspn(p, ","), p);
			if (facts_list_has(h->build.reads, name))
				return f;
		}
	}
	return NULL;
}

/* What stops the build from moving at all (its form, its value), with f's no_edit; 0 when nothing. */
static int build_movable(struct fixctx *c, struct finding *f, const struct loaded *l, const struct hoist *h)
{
	const struct code_assign *b = &h->build;
	const struct code_fact *g;
	int at = b->stmt.line;

	if (strpbrk(b->targets, ",.?"))
		return fix_no_edit(c, f, "the tf.function at line %d is assigned to %s, not to one name", at, b->targets), -1;
	if (!whole_lines(l, &b->stmt))
		return fix_no_edit(c, f, "line %d holds another statement beside the tf.function's", at), -1;
	if (b->alone)
		return fix_no_edit(c, f, "the tf.function at line %d is the only statement of its block: moving it would"
				   " leave the block empty", at), -1;
	if (!strcmp(b->reads, "*"))
		return fix_no_edit(c, f, "the arguments of the tf.function at line %d read more names than the facts"
				   " list", at), -1;
	if ((g = other_call(c->m, h)))
		return fix_no_edit(c, f, "the arguments of the tf.function at line %d call %s() (line %d), which moving"
				   " it would run once instead of once per iteration", at, g->name, g->line), -1;
	if ((g = global_read(c->m, h)))
		return fix_no_edit(c, f, "the arguments of the tf.function at line %d read %s, which line %d declares"
				   " global: it may change in the loop", at, g->name, g->line), -1;
	return 0;
}

/*
 * Why the build cannot move above loop (into why): a name its value reads
 * that the loop binds, its target bound again in the loop, or a block
 * other than `with` (or a def) between the loop and the build.  0 when it
 * can.
 */
static int loop_blocks(const struct model *m, const struct hoist *h, const struct code_fact *loop, char *why,
		       size_t cap)
{
	const struct code_assign *b = &h->build;

	for (const struct code_fact *f = NULL; (f = facts_next(m, f, h->file, "bind"));) {
		if (f->line < loop->line || f->line > loop->end_line)
			continue;
		if (!strcmp(f->name, "*") || facts_list_has(b->reads, f->name))
			return snprintf(why, cap, "the arguments of the tf.function at line %d read %s, which line %d"
					" binds inside the loop at lines %d-%d", b->stmt.line, f->name, f->line,
					loop->line, loop->end_line), -1;
		if (!strcmp(f->name, b->targets) && (f->line != b->stmt.line || f->col != b->stmt.col))
			return snprintf(why, cap, "%s is bound again at line %d, inside the loop at lines %d-%d",
					b->targets, f->line, loop->line, loop->end_line), -1;
	}
	for (const struct code_fact *f = NULL; (f = facts_next(m, f, h->file, "block"));)
		if (f->line > loop->line && f->line < b->stmt.line && b->stmt.line <= f->end_line &&
		    strcmp(f->name, "with"))
			return snprintf(why, cap, "the tf.function at line %d is built inside the `%s` at line %d, which"
					" may not run on every iteration", b->stmt.line, f->name, f->line), -1;
	for (const struct code_fact *f = NULL; (f = facts_next(m, f, h->file, "function"));)
		if (f->line > loop->line && f->line < b->stmt.line && b->stmt.line <= f->end_line)
			return snprintf(why, cap, "the tf.function at line %d is built in %s (line %d), not in the loop",
					b->stmt.line, f->name, f->line), -1;
	return 0;
}

/* The loop the build goes above: the outermost, from the innermost out, it does not depend on; 0 or -1 with no_edit. */
static int pick_loop(struct fixctx *c, struct finding *f, const struct loaded *l, struct hoist *h)
{
	const struct code_fact *inner = h->loop;
	char why[512];

	h->loop = NULL;
	for (const struct code_fact *loop = inner; loop; loop = loop_around(c->m, h->file, loop->line)) {
		const char *lp = srcfile_line(&l->sf, loop->line);

		if (!lp || strspn(lp, " \t") < (size_t)loop->col || loop->col >= h->build.stmt.col) {
			snprintf(why, sizeof(why), "the loop at line %d is not where the parser put it", loop->line);
			break;
		}
		if (loop_blocks(c->m, h, loop, why, sizeof(why)))
			break;
		h->loop = loop;
	}
	if (!h->loop)
		return fix_no_edit(c, f, "%s", why), -1;
	return 0;
}

/*
 * The edit: the build's lines, re-indented to the loop's, then the lines
 * from the loop's first to the one before the build.  Continuation lines
 * lose as much indentation as the first (inside brackets it means
 * nothing), unless a string spans them.
 */
static void hoist_edit(const struct loaded *l, const struct hoist *h, struct edit *e)
{
	const struct code_assign *b = &h->build;
	const char *lp = srcfile_line(&l->sf, h->loop->line);
	size_t delta = (size_t)(b->stmt.col - h->loop->col);

	for (int n = b->stmt.line; n <= b->stmt.end_line; n++) {
		const char *s = srcfile_line(&l->sf, n);
		size_t k = 0;

		if (n == b->stmt.line) {
			strbuf_add(&e->after, lp, (size_t)h->loop->col);
			s += b->stmt.col;
		} else if (!b->multiline_string) {
			while (k < delta && (s[k] == ' ' || s[k] == '\t'))
				k++;
			s += k;
		}
		strbuf_addf(&e->after, "%s\n", s);
	}
	for (int n = h->loop->line; n < b->stmt.line; n++)
		strbuf_addf(&e->after, "%s\n", srcfile_line(&l->sf, n));
	e->file = h->file;
	e->line = h->loop->line;
	e->nlines = b->stmt.end_line - h->loop->line + 1;
}

/* fix_edit_hoist from the parser's facts. */
static void hoist_at_facts(struct fixctx *c, struct finding *f, const struct model_function *fn,
			   const struct model_trace *t, const struct loaded *l, const char *tf)
{
	struct hoist h = { .file = t->callsite.file };
	struct edit e = { .after = STRBUF_INIT };

	if (find_build(c, f, fn, t, l, tf, &h) || build_movable(c, f, l, &h) || pick_loop(c, f, l, &h))
		return;
	hoist_edit(l, &h, &e);
	/* the line to change is where the object is made in the loop, not the call that traced it */
	if (f->loc.file && !strcmp(f->loc.file, t->callsite.file) && f->loc.line == t->callsite.line)
		f->loc.line = h.build.stmt.line;
	fix_store_edit(c, f, l, &e);
	strbuf_release(&e.after);
}

/* ---- legacy: a file without the parser's facts, read as lines --------------- */

/* Identifiers of s[a..b) other than the allowed ones (keyword names excluded)? */
static int only_idents(const char *s, size_t a, size_t b, const char *const *allowed)
{
	for (size_t i = a; i < b;) {
		size_t n = 0, j;
		int ok = 0;

		if (s[i] == '"' || s[i] == '\'')
			return 0;
		if (!isalpha((unsigned char)s[i]) && s[i] != '_') {
			i++;
			continue;
		}
		if (i > a && (text_ident_char((unsigned char)s[i - 1]) || s[i - 1] == '.')) {
			while (i < b && text_ident_char((unsigned char)s[i]))
				i++;
			continue;
		}
		while (i + n < b && text_ident_char((unsigned char)s[i + n]))
			n++;
		j = i + n + strspn(s + i + n, " ");
		if (s[j] == '=' && s[j + 1] != '=')
			ok = 1;  /* keyword name */
		for (const char *const *p = allowed; !ok && *p; p++)
			ok = strlen(*p) == n && !strncmp(*p, s + i, n);
		if (!ok)
			return 0;
		i += n;
	}
	return 1;
}

/* The `... = tf.function(name...)` line at or above line `from`, in the same def; 0 when none. */
static long find_build_line(const struct loaded *l, long from, const char *want, const char *name)
{
	for (long n = from; n >= 1 && n > from - 50; n--) {
		const char *s = srcfile_line(&l->sf, n);

		if (!s)
			break;
		if (text_blank(s))
			continue;
		if (!strncmp(s + text_indent(s), "def ", 4))
			break;
		if (strstr(s, want) && strstr(s, name) && strchr(s, '='))
			return n;
	}
	return 0;
}

/* The `for`/`while` line that directly holds line n's block, or 0. */
static long enclosing_loop(const struct loaded *l, long n)
{
	size_t ind = text_indent(srcfile_line(&l->sf, n));

	while (--n >= 1) {
		const char *p = srcfile_line(&l->sf, n);

		if (text_blank(p) || text_indent(p) >= ind)
			continue;
		p += text_indent(p);
		return !strncmp(p, "for ", 4) || !strncmp(p, "while ", 6) ? n : 0;
	}
	return 0;
}

/* Legacy: `name = tf.function(f)` on one line directly in a for/while loop, its arguments plain names. */
static void hoist_legacy_text(struct fixctx *c, struct finding *f, const struct model_function *fn,
			      const struct model_trace *t, const struct loaded *l, const char *tf)
{
	struct edit e = { .after = STRBUF_INIT };
	char want[80];
	const char *allowed[] = { fn->name, tf, "True", "False", "None", NULL };
	long build, loop, close;
	const char *s, *open, *lp;

	snprintf(want, sizeof(want), "%s.function(", tf);
	if (!(build = find_build_line(l, t->callsite.line, want, fn->name))) {
		fix_no_edit(c, f, "no `... = %s.function(%s)` line above the call at %s:%d", tf, fn->name,
			    t->callsite.file, t->callsite.line);
		return;
	}
	if (!(loop = enclosing_loop(l, build))) {
		fix_no_edit(c, f, "the tf.function of %s is not built directly inside a loop", fn->name);
		return;
	}
	s = srcfile_line(&l->sf, build);
	open = strstr(s, want) + strlen(want) - 1;
	if ((close = text_match_close(open, 0)) < 0 || !only_idents(open, 1, (size_t)close, allowed)) {
		fix_no_edit(c, f, "the arguments of %s.function at line %ld may depend on the loop", tf, build);
		return;
	}
	lp = srcfile_line(&l->sf, loop);
	strbuf_add(&e.after, lp, text_indent(lp));
	strbuf_addf(&e.after, "%s\n", s + text_indent(s));
	for (long n = loop; n < build; n++)
		strbuf_addf(&e.after, "%s\n", srcfile_line(&l->sf, n));
	e.file = t->callsite.file;
	e.line = loop;
	e.nlines = build - loop + 1;
	/* the line to change is where the object is made in the loop, not the call that traced it */
	if (f->loc.file && !strcmp(f->loc.file, t->callsite.file) && f->loc.line == t->callsite.line)
		f->loc.line = (int)build;
	fix_store_edit(c, f, l, &e);
	strbuf_release(&e.after);
}


/* new-function-object: move `step = tf.function(f)` out of the loop that evaluates it. */
void fix_edit_hoist(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	const struct model_trace *t = fix_first_retrace(fn, CAUSE_NEW_FUNCTION_OBJECT);
	const struct loaded *l;
	char tf[64];

	if (!t) {
		fix_no_edit(c, f, "the retrace is not known");
		return;
	}
	if (t->callsite.library_only || t->callsite.lib_file) {
		fix_no_edit(c, f, "a library builds the tf.function of %s (%s:%d): call it less often, or keep what it builds",
			    fn->name, t->callsite.lib_file ? t->callsite.lib_file : t->callsite.file,
			    t->callsite.lib_line);
		return;
	}
	if (!(l = fix_editable(c, f, t->callsite.file, tf, sizeof(tf))))
		return;
	switch (fix_reader(c, l, t->callsite.file)) {
	case FIX_FACTS:
		hoist_at_facts(c, f, fn, t, l, tf);
		break;
	case FIX_OLD_FACTS:
		fix_old_facts(c, f, t->callsite.file, "assignments, loops' bindings and blocks");
		break;
	case FIX_LEGACY_TEXT:
		hoist_legacy_text(c, f, fn, t, l, tf);
		break;
	}
}
