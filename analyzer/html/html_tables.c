/* html_tables.c - per function the retrace history; kernels inside graphs; see html.h. */
#include "html_internal.h"
#include "graph_ops.h"
#include "model.h"
#include "report.h"

#define MAX_FUNCTIONS 50
#define MAX_TRACES 100
#define MAX_ROWS 20

static void trace_row(struct html *h, const struct model_function *f, size_t k)
{
	const struct model_trace *tr = &f->traces[k];
	struct strbuf *o = h->out;
	const char *cause = k == 0 ? "first trace" : tr->why.nested ? "nested" :
			    tr->why.cause ? retrace_cause_name(tr->why.cause) : "unknown";

	strbuf_addf(o, "<tr><td class=\"n\">%zu</td><td class=\"n\">", k + 1);
	html_dur(o, tr->start_ns - h->m->session.start_ns);
	strbuf_addstr(o, "</td><td class=\"n\">");
	html_dur(o, tr->end_ns - tr->start_ns);
	strbuf_addf(o, "</td><td>%s%s</td><td>", cause, tr->why.followup && k ? " (follow-up)" : "");
	if (k)
		html_esc(o, tr->why.detail);
	strbuf_addstr(o, "</td><td class=\"mono\">");
	html_loc(h, &tr->callsite);
	strbuf_addstr(o, "</td></tr>\n");
}

static void history(struct html *h, const struct model_function *f)
{
	struct strbuf *o = h->out;
	struct source_loc at = f->made_by ? model_function_user_loc(f) : f->def;

	strbuf_addstr(o, "<details open><summary><b class=\"mono fn\">");
	html_esc(o, f->made_by ? f->made_by : f->name);
	strbuf_addf(o, "</b> (%s <span class=\"mono\">", f->made_by ? "made at" : "def");
	html_loc(h, &at);
	strbuf_addf(o, "</span>): %zu traces, %zu tf.function object%s, ", f->ntraces, f->function_objects,
		    f->function_objects == 1 ? "" : "s");
	html_dur(o, f->trace_ns);
	strbuf_addstr(o, " tracing</summary>\n<table><thead><tr><th class=\"n\">#</th><th class=\"n\">at</th>"
		      "<th class=\"n\">took</th><th>cause</th><th>detail</th><th>call that traced</th></tr></thead><tbody>\n");
	for (size_t k = 0; k < f->ntraces && k < MAX_TRACES; k++)
		trace_row(h, f, k);
	strbuf_addstr(o, "</tbody></table>\n");
	if (f->ntraces > MAX_TRACES)
		strbuf_addf(o, "<p>... %zu more traces</p>\n", f->ntraces - MAX_TRACES);
	strbuf_addstr(o, "</details>\n");
}

/* Every function traced more than once, worst first (the model's order), each trace with its cause. */
void html_retraces(struct html *h)
{
	const struct model *m = h->m;
	size_t shown = 0, more = 0;

	strbuf_addstr(h->out, "<section id=\"retraces\" aria-labelledby=\"retraces-h\"><h2 id=\"retraces-h\">"
		      "Retrace history per function</h2>\n");
	for (size_t i = 0; i < m->nfunctions; i++) {
		if (m->functions[i].ntraces < 2)
			continue;
		if (shown++ < MAX_FUNCTIONS)
			history(h, &m->functions[i]);
		else
			more++;
	}
	if (!shown)
		strbuf_addf(h->out, "<p>no function was traced more than once (%zu traced once)</p>\n", m->nfunctions);
	if (more)
		strbuf_addf(h->out, "<p>... %zu more functions</p>\n", more);
	strbuf_addstr(h->out, "</section>\n");
}

static void op_types(struct html *h, const struct graph_ops_model *g)
{
	struct strbuf *o = h->out;

	strbuf_addstr(o, "<h3>Top ops inside graphs</h3>\n<table><thead><tr><th>op type</th><th class=\"n\">runs</th>"
		      "<th class=\"n\">kernel time</th><th>line that created most</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < g->ntypes && i < MAX_ROWS; i++) {
		const struct graph_op_type *t = &g->types[i];

		strbuf_addstr(o, "<tr><td class=\"mono\">");
		html_esc(o, t->op_type);
		strbuf_addf(o, "</td><td class=\"n\">%lld</td><td class=\"n\">", (long long)t->count);
		html_dur(o, t->total_ns);
		strbuf_addstr(o, "</td><td class=\"mono\">");
		html_loc(h, &t->loc);
		strbuf_addstr(o, "</td></tr>\n");
	}
	strbuf_addstr(o, "</tbody></table>\n");
}

static void fns(struct html *h, const struct graph_ops_model *g)
{
	struct strbuf *o = h->out;

	strbuf_addstr(o, "<h3>Per graph function: kernels and executor overhead</h3>\n<table><thead><tr>"
		      "<th>function</th><th class=\"n\">calls</th><th class=\"n\">call time</th>"
		      "<th class=\"n\">kernel time</th><th class=\"n\">overhead</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < g->nfns && i < MAX_ROWS; i++) {
		const struct graph_fn_ops *f = &g->fns[i];

		strbuf_addstr(o, "<tr><td class=\"mono fn\">");
		html_esc(o, f->function ? f->function : f->graph_function);
		strbuf_addf(o, "</td><td class=\"n\">%lld</td><td class=\"n\">", (long long)f->calls);
		html_dur(o, f->call_ns);
		strbuf_addstr(o, "</td><td class=\"n\">");
		html_dur(o, f->kernel_ns);
		strbuf_addstr(o, "</td><td class=\"n\">");
		html_dur(o, f->overhead_ns);
		strbuf_addstr(o, "</td></tr>\n");
	}
	strbuf_addstr(o, "</tbody></table>\n");
}

void html_kernels(struct html *h)
{
	const struct graph_ops_model *g = h->o->graph_ops;

	strbuf_addstr(h->out, "<section id=\"kernels\" aria-labelledby=\"kernels-h\"><h2 id=\"kernels-h\">"
		      "Kernels inside graphs</h2>\n");
	if (!g || !g->ntypes) {
		strbuf_addstr(h->out, "<p>no kernels were recorded inside graph calls</p>\n</section>\n");
		return;
	}
	strbuf_addf(h->out, "<p>%lld kernel runs, ", (long long)g->kernels);
	html_dur(h->out, g->kernel_ns);
	strbuf_addstr(h->out, " of kernel time</p>\n");
	op_types(h, g);
	fns(h, g);
	strbuf_addstr(h->out, "</section>\n");
}
