/*
 * report_json.c - the machine-readable printers: JSON (the contract in
 * docs/report-json.md), CSV and SARIF 2.1.0.
 */
#include "report.h"
#include "fix.h"
#include "model.h"
#include "rules.h"
#include "config.h"

#include <string.h>

#define JSON_VERSION 1

static void jstr(struct strbuf *sb, const char *s)
{
	if (!s)
		strbuf_addstr(sb, "null");
	else
		strbuf_add_json_string(sb, s);
}

static void jkey(struct strbuf *sb, int *first, const char *key)
{
	strbuf_addstr(sb, *first ? "" : ",");
	*first = 0;
	strbuf_add_json_string(sb, key);
	strbuf_addch(sb, ':');
}

static void jkv_str(struct strbuf *sb, int *first, const char *key, const char *v)
{
	jkey(sb, first, key);
	jstr(sb, v);
}

static void jkv_int(struct strbuf *sb, int *first, const char *key, long long v)
{
	jkey(sb, first, key);
	strbuf_addf(sb, "%lld", v);
}

static void jkv_num(struct strbuf *sb, int *first, const char *key, double v)
{
	jkey(sb, first, key);
	strbuf_addf(sb, "%.6g", v);
}

static void jkv_bool(struct strbuf *sb, int *first, const char *key, int v)
{
	jkey(sb, first, key);
	strbuf_addstr(sb, v ? "true" : "false");
}

/* The innermost library frame of loc as a location object, or null. */
void report_json_library_loc(struct strbuf *sb, const struct source_loc *loc)
{
	struct source_loc lib = { NULL, 0, NULL, 0, 0 };

	if (loc && loc->lib_file) {
		lib.file = loc->lib_file;
		lib.line = loc->lib_line;
	}
	report_json_loc(sb, &lib);
}

void report_json_loc(struct strbuf *sb, const struct source_loc *loc)
{
	int first = 1;

	if (!loc || !loc->file) {
		strbuf_addstr(sb, "null");
		return;
	}
	strbuf_addch(sb, '{');
	jkv_str(sb, &first, "file", loc->file);
	jkv_int(sb, &first, "line", loc->line);
	strbuf_addch(sb, '}');
}

static void json_session(struct strbuf *sb, const struct model *m)
{
	const struct model_session *s = &m->session;
	int first = 1;

	strbuf_addch(sb, '{');
	jkv_str(sb, &first, "argv", s->argv);
	jkv_str(sb, &first, "cwd", s->cwd);
	jkv_str(sb, &first, "host", s->host);
	jkv_str(sb, &first, "python_version", s->python_version);
	jkv_str(sb, &first, "tf_version", s->tf_version);
	jkv_str(sb, &first, "tf_status", s->tf_status);
	jkv_str(sb, &first, "gpu_status", s->gpu_status);
	jkv_int(sb, &first, "exit_status", s->exit_status);
	jkv_int(sb, &first, "exit_signal", s->exit_signal);
	jkv_int(sb, &first, "start_ns", s->start_ns);
	jkv_int(sb, &first, "end_ns", s->end_ns);
	jkv_int(sb, &first, "wall_ns", s->wall_ns);
	jkv_int(sb, &first, "first_tf_ns", s->first_tf_ns);
	jkv_int(sb, &first, "active_ns", s->active_ns);
	jkv_int(sb, &first, "processes", s->processes);
	jkv_int(sb, &first, "dropped_events", s->dropped_events);
	jkv_int(sb, &first, "traces", s->traces);
	jkv_int(sb, &first, "trace_ns", s->trace_ns);
	jkv_num(sb, &first, "trace_share", s->trace_share);
	jkv_int(sb, &first, "function_calls", s->function_calls);
	jkv_int(sb, &first, "function_call_ns", s->function_call_ns);
	jkv_int(sb, &first, "eager_ops", s->eager_ops);
	jkv_int(sb, &first, "eager_ns", s->eager_ns);
	jkv_num(sb, &first, "eager_share", s->eager_share);
	jkv_int(sb, &first, "blackbox_execs", s->blackbox_execs);
	jkv_int(sb, &first, "blackbox_ns", s->blackbox_ns);
	jkv_int(sb, &first, "session_runs", s->session_runs);
	jkv_int(sb, &first, "session_run_ns", s->session_run_ns);
	jkv_str(sb, &first, "empty_reason", model_empty_reason(m));
	jkv_int(sb, &first, "input_waits", s->input_waits);
	jkv_int(sb, &first, "input_ns", s->input_ns);
	jkv_int(sb, &first, "blackbox_eager_ops", s->blackbox_eager_ops);
	jkv_int(sb, &first, "blackbox_eager_ns", s->blackbox_eager_ns);
	strbuf_addch(sb, '}');
}

