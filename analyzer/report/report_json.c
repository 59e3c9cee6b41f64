/*
 * report_json.c - the machine-readable printers: JSON (the contract in
 * docs/report-json.md), CSV and SARIF 2.1.0.  JSON goes through the one
 * writer of common/json.h.
 */
#include "report.h"
#include "verdicts.h"
#include "fix.h"
#include "model.h"
#include "rules.h"
#include "slices.h"
#include "config.h"
#include "json.h"

#include <string.h>

#define JSON_VERSION 1

/* "key": location, "library_key": its library frame. */
static void kv_locs(struct json *j, const char *key, const char *lib_key, const struct source_loc *loc)
{
	json_key(j, key);
	report_json_loc(j, loc);
	json_key(j, lib_key);
	report_json_library_loc(j, loc);
}

/* "budget": when eager ops became per-second aggregates (run --max-events/--max-size), or null. */
static void json_budget(struct json *j, const struct model_session *s)
{
	json_key(j, "budget");
	if (!s->aggregate_reason) {
		json_null(j);
		return;
	}
	json_begin_object(j);
	json_kv_str(j, "reason", s->aggregate_reason);
	json_kv_int(j, "max_events", s->max_events);
	json_kv_int(j, "max_size_bytes", s->max_size_bytes);
	json_kv_int(j, "aggregate_from_ns", s->aggregate_from_ns);
	json_kv_int(j, "aggregated_eager_ops", s->aggregated_eager_ops);
	json_kv_int(j, "aggregated_calls", s->aggregated_calls);
	json_kv_int(j, "aggregated_blackbox_execs", s->aggregated_blackbox_execs);
	json_end_object(j);
}

/* "capture": the capture windows (merged, in time order), or null when the whole run was recorded. */
static void json_capture(struct json *j, const struct model *m)
{
	const struct model_session *s = &m->session;

	json_key(j, "capture");
	if (!s->capture) {
		json_null(j);
		return;
	}
	json_begin_object(j);
	json_kv_str(j, "options", s->capture);
	json_kv_int(j, "windows_recorded", s->capture_windows);
	json_kv_int(j, "capture_calls", s->capture_calls);
	json_kv_int(j, "recorded_ns", model_recorded_ns(m, s->start_ns, s->end_ns));
	json_key(j, "windows");
	json_begin_array(j, JSON_LINES);
	for (size_t i = 0; i < m->nwindows; i++) {
		json_begin_object(j);
		json_kv_int(j, "start_ns", m->windows[i].start_ns);
		json_kv_int(j, "end_ns", m->windows[i].end_ns);
		json_kv_str(j, "why", m->windows[i].why);
		json_end_object(j);
	}
	json_end_array(j);
	json_end_object(j);
}

