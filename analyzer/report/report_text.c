/* report_text.c - the human report; see report.h. */
#include "report.h"
#include "fix.h"
#include "model.h"
#include "gpu.h"
#include "pathdisp.h"
#include "duration.h"
#include "verdicts.h"

#include <stdio.h>
#include <string.h>

#define C_RESET "\033[0m"
#define C_BOLD "\033[1m"
#define C_DIM "\033[2m"
#define C_RED "\033[31m"
#define C_YELLOW "\033[33m"
#define C_CYAN "\033[36m"

struct text {
	struct strbuf *out;
	const struct model *m;
	const struct report_opts *o;
};

static int gpu_has_data(const struct gpu_model *g)
{
	return g->has_data;
}

static const char *col(const struct text *t, const char *code)
{
	return t->o->color ? code : "";
}

static void heading(struct text *t, const char *title)
{
	strbuf_addf(t->out, "\n%s%s%s\n", col(t, C_BOLD), title, col(t, C_RESET));
}

static const char *loc_str(const struct model *m, const struct source_loc *loc)
{
	static char buf[2][512];
	static int which;
	struct strbuf sb = STRBUF_INIT;

	which ^= 1;
	report_add_loc(&sb, m, loc);
	snprintf(buf[which], sizeof(buf[which]), "%s", sb.buf);
	strbuf_release(&sb);
	return buf[which];
}

/* Tables and headers fit a terminal this wide. */
#define WIDTH 80

/* text in at most width columns, cut from the left with "..." (paths); padded when pad. */
static void cell_left(struct strbuf *sb, const char *text, size_t width, int pad)
{
	char buf[1024];

	text_fit_left(buf, sizeof(buf), text ? text : "-", width);
	strbuf_addstr(sb, buf);
	for (size_t n = text_columns(buf); pad && n < width; n++)
		strbuf_addch(sb, ' ');
}

/* A name in at most width columns (exactly, when pad): its end cut with "...". */
static void cell_name(struct strbuf *sb, const char *name, int width, int pad)
{
	int len = (int)strlen(name ? name : "-");

	if (len <= width || width < 4)
		strbuf_addf(sb, "%-*s", pad ? width : 0, name ? name : "-");
	else
		strbuf_addf(sb, "%.*s...", width - 3, name);
}

/* Only the user's part of loc ("train.py:84"). */
static const char *user_loc_str(const struct model *m, const struct source_loc *loc)
{
	struct source_loc u = { NULL, 0, NULL, 0, 0 };

	if (loc) {
		u.file = loc->file;
		u.line = loc->line;
	}
	return loc_str(m, &u);
}

/* The row's library frame on a line of its own, under the location column. */
static void lib_row(struct text *t, const struct source_loc *loc, size_t indent)
{
	struct strbuf sb = STRBUF_INIT;

	if (!loc || !loc->lib_file)
		return;
	strbuf_addf(&sb, "\u2192 %s:%d", path_display(loc->lib_file, t->m->session.cwd), loc->lib_line);
	strbuf_addf(t->out, "%*s%s", (int)indent, "", col(t, C_DIM));
	cell_left(t->out, sb.buf, WIDTH - indent, 0);
	strbuf_addf(t->out, "%s\n", col(t, C_RESET));
	strbuf_release(&sb);
}

/* " at LOC" when the line stays within WIDTH, else LOC on a line of its own. */
static void add_at(struct text *t, size_t used, const struct source_loc *loc, const char *after)
{
	const char *where = loc_str(t->m, loc);

	if (used + 5 + text_columns(where) + text_columns(after) <= WIDTH) {
		strbuf_addf(t->out, "  at %s%s\n", where, after);
		return;
	}
	strbuf_addf(t->out, "%s\n      at ", after);
	cell_left(t->out, where, WIDTH - 9, 0);
	strbuf_addch(t->out, '\n');
}

static double pct(const struct model *m, double ns)
{
	return m->session.active_ns ? 100.0 * ns / (double)m->session.active_ns : 0;
}