static void json_finding(struct strbuf *sb, const struct finding *f)
{
	int first = 1;

	strbuf_addch(sb, '{');
	jkv_str(sb, &first, "rule", f->rule);
	jkv_str(sb, &first, "title", f->title);
	jkv_str(sb, &first, "severity", severity_name(f->severity));
	jkv_str(sb, &first, "function", f->function);
	jkv_str(sb, &first, "cause", retrace_cause_name(f->cause));
	jkey(sb, &first, "location");
	report_json_loc(sb, &f->loc);
	jkey(sb, &first, "library_location");
	report_json_library_loc(sb, &f->loc);
	jkv_str(sb, &first, "message", f->message);
	jkv_str(sb, &first, "recommendation", f->recommendation);
	jkey(sb, &first, "example");
	if (f->example_before || f->example_after) {
		int f2 = 1;

		strbuf_addch(sb, '{');
		jkv_str(sb, &f2, "before", f->example_before);
		jkv_str(sb, &f2, "after", f->example_after);
		strbuf_addch(sb, '}');
	} else {
		strbuf_addstr(sb, "null");
	}
	jkv_int(sb, &first, "cost_ns", f->cost_ns);
	fix_json_members(sb, f);
	jkv_int(sb, &first, "start_ns", f->start_ns);
	jkv_int(sb, &first, "end_ns", f->end_ns);
	jkv_str(sb, &first, "thread", f->thread);
	strbuf_addch(sb, '}');
}

static void json_retrace(struct strbuf *sb, const struct model_trace *t)
{
	int first = 1;

	strbuf_addch(sb, '{');
	jkv_str(sb, &first, "cause", retrace_cause_name(t->why.cause));
	jkv_str(sb, &first, "argument", t->why.argument);
	jkv_str(sb, &first, "before", t->why.before);
	jkv_str(sb, &first, "after", t->why.after);
	jkv_str(sb, &first, "detail", t->why.detail);
	jkey(sb, &first, "constant");
	if (t->why.const_name) {
		int f2 = 1;

		strbuf_addch(sb, '{');
		jkv_str(sb, &f2, "name", t->why.const_name);
		jkv_str(sb, &f2, "before", t->why.const_before);
		jkv_str(sb, &f2, "after", t->why.const_after);
		strbuf_addch(sb, '}');
	} else {
		strbuf_addstr(sb, "null");
	}
	jkey(sb, &first, "location");
	report_json_loc(sb, &t->callsite);
	jkey(sb, &first, "library_location");
	report_json_library_loc(sb, &t->callsite);
	jkv_int(sb, &first, "compared_with", (long long)t->why.compared_with + 1);
	jkv_str(sb, &first, "signature", t->signature);
	jkv_int(sb, &first, "trace_ns", t->end_ns - t->start_ns);
	jkv_int(sb, &first, "start_ns", t->start_ns);
	strbuf_addch(sb, '}');
}