static void json_session(struct json *j, const struct model *m)
{
	const struct model_session *s = &m->session;

	json_begin_object(j);
	json_kv_str(j, "argv", s->argv);
	json_kv_str(j, "cwd", s->cwd);
	json_kv_str(j, "host", s->host);
	json_kv_str(j, "python_version", s->python_version);
	json_kv_str(j, "tf_version", s->tf_version);
	json_kv_str(j, "tf_status", s->tf_status);
	json_kv_str(j, "gpu_status", s->gpu_status);
	if (s->exit_known) {
		json_kv_int(j, "exit_status", s->exit_status);
	} else {
		json_key(j, "exit_status");
		json_null(j);
	}
	json_kv_str(j, "cut_short", s->cut_short);
	json_kv_str(j, "attached", s->attached);
	json_kv_str(j, "incomplete", s->incomplete);
	json_kv_int(j, "exit_signal", s->exit_signal);
	json_kv_int(j, "start_ns", s->start_ns);
	json_kv_int(j, "end_ns", s->end_ns);
	json_kv_int(j, "wall_ns", s->wall_ns);
	json_kv_int(j, "first_tf_ns", s->first_tf_ns);
	json_kv_int(j, "active_ns", s->active_ns);
	json_kv_int(j, "processes", s->processes);
	json_kv_int(j, "dropped_events", s->dropped_events);
	if (s->cpu_sampled)
		json_kv_num(j, "cpu_wait_share", s->cpu_wait_share);
	json_kv_int(j, "traces", s->traces);
	json_kv_int(j, "trace_ns", s->trace_ns);
	json_kv_int(j, "trace_recorded_ns", s->trace_recorded_ns);
	json_kv_num(j, "trace_share", s->trace_share);
	json_kv_int(j, "function_calls", s->function_calls);
	json_kv_int(j, "function_call_ns", s->function_call_ns);
	json_kv_int(j, "eager_ops", s->eager_ops);
	json_kv_int(j, "eager_ns", s->eager_ns);
	json_kv_num(j, "eager_share", s->eager_share);
	json_kv_int(j, "blackbox_execs", s->blackbox_execs);
	json_kv_int(j, "blackbox_ns", s->blackbox_ns);
	json_kv_int(j, "session_runs", s->session_runs);
	json_kv_int(j, "session_run_ns", s->session_run_ns);
	json_kv_str(j, "empty_reason", model_empty_reason(m));
	json_kv_int(j, "input_waits", s->input_waits);
	json_kv_int(j, "input_ns", s->input_ns);
	json_kv_int(j, "blackbox_eager_ops", s->blackbox_eager_ops);
	json_kv_int(j, "blackbox_eager_ns", s->blackbox_eager_ns);
	json_capture(j, m);
	json_budget(j, &m->session);
	json_end_object(j);
}

static void json_finding(struct json *j, const struct finding *f)
{
	json_begin_object(j);
	json_kv_str(j, "rule", f->rule);
	json_kv_str(j, "title", f->title);
	json_kv_str(j, "severity", severity_name(f->severity));
	json_kv_str(j, "borderline", f->borderline == BORDERLINE_FIRES ? "fires"
				     : f->borderline == BORDERLINE_ESCALATES ? "escalates" : NULL);
	json_kv_str(j, "function", f->function);
	json_kv_str(j, "cause", retrace_cause_name(f->cause));
	kv_locs(j, "location", "library_location", &f->loc);
	json_kv_str(j, "message", f->message);
	json_kv_str(j, "recommendation", f->recommendation);
	json_key(j, "example");
	if (f->example_before || f->example_after) {
		json_begin_object(j);
		json_kv_str(j, "before", f->example_before);
		json_kv_str(j, "after", f->example_after);
		json_end_object(j);
	} else {
		json_null(j);
	}
	json_kv_int(j, "cost_ns", f->cost_ns);
	fix_json_members(j, f);
	json_kv_int(j, "start_ns", f->start_ns);
	json_kv_int(j, "end_ns", f->end_ns);
	json_kv_str(j, "thread", f->thread);
	json_end_object(j);
}

static void json_retrace(struct json *j, const struct model_trace *t)
{
	json_begin_object(j);
	json_kv_str(j, "cause", retrace_cause_name(t->why.cause));
	json_kv_str(j, "argument", t->why.argument);
	json_kv_str(j, "before", t->why.before);
	json_kv_str(j, "after", t->why.after);
	json_kv_str(j, "detail", t->why.detail);
	json_key(j, "constant");
	if (t->why.const_name) {
		json_begin_object(j);
		json_kv_str(j, "name", t->why.const_name);
		json_kv_str(j, "before", t->why.const_before);
		json_kv_str(j, "after", t->why.const_after);
		json_end_object(j);
	} else {
		json_null(j);
	}
	kv_locs(j, "location", "library_location", &t->callsite);
	json_kv_int(j, "compared_with", (long long)t->why.compared_with + 1);
	json_kv_bool(j, "followup", t->why.followup);
	json_kv_str(j, "export", t->why.export_call);
	json_kv_bool(j, "nested", t->why.nested);
	json_kv_str(j, "signature", t->signature);
	json_kv_int(j, "trace_ns", t->end_ns - t->start_ns);
	json_kv_int(j, "start_ns", t->start_ns);
	json_end_object(j);
}