/* Only TF1 Session steps: the tf.function and eager tables would all be empty. */
static int session_steps_only(const struct model *m)
{
	const struct model_session *s = &m->session;

	return m->nsession_runs && !m->nfunctions && !s->eager_ops && !s->function_calls && !s->blackbox_execs;
}

static size_t limit(const struct text *t, size_t n)
{
	return t->o->top > 0 && (size_t)t->o->top < n ? (size_t)t->o->top : n;
}

/* One line per thread that waited for a tf.data iterator (rows of the "input" source). */
static void input_summary(struct text *t)
{
	const struct metric_source *src = model_find_source(t->m, "input");
	size_t n = src ? src->count(t->m, src->data) : 0;

	for (size_t i = 0; i < n; i++) {
		struct metric_value th = { 0 }, waits = { 0 }, ns = { 0 }, share = { 0 }, line = { 0 }, pipe = { 0 };
		char a[DURATION_MAX];

		src->get(t->m, src->data, i, "thread", &th);
		src->get(t->m, src->data, i, "waits", &waits);
		src->get(t->m, src->data, i, "wait_ns", &ns);
		src->get(t->m, src->data, i, "wait_share", &share);
		src->get(t->m, src->data, i, "line", &line);
		src->get(t->m, src->data, i, "pipeline", &pipe);
		strbuf_addf(t->out, "  input: %.0f iterator reads on the %s thread waited %s (%.1f%% of the loop at line %.0f); "
			    "pipeline: %s\n", waits.num, th.text ? th.text : "?", duration_format(a, sizeof(a), (int64_t)ns.num),
			    100 * share.num, line.num, pipe.text ? pipe.text : "-");
	}
	for (size_t i = 0; i < t->m->ngraph_readers; i++) {
		const struct model_graph_reader *r = &t->m->graph_readers[i];
		char a[DURATION_MAX];

		strbuf_addf(t->out, "  input: read inside the graph of %s (IteratorGetNext node; %lld calls, %s, waiting "
			    "included)\n", r->function ? r->function : r->graph_function, (long long)r->calls,
			    duration_format(a, sizeof(a), (int64_t)r->calls_ns));
	}
}

/*
 * A recording without TensorFlow activity is still a run: say what was seen
 * (processes, TensorFlow loaded or not, hooked or not) and what was not.
 */
static void nothing_recorded(struct text *t)
{
	const struct model_session *s = &t->m->session;

	strbuf_addf(t->out, "  %sno TensorFlow activity was recorded:%s %s\n", col(t, C_BOLD), col(t, C_RESET),
		    model_empty_reason(t->m));
	strbuf_addf(t->out, "  seen: %lld process%s, TensorFlow %s%s%s (status '%s')\n", (long long)s->processes,
		    s->processes == 1 ? "" : "es",
		    s->tf_status && strcmp(s->tf_status, "not-loaded") ? "loaded" : "not loaded",
		    s->tf_version ? " " : "", s->tf_version ? s->tf_version : "", s->tf_status ? s->tf_status : "not-loaded");
	strbuf_addstr(t->out, "  not seen: traces, graph-function calls, eager ops, py_function runs, Session runs\n");
}

