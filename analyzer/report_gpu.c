/* report_gpu.c - the GPU section of `agprof report` (text and JSON), from analyzer/gpu.h. */
#include "report.h"
#include "gpu.h"
#include "model.h"
#include "duration.h"

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

void report_gpu_json(struct strbuf *out, const struct gpu_model *g)
{
	if (!g) {
		strbuf_addstr(out, "null");
		return;
	}
	strbuf_addstr(out, "{\"status\":");
	if (g->status)
		strbuf_add_json_string(out, g->status);
	else
		strbuf_addstr(out, "null");
	strbuf_addstr(out, ",\"detail\":");
	if (g->detail)
		strbuf_add_json_string(out, g->detail);
	else
		strbuf_addstr(out, "null");
	strbuf_addf(out, ",\"has_data\":%s,\"kernels\":%lld,\"kernel_ns\":%lld,\"copies\":%lld,\"copy_bytes\":%lld,"
			 "\"copy_ns\":%lld,\"busy_ns\":%lld,\"idle_ns\":%lld,\"gaps\":%lld,\"utilisation\":%.6g,"
			 "\"idle_share\":%.6g,\"dispatch_share\":%.6g,\"kernel_stats\":[",
		    g->has_data ? "true" : "false", (long long)g->kernels, (long long)g->kernel_ns, (long long)g->copies,
		    (long long)g->copy_bytes, (long long)g->copy_ns, (long long)g->busy_ns, (long long)g->idle_ns,
		    (long long)g->gaps, gpu_utilisation(g), gpu_idle_share(g), gpu_dispatch_share(g));
	for (size_t i = 0; i < g->nkernel_stats; i++) {
		const struct gpu_kernel_stat *k = &g->kernel_stats[i];

		strbuf_addstr(out, i ? ",{\"name\":" : "{\"name\":");
		strbuf_add_json_string(out, k->name ? k->name : "");
		strbuf_addf(out, ",\"count\":%lld,\"total_ns\":%lld,\"share\":%.6g}", (long long)k->count,
			    (long long)k->total_ns, k->share);
	}
	strbuf_addstr(out, "]}");
}
