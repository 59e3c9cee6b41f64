/*
 * html_diff.c - `agprof diff --format html`: the comparison of two
 * recordings (analyzer/report/diff.h) as one page in the report's style:
 * headline numbers side by side, new, gone and changed findings, per
 * function its traces and time, per line its eager dispatch.  Every change
 * is written as text with its sign and an arrow (more / less), not only in
 * colour.
 */
#include "html.h"
#include "html_internal.h"
#include "checked.h"
#include "diff.h"
#include "report.h"

#include <stdio.h>

#define MAX_ROWS 50

/* "+12.3 ms ▲" or "-1.0 ms ▼" (more / less), or "=": a cell. */
static void delta_dur(struct strbuf *o, int64_t base, int64_t new_)
{
	int64_t d = sat_sub64(new_, base);

	strbuf_addf(o, "<td class=\"n %s\">", d > 0 ? "up" : d < 0 ? "down" : "");
	if (!d) {
		strbuf_addstr(o, "=</td>");
		return;
	}
	strbuf_addch(o, d > 0 ? '+' : '-');
	html_dur(o, d > 0 ? d : d == INT64_MIN ? INT64_MAX : -d);
	if (base > 0)
		strbuf_addf(o, " (%+.0f%%)", 100.0 * (double)d / (double)base);
	strbuf_addstr(o, d > 0 ? " &#9650;</td>" : " &#9660;</td>");
}

static void delta_count(struct strbuf *o, int64_t base, int64_t new_)
{
	int64_t d = sat_sub64(new_, base);

	strbuf_addf(o, "<td class=\"n %s\">", d > 0 ? "up" : d < 0 ? "down" : "");
	if (d)
		strbuf_addf(o, "%+lld%s</td>", (long long)d, d > 0 ? " &#9650;" : " &#9660;");
	else
		strbuf_addstr(o, "=</td>");
}

static void row_dur(struct strbuf *o, const char *what, int64_t a, int64_t b)
{
	strbuf_addf(o, "<tr><th>%s</th><td class=\"n\">", what);
	html_dur(o, a);
	strbuf_addstr(o, "</td><td class=\"n\">");
	html_dur(o, b);
	strbuf_addstr(o, "</td>");
	delta_dur(o, a, b);
	strbuf_addstr(o, "</tr>\n");
}

static void row_count(struct strbuf *o, const char *what, int64_t a, int64_t b)
{
	strbuf_addf(o, "<tr><th>%s</th><td class=\"n\">%lld</td><td class=\"n\">%lld</td>", what, (long long)a,
		    (long long)b);
	delta_count(o, a, b);
	strbuf_addstr(o, "</tr>\n");
}

static int64_t retraces(const struct model *m)
{
	int64_t n = 0;

	for (size_t i = 0; i < m->nfunctions; i++)
		n += (int64_t)m->functions[i].retraces;
	return n;
}

static void headline(struct strbuf *o, const struct diff *d)
{
	const struct model_session *a = &d->base->session, *b = &d->new_->session;

	strbuf_addstr(o, "<section id=\"d-headline\" aria-labelledby=\"d-headline-h\"><h2 id=\"d-headline-h\">"
		      "Side by side</h2>\n<p class=\"card\"><b>");
	html_esc(o, d->summary);
	strbuf_addstr(o, "</b></p>\n");
	for (size_t i = 0; i < d->nwarnings; i++) {
		strbuf_addstr(o, "<p class=\"sev-warning\">warning: ");
		html_esc(o, d->warnings[i]);
		strbuf_addstr(o, "</p>\n");
	}
	strbuf_addstr(o, "<table><thead><tr><th></th><th class=\"n\">base</th><th class=\"n\">new</th>"
		      "<th class=\"n\">change (&#9650; more, &#9660; less)</th></tr></thead><tbody>\n");
	row_dur(o, "wall time", a->wall_ns, b->wall_ns);
	row_dur(o, "after TensorFlow started", a->active_ns, b->active_ns);
	row_count(o, "traces", a->traces, b->traces);
	row_count(o, "retraces", retraces(d->base), retraces(d->new_));
	row_dur(o, "tracing", a->trace_ns, b->trace_ns);
	row_count(o, "graph calls", a->function_calls, b->function_calls);
	row_dur(o, "graph calls' time", a->function_call_ns, b->function_call_ns);
	row_count(o, "eager ops", a->eager_ops, b->eager_ops);
	row_dur(o, "eager dispatch", a->eager_ns, b->eager_ns);
	row_count(o, "py_function runs", a->blackbox_execs, b->blackbox_execs);
	row_dur(o, "input wait", a->input_ns, b->input_ns);
	row_count(o, "findings", (int64_t)d->base->nfindings, (int64_t)d->new_->nfindings);
	if (d->step)
		row_dur(o, "step (median period)", d->step_median[0], d->step_median[1]);
	strbuf_addstr(o, "</tbody></table>\n</section>\n");
}

