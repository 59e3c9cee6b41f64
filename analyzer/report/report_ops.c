/*
 * report_ops.c - the graph ops part of `agprof report --ops` and of the
 * JSON report (graph_ops, docs/report-json.md): per graph function, kernel
 * time, executor overhead, kernels per call, ops by time with the line that
 * created them; overall, ops and op types.  Reads the graph ops model
 * (graph_ops.h) only.
 */
#include "graph_ops.h"
#include "duration.h"
#include "json.h"
#include "pathdisp.h"
#include "report.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

/* Ops per function in JSON (the overall list is the model's). */
#define JSON_FN_OPS 20

static size_t top_n(int top, size_t n)
{
	return top > 0 && (size_t)top < n ? (size_t)top : n;
}

/* The user's line as report_add_loc writes it (a notebook cell's as "In [3], line 4"). */
static const char *where(char *buf, size_t len, const struct model *m, const struct source_loc *loc)
{
	struct source_loc user = { loc->file, loc->line, NULL, 0, 0 };
	struct strbuf sb = STRBUF_INIT;

	report_add_loc(&sb, m, &user);
	snprintf(buf, len, "%s", sb.buf ? sb.buf : "-");
	strbuf_release(&sb);
	return buf;
}

/*
 * A location after a row of used columns: cut from the left to fit 80
 * columns ("...mlp_train.py:49"), or on a line of its own when less than
 * 12 columns are left.
 */
static void add_where(struct strbuf *out, size_t used, const char *loc)
{
	char buf[512];

	if (used + 12 > 80) {
		strbuf_addf(out, "\n      %s\n", text_fit_left(buf, sizeof(buf), loc, 74));
		return;
	}
	strbuf_addf(out, "%s\n", text_fit_left(buf, sizeof(buf), loc, 80 - used));
}

static void fn_table(struct strbuf *out, const struct model *m, const struct graph_ops_model *g, int top)
{
	strbuf_addf(out, "  %-23s %6s %8s %10s %10s %10s %5s\n", "function", "calls", "ops/call", "wall", "kernels",
		    "overhead", "ovh%");
	for (size_t i = 0; i < top_n(top, g->nfns); i++) {
		const struct graph_fn_ops *f = &g->fns[i];
		char a[DURATION_MAX], b[DURATION_MAX], c[DURATION_MAX], name[64], loc[256];

		snprintf(name, sizeof(name), "%s", f->function ? f->function : f->graph_function);
		if (strlen(name) > 23)
			strcpy(name + 20, "...");
		strbuf_addf(out, "  %-23s %6lld %8.0f %10s %10s %10s %4.0f%%\n", name, (long long)f->calls,
			    f->calls ? (double)f->kernels / (double)f->calls : 0, duration_format(a, sizeof(a), f->call_ns),
			    duration_format(b, sizeof(b), f->busy_ns), duration_format(c, sizeof(c), f->overhead_ns),
			    f->call_ns ? 100.0 * (double)f->overhead_ns / (double)f->call_ns : 0);
		if (f->top_line.file) {
			char head[128];
			int n = snprintf(head, sizeof(head), "    most nodes (%lld of %lld)%s from ", (long long)f->top_line_nodes,
					 (long long)f->nodes, f->jit_compile ? ", jit_compile," : "");

			strbuf_addstr(out, head);
			add_where(out, n > 0 ? (size_t)n : 0, where(loc, sizeof(loc), m, &f->top_line));
		}
	}
}

/*
 * A node name is a scope path (gradient_tape/model/block_3_bn/mul_1/Mul):
 * its end tells nodes apart, less a last part that only repeats the type
 * column.
 */
static void node_cell(char *buf, size_t cap, const char *name, const char *type)
{
	const char *slash = name ? strrchr(name, '/') : NULL;
	char scope[512];

	if (slash && type && slash > name && !strcmp(slash + 1, type) && (size_t)(slash - name) < sizeof(scope)) {
		memcpy(scope, name, (size_t)(slash - name));
		scope[slash - name] = '\0';
		name = scope;
	}
	text_fit_left(buf, cap, name ? name : "?", 18);
}