static void json_function(struct json *j, const struct model_function *f)
{
	struct source_loc owner_call = model_function_user_loc(f);

	json_begin_object(j);
	json_kv_str(j, "name", f->name);
	json_key(j, "location");
	report_json_loc(j, &f->def);
	json_kv_int(j, "traces", (long long)f->ntraces);
	json_kv_int(j, "calls", f->calls);
	json_kv_int(j, "calls_failed", f->calls_failed);
	json_kv_int(j, "trace_ns", f->trace_ns);
	json_kv_int(j, "exec_ns", f->exec_ns);
	json_kv_bool(j, "jit_compile", f->jit_compile);
	json_kv_bool(j, "has_input_signature", f->has_input_signature);
	json_kv_bool(j, "reduce_retracing", f->reduce_retracing);
	json_kv_int(j, "function_objects", (long long)f->function_objects);
	json_kv_int(j, "variables_created", f->variables_created);
	json_kv_int(j, "blackbox_nodes", f->blackbox_nodes);
	json_kv_int(j, "blackbox_execs", f->blackbox_execs);
	json_kv_str(j, "made_by", f->made_by);
	json_kv_str(j, "owner", f->library ? "library" : "user");
	json_key(j, "owner_call");  /* the user call that made a library's function */
	report_json_loc(j, f->library ? &owner_call : NULL);
	json_kv_str(j, "first_signature", f->ntraces ? f->traces[0].signature : NULL);
	json_key(j, "first_location");
	report_json_loc(j, f->ntraces ? &f->traces[0].callsite : NULL);
	json_key(j, "retraces");
	json_begin_array(j, 0);
	for (size_t k = 1; k < f->ntraces; k++)
		json_retrace(j, &f->traces[k]);
	json_end_array(j);
	json_end_object(j);
}

/* A text or number field of a metric source's row (the printers' way to read "input"). */
static void kv_field(struct json *j, const struct model *m, const struct metric_source *src, size_t row,
		     const char *key, const char *field)
{
	struct metric_value v = { 0 };

	json_key(j, key);
	if (src->get(m, src->data, row, field, &v) != 0 || v.type == METRIC_NONE)
		json_null(j);
	else if (v.type == METRIC_TEXT)
		json_str(j, v.text);
	else if (v.num == (double)(long long)v.num)  /* counts and times are integers */
		json_int(j, (long long)v.num);
	else
		json_num(j, v.num);
}

static void json_thread(struct json *j, const struct model_thread *t)
{
	json_begin_object(j);
	json_kv_int(j, "pid", t->pid);
	json_kv_int(j, "tid", t->tid);
	json_kv_str(j, "thread", t->role);
	json_kv_str(j, "name", t->name);
	json_kv_int(j, "active_ns", t->active_ns);
	json_kv_int(j, "cpu_wait_ns", t->cpu_wait_ns);
	json_kv_int(j, "eager_ops", t->eager_ops);
	json_kv_int(j, "eager_ns", t->eager_ns);
	json_kv_int(j, "eager_wall_ns", t->eager_wall_ns);
	json_kv_num(j, "eager_share", t->eager_share);
	json_kv_int(j, "input_waits", t->input_waits);
	json_kv_int(j, "input_ns", t->input_ns);
	json_kv_int(j, "blackbox_execs", t->blackbox_execs);
	json_kv_int(j, "blackbox_ns", t->blackbox_ns);
	json_kv_int(j, "blackbox_eager_ops", t->blackbox_eager_ops);
	json_key(j, "top_location");
	report_json_loc(j, t->top_count ? &t->top_loc : NULL);
	json_kv_str(j, "top_function", t->top_func);
	json_kv_int(j, "top_count", t->top_count);
	json_end_object(j);
}

