/*
 * html_flame.c - the icicle of time by call stack: the run's time by kind
 * (tracing, graph calls, eager ops, py_function, Session steps), then the
 * Python function, the user's line, and the innermost library frame that
 * line went through (the call site chains the collector records, as the
 * model aggregates them: no row is read here).
 *
 * Each node is a <div> placed by percentages (its text is cut by CSS, its
 * whole label is its title), in pre-order with its depth; the page's script
 * zooms to a node on click or Enter (its ancestors then span the width),
 * Escape zooms out, arrows move the focus (one tab stop: the root).  At
 * most MAX_NODES nodes; a node under 0.1% of the whole is not drawn.
 */
#include "html_internal.h"
#include "checked.h"
#include "model.h"
#include "pathdisp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NODES 1500
#define MAX_SITES 2000 /* eager lines read, the busiest first */
#define MIN_SHARE 0.001
#define ROW_PX 22

enum cat { C_ALL, C_TRACE, C_CALL, C_EAGER, C_BB, C_SESSION };

static const char *const cat_name[] = { "all", "tracing", "graph calls", "eager ops", "py_function", "Session.run" };
static const char *const cat_class[] = { "c-all", "c-trace", "c-call", "c-eager", "c-bb", "c-call" };

struct fnode {
	char *label;
	int64_t ns;
	int depth;
	enum cat cat;
	long parent;
	double x; /* share of the whole before it, set at layout */
};

struct flame {
	struct fnode *n;
	size_t len, cap;
	int full;
};

/* The child of parent labelled label (made when new); -1 when the tree is full. */
static long child(struct flame *f, long parent, const char *label, enum cat cat)
{
	for (size_t i = parent + 1; i < f->len; i++)
		if (f->n[i].parent == parent && !strcmp(f->n[i].label, label))
			return (long)i;
	if (f->len == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		struct fnode *n = cap <= 4 * MAX_NODES ? realloc(f->n, cap * sizeof(*n)) : NULL;

		if (!n) {
			f->full = 1;
			return -1;
		}
		f->n = n, f->cap = cap;
	}
	f->n[f->len] = (struct fnode){ strdup(label ? label : "?"), 0, parent >= 0 ? f->n[parent].depth + 1 : 0,
				       cat, parent, 0 };
	return f->n[f->len].label ? (long)f->len++ : -1;
}

/* Add ns along the path of labels (NULL ends it) under the kind's node; sums saturate (damaged times). */
static void add_path(struct flame *f, enum cat cat, int64_t ns, const char *const *path)
{
	long at = child(f, 0, cat_name[cat], cat);

	if (ns <= 0 || at < 0)
		return;
	f->n[0].ns = sat_add64(f->n[0].ns, ns);
	f->n[at].ns = sat_add64(f->n[at].ns, ns);
	for (int i = 0; path[i] && at >= 0; i++) {
		at = child(f, at, path[i], cat);
		if (at >= 0)
			f->n[at].ns = sat_add64(f->n[at].ns, ns);
	}
}

/* strcmp, NULL equal to NULL only */
static int diff_str(const char *a, const char *b)
{
	return a == b ? 0 : !a || !b ? 1 : strcmp(a, b);
}

static void loc_text(char *buf, size_t sz, const struct model *m, const char *file, int line, const char *pre)
{
	if (file)
		snprintf(buf, sz, "%s%s:%d", pre, path_display(file, m->session.cwd), line);
	else
		buf[0] = 0;
}

/* Path: function, user line, library frame (each NULL when unknown; the first NULL ends it). */
static void add_loc(struct flame *f, const struct model *m, enum cat cat, int64_t ns, const char *func,
		    const struct source_loc *loc)
{
	char user[512], lib[512];
	const char *path[4] = { func ? func : "(no Python frame)", NULL, NULL, NULL };

	loc_text(user, sizeof(user), m, loc ? loc->file : NULL, loc ? loc->line : 0, "");
	loc_text(lib, sizeof(lib), m, loc ? loc->lib_file : NULL, loc ? loc->lib_line : 0, "library ");
	if (user[0]) {
		path[1] = user;
		path[2] = lib[0] ? lib : NULL;
	}
	add_path(f, cat, ns, path);
}

static int same_loc(const struct source_loc *a, const struct source_loc *b)
{
	return a->line == b->line && a->lib_line == b->lib_line && diff_str(a->file, b->file) == 0 &&
	       diff_str(a->lib_file, b->lib_file) == 0;
}

/* A function's traces by call site, one add per run of traces from one site (a loop: one run). */
static void add_traces(struct flame *f, const struct model *m, const struct model_function *fn, const char *name)
{
	int64_t ns = 0;

	for (size_t k = 0; k < fn->ntraces; k++) {
		ns = sat_add64(ns, sat_sub64(fn->traces[k].end_ns, fn->traces[k].start_ns));
		if (k + 1 == fn->ntraces || !same_loc(&fn->traces[k].callsite, &fn->traces[k + 1].callsite)) {
			add_loc(f, m, C_TRACE, ns, name, &fn->traces[k].callsite);
			ns = 0;
		}
	}
}