/* Totals of the tf.function / eager side of the run. */
static void summary_tf2(struct text *t)
{
	const struct model *m = t->m;
	const struct model_session *s = &m->session;
	char a[DURATION_MAX], b[DURATION_MAX], c[DURATION_MAX], d[DURATION_MAX];
	size_t retraces = 0;

	for (size_t i = 0; i < m->nfunctions; i++)
		retraces += m->functions[i].retraces;
	strbuf_addf(t->out, "  %zu function%s traced %lld times (%zu retraces, %s tracing, %.1f%%", m->nfunctions,
		    m->nfunctions == 1 ? "" : "s", (long long)s->traces, retraces,
		    duration_format(a, sizeof(a), s->trace_ns), 100 * s->trace_share);
	if (s->trace_recorded_ns < s->trace_ns)  /* traces are recorded outside the windows too */
		strbuf_addf(t->out, " of the recorded time: %s of it outside the windows",
			    duration_format(b, sizeof(b), s->trace_ns - s->trace_recorded_ns));
	strbuf_addstr(t->out, ")\n");
	strbuf_addf(t->out, "  %lld graph calls (%s), %lld eager ops (%s, %.1f%%), %lld py_function runs (%s)\n",
		    (long long)s->function_calls, duration_format(b, sizeof(b), s->function_call_ns),
		    (long long)s->eager_ops, duration_format(c, sizeof(c), s->eager_ns), 100 * s->eager_share,
		    (long long)s->blackbox_execs, duration_format(d, sizeof(d), s->blackbox_ns));
	if (s->blackbox_eager_ops)
		strbuf_addf(t->out, "  %lld eager ops ran inside py_function bodies (%s, counted with their black boxes)\n",
			    (long long)s->blackbox_eager_ops, duration_format(a, sizeof(a), s->blackbox_eager_ns));
	input_summary(t);
}

/* What the capture windows held: shares below are of that time only. */
static void capture_line(struct text *t)
{
	const struct model_session *s = &t->m->session;
	char a[DURATION_MAX];

	if (!s->capture)
		return;
	if (!s->capture_windows) {
		strbuf_addf(t->out, "  %swarning:%s the capture window never opened (%s; %lld calls of the capture "
			    "function): only traces and process facts were recorded\n", col(t, C_YELLOW),
			    col(t, C_RESET), s->capture, (long long)s->capture_calls);
		return;
	}
	strbuf_addf(t->out, "  recorded: %lld capture window%s (%s), %s of the run; shares are of that time\n",
		    (long long)s->capture_windows, s->capture_windows == 1 ? "" : "s", s->capture,
		    duration_format(a, sizeof(a), model_recorded_ns(t->m, s->start_ns, s->end_ns)));
}

/* Past the recording's budget: from when eager ops (graph calls, black-box runs) are aggregates, not rows. */
static void budget_line(struct text *t)
{
	const struct model_session *s = &t->m->session;
	int calls = s->aggregated_calls || s->aggregated_blackbox_execs;
	char a[DURATION_MAX];

	if (!s->aggregate_reason)
		return;
	strbuf_addf(t->out, "  budget: eager ops%s kept as per-second aggregates from %s into the run (",
		    calls ? ", graph calls and black-box runs" : "",
		    duration_format(a, sizeof(a), s->aggregate_from_ns > s->start_ns ? s->aggregate_from_ns - s->start_ns : 0));
	if (!strcmp(s->aggregate_reason, "max-size"))
		strbuf_addf(t->out, "--max-size %lld MB", (long long)(s->max_size_bytes >> 20));
	else if (!strcmp(s->aggregate_reason, "rate"))
		strbuf_addstr(t->out, "events came faster than the launcher could store them one by one");
	else
		strbuf_addf(t->out, "--max-events %lld", (long long)s->max_events);
	strbuf_addf(t->out, "): %lld ops", (long long)s->aggregated_eager_ops);
	if (calls)
		strbuf_addf(t->out, ", %lld graph calls, %lld py_function runs", (long long)s->aggregated_calls,
			    (long long)s->aggregated_blackbox_execs);
	strbuf_addf(t->out, "; counts and times are exact, the timeline shows their density\n");
}