static void op_table(struct strbuf *out, const struct model *m, const struct graph_op *ops, size_t n, int top)
{
	strbuf_addf(out, "  %-18s %-12s %6s %9s %8s  %s\n", "op", "type", "runs", "time", "mean", "created at");
	for (size_t i = 0; i < top_n(top, n); i++) {
		const struct graph_op *o = &ops[i];
		char a[DURATION_MAX], b[DURATION_MAX], loc[256], name[128];

		node_cell(name, sizeof(name), o->name, o->op_type);
		strbuf_addf(out, "  %-18s %-12.12s %6lld %9s %8s  ", name, o->op_type, (long long)o->count,
			    duration_format(a, sizeof(a), o->total_ns),
			    duration_format(b, sizeof(b), o->count ? o->total_ns / o->count : 0));
		add_where(out, 61, where(loc, sizeof(loc), m, &o->loc));
	}
}

static void type_table(struct strbuf *out, const struct model *m, const struct graph_op_type *types, size_t n,
		       int64_t total, int top)
{
	strbuf_addf(out, "  %-24s %10s %10s %6s  %s\n", "type", "runs", "time", "share", "most time at");
	for (size_t i = 0; i < top_n(top, n); i++) {
		const struct graph_op_type *t = &types[i];
		char a[DURATION_MAX], loc[256];

		strbuf_addf(out, "  %-24.24s %10lld %10s %5.1f%%  ", t->op_type, (long long)t->count,
			    duration_format(a, sizeof(a), t->total_ns), total ? 100.0 * (double)t->total_ns / (double)total : 0);
		add_where(out, 57, where(loc, sizeof(loc), m, &t->loc));
	}
}

void report_graph_ops_text(struct strbuf *out, const struct model *m, const struct graph_ops_model *g, int top,
			   int color)
{
	const char *bold = color ? "\033[1m" : "", *reset = color ? "\033[0m" : "";

	strbuf_addf(out, "\n%sKernels inside graph calls (CPU)%s\n", bold, reset);
	if (!g || !g->kernels) {
		strbuf_addf(out, "  no kernels recorded%s%s%s\n", g && g->detail ? " (" : "", g && g->detail ? g->detail : "",
			    g && g->detail ? ")" : "");
		return;
	}
	strbuf_addf(out, "  %lld kernels, %lld in graph-function calls (overhead: wall time when\n"
		    "  none of a call's kernels ran)\n", (long long)g->kernels, (long long)g->call_kernels);
	if (g->sampled)
		strbuf_addf(out, "  every kernel counted; times and overhead from the sampled calls\n");
	if (g->kernels_refused > 0)
		strbuf_addf(out, "  budget: %lld kernels past --max-events were counted, not recorded one by one\n",
			    (long long)g->kernels_refused);
	/* lost kernels read as time between kernels */
	if (g->sampled && g->dropped_kernels > 0)
		strbuf_addf(out, "  note: %lld kernels of sampled calls were not recorded one by one (too many\n"
			    "  a second): the overhead is too high by what they took\n", (long long)g->dropped_kernels);
	else if (g->dropped_kernels > 0 || m->session.dropped_events > 0)
		strbuf_addf(out, "  note: %lld kernels were not recorded (too many a second): kernel counts and\n"
			    "  time are too low, and the overhead too high, by what they took\n",
			    (long long)(g->dropped_kernels + m->session.dropped_events));
	if (g->nfns)
		fn_table(out, m, g, top);
	for (size_t i = 0; i < top_n(top > 0 ? 3 : 0, g->nfns); i++) {
		strbuf_addf(out, "\n%sOps of %s by time%s\n", bold,
			    g->fns[i].function ? g->fns[i].function : g->fns[i].graph_function, reset);
		op_table(out, m, g->fns[i].ops, g->fns[i].nops, top);
	}
	strbuf_addf(out, "\n%sKernel time by op type (all kernels)%s\n", bold, reset);
	type_table(out, m, g->types, g->ntypes, g->kernel_ns, top);
}