/* Row i of the "input" source. */
static void json_input_row(struct json *j, const struct model *m, const struct metric_source *src, size_t i)
{
	static const char *const keys[][2] = {
		{ "thread", "thread" }, { "waits", "waits" }, { "wait_ns", "wait_ns" }, { "loop_ns", "loop_ns" },
		{ "wait_share", "wait_share" }, { "verdict", "verdict" }, { "function", "func" },
		{ "pipeline", "pipeline" },
		{ "slow_stage", "slow_stage" }, { "slow_line", "slow_line" }, { "slow_elements", "slow_elements" },
		{ "slow_ns_per_element", "slow_ns_per_element" },
		{ "advice", "advice" },
	};
	struct metric_value file = { 0 }, line = { 0 };
	struct source_loc loc;

	json_begin_object(j);
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		kv_field(j, m, src, i, keys[k][0], keys[k][1]);
	for (int d = 0; d < 2; d++) {
		src->get(m, src->data, i, d ? "dataset_file" : "file", &file);
		src->get(m, src->data, i, d ? "dataset_line" : "line", &line);
		loc.file = file.type == METRIC_TEXT ? file.text : NULL;
		loc.line = (int)line.num;
		json_key(j, d ? "dataset_location" : "location");
		report_json_loc(j, loc.file ? &loc : NULL);
	}
	json_end_object(j);
}

static void json_dataset(struct json *j, const struct model_dataset_op *d)
{
	json_begin_object(j);
	json_kv_str(j, "op", d->op);
	json_kv_str(j, "transformation", d->transformation);
	json_kv_str(j, "function", d->function);
	json_kv_bool(j, "parallel", d->parallel);
	json_key(j, "location");
	report_json_loc(j, d->loc.file ? &d->loc : NULL);
	json_kv_int(j, "pid", d->pid);
	json_kv_int(j, "blackbox_execs", d->blackbox_execs);
	json_kv_int(j, "blackbox_ns", d->blackbox_ns);
	json_end_object(j);
}

static void json_graph_reader(struct json *j, const struct model_graph_reader *r)
{
	json_begin_object(j);
	json_kv_str(j, "graph_function", r->graph_function);
	json_kv_str(j, "function", r->function);
	json_kv_int(j, "calls", r->calls);
	json_kv_int(j, "calls_ns", r->calls_ns);
	json_end_object(j);
}

/* graph_memory: the graphs each function keeps (rows of the "graph_memory" source, analyzer/model/pitfalls.c). */
static void json_graph_memory(struct json *j, const struct model *m)
{
	static const char *const keys[] = { "function", "graphs", "traces", "nodes", "largest_nodes", "def_bytes" };
	const struct metric_source *src = model_find_source(m, "graph_memory");
	size_t n = src ? src->count(m, src->data) : 0;

	json_key(j, "graph_memory");
	json_begin_array(j, JSON_LINES);
	for (size_t i = 0; i < n; i++) {
		struct metric_anchor a = { 0 };

		json_begin_object(j);
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			kv_field(j, m, src, i, keys[k], keys[k]);
		src->anchor(m, src->data, i, &a);
		json_key(j, "location");
		report_json_loc(j, a.loc.file ? &a.loc : NULL);
		json_end_object(j);
	}
	json_end_array(j);
}