static void summary(struct text *t)
{
	const struct model *m = t->m;
	const struct model_session *s = &m->session;
	const char *empty = model_empty_reason(m);
	char a[DURATION_MAX], b[DURATION_MAX];

	strbuf_addf(t->out, "%sagprof report%s %s\n", col(t, C_BOLD), col(t, C_RESET),
		    t->o->recording ? t->o->recording : "");
	strbuf_addf(t->out, "  run: %s, %s", s->argv ? s->argv : "?", duration_format(a, sizeof(a), s->wall_ns));
	if (!empty)
		strbuf_addf(t->out, s->capture ? " (%s recorded after TensorFlow started)" : " (%s after TensorFlow started)",
			    duration_format(b, sizeof(b), s->active_ns));
	if (s->exit_known)
		strbuf_addf(t->out, ", exit %d", s->exit_status);
	else if (s->attached && !s->cut_short)
		strbuf_addstr(t->out, ", recorded attached (no exit status)");
	else
		strbuf_addstr(t->out, ", exit status unknown");
	if (s->tf_version)
		strbuf_addf(t->out, ", TensorFlow %s", s->tf_version);
	if (s->python_version)
		strbuf_addf(t->out, ", Python %.*s", (int)strcspn(s->python_version, " "), s->python_version);
	strbuf_addch(t->out, '\n');
	if (s->cut_short)
		strbuf_addf(t->out, "  %scut short:%s %s\n", col(t, C_YELLOW), col(t, C_RESET), s->cut_short);
	if (s->incomplete)
		strbuf_addf(t->out, "  %sincomplete:%s %s\n", col(t, C_YELLOW), col(t, C_RESET), s->incomplete);
	capture_line(t);
	budget_line(t);
	if (empty) {
		nothing_recorded(t);
		return;
	}
	if (!session_steps_only(m))
		summary_tf2(t);
	if (s->session_runs)
		strbuf_addf(t->out, "  %lld Session runs in graph mode (%s, %.1f%%)\n", (long long)s->session_runs,
			    duration_format(a, sizeof(a), s->session_run_ns), pct(m, (double)s->session_run_ns));
	if (s->dropped_events)
		strbuf_addf(t->out, "  %swarning:%s %lld events were dropped; numbers are lower bounds\n",
			    col(t, C_YELLOW), col(t, C_RESET), (long long)s->dropped_events);
	/* a loaded machine: said, as every time above is longer for it (model.h, cpu_wait_share) */
	if (s->cpu_sampled && s->cpu_wait_share >= 0.3)
		strbuf_addf(t->out, "  %smachine load:%s the program's threads waited for a CPU %.0f%% of their runnable"
			    " time; times may be up to %.1fx an idle machine's\n", col(t, C_YELLOW), col(t, C_RESET),
			    100 * s->cpu_wait_share, 1 / (1 - (s->cpu_wait_share < 0.95 ? s->cpu_wait_share : 0.95)));
	if (s->tf_status && strcmp(s->tf_status, "hooked"))
		strbuf_addf(t->out, "  %swarning:%s TensorFlow status '%s'%s%s\n", col(t, C_YELLOW), col(t, C_RESET),
			    s->tf_status, s->tf_detail ? ": " : "", s->tf_detail ? s->tf_detail : "");
}

static void indent_block(struct text *t, const char *label, const char *code)
{
	const char *p = code;

	strbuf_addf(t->out, "      %s%s%s\n", col(t, C_DIM), label, col(t, C_RESET));
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		strbuf_addf(t->out, "        %.*s\n", (int)len, p);
		p = nl ? nl + 1 : p + len;
	}
}

/* The finding's saving, then its edit of the user's code, or its lines and why no edit is offered. */
static void fix_text(struct text *t, const struct finding *f)
{
	char a[DURATION_MAX];

	/* one short line; the derivation with --verbose (and in JSON); nothing claimed for an experiment */
	if (f->verdict.kind == VERDICT_REFUTED)
		return;  /* the advice is withdrawn: its line says why (verdict_lines) */
	if (f->saving_method && !f->experiment && (f->saving_ns > 0 || f->cost_ns > 0)) {
		strbuf_addf(t->out, "    %ssaves:%s ~%s", col(t, C_BOLD), col(t, C_RESET),
			    duration_format(a, sizeof(a), f->saving_ns));
		strbuf_addf(t->out, "%s%s\n", f->saving_summary ? ": " : "", f->saving_summary ? f->saving_summary : "");
		if (t->o->verbose)
			strbuf_addf(t->out, "      %show:%s %s\n", col(t, C_DIM), col(t, C_RESET), f->saving_method);
	}
	if (f->fix.cell) {  /* a notebook cell: the whole corrected cell, to run in its place */
		strbuf_addf(t->out, "    edit %s, line %d (run the corrected cell in its place):\n", f->fix.cell,
			    f->fix.cell_line);
		indent_block(t, "before:", f->fix.before);
		indent_block(t, "after:", f->fix.after);
		indent_block(t, "corrected cell:", f->fix.cell_after);
		return;
	}
	if (f->fix.file) {
		strbuf_addf(t->out, "    edit %s:%d (agprof fix applies it):\n", f->fix.file, f->fix.line);
		indent_block(t, "before:", f->fix.before);
		indent_block(t, "after:", f->fix.after);
		return;
	}
	if (f->code)
		indent_block(t, "code:", f->code);
	if (f->no_edit)
		strbuf_addf(t->out, "    no edit: %s; the fix above is advice in words.\n", f->no_edit);
}

