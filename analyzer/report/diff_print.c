/*
 * diff_print.c - `agprof diff` as text and as GitHub-flavoured markdown
 * (a pull-request comment): the summary first, then functions and lines by
 * time change, then findings.  Both print the same tables (diff.h).
 */
#include "diff.h"
#include "duration.h"
#include "pathdisp.h"
#include "report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXCOLS 8

/* A table of pooled cells, printed aligned (text) or with pipes (markdown). */
struct table {
	const char *head[MAXCOLS];
	size_t ncols;
	size_t nleft;           /* columns of text (left-aligned in markdown); the rest are numbers */
	const char **cells;     /* rows * ncols */
	size_t nrows, cap;
};

static void cell_row(struct table *t, struct strpool *p, const char *const *v)
{
	if (t->nrows == t->cap) {
		size_t ncap = t->cap ? 2 * t->cap : 16;
		const char **c = realloc(t->cells, ncap * t->ncols * sizeof(*c));

		if (!c)
			return;
		t->cells = c;
		t->cap = ncap;
	}
	for (size_t i = 0; i < t->ncols; i++)
		t->cells[t->nrows * t->ncols + i] = strpool_str(p, v[i] ? v[i] : "");
	t->nrows++;
}

static void print_text_table(struct strbuf *out, const struct table *t)
{
	size_t w[MAXCOLS];

	for (size_t c = 0; c < t->ncols; c++) {
		w[c] = text_columns(t->head[c]);
		for (size_t r = 0; r < t->nrows; r++) {
			const char *s = t->cells[r * t->ncols + c];
			size_t n = s ? text_columns(s) : 0;

			w[c] = n > w[c] ? n : w[c];
		}
	}
	for (size_t r = 0; r <= t->nrows; r++) {
		strbuf_addstr(out, " ");
		for (size_t c = 0; c < t->ncols; c++) {
			const char *s = r ? t->cells[(r - 1) * t->ncols + c] : t->head[c];

			s = s ? s : "";
			strbuf_addf(out, " %s%*s", s, c + 1 < t->ncols ? (int)(w[c] - text_columns(s)) : 0, "");
		}
		strbuf_addch(out, '\n');
	}
}

/* Markdown: '|' in a cell would end it. */
static void md_cell(struct strbuf *out, const char *s)
{
	for (; s && *s; s++) {
		if (*s == '|')
			strbuf_addstr(out, "\\|");
		else
			strbuf_addch(out, *s == '\n' ? ' ' : *s);
	}
}

static void print_md_table(struct strbuf *out, const struct table *t)
{
	for (size_t r = 0; r <= t->nrows; r++) {
		strbuf_addch(out, '|');
		for (size_t c = 0; c < t->ncols; c++) {
			strbuf_addch(out, ' ');
			md_cell(out, r ? t->cells[(r - 1) * t->ncols + c] : t->head[c]);
			strbuf_addstr(out, " |");
		}
		strbuf_addch(out, '\n');
		if (!r) {
			strbuf_addch(out, '|');
			for (size_t c = 0; c < t->ncols; c++)
				strbuf_addstr(out, c >= t->nleft ? " ---: |" : " --- |");
			strbuf_addch(out, '\n');
		}
	}
}

static const char *dur(struct strpool *p, int64_t ns)
{
	char buf[DURATION_MAX];

	return strpool_str(p, duration_format(buf, sizeof(buf), ns));
}

static const char *signed_dur(struct strpool *p, int64_t ns)
{
	char buf[DURATION_MAX];

	if (!ns)
		return "0";
	return strpool_printf(p, "%c%s", ns < 0 ? '-' : '+', duration_format(buf, sizeof(buf), ns < 0 ? -ns : ns));
}

/* "6 -> 1", or "6" when unchanged, "- -> 3" when absent on a side. */
static const char *pair_int(struct strpool *p, int has_a, long long a, int has_b, long long b)
{
	if (has_a && has_b && a == b)
		return strpool_printf(p, "%lld", a);
	return strpool_printf(p, "%s -> %s", has_a ? strpool_printf(p, "%lld", a) : "-",
			      has_b ? strpool_printf(p, "%lld", b) : "-");
}

static const char *pair_dur(struct strpool *p, int has_a, int64_t a, int has_b, int64_t b)
{
	return strpool_printf(p, "%s -> %s", has_a ? dur(p, a) : "-", has_b ? dur(p, b) : "-");
}

static const char *per_call(struct strpool *p, const struct diff_function *x)
{
	const char *both = pair_dur(p, x->base.median_ns > 0, x->base.median_ns, x->new_.median_ns > 0, x->new_.median_ns);

	if (!x->compared)
		return both;
	return strpool_printf(p, "%s (%+.0f%%, p=%.2g)", both, 100 * (x->calls.ratio - 1),
			      fmin(x->calls.p_larger, x->calls.p_smaller));
}

static const char *where(struct strpool *p, const char *file, int a, int b)
{
	if (!file)
		return "-";
	file = path_display(file, NULL);  /* site-packages/... shortened; relative paths stay */
	if (a && b && a != b)
		return strpool_printf(p, "%s:%d -> %d", file, a, b);
	return strpool_printf(p, "%s:%d", file, a ? a : b);
}

/* "python-value 4 -> 0, shape 0 -> 1": the retrace causes either side has; "" when none. */
static const char *causes(struct strpool *p, const struct diff_function *x)
{
	const char *out = "";

	for (int c = 1; c < CAUSE__COUNT; c++)
		if (x->base.cause_counts[c] || x->new_.cause_counts[c])
			out = strpool_printf(p, "%s%s%s %zu -> %zu", out, *out ? ", " : "",
					     retrace_cause_name((enum retrace_cause)c), x->base.cause_counts[c],
					     x->new_.cause_counts[c]);
	return out;
}

