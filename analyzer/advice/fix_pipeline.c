/*
 * fix_pipeline.c - input-bound (fix_edit.h): num_parallel_calls on the
 * pipeline's sequential maps and a prefetch after its last transformation.
 *
 * Both are insertions at the parser's positions (call-span and arg facts):
 * `, num_parallel_calls=tf.data.AUTOTUNE` just past the last argument of
 * the one `.map(fn)` call whose lines hold the map's recorded line, and
 * `.prefetch(tf.data.AUTOTUNE)` just past the call of the last
 * transformation when nothing in its expression goes on from it (the
 * call-span's `chained` flag; a recording without that flag gets no
 * prefetch).  A call over several lines, a comment or a string that looks
 * like a call change nothing.  A file without facts is read as lines
 * (pipeline_legacy_text: the narrow one-line forms).
 */
#include "fix_edit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The pipeline around f's line: the dataset ops its Python function built in its process, in order. */
struct pipeline {
	const struct model_dataset_op *ops[16];
	size_t n;
	int prefetch;
};

/* A map that runs its function one element at a time, with no Python black box (py_function) in it. */
static int sequential_map(const struct model_dataset_op *d)
{
	/* a Python black box holds the GIL: parallel calls do not help it, and may reorder its side effects */
	return !strcmp(d->transformation, "map") && !d->parallel && d->function && !d->blackbox_execs;
}

static int pipeline_of(const struct model *m, const struct finding *f, struct pipeline *p)
{
	const struct model_dataset_op *at = NULL;

	p->n = 0;
	p->prefetch = 0;
	for (size_t i = 0; i < m->ndatasets && !at; i++)
		if (m->datasets[i].loc.file && f->loc.file && !strcmp(m->datasets[i].loc.file, f->loc.file) &&
		    m->datasets[i].loc.line == f->loc.line && m->datasets[i].func)
			at = &m->datasets[i];
	for (size_t i = 0; at && i < m->ndatasets; i++) {
		const struct model_dataset_op *d = &m->datasets[i];

		if (d->pid != at->pid || !d->func || strcmp(d->func, at->func) || !d->loc.file || d->loc.line < 1 ||
		    strcmp(d->loc.file, at->loc.file) || (at->pipeline >= 0 && d->pipeline != at->pipeline))
			continue;
		if (p->n == sizeof(p->ops) / sizeof(p->ops[0]))
			return -1;
		p->ops[p->n++] = d;
		/* prefetched by the program, or by TensorFlow (inject_prefetch): another one does nothing */
		p->prefetch |= !strcmp(d->transformation, "prefetch") || d->prefetched;
	}
	return p->n ? 0 : -1;
}

/* ---- from the parser's facts ----------------------------------------------- */

/* What the edit inserts where. */
struct insertion {
	int line, col;
	char text[96];
};

#define MAX_INSERTIONS 17       /* a map per recorded op, and a prefetch */

/* Whether arg's text is fn, or an attribute ending in it (self.parse). */
static int names_fn(const struct loaded *l, const struct code_arg *a, const char *fn)
{
	struct strbuf text = STRBUF_INIT;
	size_t n = strlen(fn);
	int yes;

	if (!fix_span_in(l, &a->value))
		return 0;
	fix_span_text(l, &a->value, &text);
	yes = text.len >= n && !strcmp(text.buf + text.len - n, fn) && (text.len == n || text.buf[text.len - n - 1] == '.');
	strbuf_release(&text);
	return yes;
}

/*
 * The one call of method (its last name part) in l's file whose lines hold
 * line, and whose first argument is fn when fn is given: into *out; 0, or
 * -1 when none or several.
 */
