/* html_findings.c - the run at a glance and the ranked findings; see html.h. */
#include "html_internal.h"
#include "model.h"
#include "report.h"

#include <string.h>

/* One part of the run's time in the stacked bar. */
struct part {
	const char *label, *pattern;
	int64_t ns;
};

/*
 * Where the time went, of the time after TensorFlow started.  The parts
 * can overlap (several threads), so the bar's whole is the larger of the
 * run and their sum, and "the rest" is what none of them covers.
 */
static size_t parts(const struct model *m, struct part *p, int64_t *whole)
{
	const struct model_session *s = &m->session;
	int64_t sum = 0;
	size_t n = 0;

	p[n++] = (struct part){ "tracing", "p-trace", s->trace_recorded_ns };
	p[n++] = (struct part){ "graph execution", "p-call", s->function_call_ns + s->session_run_ns };
	p[n++] = (struct part){ "eager dispatch", "p-eager", s->eager_ns };
	p[n++] = (struct part){ "black boxes (py_function)", "p-bb", s->blackbox_ns };
	p[n++] = (struct part){ "input wait", "p-input", s->input_ns };
	for (size_t i = 0; i < n; i++) {
		if (p[i].ns < 0)
			p[i].ns = 0;
		if (sum <= INT64_MAX - p[i].ns)
			sum += p[i].ns;
	}
	p[n++] = (struct part){ "the rest", "p-rest", s->active_ns > sum ? s->active_ns - sum : 0 };
	*whole = s->active_ns > sum ? s->active_ns : sum;
	return n;
}

static void bar(struct html *h, const struct part *p, size_t n, int64_t whole)
{
	struct strbuf *o = h->out;
	double x = 0;

	strbuf_addstr(o, "<svg role=\"img\" aria-labelledby=\"glance-t\" viewBox=\"0 0 1000 40\" "
		      "preserveAspectRatio=\"none\" style=\"width:100%;height:40px\"><title id=\"glance-t\">"
		      "where the time went</title>\n");
	for (size_t i = 0; i < n && whole > 0; i++) {
		double w = 1000.0 * (double)p[i].ns / (double)whole;

		if (w <= 0)
			continue;
		strbuf_addf(o, "<rect x=\"%.2f\" y=\"0\" width=\"%.2f\" height=\"40\" fill=\"url(#%s)\">"
			    "<title>%s: ", x, w, p[i].pattern, p[i].label);
		html_dur(o, p[i].ns);
		strbuf_addf(o, " (%.1f%%)</title></rect>\n", 100.0 * (double)p[i].ns / (double)whole);
		x += w;
	}
	strbuf_addstr(o, "</svg>\n<p class=\"legend\">");
	for (size_t i = 0; i < n; i++) {
		strbuf_addf(o, "<span><svg class=\"sw\" aria-hidden=\"true\"><rect width=\"100%%\" height=\"100%%\" "
			    "fill=\"url(#%s)\"/></svg>%s: <b>", p[i].pattern, p[i].label);
		html_dur(o, p[i].ns);
		strbuf_addf(o, "</b> (%.1f%%)</span>", whole > 0 ? 100.0 * (double)p[i].ns / (double)whole : 0.0);
	}
	strbuf_addstr(o, "</p>\n");
}