static void json_function(struct strbuf *sb, const struct model_function *f)
{
	int first = 1;

	strbuf_addch(sb, '{');
	jkv_str(sb, &first, "name", f->name);
	jkey(sb, &first, "location");
	report_json_loc(sb, &f->def);
	jkv_int(sb, &first, "traces", (long long)f->ntraces);
	jkv_int(sb, &first, "calls", f->calls);
	jkv_int(sb, &first, "calls_failed", f->calls_failed);
	jkv_int(sb, &first, "trace_ns", f->trace_ns);
	jkv_int(sb, &first, "exec_ns", f->exec_ns);
	jkv_bool(sb, &first, "jit_compile", f->jit_compile);
	jkv_bool(sb, &first, "has_input_signature", f->has_input_signature);
	jkv_bool(sb, &first, "reduce_retracing", f->reduce_retracing);
	jkv_int(sb, &first, "function_objects", (long long)f->function_objects);
	jkv_int(sb, &first, "variables_created", f->variables_created);
	jkv_int(sb, &first, "blackbox_nodes", f->blackbox_nodes);
	jkv_int(sb, &first, "blackbox_execs", f->blackbox_execs);
	jkv_str(sb, &first, "made_by", f->made_by);
	jkv_str(sb, &first, "first_signature", f->ntraces ? f->traces[0].signature : NULL);
	jkey(sb, &first, "first_location");
	report_json_loc(sb, f->ntraces ? &f->traces[0].callsite : NULL);
	jkey(sb, &first, "retraces");
	strbuf_addch(sb, '[');
	for (size_t k = 1; k < f->ntraces; k++) {
		if (k > 1)
			strbuf_addch(sb, ',');
		json_retrace(sb, &f->traces[k]);
	}
	strbuf_addstr(sb, "]}");
}

/* A text or number field of a metric source's row (the printers' way to read "input"). */
static void jkv_field(struct strbuf *sb, int *first, const struct model *m, const struct metric_source *src,
		      size_t row, const char *key, const char *field)
{
	struct metric_value v = { 0 };

	if (src->get(m, src->data, row, field, &v) != 0 || v.type == METRIC_NONE)
		jkv_str(sb, first, key, NULL);
	else if (v.type == METRIC_TEXT)
		jkv_str(sb, first, key, v.text);
	else if (v.num == (double)(long long)v.num)  /* counts and times are integers */
		jkv_int(sb, first, key, (long long)v.num);
	else
		jkv_num(sb, first, key, v.num);
}

/* threads, input (rows of the "input" source), datasets, graph_readers. */
static void json_threads_input(struct strbuf *out, const struct model *m, int *first)
{
	const struct metric_source *src = model_find_source(m, "input");
	size_t n = src ? src->count(m, src->data) : 0;

	jkey(out, first, "threads");
	strbuf_addch(out, '[');
	for (size_t i = 0; i < m->nthreads; i++) {
		const struct model_thread *t = &m->threads[i];
		int f2 = 1;

		strbuf_addstr(out, i ? ",\n{" : "\n{");
		jkv_int(out, &f2, "pid", t->pid);
		jkv_int(out, &f2, "tid", t->tid);
		jkv_str(out, &f2, "thread", t->role);
		jkv_str(out, &f2, "name", t->name);
		jkv_int(out, &f2, "active_ns", t->active_ns);
		jkv_int(out, &f2, "eager_ops", t->eager_ops);
		jkv_int(out, &f2, "eager_ns", t->eager_ns);
		jkv_num(out, &f2, "eager_share", t->eager_share);
		jkv_int(out, &f2, "input_waits", t->input_waits);
		jkv_int(out, &f2, "input_ns", t->input_ns);
		jkv_int(out, &f2, "blackbox_execs", t->blackbox_execs);
		jkv_int(out, &f2, "blackbox_ns", t->blackbox_ns);
		jkv_int(out, &f2, "blackbox_eager_ops", t->blackbox_eager_ops);
		jkey(out, &f2, "top_location");
		report_json_loc(out, t->top_count ? &t->top_loc : NULL);
		jkv_str(out, &f2, "top_function", t->top_func);
		jkv_int(out, &f2, "top_count", t->top_count);
		strbuf_addch(out, '}');
	}
	strbuf_addstr(out, "]");
	jkey(out, first, "input");
	strbuf_addch(out, '[');
	for (size_t i = 0; i < n; i++) {
		static const char *const keys[][2] = {
			{ "thread", "thread" }, { "waits", "waits" }, { "wait_ns", "wait_ns" }, { "loop_ns", "loop_ns" },
			{ "wait_share", "wait_share" }, { "verdict", "verdict" }, { "function", "func" },
			{ "pipeline", "pipeline" },
			{ "advice", "advice" },
		};
		struct metric_value file = { 0 }, line = { 0 };
		struct source_loc loc;
		int f2 = 1;

		strbuf_addstr(out, i ? ",\n{" : "\n{");
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			jkv_field(out, &f2, m, src, i, keys[k][0], keys[k][1]);
		for (int d = 0; d < 2; d++) {
			src->get(m, src->data, i, d ? "dataset_file" : "file", &file);
			src->get(m, src->data, i, d ? "dataset_line" : "line", &line);
			loc.file = file.type == METRIC_TEXT ? file.text : NULL;
			loc.line = (int)line.num;
			jkey(out, &f2, d ? "dataset_location" : "location");
			report_json_loc(out, loc.file ? &loc : NULL);
		}
		strbuf_addch(out, '}');
	}
	strbuf_addstr(out, "]");
	jkey(out, first, "datasets");
	strbuf_addch(out, '[');
	for (size_t i = 0; i < m->ndatasets; i++) {
		const struct model_dataset_op *d = &m->datasets[i];
		int f2 = 1;

		strbuf_addstr(out, i ? ",\n{" : "\n{");
		jkv_str(out, &f2, "op", d->op);
		jkv_str(out, &f2, "transformation", d->transformation);
		jkv_str(out, &f2, "function", d->function);
		jkv_bool(out, &f2, "parallel", d->parallel);
		jkey(out, &f2, "location");
		report_json_loc(out, d->loc.file ? &d->loc : NULL);
		jkv_int(out, &f2, "pid", d->pid);
		jkv_int(out, &f2, "blackbox_execs", d->blackbox_execs);
		jkv_int(out, &f2, "blackbox_ns", d->blackbox_ns);
		strbuf_addch(out, '}');
	}
	strbuf_addstr(out, "]");
	jkey(out, first, "graph_readers");
	strbuf_addch(out, '[');
	for (size_t i = 0; i < m->ngraph_readers; i++) {
		const struct model_graph_reader *r = &m->graph_readers[i];
		int f2 = 1;

		strbuf_addstr(out, i ? ",{" : "{");
		jkv_str(out, &f2, "graph_function", r->graph_function);
		jkv_str(out, &f2, "function", r->function);
		jkv_int(out, &f2, "calls", r->calls);
		jkv_int(out, &f2, "calls_ns", r->calls_ns);
		strbuf_addch(out, '}');
	}
	strbuf_addstr(out, "]");
}