/* threads, input (rows of the "input" source), datasets, graph_readers. */
static void json_threads_input(struct json *j, const struct model *m)
{
	const struct metric_source *src = model_find_source(m, "input");
	size_t n = src ? src->count(m, src->data) : 0;

	json_key(j, "threads");
	json_begin_array(j, JSON_LINES);
	for (size_t i = 0; i < m->nthreads; i++)
		json_thread(j, &m->threads[i]);
	json_end_array(j);
	json_key(j, "input");
	json_begin_array(j, JSON_LINES);
	for (size_t i = 0; i < n; i++)
		json_input_row(j, m, src, i);
	json_end_array(j);
	json_key(j, "datasets");
	json_begin_array(j, JSON_LINES);
	for (size_t i = 0; i < m->ndatasets; i++)
		json_dataset(j, &m->datasets[i]);
	json_end_array(j);
	json_key(j, "graph_readers");
	json_begin_array(j, 0);
	for (size_t i = 0; i < m->ngraph_readers; i++)
		json_graph_reader(j, &m->graph_readers[i]);
	json_end_array(j);
}

static void json_eager_site(struct json *j, const struct model_eager_site *s)
{
	json_begin_object(j);
	kv_locs(j, "location", "library_location", &s->loc);
	json_kv_str(j, "function", s->func);
	json_kv_int(j, "count", s->count);
	json_kv_int(j, "total_ns", s->total_ns);
	json_kv_str(j, "top_op", s->top_op);
	json_end_object(j);
}

static void json_eager_op(struct json *j, const struct model_eager_op *op)
{
	json_begin_object(j);
	json_kv_str(j, "op", op->op);
	json_kv_int(j, "count", op->count);
	json_kv_int(j, "total_ns", op->total_ns);
	json_kv_int(j, "slow_path", op->slow_path);
	json_kv_int(j, "failed", op->failed);
	json_end_object(j);
}

static void json_blackbox(struct json *j, const struct model_blackbox *b)
{
	json_begin_object(j);
	json_kv_str(j, "node", b->node_name);
	json_kv_str(j, "op_type", b->op_type);
	json_kv_str(j, "token", b->token);
	json_kv_str(j, "function", b->function);
	json_kv_str(j, "graph_function", b->graph_function);
	json_kv_bool(j, "in_tf_data", b->in_tf_data);
	json_key(j, "location");
	report_json_loc(j, &b->loc);
	json_kv_int(j, "execs", b->execs);
	json_kv_int(j, "total_ns", b->total_ns);
	json_kv_int(j, "node_id", b->id);
	json_kv_int(j, "eager_ops", b->eager_ops);
	json_kv_int(j, "eager_ns", b->eager_ns);
	json_kv_str(j, "thread", b->thread);
	json_kv_str(j, "made_by", b->made_by);
	json_end_object(j);
}

/* A notebook cell the recording keeps: a location whose file is `file` is the cell's line `line + first_line - 1`. */
static void json_cell(struct json *j, const struct model_cell *c)
{
	json_begin_object(j);
	json_kv_str(j, "file", c->path);
	json_kv_str(j, "label", c->label);
	json_kv_int(j, "first_line", c->first_line);
	json_kv_str(j, "source", c->source);
	json_end_object(j);
}

static void json_session_run(struct json *j, const struct model_session_run *r)
{
	json_begin_object(j);
	json_key(j, "location");
	report_json_loc(j, &r->loc);
	json_kv_str(j, "function", r->func);
	json_kv_str(j, "kind", r->kind);
	json_kv_int(j, "runs", r->runs);
	json_kv_int(j, "time_ns", r->total_ns);
	json_kv_int(j, "failed", r->failed);
	json_kv_int(j, "feeds", r->feeds);
	json_kv_int(j, "fetches", r->fetches);
	json_kv_int(j, "targets", r->targets);
	json_end_object(j);
}

/* "key": [ one element per line, each written by emit(j, &array[i]) ] */
#define JSON_LIST(j, key, array, n, emit)                  \
	do {                                               \
		json_key(j, key);                          \
		json_begin_array(j, JSON_LINES);           \
		for (size_t i_ = 0; i_ < (n); i_++)       \
			emit(j, &(array)[i_]);             \
		json_end_array(j);                         \
	} while (0)

