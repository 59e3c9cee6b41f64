/*
 * diff_lines.c - per user line: eager dispatch, black-box runs and input
 * reads of the two recordings matched (diff.h).  A line is matched by file,
 * function and line number; one an edit moved, by file, function and what
 * it does (its busiest op type), once the exact matches are taken.
 */
#include "diff.h"
#include "checked.h"
#include "report.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

struct line_in {
	const char *kind, *file, *func, *what;
	int line;
	int64_t count, ns;
};

enum find_mode { F_BASE, F_EXACT, F_MOVED, F_NEW_ONLY };

static int line_fits(const struct diff_line *x, const struct line_in *in, enum find_mode mode)
{
	switch (mode) {
	case F_BASE:
		return x->line_base == in->line && !x->line_new;
	case F_EXACT:
		return x->line_base == in->line && (!x->line_new || x->line_new == in->line);
	case F_MOVED:
		return x->line_base && !x->line_new && diff_same(x->what, in->what);
	case F_NEW_ONLY:
		return !x->line_base && x->line_new == in->line;
	}
	return 0;
}

static struct diff_line *find_line(struct diff *d, const struct line_in *in, enum find_mode mode)
{
	for (size_t i = 0; i < d->nlines; i++) {
		struct diff_line *x = &d->lines[i];

		if (!strcmp(x->kind, in->kind) && diff_same(x->file, in->file) && diff_same(x->func, in->func) &&
		    line_fits(x, in, mode))
			return x;
	}
	return NULL;
}

/*
 * Add in to side which.  BASE's rows go in one pass; NEW's in two: pass 0
 * takes the lines at the same number, pass 1 the moved ones (by what they
 * do) and the new ones.
 */
static int add_line(struct diff *d, size_t *cap, const struct line_in *in, int which, int pass)
{
	struct diff_line *x;

	if (!which)
		x = find_line(d, in, F_BASE);
	else if (pass == 0)
		x = find_line(d, in, F_EXACT);
	else if (find_line(d, in, F_EXACT))
		return 0;  /* placed by pass 0 */
	else if (!(x = find_line(d, in, F_MOVED)))
		x = find_line(d, in, F_NEW_ONLY);
	if (!x && which && pass == 0)
		return 0;  /* pass 1 places it */
	if (!x) {
		if (ARRAY_GROW(d->lines, d->nlines, *cap))
			return error("out of memory");
		x = &d->lines[d->nlines++];
		memset(x, 0, sizeof(*x));
		x->kind = in->kind;
		x->file = in->file;
		x->func = in->func;
		x->what = in->what;
	}
	if (which)
		x->line_new = in->line;
	else
		x->line_base = in->line;
	x->count[which] += in->count;
	x->ns[which] = sat_add64(x->ns[which], in->ns);
	return 0;
}

static const char *pooled(struct diff *d, const char *s)
{
	return s ? strpool_str(&d->pool, s) : NULL;
}

/* Each row of m as a line_in, to fn. */
static int each_line(struct diff *d, const struct model *m, int (*fn)(struct diff *, size_t *, const struct line_in *,
								      int, int),
		     size_t *cap, int which, int pass)
{
	for (size_t i = 0; i < m->nsites; i++) {
		const struct model_eager_site *s = &m->sites[i];
		struct line_in in = { "eager", pooled(d, report_rel_path(m, s->loc.file)), pooled(d, s->func),
				      pooled(d, s->top_op), s->loc.line, s->count, s->total_ns };

		if (fn(d, cap, &in, which, pass))
			return -1;
	}
	for (size_t i = 0; i < m->nblackboxes; i++) {
		const struct model_blackbox *b = &m->blackboxes[i];
		const char *owner = b->function ? b->function : b->made_by ? b->made_by : "tf.data";
		struct line_in in = { "blackbox", pooled(d, report_rel_path(m, b->loc.file)), pooled(d, owner),
				      pooled(d, b->op_type), b->loc.line, b->execs, b->total_ns };

		if (fn(d, cap, &in, which, pass))
			return -1;
	}
	for (size_t i = 0; i < m->nthreads; i++) {
		const struct model_thread *t = &m->threads[i];
		struct line_in in = { "input", pooled(d, report_rel_path(m, t->input_loc.file)), pooled(d, t->input_func),
				      NULL, t->input_loc.line, t->input_waits, t->input_ns };

		if (t->input_waits && fn(d, cap, &in, which, pass))
			return -1;
	}
	return 0;
}

static int cmp_abs_delta_line(const void *a, const void *b)
{
	const struct diff_line *x = a, *y = b;
	int64_t dx = llabs(x->delta_ns), dy = llabs(y->delta_ns);

	if (dx != dy)
		return dx < dy ? 1 : -1;
	return strcmp(x->kind, y->kind);
}

int diff_build_lines(struct diff *d)
{
	size_t cap = 0;

	if (each_line(d, d->base, add_line, &cap, 0, 0) || each_line(d, d->new_, add_line, &cap, 1, 0) ||
	    each_line(d, d->new_, add_line, &cap, 1, 1))
		return -1;
	for (size_t i = 0; i < d->nlines; i++)
		d->lines[i].delta_ns = d->lines[i].ns[1] - d->lines[i].ns[0];
	sort_array(d->lines, d->nlines, sizeof(*d->lines), cmp_abs_delta_line);
	return 0;
}