void report_json(struct strbuf *out, const struct model *m, const struct report_opts *o)
{
	int first = 1;

	strbuf_addch(out, '{');
	jkv_int(out, &first, "version", JSON_VERSION);
	jkv_str(out, &first, "agprof_version", AGPROF_VERSION);
	jkv_str(out, &first, "recording", o->recording);
	jkey(out, &first, "session");
	json_session(out, m);
	jkey(out, &first, "findings");
	strbuf_addch(out, '[');
	for (size_t i = 0; i < m->nfindings; i++) {
		strbuf_addstr(out, i ? ",\n" : "\n");
		json_finding(out, &m->findings[i]);
	}
	strbuf_addstr(out, "]");
	jkey(out, &first, "functions");
	strbuf_addch(out, '[');
	for (size_t i = 0; i < m->nfunctions; i++) {
		strbuf_addstr(out, i ? ",\n" : "\n");
		json_function(out, &m->functions[i]);
	}
	strbuf_addstr(out, "]");
	jkey(out, &first, "eager_sites");
	strbuf_addch(out, '[');
	for (size_t i = 0; i < m->nsites; i++) {
		const struct model_eager_site *s = &m->sites[i];
		int f2 = 1;

		strbuf_addstr(out, i ? ",\n{" : "\n{");
		jkey(out, &f2, "location");
		report_json_loc(out, &s->loc);
		jkey(out, &f2, "library_location");
		report_json_library_loc(out, &s->loc);
		jkv_str(out, &f2, "function", s->func);
		jkv_int(out, &f2, "count", s->count);
		jkv_int(out, &f2, "total_ns", s->total_ns);
		jkv_str(out, &f2, "top_op", s->top_op);
		strbuf_addch(out, '}');
	}
	strbuf_addstr(out, "]");
	jkey(out, &first, "eager_ops");
	strbuf_addch(out, '[');
	for (size_t i = 0; i < m->nops; i++) {
		const struct model_eager_op *op = &m->ops[i];
		int f2 = 1;

		strbuf_addstr(out, i ? ",\n{" : "\n{");
		jkv_str(out, &f2, "op", op->op);
		jkv_int(out, &f2, "count", op->count);
		jkv_int(out, &f2, "total_ns", op->total_ns);
		jkv_int(out, &f2, "slow_path", op->slow_path);
		jkv_int(out, &f2, "failed", op->failed);
		strbuf_addch(out, '}');
	}
	strbuf_addstr(out, "]");
	jkey(out, &first, "blackboxes");
	strbuf_addch(out, '[');
	for (size_t i = 0; i < m->nblackboxes; i++) {
		const struct model_blackbox *b = &m->blackboxes[i];
		int f2 = 1;

		strbuf_addstr(out, i ? ",\n{" : "\n{");
		jkv_str(out, &f2, "node", b->node_name);
		jkv_str(out, &f2, "op_type", b->op_type);
		jkv_str(out, &f2, "token", b->token);
		jkv_str(out, &f2, "function", b->function);
		jkv_str(out, &f2, "graph_function", b->graph_function);
		jkv_bool(out, &f2, "in_tf_data", b->in_tf_data);
		jkey(out, &f2, "location");
		report_json_loc(out, &b->loc);
		jkv_int(out, &f2, "execs", b->execs);
		jkv_int(out, &f2, "total_ns", b->total_ns);
		jkv_int(out, &f2, "node_id", b->id);
		jkv_int(out, &f2, "eager_ops", b->eager_ops);
		jkv_int(out, &f2, "eager_ns", b->eager_ns);
		jkv_str(out, &f2, "thread", b->thread);
		jkv_str(out, &f2, "made_by", b->made_by);
		strbuf_addch(out, '}');
	}
	strbuf_addstr(out, "]");
	jkey(out, &first, "sessions");
	strbuf_addch(out, '[');
	for (size_t i = 0; i < m->nsession_runs; i++) {
		const struct model_session_run *r = &m->session_runs[i];
		int f2 = 1;

		strbuf_addstr(out, i ? ",\n{" : "\n{");
		jkey(out, &f2, "location");
		report_json_loc(out, &r->loc);
		jkv_str(out, &f2, "function", r->func);
		jkv_str(out, &f2, "kind", r->kind);
		jkv_int(out, &f2, "runs", r->runs);
		jkv_int(out, &f2, "time_ns", r->total_ns);
		jkv_int(out, &f2, "failed", r->failed);
		jkv_int(out, &f2, "feeds", r->feeds);
		jkv_int(out, &f2, "fetches", r->fetches);
		jkv_int(out, &f2, "targets", r->targets);
		strbuf_addch(out, '}');
	}
	strbuf_addstr(out, "]");
	json_threads_input(out, m, &first);
	jkey(out, &first, "gpu");
	report_gpu_json(out, o->gpu);
	strbuf_addstr(out, "}\n");
}