/*
 * An experiment's verdict on the finding's edit (REC.verify.json), or the
 * command that tries it when its saving is not claimed (after the forecast,
 * when its rule makes one).
 */
static void verdict_lines(struct text *t, const struct finding *f)
{
	struct strbuf v = STRBUF_INIT;
	char a[DURATION_MAX];

	if (f->verdict.kind) {
		verdict_text(&v, &f->verdict);
		strbuf_sanitize_text(&v, 0, 0);
		strbuf_addf(t->out, "    %s%s%s\n", col(t, C_BOLD), v.buf ? v.buf : "", col(t, C_RESET));
		if (f->verdict.kind == VERDICT_REFUTED)
			strbuf_addstr(t->out, "    (its advice is withdrawn for this recording: agprof fix --verify measured it)\n");
	}
	/* a graph move's estimate: shown, never claimed; the try: line (when there is an edit) measures it */
	if (f->experiment && f->forecasts && f->forecast_ns > 0) {
		strbuf_addf(t->out, "    %sforecast, not claimed:%s about %s", col(t, C_BOLD), col(t, C_RESET),
			    duration_format(a, sizeof(a), f->forecast_ns));
		strbuf_addf(t->out, "%s%s\n", f->saving_summary ? ": " : "", f->saving_summary ? f->saving_summary : "");
		if (t->o->verbose)
			strbuf_addf(t->out, "      %show:%s %s\n", col(t, C_DIM), col(t, C_RESET), f->saving_method);
	}
	if (finding_try_command(f))
		strbuf_addf(t->out, "    %stry:%s %s (an experiment: no saving is claimed until it measured one)\n",
			    col(t, C_BOLD), col(t, C_RESET), finding_try_command(f));
	strbuf_release(&v);
}

/* The experiment on several edits applied together (agprof fix --verify), after the findings. */
static void together_line(struct text *t)
{
	struct strbuf v = STRBUF_INIT;

	if (!t->m->together.verdict.kind)
		return;
	verdict_together_text(&v, &t->m->together);
	strbuf_sanitize_text(&v, 0, 0);
	strbuf_addf(t->out, "    %sall edits:%s %s\n", col(t, C_BOLD), col(t, C_RESET), v.buf ? v.buf : "");
	strbuf_release(&v);
}