static int method_call_at(const struct fixctx *c, const struct loaded *l, const char *file, const char *method,
			  int line, const char *fn, struct code_call *out)
{
	int n = 0;

	for (const struct code_fact *f = NULL; (f = facts_next(c->m, f, file, "call-span"));) {
		struct code_call call;

		if (strcmp(code_callee_last(f->name), method) || !strchr(f->name, '.') || facts_call_of(c->m, f, &call) ||
		    call.span.line > line || line > call.span.end_line ||
		    (fn && (!call.nargs || strcmp(call.args[0].name, "#0") || !names_fn(l, &call.args[0], fn))))
			continue;
		if (n++)
			return -1;
		*out = call;
	}
	return n == 1 ? 0 : -1;
}

/* num_parallel_calls for the sequential map d: past its call's last argument; 0, or -1 when it cannot be placed. */
static int map_insertion(const struct fixctx *c, const struct loaded *l, const struct model_dataset_op *d,
			 const char *tf, struct insertion *ins)
{
	struct code_call call;
	const struct code_arg *last;

	if (method_call_at(c, l, d->loc.file, "map", d->loc.line, d->function, &call))
		return -1;
	for (int i = 0; i < call.nargs; i++)
		if (call.args[i].name[0] == '*' || !strcmp(call.args[i].name, "num_parallel_calls"))
			return -1;  /* **kw may set it; or it is set */
	last = &call.args[call.nargs - 1];
	if (!fix_span_in(l, &last->value))
		return -1;
	ins->line = last->value.end_line;
	ins->col = last->value.end_col;
	snprintf(ins->text, sizeof(ins->text), ", num_parallel_calls=%s.data.AUTOTUNE", tf);
	return 0;
}

/* .prefetch past the call of the pipeline's last transformation, when nothing goes on from it; 0 or -1. */
static int prefetch_insertion(const struct fixctx *c, const struct loaded *l, const struct model_dataset_op *last,
			      const char *tf, struct insertion *ins)
{
	struct code_call call;
	struct code_span end;

	if (method_call_at(c, l, last->loc.file, last->transformation, last->loc.line, NULL, &call) ||
	    call.chained != 0)
		return -1;
	end = (struct code_span){ call.span.end_line, call.span.end_col, call.span.end_line, call.span.end_col };
	if (!fix_span_in(l, &end))
		return -1;
	ins->line = end.line;
	ins->col = end.col;
	snprintf(ins->text, sizeof(ins->text), ".prefetch(%s.data.AUTOTUNE)", tf);
	return 0;
}

static int by_position(const void *a, const void *b)
{
	const struct insertion *x = a, *y = b;

	return x->line != y->line ? (x->line > y->line) - (x->line < y->line) : (x->col > y->col) - (x->col < y->col);
}

/* e: the lines from the first insertion's to the last's, each insertion made (ins sorted, checked). */
static void insertions_edit(const struct loaded *l, const struct insertion *ins, size_t n, struct edit *e)
{
	size_t k = 0;

	e->line = ins[0].line;
	e->nlines = ins[n - 1].line - ins[0].line + 1;
	for (int line = ins[0].line; line <= ins[n - 1].line; line++) {
		const char *s = srcfile_line(&l->sf, line);
		size_t at = 0;

		for (; k < n && ins[k].line == line; k++) {
			strbuf_add(&e->after, s + at, (size_t)ins[k].col - at);
			strbuf_addstr(&e->after, ins[k].text);
			at = (size_t)ins[k].col;
		}
		strbuf_addf(&e->after, "%s\n", s + at);
	}
}