/* CSV (RFC 4180): quote every text field. */

static void csv_str(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '"');
	for (; s && *s; s++) {
		if (*s == '"')
			strbuf_addch(sb, '"');
		strbuf_addch(sb, *s);
	}
	strbuf_addch(sb, '"');
}

void report_csv(struct strbuf *out, const struct model *m, const struct report_opts *o)
{
	unsigned sec = o->sections ? o->sections : SEC_SUMMARY;
	int tables = 0;

	if (sec & SEC_SUMMARY) {
		strbuf_addstr(out, "rule,severity,function,cause,file,line,cost_ns,message,recommendation,library_file,"
			      "library_line\r\n");
		for (size_t i = 0; i < m->nfindings; i++) {
			const struct finding *f = &m->findings[i];

			csv_str(out, f->rule);
			strbuf_addf(out, ",%s,", severity_name(f->severity));
			csv_str(out, f->function);
			strbuf_addch(out, ',');
			csv_str(out, retrace_cause_name(f->cause));
			strbuf_addch(out, ',');
			csv_str(out, f->loc.file);
			strbuf_addf(out, ",%d,%lld,", f->loc.line, (long long)f->cost_ns);
			csv_str(out, f->message);
			strbuf_addch(out, ',');
			csv_str(out, f->recommendation);
			strbuf_addch(out, ',');
			csv_str(out, f->loc.lib_file);
			strbuf_addf(out, ",%d\r\n", f->loc.lib_file ? f->loc.lib_line : 0);
		}
		tables++;
	}
	if (sec & SEC_RETRACING) {
		strbuf_addstr(out, tables++ ? "\r\n" : "");
		strbuf_addstr(out, "function,trace,cause,argument,before,after,file,line,trace_ns\r\n");
		for (size_t i = 0; i < m->nfunctions; i++)
			for (size_t k = 1; k < m->functions[i].ntraces; k++) {
				const struct model_trace *t = &m->functions[i].traces[k];

				csv_str(out, m->functions[i].name);
				strbuf_addf(out, ",%zu,%s,", k + 1, retrace_cause_name(t->why.cause));
				csv_str(out, t->why.argument);
				strbuf_addch(out, ',');
				csv_str(out, t->why.before);
				strbuf_addch(out, ',');
				csv_str(out, t->why.after);
				strbuf_addch(out, ',');
				csv_str(out, t->callsite.file);
				strbuf_addf(out, ",%d,%lld\r\n", t->callsite.line, (long long)(t->end_ns - t->start_ns));
			}
	}
	if (sec & SEC_EAGER) {
		strbuf_addstr(out, tables++ ? "\r\n" : "");
		strbuf_addstr(out, "file,line,function,count,total_ns,top_op\r\n");
		for (size_t i = 0; i < m->nsites; i++) {
			csv_str(out, m->sites[i].loc.file);
			strbuf_addf(out, ",%d,", m->sites[i].loc.line);
			csv_str(out, m->sites[i].func);
			strbuf_addf(out, ",%lld,%lld,", (long long)m->sites[i].count, (long long)m->sites[i].total_ns);
			csv_str(out, m->sites[i].top_op);
			strbuf_addstr(out, "\r\n");
		}
	}
	if (sec & SEC_OPS) {
		strbuf_addstr(out, tables++ ? "\r\n" : "");
		strbuf_addstr(out, "op,count,total_ns,slow_path,failed\r\n");
		for (size_t i = 0; i < m->nops; i++) {
			csv_str(out, m->ops[i].op);
			strbuf_addf(out, ",%lld,%lld,%lld,%lld\r\n", (long long)m->ops[i].count,
				    (long long)m->ops[i].total_ns, (long long)m->ops[i].slow_path,
				    (long long)m->ops[i].failed);
		}
	}
	if (sec & SEC_BLACKBOX) {
		strbuf_addstr(out, tables++ ? "\r\n" : "");
		strbuf_addstr(out, "node,op_type,function,execs,total_ns\r\n");
		for (size_t i = 0; i < m->nblackboxes; i++) {
			csv_str(out, m->blackboxes[i].node_name);
			strbuf_addch(out, ',');
			csv_str(out, m->blackboxes[i].op_type);
			strbuf_addch(out, ',');
			csv_str(out, m->blackboxes[i].function);
			strbuf_addf(out, ",%lld,%lld\r\n", (long long)m->blackboxes[i].execs,
				    (long long)m->blackboxes[i].total_ns);
		}
	}
	if (sec & SEC_SESSIONS) {
		strbuf_addstr(out, tables++ ? "\r\n" : "");
		strbuf_addstr(out, "file,line,function,kind,runs,time_ns,failed,feeds,fetches,targets\r\n");
		for (size_t i = 0; i < m->nsession_runs; i++) {
			const struct model_session_run *r = &m->session_runs[i];

			csv_str(out, r->loc.file);
			strbuf_addf(out, ",%d,", r->loc.line);
			csv_str(out, r->func);
			strbuf_addch(out, ',');
			csv_str(out, r->kind);
			strbuf_addf(out, ",%lld,%lld,%lld,%lld,%lld,%lld\r\n", (long long)r->runs, (long long)r->total_ns,
				    (long long)r->failed, (long long)r->feeds, (long long)r->fetches, (long long)r->targets);
		}
	}
	if (sec & SEC_FUNCTIONS) {
		strbuf_addstr(out, tables++ ? "\r\n" : "");
		strbuf_addstr(out, "function,file,line,traces,calls,trace_ns,exec_ns,jit_compile,has_input_signature\r\n");
		for (size_t i = 0; i < m->nfunctions; i++) {
			const struct model_function *f = &m->functions[i];

			csv_str(out, f->name);
			strbuf_addch(out, ',');
			csv_str(out, f->def.file);
			strbuf_addf(out, ",%d,%zu,%lld,%lld,%lld,%d,%d\r\n", f->def.line, f->ntraces, (long long)f->calls,
				    (long long)f->trace_ns, (long long)f->exec_ns, f->jit_compile, f->has_input_signature);
		}
	}
}