static void findings(struct text *t, int with_examples)
{
	const struct model *m = t->m;
	size_t n = m->nfindings;

	if (!n) {
		strbuf_addstr(t->out, "\nNo findings: no rule fired.\n");
		return;
	}
	strbuf_addf(t->out, "\n%sFindings (%zu), ranked by what fixing them saves%s\n", col(t, C_BOLD), n,
		    col(t, C_RESET));
	for (size_t i = 0; i < limit(t, n); i++) {
		const struct finding *f = &m->findings[i];
		const char *sc = f->severity == SEV_ERROR ? C_RED : f->severity == SEV_WARNING ? C_YELLOW : C_CYAN;
		struct strbuf tail = STRBUF_INIT, cost = STRBUF_INIT;
		size_t used;
		char a[DURATION_MAX];

		strbuf_addf(t->out, "%2zu. %s%-7s%s %s%s%s", i + 1, col(t, sc), severity_name(f->severity),
			    col(t, C_RESET), col(t, C_BOLD), f->rule, col(t, C_RESET));
		if (f->function)
			strbuf_addf(&tail, "  %s", f->function);
		if (f->cause)
			strbuf_addf(&tail, " [%s]", retrace_cause_name(f->cause));
		strbuf_addstr(t->out, tail.buf ? tail.buf : "");
		used = 12 + strlen(f->rule) + text_columns(tail.buf);
		if (f->thread)
			strbuf_addf(&cost, " on the %s thread", f->thread);
		if (f->cost_ns)
			strbuf_addf(&cost, "  (costs %s)", duration_format(a, sizeof(a), (int64_t)f->cost_ns));
		add_at(t, used, &f->loc, cost.buf ? cost.buf : "");
		strbuf_release(&tail);
		strbuf_release(&cost);
		strbuf_addf(t->out, "    %s\n", f->message);
		if (f->recommendation && *f->recommendation)
			strbuf_addf(t->out, "    %sfix:%s %s\n", col(t, C_BOLD), col(t, C_RESET), f->recommendation);
		verdict_lines(t, f);
		if (with_examples)
			fix_text(t, f);
		if (with_examples && f->example_before)
			indent_block(t, "before:", f->example_before);
		if (with_examples && f->example_after)
			indent_block(t, "after:", f->example_after);
	}
	if (limit(t, n) < n)
		strbuf_addf(t->out, "    ... %zu more (agprof report --format json lists all)\n", n - limit(t, n));
	together_line(t);
}

/* "  (at LOC, 12.0 ms)" after a retrace's detail, on a line of its own when too wide. */
static void retrace_at(struct text *t, size_t used, const struct source_loc *loc, const char *time)
{
	const char *where = loc_str(t->m, loc);

	if (used + 8 + text_columns(where) + strlen(time) <= WIDTH) {
		strbuf_addf(t->out, "  (at %s, %s)\n", where, time);
		return;
	}
	strbuf_addstr(t->out, "\n         at ");
	cell_left(t->out, where, WIDTH - 15 - strlen(time), 0);
	strbuf_addf(t->out, ", %s\n", time);
}

static void retracing(struct text *t)
{
	const struct model *m = t->m;
	int any = 0;

	heading(t, "Retracing: every trace after the first, and why");
	for (size_t i = 0; i < m->nfunctions; i++) {
		const struct model_function *f = &m->functions[i];
		struct source_loc made_at;

		if (f->ntraces < 2)
			continue;
		any = 1;
		made_at = f->made_by ? model_function_user_loc(f) : f->def;
		strbuf_addf(t->out, "  %s%s%s (%s %s): %zu traces, %zu tf.function object%s\n", col(t, C_BOLD),
			    f->made_by ? f->made_by : f->name, col(t, C_RESET), f->made_by ? "made at" : "def",
			    loc_str(m, &made_at),
			    f->ntraces, f->function_objects,
			    f->function_objects == 1 ? "" : "s");
		for (size_t k = 1; k < limit(t, f->ntraces); k++) {
			const struct model_trace *tr = &f->traces[k];
			char a[DURATION_MAX];

			strbuf_addf(t->out, "    #%-3zu %-19s %s", k + 1,
				    tr->why.nested ? "nested" : retrace_cause_name(tr->why.cause), tr->why.detail);
			duration_format(a, sizeof(a), (int64_t)(tr->end_ns - tr->start_ns));
			retrace_at(t, 29 + text_columns(tr->why.detail), &tr->callsite, a);
		}
		if (limit(t, f->ntraces) < f->ntraces)
			strbuf_addf(t->out, "    ... %zu more\n", f->ntraces - limit(t, f->ntraces));
	}
	if (!any)
		strbuf_addstr(t->out, "  no function was traced more than once\n");
}