/* fix_edit_pipeline from the parser's facts. */
static void pipeline_at_facts(struct fixctx *c, struct finding *f, const struct loaded *l, const struct pipeline *p,
			      const char *tf)
{
	struct insertion ins[MAX_INSERTIONS];
	struct edit e = { .after = STRBUF_INIT, .file = p->ops[0]->loc.file };
	size_t n = 0, kept = 0;

	for (size_t i = 0; i < p->n && n < MAX_INSERTIONS - 1; i++)
		if (sequential_map(p->ops[i]) && map_insertion(c, l, p->ops[i], tf, &ins[n]) == 0)
			n++;
	if (!p->prefetch && prefetch_insertion(c, l, p->ops[p->n - 1], tf, &ins[n]) == 0)
		n++;
	qsort(ins, n, sizeof(ins[0]), by_position);
	for (size_t i = 0; i < n; i++)  /* one map recorded twice: one insertion */
		if (!kept || by_position(&ins[kept - 1], &ins[i]))
			ins[kept++] = ins[i];
	if (!kept && p->prefetch)
		fix_no_edit(c, f, "the pipeline is prefetched already (by the program or by TensorFlow's inject_prefetch)"
			    " and has no sequential map agprof can make parallel safely");
	else if (!kept)
		fix_no_edit(c, f, "the parser shows no sequential map or last call of the pipeline agprof can edit safely"
			    " (a py_function in the map, a map whose function is not named, num_parallel_calls or **kwargs"
			    " given, a call going on past the last transformation)");
	else {
		insertions_edit(l, ins, kept, &e);
		fix_store_edit(c, f, l, &e);
	}
	strbuf_release(&e.after);
}

/* ---- legacy: a file without the parser's facts, read as lines --------------- */

/*
 * s with num_parallel_calls=<tf>.data.AUTOTUNE added to its one
 * `.map(fn...)` call, into out; -1 when the line has no such call, several,
 * or one that already sets it.
 */
static int add_parallel_map(const char *s, const char *fn, const char *tf, struct strbuf *out)
{
	struct text_arg args[FIX_MAX_ARGS];
	long open, close = -1, pick = -1;
	int found = 0;

	for (long at = 0; (open = text_find_call(s, "map", (size_t)at)) >= 0; at = open + 1) {
		long cl = text_match_close(s, (size_t)open);
		int n = cl < 0 ? -1 : text_split_args(s, (size_t)open, (size_t)cl, args);

		if (n < 1 || open < 4 || s[open - 4] != '.')
			continue;
		if (args[0].end - args[0].start != strlen(fn) || strncmp(s + args[0].start, fn, strlen(fn)))
			continue;
		for (int i = 0; i < n; i++)
			if (s[args[i].start] == '*' || strstr(s + args[i].start, "num_parallel_calls") == s + args[i].start)
				return -1;
		found++;
		pick = open;
		close = cl;
	}
	if (found != 1 || s[close - 1] == ',')
		return -1;
	(void)pick;
	strbuf_add(out, s, (size_t)close);
	strbuf_addf(out, ", num_parallel_calls=%s.data.AUTOTUNE%s", tf, s + close);
	return 0;
}

/*
 * s with .prefetch(<tf>.data.AUTOTUNE) after its last `.method(...)` call,
 * into out, when nothing but a comment follows that call (the line ends the
 * pipeline's expression); -1 otherwise.
 */
static int add_prefetch(const char *s, const char *method, const char *tf, struct strbuf *out)
{
	size_t n = strlen(method);
	long open, close = -1;

	for (long at = 0; (open = text_find_call(s, method, (size_t)at)) >= 0; at = open + 1)
		if ((size_t)open > n && s[(size_t)open - n - 1] == '.' && text_match_close(s, (size_t)open) >= 0)
			close = text_match_close(s, (size_t)open);
	if (close < 0 || !text_blank(s + close + 1))
		return -1;
	strbuf_add(out, s, (size_t)close + 1);
	strbuf_addf(out, ".prefetch(%s.data.AUTOTUNE)%s", tf, s + close + 1);
	return 0;
}

static void take(struct strbuf *cur, struct strbuf *next)
{
	strbuf_release(cur);
	*cur = *next;
	strbuf_init(next);
}