/* SARIF 2.1.0: one run, the rules as reportingDescriptors, a result per finding. */

static const char *sarif_level(enum severity s)
{
	return s == SEV_ERROR ? "error" : s == SEV_WARNING ? "warning" : "note";
}

void report_sarif(struct strbuf *out, const struct model *m, const struct ruleset *rs)
{
	const char *cwd = m->session.cwd;

	strbuf_addstr(out, "{\"$schema\":\"https://json.schemastore.org/sarif-2.1.0.json\",\"version\":\"2.1.0\",\"runs\":[{");
	strbuf_addstr(out, "\"tool\":{\"driver\":{\"name\":\"agprof\",\"version\":");
	jstr(out, AGPROF_VERSION);
	strbuf_addstr(out, ",\"informationUri\":\"https://github.com/agprof/agprof\",\"rules\":[");
	for (size_t i = 0; rs && i < ruleset_count(rs); i++) {
		if (i)
			strbuf_addch(out, ',');
		strbuf_addstr(out, "{\"id\":");
		jstr(out, ruleset_rule_id(rs, i));
		strbuf_addstr(out, ",\"shortDescription\":{\"text\":");
		jstr(out, ruleset_rule_title(rs, i));
		strbuf_addstr(out, "}}");
	}
	strbuf_addstr(out, "]}}");
	if (cwd) {
		strbuf_addstr(out, ",\"originalUriBaseIds\":{\"SRCROOT\":{\"uri\":");
		{
			struct strbuf u = STRBUF_INIT;

			strbuf_addf(&u, "file://%s/", cwd);
			jstr(out, u.buf);
			strbuf_release(&u);
		}
		strbuf_addstr(out, "}}");
	}
	strbuf_addstr(out, ",\"results\":[");
	for (size_t i = 0; i < m->nfindings; i++) {
		const struct finding *f = &m->findings[i];
		struct strbuf text = STRBUF_INIT;

		if (i)
			strbuf_addch(out, ',');
		strbuf_addstr(out, "\n{\"ruleId\":");
		jstr(out, f->rule);
		for (size_t r = 0; rs && r < ruleset_count(rs); r++)
			if (!strcmp(ruleset_rule_id(rs, r), f->rule))
				strbuf_addf(out, ",\"ruleIndex\":%zu", r);
		strbuf_addf(out, ",\"level\":\"%s\",\"message\":{\"text\":", sarif_level(f->severity));
		strbuf_addstr(&text, f->message);
		if (f->recommendation && *f->recommendation)
			strbuf_addf(&text, "\nFix: %s", f->recommendation);
		jstr(out, text.buf);
		strbuf_release(&text);
		strbuf_addch(out, '}');
		if (f->loc.file) {
			const char *rel = report_rel_path(m, f->loc.file);

			strbuf_addstr(out, ",\"locations\":[{\"physicalLocation\":{\"artifactLocation\":{\"uri\":");
			jstr(out, rel);
			if (rel != f->loc.file)
				strbuf_addstr(out, ",\"uriBaseId\":\"SRCROOT\"");
			strbuf_addf(out, "},\"region\":{\"startLine\":%d}}", f->loc.line > 0 ? f->loc.line : 1);
			if (f->function) {
				strbuf_addstr(out, ",\"logicalLocations\":[{\"name\":");
				jstr(out, f->function);
				strbuf_addstr(out, ",\"kind\":\"function\"}]");
			}
			strbuf_addstr(out, "}]");
		}
		fix_sarif_fixes(out, f);
		strbuf_addstr(out, ",\"properties\":{\"cause\":");
		jstr(out, retrace_cause_name(f->cause));
		strbuf_addf(out, ",\"cost_ns\":%lld", (long long)f->cost_ns);
		strbuf_addstr(out, ",\"thread\":");
		jstr(out, f->thread);
		strbuf_addstr(out, "}}");
	}
	strbuf_addstr(out, "]}]}\n");
}