static void eager(struct text *t)
{
	const struct model *m = t->m;

	heading(t, "Eager dispatch by source line");
	if (!m->nsites) {
		strbuf_addstr(t->out, "  no eager ops\n");
		return;
	}
	/* 80 columns: the library frame goes on a line of its own */
	strbuf_addf(t->out, "  %-26s %-10s %7s %9s %6s  %s\n", "line", "function", "ops", "time", "run%", "top op");
	for (size_t i = 0; i < limit(t, m->nsites); i++) {
		const struct model_eager_site *s = &m->sites[i];
		char a[DURATION_MAX];

		strbuf_addstr(t->out, "  ");
		cell_left(t->out, s->loc.file ? user_loc_str(m, &s->loc) : MODEL_NO_FRAME, 26, 1);
		strbuf_addch(t->out, ' ');
		cell_name(t->out, s->func, 10, 1);
		strbuf_addf(t->out, " %7lld %9s %5.1f%%  ", (long long)s->count, duration_format(a, sizeof(a), (int64_t)s->total_ns),
			    pct(m, (double)s->total_ns));
		cell_name(t->out, s->top_op, 14, 0);
		strbuf_addch(t->out, '\n');
		lib_row(t, &s->loc, 4);
	}
}

static void ops(struct text *t)
{
	const struct model *m = t->m;

	heading(t, "Eager dispatch by op type");
	if (!m->nops) {
		strbuf_addstr(t->out, "  no eager ops\n");
		return;
	}
	strbuf_addf(t->out, "  %-26s %10s %10s %10s %6s %10s\n", "op", "count", "time", "mean", "run%", "slow path");
	for (size_t i = 0; i < limit(t, m->nops); i++) {
		const struct model_eager_op *o = &m->ops[i];
		char a[DURATION_MAX], b[DURATION_MAX];

		strbuf_addstr(t->out, "  ");
		cell_name(t->out, o->op, 26, 1);
		strbuf_addf(t->out, " %10lld %10s %10s %5.1f%% %10lld\n", (long long)o->count,
			    duration_format(a, sizeof(a), (int64_t)o->total_ns),
			    duration_format(b, sizeof(b), o->count ? o->total_ns / o->count : 0),
			    pct(m, (double)o->total_ns), (long long)o->slow_path);
	}
}

static void blackbox(struct text *t)
{
	const struct model *m = t->m;

	heading(t, "Python black boxes in graphs (py_function, numpy_function)");
	if (!m->nblackboxes) {
		strbuf_addstr(t->out, "  none\n");
		return;
	}
	strbuf_addf(t->out, "  %-24s %-16s %-22s %10s %10s %6s\n", "node", "op", "function", "runs", "time", "run%");
	for (size_t i = 0; i < limit(t, m->nblackboxes); i++) {
		const struct model_blackbox *b = &m->blackboxes[i];
		char a[DURATION_MAX];

		strbuf_addf(t->out, "  %-24s %-16s %-22s %10lld %10s %5.1f%%\n", b->node_name ? b->node_name : "?",
			    b->op_type ? b->op_type : "?",
			    b->made_by ? b->made_by : b->function ? b->function : b->in_tf_data ? "(tf.data)" : "-",
			    (long long)b->execs, duration_format(a, sizeof(a), (int64_t)b->total_ns), pct(m, (double)b->total_ns));
	}
}

static void sessions(struct text *t)
{
	const struct model *m = t->m;

	heading(t, "Session runs by source line (TF1 graph mode)");
	if (!m->nsession_runs) {
		strbuf_addstr(t->out, "  none\n");
		return;
	}
	strbuf_addf(t->out, "  %-34s %-8s %8s %10s %10s %6s %6s %7s %7s\n", "line", "kind", "runs", "time", "mean", "run%",
		    "feeds", "fetches", "targets");
	for (size_t i = 0; i < limit(t, m->nsession_runs); i++) {
		const struct model_session_run *r = &m->session_runs[i];
		char a[DURATION_MAX], b[DURATION_MAX];

		strbuf_addf(t->out, "  %-34s %-8s %8lld %10s %10s %5.1f%% %6lld %7lld %7lld", loc_str(m, &r->loc),
			    r->kind ? r->kind : "run", (long long)r->runs, duration_format(a, sizeof(a), r->total_ns),
			    duration_format(b, sizeof(b), r->runs ? r->total_ns / r->runs : 0), pct(m, (double)r->total_ns),
			    (long long)r->feeds, (long long)r->fetches, (long long)r->targets);
		if (r->failed)
			strbuf_addf(t->out, "  (%lld failed)", (long long)r->failed);
		strbuf_addch(t->out, '\n');
	}
	if (limit(t, m->nsession_runs) < m->nsession_runs)
		strbuf_addf(t->out, "  ... %zu more\n", m->nsession_runs - limit(t, m->nsession_runs));
}