/* One time slice (--slices): the whole run's figures over [start_ns, end_ns) (analyzer/slices/slices.h). */
static void json_slice(struct json *j, const struct slice *sl)
{
	json_begin_object(j);
	json_kv_int(j, "start_ns", sl->start_ns);
	json_kv_int(j, "end_ns", sl->end_ns);
	json_kv_int(j, "traces", sl->traces);
	json_kv_int(j, "retraces", sl->retraces);
	json_key(j, "functions");
	json_begin_array(j, 0);
	for (size_t i = 0; i < sl->nfunctions; i++) {
		const struct slice_function *f = &sl->functions[i];

		json_begin_object(j);
		json_kv_str(j, "name", f->fn->name);
		json_kv_str(j, "owner", f->fn->library ? "library" : "user");
		json_key(j, "location");
		report_json_loc(j, &f->fn->def);
		json_kv_int(j, "traces", f->traces);
		json_kv_int(j, "retraces", f->retraces);
		json_end_object(j);
	}
	json_end_array(j);
	json_kv_int(j, "active_ns", sl->active_ns);
	json_kv_int(j, "eager_ops", sl->eager_ops);
	json_kv_int(j, "eager_ns", sl->eager_ns);
	json_kv_num(j, "eager_share", sl->eager_share);
	json_kv_int(j, "input_waits", sl->input_waits);
	json_kv_int(j, "input_ns", sl->input_ns);
	json_kv_num(j, "input_share", sl->input_share);
	json_kv_str(j, "step_function", sl->step ? sl->step->name : NULL);
	json_kv_int(j, "step_periods", (long long)sl->step_periods);
	json_key(j, "step_median_ns");
	if (sl->step_periods)
		json_int(j, sl->step_median_ns);
	else
		json_null(j);
	json_kv_int(j, "call_ns", sl->call_ns);
	json_kv_int(j, "busy_ns", sl->busy_ns);
	json_key(j, "overhead_share");
	if (sl->call_ns)
		json_num(j, sl->overhead_share);
	else
		json_null(j);  /* no (sampled) graph call with kernels started in it */
	json_end_object(j);
}

void report_json(struct strbuf *out, const struct model *m, const struct report_opts *o)
{
	struct json j;

	json_init(&j, out);
	if (o->sink)
		json_set_sink(&j, o->sink);
	json_begin_object(&j);
	json_kv_int(&j, "version", JSON_VERSION);
	json_kv_str(&j, "agprof_version", AGPROF_VERSION);
	json_kv_str(&j, "recording", o->recording);
	json_key(&j, "session");
	json_session(&j, m);
	JSON_LIST(&j, "findings", m->findings, m->nfindings, json_finding);
	json_key(&j, "verify_all");
	verdict_together_json(&j, &m->together);
	JSON_LIST(&j, "functions", m->functions, m->nfunctions, json_function);
	json_graph_memory(&j, m);
	JSON_LIST(&j, "eager_sites", m->sites, m->nsites, json_eager_site);
	JSON_LIST(&j, "eager_ops", m->ops, m->nops, json_eager_op);
	JSON_LIST(&j, "blackboxes", m->blackboxes, m->nblackboxes, json_blackbox);
	JSON_LIST(&j, "sessions", m->session_runs, m->nsession_runs, json_session_run);
	json_threads_input(&j, m);
	json_key(&j, "gpu");
	report_gpu_json(&j, o->gpu);
	json_key(&j, "graph_ops");
	report_graph_ops_json(&j, o->graph_ops);
	json_key(&j, "ranks");
	report_ranks_json(&j, m);
	JSON_LIST(&j, "cells", m->cells, m->ncells, json_cell);
	if (o->slices)
		JSON_LIST(&j, "slices", o->slices->v, o->slices->n, json_slice);
	json_end_object(&j);
	strbuf_addch(out, '\n');
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

static void csv_findings(struct strbuf *out, const struct model *m)
{
	strbuf_addstr(out, "rule,severity,function,cause,file,line,cost_ns,message,recommendation,library_file,"
		      "library_line,saving_ns,saving_method\r\n");
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
		strbuf_addf(out, ",%d,%lld,", f->loc.lib_file ? f->loc.lib_line : 0, (long long)f->saving_ns);
		csv_str(out, f->saving_method);
		strbuf_addstr(out, "\r\n");
	}
}