static void finding_row(struct html *h, const char *state, const struct finding *f)
{
	struct strbuf *o = h->out;

	strbuf_addf(o, "<tr><td><b>%s</b></td><td class=\"sev-%s\">%s</td><td class=\"mono\">", state,
		    severity_name(f->severity), severity_name(f->severity));
	html_esc(o, f->rule);
	strbuf_addstr(o, "</td><td class=\"mono fn\">");
	html_esc(o, f->function);
	strbuf_addstr(o, "</td><td class=\"mono\">");
	html_loc(h, &f->loc);
	strbuf_addstr(o, "</td><td>");
	html_esc(o, f->message);
	strbuf_addstr(o, "</td></tr>\n");
}

static void findings(struct strbuf *o, const struct diff *d)
{
	struct html hb = { o, d->base, NULL }, hn = { o, d->new_, NULL };

	strbuf_addf(o, "<section id=\"d-findings\" aria-labelledby=\"d-findings-h\"><h2 id=\"d-findings-h\">Findings: "
		    "%zu new, %zu gone, %zu changed</h2>\n", d->nadded, d->nresolved, d->nchanged);
	if (!d->nadded && !d->nresolved && !d->nchanged) {
		strbuf_addstr(o, "<p>the same findings in both</p>\n</section>\n");
		return;
	}
	strbuf_addstr(o, "<table><thead><tr><th>state</th><th>severity</th><th>rule</th><th>function</th>"
		      "<th>location</th><th>message</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < d->nadded && i < MAX_ROWS; i++)
		finding_row(&hn, "new", d->added[i].new_);
	for (size_t i = 0; i < d->nresolved && i < MAX_ROWS; i++)
		finding_row(&hb, "gone", d->resolved[i].base);
	for (size_t i = 0; i < d->nchanged && i < MAX_ROWS; i++)
		finding_row(&hn, "changed", d->changed[i].new_);
	strbuf_addstr(o, "</tbody></table>\n</section>\n");
}

static void function_row(struct strbuf *o, const struct diff_function *f)
{
	const struct diff_side *a = &f->base, *b = &f->new_;

	strbuf_addstr(o, "<tr><td class=\"mono fn\">");
	html_esc(o, f->made_by ? f->made_by : f->name);
	if (f->rank >= 0)
		strbuf_addf(o, " (rank %d)", f->rank);
	strbuf_addstr(o, "</td><td class=\"mono\">");
	html_esc(o, f->file);
	if (b->present ? b->def.line : a->def.line)
		strbuf_addf(o, ":%d", b->present ? b->def.line : a->def.line);
	strbuf_addf(o, "</td><td class=\"n\">%s</td><td class=\"n\">%zu</td><td class=\"n\">%zu</td>",
		    !a->present ? "new" : !b->present ? "gone" : "", a->traces, b->traces);
	delta_count(o, (int64_t)a->traces, (int64_t)b->traces);
	strbuf_addf(o, "<td class=\"n\">%lld</td><td class=\"n\">%lld</td><td class=\"n\">", (long long)a->calls,
		    (long long)b->calls);
	html_dur(o, sat_add64(a->trace_ns, a->call_ns));
	strbuf_addstr(o, "</td><td class=\"n\">");
	html_dur(o, sat_add64(b->trace_ns, b->call_ns));
	strbuf_addstr(o, "</td>");
	delta_dur(o, sat_add64(a->trace_ns, a->call_ns), sat_add64(b->trace_ns, b->call_ns));
	if (f->compared)
		strbuf_addf(o, "<td class=\"n\">&times;%.2f [%.2f, %.2f]%s</td></tr>\n", f->calls.ratio, f->calls.ratio_lo,
			    f->calls.ratio_hi, f->calls.p_larger < 0.01 ? " slower" :
			    f->calls.p_smaller < 0.01 ? " faster" : "");
	else
		strbuf_addstr(o, "<td class=\"n\">-</td></tr>\n");
}

static void functions(struct strbuf *o, const struct diff *d)
{
	strbuf_addstr(o, "<section id=\"d-functions\" aria-labelledby=\"d-functions-h\"><h2 id=\"d-functions-h\">"
		      "Per function: traces and time (tracing + graph calls), by change</h2>\n");
	if (!d->nfns) {
		strbuf_addstr(o, "<p>no tf.function in either recording</p>\n</section>\n");
		return;
	}
	strbuf_addstr(o, "<table><thead><tr><th>function</th><th>def</th><th></th><th class=\"n\">traces base</th>"
		      "<th class=\"n\">new</th><th class=\"n\">change</th><th class=\"n\">calls base</th>"
		      "<th class=\"n\">new</th><th class=\"n\">time base</th><th class=\"n\">new</th>"
		      "<th class=\"n\">change</th><th class=\"n\">per call, new/base [95%]</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < d->nfns && i < MAX_ROWS; i++)
		function_row(o, &d->fns[i]);
	strbuf_addstr(o, "</tbody></table>\n");
	if (d->nfns > MAX_ROWS)
		strbuf_addf(o, "<p class=\"dim\">... %zu more functions</p>\n", d->nfns - MAX_ROWS);
	strbuf_addstr(o, "</section>\n");
}

static void lines(struct strbuf *o, const struct diff *d)
{
	strbuf_addstr(o, "<section id=\"d-lines\" aria-labelledby=\"d-lines-h\"><h2 id=\"d-lines-h\">Per line: eager "
		      "dispatch, py_function runs, input reads, by change</h2>\n");
	if (!d->nlines) {
		strbuf_addstr(o, "<p>none in either recording</p>\n</section>\n");
		return;
	}
	strbuf_addstr(o, "<table><thead><tr><th>kind</th><th>line</th><th>function</th><th>op</th>"
		      "<th class=\"n\">count base</th><th class=\"n\">new</th><th class=\"n\">time base</th>"
		      "<th class=\"n\">new</th><th class=\"n\">change</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < d->nlines && i < MAX_ROWS; i++) {
		const struct diff_line *l = &d->lines[i];

		strbuf_addf(o, "<tr><td>%s</td><td class=\"mono\">", l->kind);
		html_esc(o, l->file);
		if (l->line_new || l->line_base)
			strbuf_addf(o, ":%d", l->line_new ? l->line_new : l->line_base);
		strbuf_addstr(o, "</td><td class=\"mono fn\">");
		html_esc(o, l->func);
		strbuf_addstr(o, "</td><td class=\"mono\">");
		html_esc(o, l->what);
		strbuf_addf(o, "</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td><td class=\"n\">",
			    (long long)l->count[0], (long long)l->count[1]);
		html_dur(o, l->ns[0]);
		strbuf_addstr(o, "</td><td class=\"n\">");
		html_dur(o, l->ns[1]);
		strbuf_addstr(o, "</td>");
		delta_dur(o, l->ns[0], l->ns[1]);
		strbuf_addstr(o, "</tr>\n");
	}
	strbuf_addstr(o, "</tbody></table>\n</section>\n");
}

void diff_html(struct strbuf *out, const struct diff *d)
{
	struct strbuf title = STRBUF_INIT;

	strbuf_addf(&title, "%s -> %s", d->base_path, d->new_path);
	html_page_begin(out, "agprof diff", title.buf, "<a href=\"#d-headline\">Side by side</a>"
			"<a href=\"#d-findings\">Findings</a><a href=\"#d-functions\">Functions</a>"
			"<a href=\"#d-lines\">Lines</a>");
	strbuf_release(&title);
	headline(out, d);
	findings(out, d);
	functions(out, d);
	lines(out, d);
	html_page_end(out);
}
