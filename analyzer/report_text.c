/* report_text.c - the human report; see report.h. */
#include "report.h"
#include "model.h"
#include "gpu.h"

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

const char *report_rel_path(const struct model *m, const char *file)
{
	const char *cwd = m->session.cwd;
	size_t n;

	if (!file)
		return NULL;
	n = cwd ? strlen(cwd) : 0;
	if (n && !strncmp(file, cwd, n) && file[n] == '/')
		return file + n + 1;
	return file;
}

void report_add_loc(struct strbuf *sb, const struct model *m, const struct source_loc *loc)
{
	if (!loc || !loc->file) {
		strbuf_addch(sb, '-');
		return;
	}
	strbuf_addf(sb, "%s:%d", report_rel_path(m, loc->file), loc->line);
}

void report_add_time(struct strbuf *sb, double ns)
{
	if (ns >= 1e9)
		strbuf_addf(sb, "%.2f s", ns / 1e9);
	else if (ns >= 1e6)
		strbuf_addf(sb, "%.1f ms", ns / 1e6);
	else
		strbuf_addf(sb, "%.0f us", ns / 1e3);
}

static void heading(struct text *t, const char *title)
{
	strbuf_addf(t->out, "\n%s%s%s\n", col(t, C_BOLD), title, col(t, C_RESET));
}

static const char *time_str(char *buf, size_t len, double ns)
{
	struct strbuf sb = STRBUF_INIT;

	report_add_time(&sb, ns);
	snprintf(buf, len, "%s", sb.buf);
	strbuf_release(&sb);
	return buf;
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

static double pct(const struct model *m, double ns)
{
	return m->session.active_ns ? 100.0 * ns / (double)m->session.active_ns : 0;
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
		char a[32];

		src->get(t->m, src->data, i, "thread", &th);
		src->get(t->m, src->data, i, "waits", &waits);
		src->get(t->m, src->data, i, "wait_ns", &ns);
		src->get(t->m, src->data, i, "wait_share", &share);
		src->get(t->m, src->data, i, "line", &line);
		src->get(t->m, src->data, i, "pipeline", &pipe);
		strbuf_addf(t->out, "  input: %.0f iterator reads on the %s thread waited %s (%.1f%% of the loop at line %.0f); "
			    "pipeline: %s\n", waits.num, th.text ? th.text : "?", time_str(a, sizeof(a), ns.num),
			    100 * share.num, line.num, pipe.text ? pipe.text : "-");
	}
	for (size_t i = 0; i < t->m->ngraph_readers; i++) {
		const struct model_graph_reader *r = &t->m->graph_readers[i];
		char a[32];

		strbuf_addf(t->out, "  input: read inside the graph of %s (IteratorGetNext node; %lld calls, %s, waiting "
			    "included)\n", r->function ? r->function : r->graph_function, (long long)r->calls,
			    time_str(a, sizeof(a), (double)r->calls_ns));
	}
}