static void headline(struct html *h)
{
	const struct model *m = h->m;
	const struct model_session *s = &m->session;
	struct strbuf *o = h->out;
	size_t retraces = 0;

	for (size_t i = 0; i < m->nfunctions; i++)
		retraces += m->functions[i].retraces;
	strbuf_addstr(o, "<p>run: <span class=\"mono\">");
	html_esc(o, s->argv);
	strbuf_addstr(o, "</span>, ");
	html_dur(o, s->wall_ns);
	strbuf_addstr(o, " (");
	html_dur(o, s->active_ns);
	strbuf_addstr(o, " after TensorFlow started)");
	if (s->exit_known)
		strbuf_addf(o, ", exit %d", s->exit_status);
	if (s->tf_version) {
		strbuf_addstr(o, ", TensorFlow ");
		html_esc(o, s->tf_version);
	}
	strbuf_addf(o, "</p>\n<ul><li><b>%zu</b> functions traced <b>%lld</b> times (<b>%zu</b> retraces, ",
		    m->nfunctions, (long long)s->traces, retraces);
	html_dur(o, s->trace_ns);
	strbuf_addf(o, " tracing)</li><li><b>%lld</b> graph calls, <b>%lld</b> eager ops (%.1f%% of the run), "
		    "<b>%lld</b> py_function runs, <b>%lld</b> iterator reads</li>",
		    (long long)s->function_calls, (long long)s->eager_ops, 100 * s->eager_share,
		    (long long)s->blackbox_execs, (long long)s->input_waits);
	if (s->session_runs)
		strbuf_addf(o, "<li><b>%lld</b> TF1 Session runs</li>", (long long)s->session_runs);
	if (s->aggregate_reason)
		strbuf_addf(o, "<li>past the recording's budget (%s) %lld eager ops were kept as per-second "
			    "aggregates: counts and times are exact, the timeline shows their density</li>",
			    !strcmp(s->aggregate_reason, "max-size") ? "max-size" :
			    !strcmp(s->aggregate_reason, "rate") ? "rate" : "max-events",
			    (long long)s->aggregated_eager_ops);
	if (s->dropped_events)
		strbuf_addf(o, "<li><b>warning:</b> %lld events were dropped; numbers are lower bounds</li>",
			    (long long)s->dropped_events);
	if (s->cut_short) {
		strbuf_addstr(o, "<li><b>cut short:</b> ");
		html_esc(o, s->cut_short);
		strbuf_addstr(o, "</li>");
	}
	strbuf_addf(o, "<li><b>%zu</b> findings</li></ul>\n", m->nfindings);
}

void html_glance(struct html *h)
{
	struct part p[8];
	int64_t whole;
	size_t n = parts(h->m, p, &whole);
	const char *empty = model_empty_reason(h->m);

	strbuf_addstr(h->out, "<section id=\"glance\" aria-labelledby=\"glance-h\">"
		      "<h2 id=\"glance-h\">The run at a glance</h2>\n");
	headline(h);
	if (empty) {
		strbuf_addstr(h->out, "<p><b>no TensorFlow activity was recorded:</b> ");
		html_esc(h->out, empty);
		strbuf_addstr(h->out, "</p>\n");
	}
	bar(h, p, n, whole);
	strbuf_addstr(h->out, "</section>\n");
}

/* Lines of text, each in a span of class cls and prefixed by mark ("-", "+", " "). */
static void lines(struct strbuf *o, const char *text, const char *cls, const char *mark)
{
	const char *p = text;

	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		struct strbuf line = STRBUF_INIT;

		strbuf_add(&line, p, len);
		strbuf_addf(o, "<span class=\"%s\">%s", cls, mark);
		html_esc(o, line.buf ? line.buf : "");
		strbuf_addstr(o, "</span>");
		if (!*cls)
			strbuf_addch(o, '\n');
		strbuf_release(&line);
		p = nl ? nl + 1 : p + len;
	}
}