static void functions(struct text *t)
{
	const struct model *m = t->m;

	heading(t, "Traced functions");
	if (!m->nfunctions) {
		strbuf_addstr(t->out, "  none\n");
		return;
	}
	/* 80 columns: options, when any, go on a line of their own */
	strbuf_addf(t->out, "  %-16s %-25s %6s %8s %9s %9s\n", "function", "defined at", "traces", "calls", "tracing",
		    "executing");
	for (size_t i = 0; i < limit(t, m->nfunctions); i++) {
		const struct model_function *f = &m->functions[i];
		char a[DURATION_MAX], b[DURATION_MAX];

		/* TensorFlow's own functions (tf.data's wrapped_fn) under the user call that made them. */
		struct source_loc where = f->made_by ? model_function_user_loc(f) : f->def;
		const char *label = f->made_by ? f->made_by : f->name ? f->name : "-";

		strbuf_addstr(t->out, "  ");
		cell_name(t->out, label, 16, 1);
		strbuf_addch(t->out, ' ');
		cell_left(t->out, loc_str(m, &where), 25, 1);
		strbuf_addf(t->out, " %6zu %8lld %9s %9s\n", f->ntraces, (long long)f->calls,
			    duration_format(a, sizeof(a), (int64_t)f->trace_ns), duration_format(b, sizeof(b), (int64_t)f->exec_ns));
		if (strlen(label) > 16)  /* the cell cut it: whole, on a line of its own */
			strbuf_addf(t->out, "    %s\n", label);
		if (f->jit_compile || f->has_input_signature || f->reduce_retracing)
			strbuf_addf(t->out, "    options:%s%s%s\n", f->jit_compile ? " jit_compile" : "",
				    f->has_input_signature ? " input_signature" : "",
				    f->reduce_retracing ? " reduce_retracing" : "");
	}
}

void report_text(struct strbuf *out, const struct model *m, const struct report_opts *o)
{
	struct text t = { out, m, o };
	unsigned sec = o->sections ? o->sections : SEC_ALL;

	if (sec & SEC_SUMMARY) {
		summary(&t);
		/* Nothing recorded: the summary said so; empty tables would add nothing. */
		if (model_empty_reason(m) && !o->sections)
			return;
		findings(&t, !o->sections || o->sections == SEC_SUMMARY);
	}
	if (sec & SEC_RANKS)
		report_ranks_text(out, m);
	if (!o->sections && session_steps_only(m)) {
		sessions(&t);
		return;
	}
	if (sec & SEC_RETRACING)
		retracing(&t);
	if (sec & SEC_EAGER)
		eager(&t);
	if (sec & SEC_OPS)
		ops(&t);
	/* Kernels inside graph calls: asked for (--ops), the default report stays short. */
	if (o->sections & SEC_OPS)
		report_graph_ops_text(out, m, o->graph_ops, o->top, o->color);
	if (sec & SEC_BLACKBOX)
		blackbox(&t);
	if (sec & SEC_FUNCTIONS)
		functions(&t);
	/* The default report shows TF1 Session steps only when the program ran any. */
	if ((o->sections & SEC_SESSIONS) || (!o->sections && m->nsession_runs))
		sessions(&t);
	/* The default report shows the GPU only when there is something to show. */
	if ((o->sections & SEC_GPU) || (!o->sections && o->gpu && gpu_has_data(o->gpu)))
		report_gpu_text(out, m, o->gpu, o->top, o->color);
}