/* Line n of l as the pipeline edit leaves it, into out: 1 when changed. */
static int pipeline_line(const struct loaded *l, long n, const struct pipeline *p, const char *tf, struct strbuf *out)
{
	struct strbuf cur = STRBUF_INIT, next = STRBUF_INIT;
	const struct model_dataset_op *last = p->ops[p->n - 1];
	int changed = 0;

	strbuf_addstr(&cur, srcfile_line(&l->sf, n));
	if (!cur.buf)
		goto done;
	for (size_t i = 0; i < p->n; i++) {
		const struct model_dataset_op *d = p->ops[i];

		if (d->loc.line != n || !sequential_map(d) || add_parallel_map(cur.buf, d->function, tf, &next))
			continue;
		take(&cur, &next);
		changed = 1;
	}
	if (!p->prefetch && last->loc.line == n && !add_prefetch(cur.buf, last->transformation, tf, &next)) {
		take(&cur, &next);
		changed = 1;
	}
done:
	strbuf_addf(out, "%s\n", cur.buf ? cur.buf : "");
	strbuf_release(&cur);
	strbuf_release(&next);
	return changed;
}

/* Legacy: the narrow one-line forms of the pipeline's lines (pipeline_line). */
static void pipeline_legacy_text(struct fixctx *c, struct finding *f, const struct loaded *l, const struct pipeline *p0,
				 const char *tf)
{
	const struct pipeline p = *p0;
	struct edit e = { .after = STRBUF_INIT };
	struct strbuf lines[21];
	long from = 0, to = 0, first = 0, last = 0;

	for (size_t i = 0; i < p.n; i++) {
		from = !from || p.ops[i]->loc.line < from ? p.ops[i]->loc.line : from;
		to = p.ops[i]->loc.line > to ? p.ops[i]->loc.line : to;
	}
	if (to - from >= (long)(sizeof(lines) / sizeof(lines[0])) || !srcfile_line(&l->sf, to)) {
		fix_no_edit(c, f, "the pipeline's lines %ld-%ld are not one short block", from, to);
		return;
	}
	/* the hunk: from the first changed line to the last */
	for (long n = from; n <= to; n++) {
		strbuf_init(&lines[n - from]);
		if (pipeline_line(l, n, &p, tf, &lines[n - from])) {
			first = first ? first : n;
			last = n;
		}
	}
	for (long n = first; first && n <= last; n++)
		strbuf_add(&e.after, lines[n - from].buf, lines[n - from].len);
	for (long n = from; n <= to; n++)
		strbuf_release(&lines[n - from]);
	if (!first && p.prefetch) {
		fix_no_edit(c, f, "the pipeline is prefetched already (by the program or by TensorFlow's inject_prefetch)"
			    " and has no sequential map agprof can make parallel safely");
	} else if (!first) {
		fix_no_edit(c, f, "the pipeline's lines %ld-%ld have no sequential map or last call agprof can edit safely"
			    " (a py_function in the map, a call spanning lines, code after it)", from, to);
	} else {
		e.file = p.ops[0]->loc.file;
		e.line = first;
		e.nlines = last - first + 1;
		fix_store_edit(c, f, l, &e);
	}
	strbuf_release(&e.after);
}


/*
 * input-bound: num_parallel_calls=tf.data.AUTOTUNE on the pipeline's
 * sequential maps (not those running a py_function) and a prefetch after its
 * last transformation.  Neither changes the elements or their order
 * (tf.data keeps a parallel map deterministic unless told otherwise).
 */
void fix_edit_pipeline(struct fixctx *c, struct finding *f)
{
	struct pipeline p;
	const struct loaded *l;
	char tf[64];

	if (pipeline_of(c->m, f, &p)) {
		fix_no_edit(c, f, "the lines that built the pipeline are not known");
		return;
	}
	if (!(l = fix_editable(c, f, p.ops[0]->loc.file, tf, sizeof(tf))))
		return;
	if (fix_reader(c, l, p.ops[0]->loc.file) != FIX_LEGACY_TEXT)
		pipeline_at_facts(c, f, l, &p, tf);  /* older facts: the maps (positions), no prefetch (no chained flag) */
	else
		pipeline_legacy_text(c, f, l, &p, tf);
}