/* The edit as a diff (red: lines removed, green: added, each marked - / +), or the code and why no edit. */
static void fix(struct html *h, const struct finding *f)
{
	struct strbuf *o = h->out;

	if (f->saving_method && f->experiment) {  /* nothing claimed; a graph move's forecast shown as one */
		strbuf_addstr(o, f->forecasts && f->forecast_ns > 0 ? "<p><b>forecast, not claimed:</b> about "
								     : "<p><b>saves:</b> not claimed");
		if (f->forecasts && f->forecast_ns > 0)
			html_dur(o, f->forecast_ns);
		strbuf_addstr(o, " <span class=\"dim\">(");
		html_esc(o, f->saving_method);
		strbuf_addstr(o, ")</span></p>\n");
	} else if (f->saving_method) {
		strbuf_addstr(o, "<p><b>saves:</b> ~");
		html_dur(o, f->saving_ns);
		strbuf_addstr(o, " <span class=\"dim\">(");
		html_esc(o, f->saving_method);
		strbuf_addstr(o, ")</span></p>\n");
	}
	if (f->fix.file) {
		strbuf_addstr(o, "<p>edit <span class=\"mono\">");
		html_esc(o, f->fix.cell ? f->fix.cell : f->fix.file);  /* a notebook cell: "In [3], line 4" */
		strbuf_addf(o, f->fix.cell ? ", line %d</span> (run the corrected cell in its place):</p>\n<pre class="
			    "\"diff\" aria-label=\"edit: lines marked minus are removed, plus added\">" : ":%d</span> (agprof "
			    "fix applies it):</p>\n<pre class=\"diff\" aria-label=\"edit: lines marked minus are removed, plus"
			    " added\">", f->fix.cell ? f->fix.cell_line : f->fix.line);
		lines(o, f->fix.before, "del", "- ");
		lines(o, f->fix.after, "add", "+ ");
		strbuf_addstr(o, "</pre>\n");
		if (f->fix.cell) {
			strbuf_addstr(o, "<p>corrected cell:</p>\n<pre class=\"cell\">");
			lines(o, f->fix.cell_after, "", "");
			strbuf_addstr(o, "</pre>\n");
		}
		return;
	}
	if (f->code) {
		strbuf_addstr(o, "<p>code:</p>\n<pre>");
		lines(o, f->code, "", "");
		strbuf_addstr(o, "</pre>\n");
	}
	if (f->no_edit) {
		strbuf_addstr(o, "<p>no edit: ");
		html_esc(o, f->no_edit);
		strbuf_addstr(o, "; the fix above is advice in words.</p>\n");
	}
}

static void finding(struct html *h, size_t i, const struct finding *f)
{
	struct strbuf *o = h->out;
	const char *sev = severity_name(f->severity);

	strbuf_addf(o, "<article class=\"card\" id=\"finding-%zu\" tabindex=\"0\">\n<h3>%zu. "
		    "<span class=\"sev-%s\">%s</span> <span class=\"mono\">", i + 1, i + 1, sev, sev);
	html_esc(o, f->rule);
	strbuf_addstr(o, "</span>");
	if (f->function) {
		strbuf_addstr(o, " <span class=\"mono fn\">");
		html_esc(o, f->function);
		strbuf_addstr(o, "</span>");
	}
	if (f->cause)
		strbuf_addf(o, " [%s]", retrace_cause_name(f->cause));
	strbuf_addstr(o, "</h3>\n<p>at <span class=\"mono loc\">");
	html_loc(h, &f->loc);
	strbuf_addstr(o, "</span>");
	if (f->thread) {
		strbuf_addstr(o, " on the ");
		html_esc(o, f->thread);
		strbuf_addstr(o, " thread");
	}
	if (f->cost_ns) {
		strbuf_addstr(o, " (costs ");
		html_dur(o, f->cost_ns);
		strbuf_addch(o, ')');
	}
	strbuf_addstr(o, "</p>\n<p>");
	html_esc(o, f->message);
	strbuf_addstr(o, "</p>\n");
	if (f->recommendation && *f->recommendation) {
		strbuf_addstr(o, "<p><b>fix:</b> ");
		html_esc(o, f->recommendation);
		strbuf_addstr(o, "</p>\n");
	}
	fix(h, f);
	strbuf_addstr(o, "</article>\n");
}

/* Every finding, ranked as the text report ranks them (the model's order). */
void html_findings(struct html *h)
{
	const struct model *m = h->m;

	strbuf_addf(h->out, "<section id=\"findings\" aria-labelledby=\"findings-h\"><h2 id=\"findings-h\">"
		    "Findings (%zu), ranked by what fixing them saves</h2>\n", m->nfindings);
	if (!m->nfindings)
		strbuf_addstr(h->out, "<p>No findings: no rule fired.</p>\n");
	for (size_t i = 0; i < m->nfindings && i < 200; i++)
		finding(h, i, &m->findings[i]);
	if (m->nfindings > 200)
		strbuf_addf(h->out, "<p>... %zu more (agprof report --format json lists all)</p>\n", m->nfindings - 200);
	strbuf_addstr(h->out, "</section>\n");
}