static void json_op(struct json *j, const struct graph_op *o)
{
	json_begin_object(j);
	json_kv_str(j, "name", o->name);
	json_kv_str(j, "op_type", o->op_type);
	json_kv_str(j, "graph_function", o->graph_function);
	json_kv_str(j, "function", o->function);
	json_kv_int(j, "count", o->count);
	json_kv_int(j, "total_ns", o->total_ns);
	json_key(j, "location");
	report_json_loc(j, &o->loc);
	json_end_object(j);
}

static void json_types(struct json *j, const char *key, const struct graph_op_type *types, size_t n)
{
	json_key(j, key);
	json_begin_array(j, 0);
	for (size_t i = 0; i < n; i++) {
		json_begin_object(j);
		json_kv_str(j, "op_type", types[i].op_type);
		json_kv_int(j, "count", types[i].count);
		json_kv_int(j, "total_ns", types[i].total_ns);
		json_key(j, "location");
		report_json_loc(j, &types[i].loc);
		json_end_object(j);
	}
	json_end_array(j);
}

static void json_ops(struct json *j, const char *key, const struct graph_op *ops, size_t n)
{
	json_key(j, key);
	json_begin_array(j, 0);
	for (size_t i = 0; i < n; i++)
		json_op(j, &ops[i]);
	json_end_array(j);
}

static void json_fn(struct json *j, const struct graph_fn_ops *f)
{
	json_begin_object(j);
	json_kv_str(j, "graph_function", f->graph_function);
	json_kv_str(j, "function", f->function);
	json_kv_bool(j, "jit_compile", f->jit_compile);
	json_kv_int(j, "calls", f->calls);
	json_kv_int(j, "sampled_calls", f->sampled_calls ? f->sampled_calls : f->calls);
	json_kv_int(j, "call_ns", f->call_ns);
	json_kv_int(j, "kernels", f->kernels);
	json_kv_num(j, "kernels_per_call", f->calls ? (double)f->kernels / (double)f->calls : 0);
	json_kv_int(j, "kernel_ns", f->kernel_ns);
	json_kv_int(j, "busy_ns", f->busy_ns);
	json_kv_int(j, "overhead_ns", f->overhead_ns);
	json_kv_num(j, "overhead_share", f->call_ns ? (double)f->overhead_ns / (double)f->call_ns : 0);
	json_kv_int(j, "nodes", f->nodes);
	json_key(j, "top_line");
	report_json_loc(j, &f->top_line);
	json_kv_int(j, "top_line_nodes", f->top_line_nodes);
	json_types(j, "op_types", f->types, f->ntypes);
	json_ops(j, "ops", f->ops, f->nops < JSON_FN_OPS ? f->nops : JSON_FN_OPS);
	json_end_object(j);
}

void report_graph_ops_json(struct json *j, const struct graph_ops_model *g)
{
	json_begin_object(j);
	json_kv_str(j, "status", g ? g->status : NULL);
	json_kv_str(j, "detail", g ? g->detail : NULL);
	json_kv_int(j, "kernels", g ? g->kernels : 0);
	json_kv_int(j, "kernel_ns", g ? g->kernel_ns : 0);
	json_kv_int(j, "call_kernels", g ? g->call_kernels : 0);
	json_kv_int(j, "dropped_kernels", g ? g->dropped_kernels : 0);
	json_kv_int(j, "kernels_refused", g ? g->kernels_refused : 0);
	json_kv_bool(j, "sampled", g && g->sampled);
	json_key(j, "functions");
	json_begin_array(j, 0);
	for (size_t i = 0; g && i < g->nfns; i++)
		json_fn(j, &g->fns[i]);
	json_end_array(j);
	json_ops(j, "ops", g ? g->ops : NULL, g ? g->nops : 0);
	json_types(j, "op_types", g ? g->types : NULL, g ? g->ntypes : 0);
	json_end_object(j);
}