static void build(struct flame *f, const struct model *m)
{
	child(f, -1, "all recorded time", C_ALL);
	for (size_t i = 0; i < m->nfunctions; i++) {
		const struct model_function *fn = &m->functions[i];
		const char *name = fn->made_by ? fn->made_by : fn->name;
		char def[512];
		const char *path[3] = { name, def, NULL };

		add_traces(f, m, fn, name);
		loc_text(def, sizeof(def), m, fn->def.file, fn->def.line, "def ");
		if (!def[0])
			path[1] = NULL;
		add_path(f, C_CALL, fn->exec_ns, path);
	}
	for (size_t i = 0; i < m->nsites && i < MAX_SITES; i++)
		add_loc(f, m, C_EAGER, m->sites[i].total_ns, m->sites[i].func, &m->sites[i].loc);
	for (size_t i = 0; i < m->nblackboxes; i++) {
		const struct model_blackbox *b = &m->blackboxes[i];
		const char *path[3] = { b->function ? b->function : b->made_by ? b->made_by : b->graph_function,
					b->node_name, NULL };

		add_path(f, C_BB, b->total_ns, path);
	}
	for (size_t i = 0; i < m->nsession_runs; i++)
		add_loc(f, m, C_SESSION, m->session_runs[i].total_ns, m->session_runs[i].func, &m->session_runs[i].loc);
}

static struct flame *sort_ctx;

static int by_time(const void *a, const void *b)
{
	const struct fnode *x = &sort_ctx->n[*(const long *)a], *y = &sort_ctx->n[*(const long *)b];

	return x->ns != y->ns ? (x->ns > y->ns ? -1 : 1) : strcmp(x->label, y->label);
}

/* Children of node, biggest first, each placed after the previous. */
static void emit(struct html *h, struct flame *f, long node, int *shown)
{
	struct strbuf *o = h->out;
	const struct fnode *nd = &f->n[node];
	double total = (double)f->n[0].ns, w = nd->ns / total;
	long *kids = malloc(f->len * sizeof(*kids));
	size_t nk = 0;
	double x = nd->x;

	if (w < MIN_SHARE || *shown >= MAX_NODES || !kids) {
		free(kids);
		return;
	}
	(*shown)++;
	/* one tab stop (the root); arrows move between boxes (the page's script) */
	strbuf_addf(o, "<div class=\"fl %s\" tabindex=\"%d\" role=\"button\" data-x=\"%.6f\" data-w=\"%.6f\" "
		    "data-d=\"%d\" style=\"left:%.4f%%;width:%.4f%%;top:%dpx\" title=\"", cat_class[nd->cat],
		    node ? -1 : 0, nd->x, w, nd->depth, 100 * nd->x, 100 * w, nd->depth * ROW_PX);
	html_esc(o, nd->label);
	strbuf_addstr(o, ": ");
	html_dur(o, nd->ns);
	strbuf_addf(o, ", %.1f%% (%s)\">", 100 * w, cat_name[nd->cat]);
	html_esc(o, nd->label);
	strbuf_addstr(o, " <span class=\"dim\">");
	html_dur(o, nd->ns);
	strbuf_addstr(o, "</span></div>\n");
	for (size_t i = node + 1; i < f->len; i++)
		if (f->n[i].parent == node)
			kids[nk++] = (long)i;
	sort_ctx = f;
	qsort(kids, nk, sizeof(*kids), by_time);
	for (size_t i = 0; i < nk; i++) {
		f->n[kids[i]].x = x;
		x += f->n[kids[i]].ns / total;
		emit(h, f, kids[i], shown);
	}
	free(kids);
}

void html_flame(struct html *h)
{
	struct strbuf *o = h->out;
	struct flame f = { 0 };
	int shown = 0, depth = 0;

	strbuf_addstr(o, "<section id=\"flame\" aria-labelledby=\"flame-h\"><h2 id=\"flame-h\">Time by call stack</h2>\n");
	build(&f, h->m);
	if (!f.len || f.n[0].ns <= 0) {
		strbuf_addstr(o, "<p>no TensorFlow time recorded</p>\n</section>\n");
		goto out;
	}
	for (size_t i = 0; i < f.len; i++)
		depth = f.n[i].depth > depth ? f.n[i].depth : depth;
	strbuf_addstr(o, "<p class=\"dim\">An icicle: each row splits the one above, widths are time. Rows: the kind "
		      "of time (the pattern and the label say which), the Python function, the user's line, the "
		      "innermost library frame it went through (the two frames a call site records). Click a box "
		      "or press Enter on it to zoom to it; Escape or the button zooms out. Keys: Tab to the "
		      "drawing, then arrows: up to the caller, down to the first callee, left and right to the "
		      "neighbours. Times of several threads add up.</p>\n"
		      "<p><button type=\"button\" id=\"fl-reset\">whole run (Esc)</button> "
		      "<span id=\"fl-range\" class=\"dim\" aria-live=\"polite\"></span></p>\n");
	strbuf_addf(o, "<div id=\"fl\" class=\"flame\" role=\"group\" aria-label=\"time by call stack\" "
		    "style=\"height:%dpx\">\n", (depth + 1) * ROW_PX);
	emit(h, &f, 0, &shown);
	strbuf_addstr(o, "</div>\n");
	if (f.full || shown >= MAX_NODES)
		strbuf_addf(o, "<p class=\"dim\">the %d largest boxes drawn</p>\n", shown);
	strbuf_addstr(o, "</section>\n");
out:
	for (size_t i = 0; i < f.len; i++)
		free(f.n[i].label);
	free(f.n);
}
