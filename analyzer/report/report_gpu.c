/* report_gpu.c - the GPU section of `agprof report` (text and JSON), from analyzer/gpu/gpu.h. */
#include "report.h"
#include "gpu.h"
#include "model.h"
#include "duration.h"
#include "json.h"

#include <stdio.h>
#include <string.h>

static void site_of(struct strbuf *sb, const struct model *m, const struct gpu_site *site)
{
	struct source_loc loc = { .file = site->file, .line = site->line };

	report_add_loc(sb, m, &loc);
}

void report_gpu_text(struct strbuf *out, const struct model *m, const struct gpu_model *g, int top, int color)
{
	const char *bold = color ? "\033[1m" : "", *reset = color ? "\033[0m" : "";
	size_t n;

	strbuf_addf(out, "\n%sGPU%s\n", bold, reset);
	if (!g || !g->has_data) {
		strbuf_addf(out, "  no GPU activity recorded (gpu %s%s%s)\n", g && g->status ? g->status : "off",
			    g && g->detail ? ": " : "", g && g->detail ? g->detail : "");
		return;
	}
	strbuf_addf(out, "  %lld kernels (", (long long)g->kernels);
	strbuf_add_duration(out, (int64_t)g->kernel_ns);
	strbuf_addf(out, "), %lld copies (%.1f MiB, ", (long long)g->copies, (double)g->copy_bytes / 1048576.0);
	strbuf_add_duration(out, (int64_t)g->copy_ns);
	strbuf_addf(out, "), utilisation %.1f%% of the GPU span, idle %.1f%% in %lld gaps (host dispatching %.1f%% of it)\n",
		    100 * gpu_utilisation(g), 100 * gpu_idle_share(g), (long long)g->gaps, 100 * gpu_dispatch_share(g));
	if (g->latency.count) {
		strbuf_addstr(out, "  launch latency: mean ");
		strbuf_add_duration(out, (int64_t)g->latency.mean_ns);
		strbuf_addstr(out, ", p50 ");
		strbuf_add_duration(out, (int64_t)g->latency.p50_ns);
		strbuf_addstr(out, ", p95 ");
		strbuf_add_duration(out, (int64_t)g->latency.p95_ns);
		strbuf_addf(out, "; %lld kernels ran shorter than their launch call\n", (long long)g->short_kernels);
	}
	n = top > 0 && (size_t)top < g->nkernel_stats ? (size_t)top : g->nkernel_stats;
	if (n)
		strbuf_addf(out, "  %-48s %8s %10s %6s %10s\n", "kernel", "count", "time", "share", "mean");
	for (size_t i = 0; i < n; i++) {
		const struct gpu_kernel_stat *k = &g->kernel_stats[i];
		struct strbuf a = STRBUF_INIT, b = STRBUF_INIT;

		strbuf_add_duration(&a, k->total_ns);
		strbuf_add_duration(&b, (int64_t)k->mean_ns);
		strbuf_addf(out, "  %-48.48s %8lld %10s %5.1f%% %10s\n", k->name ? k->name : "?", (long long)k->count, a.buf,
			    100 * k->share, b.buf);
		strbuf_release(&a);
		strbuf_release(&b);
	}
	for (size_t i = 0; i < g->ncopy_stats; i++) {
		const struct gpu_copy_stat *c = &g->copy_stats[i];

		strbuf_addf(out, "  copies %-8s %8lld  %.1f MiB  %.2f GB/s  %lld synchronous\n", c->kind,
			    (long long)c->count, (double)c->bytes / 1048576.0, c->gbps, (long long)c->sync_count);
	}
	for (size_t i = 0; i < g->nsync_stats && (top <= 0 || i < (size_t)top); i++) {
		const struct gpu_sync_stat *s = &g->sync_stats[i];

		strbuf_addf(out, "  sync %-28s %8lld  ", s->api, (long long)s->count);
		strbuf_add_duration(out, (int64_t)s->total_ns);
		strbuf_addf(out, "  from %s at ", s->top_op ? s->top_op : "-");
		site_of(out, m, &s->site);
		strbuf_addch(out, '\n');
	}
	for (size_t i = 0; i < g->ntop_gaps && (top <= 0 || i < (size_t)top); i++) {
		const struct gpu_gap *gap = &g->top_gaps[i];

		strbuf_addstr(out, "  idle gap ");
		strbuf_add_duration(out, (int64_t)(gap->end_ns - gap->start_ns));
		strbuf_addf(out, " at +%.3f s: %lld eager ops (%s), %lld graph calls, line ",
			    (double)(gap->start_ns - m->session.start_ns) / 1e9, (long long)gap->eager_ops,
			    gap->top_op ? gap->top_op : "-", (long long)gap->function_calls);
		site_of(out, m, &gap->site);
		strbuf_addch(out, '\n');
	}
}

void report_gpu_json(struct json *j, const struct gpu_model *g)
{
	if (!g) {
		json_null(j);
		return;
	}
	json_begin_object(j);
	json_kv_str(j, "status", g->status);
	json_kv_str(j, "detail", g->detail);
	json_kv_bool(j, "has_data", g->has_data);
	json_kv_int(j, "kernels", (long long)g->kernels);
	json_kv_int(j, "kernel_ns", (long long)g->kernel_ns);
	json_kv_int(j, "copies", (long long)g->copies);
	json_kv_int(j, "copy_bytes", (long long)g->copy_bytes);
	json_kv_int(j, "copy_ns", (long long)g->copy_ns);
	json_kv_int(j, "busy_ns", (long long)g->busy_ns);
	json_kv_int(j, "idle_ns", (long long)g->idle_ns);
	json_kv_int(j, "gaps", (long long)g->gaps);
	json_kv_num(j, "utilisation", gpu_utilisation(g));
	json_kv_num(j, "idle_share", gpu_idle_share(g));
	json_kv_num(j, "dispatch_share", gpu_dispatch_share(g));
	json_key(j, "kernel_stats");
	json_begin_array(j, 0);
	for (size_t i = 0; i < g->nkernel_stats; i++) {
		const struct gpu_kernel_stat *k = &g->kernel_stats[i];

		json_begin_object(j);
		json_kv_str(j, "name", k->name ? k->name : "");
		json_kv_int(j, "count", (long long)k->count);
		json_kv_int(j, "total_ns", (long long)k->total_ns);
		json_kv_num(j, "share", k->share);
		json_end_object(j);
	}
	json_end_array(j);
	json_end_object(j);
}