static void functions_table(struct table *t, struct strpool *p, const struct diff *d, int top)
{
	static const char *const head[] = { "function", "defined", "traces", "calls", "tracing",
					    "per call (median)", "time change", "retraces by cause" };

	memcpy(t->head, head, sizeof(head));
	t->ncols = 8;
	t->nleft = 2;
	for (size_t i = 0; i < d->nfns && (!top || i < (size_t)top); i++) {
		const struct diff_function *x = &d->fns[i];
		const char *row[8] = {
			strpool_printf(p, "%s%s%s", x->rank >= 0 ? strpool_printf(p, "rank %d: ", x->rank) : "", x->name,
				       x->made_by ? strpool_printf(p, " (%s)", x->made_by) : ""),
			where(p, x->file, x->base.def.line, x->new_.def.line),
			pair_int(p, x->base.present, (long long)x->base.traces, x->new_.present, (long long)x->new_.traces),
			pair_int(p, x->base.present, x->base.calls, x->new_.present, x->new_.calls),
			pair_dur(p, x->base.present, x->base.trace_ns, x->new_.present, x->new_.trace_ns),
			per_call(p, x),
			signed_dur(p, x->delta_ns),
			causes(p, x),
		};

		cell_row(t, p, row);
	}
}

static void lines_table(struct table *t, struct strpool *p, const struct diff *d, int top)
{
	static const char *const head[] = { "kind", "line", "function", "what", "count", "time", "change" };

	memcpy(t->head, head, sizeof(head));
	t->ncols = 7;
	t->nleft = 4;
	for (size_t i = 0; i < d->nlines && (!top || i < (size_t)top); i++) {
		const struct diff_line *x = &d->lines[i];
		int a = x->line_base || x->count[0], b = x->line_new || x->count[1];
		const char *row[7] = {
			x->kind, where(p, x->file, x->line_base, x->line_new), x->func, x->what,
			pair_int(p, a, x->count[0], b, x->count[1]), pair_dur(p, a, x->ns[0], b, x->ns[1]),
			signed_dur(p, x->delta_ns),
		};

		cell_row(t, p, row);
	}
}

static void findings_table(struct table *t, struct strpool *p, const struct diff *d)
{
	static const char *const head[] = { "", "severity", "rule", "function", "line", "message" };
	const struct diff_finding *lists[3] = { d->added, d->resolved, d->changed };
	size_t counts[3] = { d->nadded, d->nresolved, d->nchanged };
	static const char *const tags[3] = { "new", "resolved", "changed" };

	memcpy(t->head, head, sizeof(head));
	t->ncols = 6;
	t->nleft = 6;
	for (int k = 0; k < 3; k++)
		for (size_t i = 0; i < counts[k]; i++) {
			const struct finding *f = lists[k][i].new_ ? lists[k][i].new_ : lists[k][i].base;
			const struct model *m = lists[k][i].new_ ? d->new_ : d->base;
			const char *sev = severity_name(f->severity);
			const char *row[6];

			if (k == 2 && lists[k][i].base->severity != f->severity)
				sev = strpool_printf(p, "%s -> %s", severity_name(lists[k][i].base->severity), sev);
			row[0] = tags[k];
			row[1] = sev;
			row[2] = f->rule;
			row[3] = f->function;
			row[4] = f->loc.file ? strpool_printf(p, "%s:%d", report_rel_path(m, f->loc.file), f->loc.line) : "-";
			row[5] = f->message;
			cell_row(t, p, row);
		}
}

static void print_table(struct strbuf *out, const struct table *t, int md, const char *title)
{
	strbuf_addf(out, md ? "\n### %s\n\n" : "\n%s:\n", title);
	if (!t->nrows)
		strbuf_addstr(out, md ? "none\n" : "  none\n");
	else if (md)
		print_md_table(out, t);
	else
		print_text_table(out, t);
}

void diff_print(struct strbuf *out, const struct diff *d, enum diff_format format, int top, int color)
{
	struct strpool p = STRPOOL_INIT;
	struct table t[3];
	int md = format == DIFF_MARKDOWN;
	const char *bold = color && !md ? "\033[1m" : "", *reset = color && !md ? "\033[0m" : "";

	if (format == DIFF_JSON) {
		diff_print_json(out, d);
		return;
	}
	memset(t, 0, sizeof(t));
	strbuf_addf(out, md ? "## agprof diff: `%s` -> `%s`\n\n" : "agprof diff: %s -> %s\n", d->base_path, d->new_path);
	for (size_t i = 0; i < d->nwarnings; i++)
		strbuf_addf(out, md ? "> **warning:** %s\n\n" : "warning: %s\n", d->warnings[i]);
	if (md)
		strbuf_addf(out, "**%s**\n", d->summary);
	else
		strbuf_addf(out, "%s%s%s\n", bold, d->summary, reset);
	functions_table(&t[0], &p, d, top);
	lines_table(&t[1], &p, d, top);
	findings_table(&t[2], &p, d);
	print_table(out, &t[0], md, "functions, by time change (tracing + calls)");
	print_table(out, &t[1], md, "lines: eager dispatch, black boxes, input reads, by time change");
	print_table(out, &t[2], md, "findings");
	for (int i = 0; i < 3; i++)
		free(t[i].cells);
	strpool_release(&p);
}