static void summary(struct text *t)
{
	const struct model *m = t->m;
	const struct model_session *s = &m->session;
	char a[32], b[32], c[32], d[32];
	size_t retraces = 0;

	for (size_t i = 0; i < m->nfunctions; i++)
		retraces += m->functions[i].retraces;
	strbuf_addf(t->out, "%sagprof report%s %s\n", col(t, C_BOLD), col(t, C_RESET),
		    t->o->recording ? t->o->recording : "");
	strbuf_addf(t->out, "  run: %s", s->argv ? s->argv : "?");
	strbuf_addf(t->out, ", %s (%s after TensorFlow started), exit %d", time_str(a, sizeof(a), (double)s->wall_ns),
		    time_str(b, sizeof(b), (double)s->active_ns), s->exit_status);
	if (s->tf_version)
		strbuf_addf(t->out, ", TensorFlow %s", s->tf_version);
	if (s->python_version)
		strbuf_addf(t->out, ", Python %.*s", (int)strcspn(s->python_version, " "), s->python_version);
	strbuf_addch(t->out, '\n');
	strbuf_addf(t->out, "  %zu function%s traced %lld times (%zu retraces, %s tracing, %.1f%%)\n",
		    m->nfunctions, m->nfunctions == 1 ? "" : "s", (long long)s->traces, retraces,
		    time_str(a, sizeof(a), (double)s->trace_ns), 100 * s->trace_share);
	strbuf_addf(t->out, "  %lld graph calls (%s), %lld eager ops (%s, %.1f%%), %lld py_function runs (%s)\n",
		    (long long)s->function_calls, time_str(b, sizeof(b), (double)s->function_call_ns),
		    (long long)s->eager_ops, time_str(c, sizeof(c), (double)s->eager_ns), 100 * s->eager_share,
		    (long long)s->blackbox_execs, time_str(d, sizeof(d), (double)s->blackbox_ns));
	if (s->blackbox_eager_ops)
		strbuf_addf(t->out, "  %lld eager ops ran inside py_function bodies (%s, counted with their black boxes)\n",
			    (long long)s->blackbox_eager_ops, time_str(a, sizeof(a), (double)s->blackbox_eager_ns));
	input_summary(t);
	if (s->dropped_events)
		strbuf_addf(t->out, "  %swarning:%s %lld events were dropped; numbers are lower bounds\n",
			    col(t, C_YELLOW), col(t, C_RESET), (long long)s->dropped_events);
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

static void findings(struct text *t, int with_examples)
{
	const struct model *m = t->m;
	size_t n = m->nfindings;

	if (!n) {
		strbuf_addstr(t->out, "\nNo findings: no rule fired.\n");
		return;
	}
	strbuf_addf(t->out, "\n%sFindings (%zu), ranked by the time they cost%s\n", col(t, C_BOLD), n,
		    col(t, C_RESET));
	for (size_t i = 0; i < limit(t, n); i++) {
		const struct finding *f = &m->findings[i];
		const char *sc = f->severity == SEV_ERROR ? C_RED : f->severity == SEV_WARNING ? C_YELLOW : C_CYAN;
		char a[32];

		strbuf_addf(t->out, "%2zu. %s%-7s%s %s%s%s", i + 1, col(t, sc), severity_name(f->severity),
			    col(t, C_RESET), col(t, C_BOLD), f->rule, col(t, C_RESET));
		if (f->function)
			strbuf_addf(t->out, "  %s", f->function);
		if (f->cause)
			strbuf_addf(t->out, " [%s]", retrace_cause_name(f->cause));
		strbuf_addf(t->out, "  at %s", loc_str(m, &f->loc));
		if (f->thread)
			strbuf_addf(t->out, " on the %s thread", f->thread);
		if (f->cost_ns)
			strbuf_addf(t->out, "  (costs %s)", time_str(a, sizeof(a), (double)f->cost_ns));
		strbuf_addf(t->out, "\n    %s\n", f->message);
		if (f->recommendation && *f->recommendation)
			strbuf_addf(t->out, "    %sfix:%s %s\n", col(t, C_BOLD), col(t, C_RESET), f->recommendation);
		if (with_examples && f->example_before)
			indent_block(t, "before:", f->example_before);
		if (with_examples && f->example_after)
			indent_block(t, "after:", f->example_after);
	}
	if (limit(t, n) < n)
		strbuf_addf(t->out, "    ... %zu more (agprof report --format json lists all)\n", n - limit(t, n));
}

static void retracing(struct text *t)
{
	const struct model *m = t->m;
	int any = 0;

	heading(t, "Retracing: every trace after the first, and why");
	for (size_t i = 0; i < m->nfunctions; i++) {
		const struct model_function *f = &m->functions[i];

		if (f->ntraces < 2)
			continue;
		any = 1;
		strbuf_addf(t->out, "  %s%s%s (%s %s): %zu traces, %zu tf.function object%s\n", col(t, C_BOLD),
			    f->made_by ? f->made_by : f->name, col(t, C_RESET), f->made_by ? "made at" : "def",
			    loc_str(m, f->made_by ? &(struct source_loc){ model_function_user_loc(f).file,
									   model_function_user_loc(f).line } : &f->def),
			    f->ntraces, f->function_objects,
			    f->function_objects == 1 ? "" : "s");
		for (size_t k = 1; k < limit(t, f->ntraces); k++) {
			const struct model_trace *tr = &f->traces[k];
			char a[32];

			strbuf_addf(t->out, "    #%-3zu %-19s %s  (at %s, %s)\n", k + 1,
				    retrace_cause_name(tr->why.cause), tr->why.detail, loc_str(m, &tr->callsite),
				    time_str(a, sizeof(a), (double)(tr->end_ns - tr->start_ns)));
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
	strbuf_addf(t->out, "  %-40s %-20s %10s %10s %6s  %s\n", "line", "function", "ops", "time", "run%", "top op");
	for (size_t i = 0; i < limit(t, m->nsites); i++) {
		const struct model_eager_site *s = &m->sites[i];
		char a[32];

		strbuf_addf(t->out, "  %-40s %-20s %10lld %10s %5.1f%%  %s\n", s->loc.file ? loc_str(m, &s->loc) : MODEL_NO_FRAME,
			    s->func ? s->func : "-", (long long)s->count, time_str(a, sizeof(a), (double)s->total_ns),
			    pct(m, (double)s->total_ns), s->top_op ? s->top_op : "-");
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
	strbuf_addf(t->out, "  %-28s %10s %10s %10s %6s %10s\n", "op", "count", "time", "mean", "run%", "slow path");
	for (size_t i = 0; i < limit(t, m->nops); i++) {
		const struct model_eager_op *o = &m->ops[i];
		char a[32], b[32];

		strbuf_addf(t->out, "  %-28s %10lld %10s %10s %5.1f%% %10lld\n", o->op, (long long)o->count,
			    time_str(a, sizeof(a), (double)o->total_ns),
			    time_str(b, sizeof(b), o->count ? (double)o->total_ns / (double)o->count : 0),
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
		char a[32];

		strbuf_addf(t->out, "  %-24s %-16s %-22s %10lld %10s %5.1f%%\n", b->node_name ? b->node_name : "?",
			    b->op_type ? b->op_type : "?",
			    b->made_by ? b->made_by : b->function ? b->function : b->in_tf_data ? "(tf.data)" : "-",
			    (long long)b->execs, time_str(a, sizeof(a), (double)b->total_ns), pct(m, (double)b->total_ns));
	}
}

static void functions(struct text *t)
{
	const struct model *m = t->m;

	heading(t, "Traced functions");
	if (!m->nfunctions) {
		strbuf_addstr(t->out, "  none\n");
		return;
	}
	strbuf_addf(t->out, "  %-22s %-32s %6s %9s %10s %10s  %s\n", "function", "defined at", "traces", "calls",
		    "tracing", "executing", "options");
	for (size_t i = 0; i < limit(t, m->nfunctions); i++) {
		const struct model_function *f = &m->functions[i];
		char a[32], b[32];

		struct source_loc where = f->made_by ? model_function_user_loc(f) : f->def;

		/* TensorFlow's own functions (tf.data's wrapped_fn) under the user call that made them. */
		strbuf_addf(t->out, "  %-22s %-32s %6zu %9lld %10s %10s  %s%s%s\n", f->made_by ? f->made_by : f->name,
			    loc_str(m, &where),
			    f->ntraces, (long long)f->calls, time_str(a, sizeof(a), (double)f->trace_ns),
			    time_str(b, sizeof(b), (double)f->exec_ns), f->jit_compile ? "jit_compile " : "",
			    f->has_input_signature ? "input_signature " : "", f->reduce_retracing ? "reduce_retracing" : "");
	}
}

void report_text(struct strbuf *out, const struct model *m, const struct report_opts *o)
{
	struct text t = { out, m, o };
	unsigned sec = o->sections ? o->sections : SEC_ALL;

	if (sec & SEC_SUMMARY) {
		summary(&t);
		findings(&t, !o->sections || o->sections == SEC_SUMMARY);
	}
	if (sec & SEC_RETRACING)
		retracing(&t);
	if (sec & SEC_EAGER)
		eager(&t);
	if (sec & SEC_OPS)
		ops(&t);
	if (sec & SEC_BLACKBOX)
		blackbox(&t);
	if (sec & SEC_FUNCTIONS)
		functions(&t);
	/* The default report shows the GPU only when there is something to show. */
	if ((o->sections & SEC_GPU) || (!o->sections && o->gpu && gpu_has_data(o->gpu)))
		report_gpu_text(out, m, o->gpu, o->top, o->color);
}