static void csv_retracing(struct strbuf *out, const struct model *m)
{
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

static void csv_eager(struct strbuf *out, const struct model *m)
{
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

static void csv_ops(struct strbuf *out, const struct model *m)
{
	strbuf_addstr(out, "op,count,total_ns,slow_path,failed\r\n");
	for (size_t i = 0; i < m->nops; i++) {
		csv_str(out, m->ops[i].op);
		strbuf_addf(out, ",%lld,%lld,%lld,%lld\r\n", (long long)m->ops[i].count, (long long)m->ops[i].total_ns,
			    (long long)m->ops[i].slow_path, (long long)m->ops[i].failed);
	}
}

static void csv_blackbox(struct strbuf *out, const struct model *m)
{
	strbuf_addstr(out, "node,op_type,function,execs,total_ns\r\n");
	for (size_t i = 0; i < m->nblackboxes; i++) {
		csv_str(out, m->blackboxes[i].node_name);
		strbuf_addch(out, ',');
		csv_str(out, m->blackboxes[i].op_type);
		strbuf_addch(out, ',');
		csv_str(out, m->blackboxes[i].function);
		strbuf_addf(out, ",%lld,%lld\r\n", (long long)m->blackboxes[i].execs, (long long)m->blackboxes[i].total_ns);
	}
}

static void csv_sessions(struct strbuf *out, const struct model *m)
{
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

static void csv_functions(struct strbuf *out, const struct model *m)
{
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

/* One table per section asked for, in this order, separated by an empty line. */
void report_csv(struct strbuf *out, const struct model *m, const struct report_opts *o)
{
	static const struct {
		unsigned section;
		void (*table)(struct strbuf *out, const struct model *m);
	} tables[] = {
		{ SEC_SUMMARY, csv_findings }, { SEC_RETRACING, csv_retracing }, { SEC_EAGER, csv_eager },
		{ SEC_OPS, csv_ops },          { SEC_BLACKBOX, csv_blackbox },   { SEC_SESSIONS, csv_sessions },
		{ SEC_FUNCTIONS, csv_functions },
	};
	unsigned sec = o->sections ? o->sections : SEC_SUMMARY;
	int written = 0;

	for (size_t i = 0; i < sizeof(tables) / sizeof(tables[0]); i++) {
		if (!(sec & tables[i].section))
			continue;
		if (written++)
			strbuf_addstr(out, "\r\n");
		tables[i].table(out, m);
	}
}

/* SARIF 2.1.0: one run, the rules as reportingDescriptors, a result per finding. */

static const char *sarif_level(enum severity s)
{
	return s == SEV_ERROR ? "error" : s == SEV_WARNING ? "warning" : "note";
}

static void sarif_driver(struct json *j, const struct ruleset *rs)
{
	json_key(j, "tool");
	json_begin_object(j);
	json_key(j, "driver");
	json_begin_object(j);
	json_kv_str(j, "name", "agprof");
	json_kv_str(j, "version", AGPROF_VERSION);
	json_kv_str(j, "informationUri", "https://github.com/agprof/agprof");
	json_key(j, "rules");
	json_begin_array(j, 0);
	for (size_t i = 0; rs && i < ruleset_count(rs); i++) {
		json_begin_object(j);
		json_kv_str(j, "id", ruleset_rule_id(rs, i));
		json_key(j, "shortDescription");
		json_begin_object(j);
		json_kv_str(j, "text", ruleset_rule_title(rs, i));
		json_end_object(j);
		json_end_object(j);
	}
	json_end_array(j);
	json_end_object(j);
	json_end_object(j);
}

/* "locations" of a finding with a file: relative to SRCROOT (the run's cwd) when under it. */
static void sarif_locations(struct json *j, const struct model *m, const struct finding *f)
{
	const char *rel = report_rel_path(m, f->loc.file);

	json_key(j, "locations");
	json_begin_array(j, 0);
	json_begin_object(j);
	json_key(j, "physicalLocation");
	json_begin_object(j);
	json_key(j, "artifactLocation");
	json_begin_object(j);
	json_key(j, "uri");
	if (rel != f->loc.file)
		json_path_uri(j, rel);
	else
		json_file_uri(j, rel, 0);
	if (rel != f->loc.file)
		json_kv_str(j, "uriBaseId", "SRCROOT");
	json_end_object(j);
	json_key(j, "region");
	json_begin_object(j);
	json_kv_int(j, "startLine", f->loc.line > 0 ? f->loc.line : 1);
	json_end_object(j);
	json_end_object(j);
	if (f->function) {
		json_key(j, "logicalLocations");
		json_begin_array(j, 0);
		json_begin_object(j);
		json_kv_str(j, "name", f->function);
		json_kv_str(j, "kind", "function");
		json_end_object(j);
		json_end_array(j);
	}
	json_end_object(j);
	json_end_array(j);
}

static void sarif_result(struct json *j, const struct model *m, const struct ruleset *rs, const struct finding *f)
{
	struct strbuf text = STRBUF_INIT;

	json_begin_object(j);
	json_kv_str(j, "ruleId", f->rule);
	for (size_t r = 0; rs && r < ruleset_count(rs); r++)
		if (!strcmp(ruleset_rule_id(rs, r), f->rule))
			json_kv_int(j, "ruleIndex", (long long)r);
	json_kv_str(j, "level", sarif_level(f->severity));
	json_key(j, "message");
	json_begin_object(j);
	strbuf_addstr(&text, f->message);
	if (f->recommendation && *f->recommendation)
		strbuf_addf(&text, "\nFix: %s", f->recommendation);
	json_kv_str(j, "text", text.buf ? text.buf : "");
	strbuf_release(&text);
	json_end_object(j);
	if (f->loc.file)
		sarif_locations(j, m, f);
	fix_sarif_fixes(j, f);
	json_key(j, "properties");
	json_begin_object(j);
	json_kv_str(j, "cause", retrace_cause_name(f->cause));
	json_kv_int(j, "cost_ns", f->cost_ns);
	json_kv_str(j, "thread", f->thread);
	json_end_object(j);
	json_end_object(j);
}

void report_sarif(struct strbuf *out, const struct model *m, const struct ruleset *rs)
{
	struct json j;

	json_init(&j, out);
	json_begin_object(&j);
	json_kv_str(&j, "$schema", "https://json.schemastore.org/sarif-2.1.0.json");
	json_kv_str(&j, "version", "2.1.0");
	json_key(&j, "runs");
	json_begin_array(&j, 0);
	json_begin_object(&j);
	sarif_driver(&j, rs);
	if (m->session.cwd) {
		json_key(&j, "originalUriBaseIds");
		json_begin_object(&j);
		json_key(&j, "SRCROOT");
		json_begin_object(&j);
		json_key(&j, "uri");
		json_file_uri(&j, m->session.cwd, 1);
		json_end_object(&j);
		json_end_object(&j);
	}
	json_key(&j, "results");
	json_begin_array(&j, JSON_LINES);
	for (size_t i = 0; i < m->nfindings; i++)
		sarif_result(&j, m, rs, &m->findings[i]);
	json_end_array(&j);
	json_end_object(&j);
	json_end_array(&j);
	json_end_object(&j);
	strbuf_addch(out, '\n');
}
