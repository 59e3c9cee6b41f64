/*
 * html_gpu.c - the GPU section: kernels, copies, utilisation over the run
 * (the GPU model's buckets as bars whose height and text give the share),
 * the longest idle gaps with what the host did in them.  From the GPU
 * model (analyzer/gpu/), which the rules use too; "not recorded" when the
 * recording has no GPU activity.
 */
#include "html_internal.h"
#include "checked.h"
#include "gpu.h"
#include "model.h"
#include "report.h"

#define MAX_ROWS 20
#define UTIL_H 60 /* px of the utilisation chart */

static void summary(struct html *h, const struct gpu_model *g)
{
	struct strbuf *o = h->out;

	strbuf_addf(o, "<p class=\"card\">%lld kernels (", (long long)g->kernels);
	html_dur(o, g->kernel_ns);
	strbuf_addf(o, "), %lld copies (%.1f MiB, ", (long long)g->copies, (double)g->copy_bytes / 1048576.0);
	html_dur(o, g->copy_ns);
	strbuf_addf(o, "); <b>utilisation %.1f%%</b> of the GPU span (", 100 * gpu_utilisation(g));
	html_dur(o, gpu_span_ns(g));
	strbuf_addf(o, "), <b>idle %.1f%%</b> in %lld gaps, the host dispatching during %.1f%% of the idle time",
		    100 * gpu_idle_share(g), (long long)g->gaps, 100 * gpu_dispatch_share(g));
	if (g->latency.count) {
		strbuf_addstr(o, "; launch latency p50 ");
		html_dur(o, g->latency.p50_ns);
		strbuf_addstr(o, ", p95 ");
		html_dur(o, g->latency.p95_ns);
	}
	strbuf_addstr(o, "</p>\n");
}

/* One bar per bucket: its height and its title say the share (the chart reads without colour). */
static void utilisation(struct html *h, const struct gpu_model *g)
{
	struct strbuf *o = h->out;
	size_t n = g->nbuckets;

	if (!n)
		return;
	strbuf_addf(o, "<h3>Utilisation over the run</h3>\n<svg class=\"util\" role=\"img\" aria-label=\"GPU busy share "
		    "per %s of the run\" viewBox=\"0 0 %zu %d\" preserveAspectRatio=\"none\" width=\"100%%\" "
		    "height=\"%d\">\n", "bucket", n, UTIL_H, UTIL_H);
	for (size_t i = 0; i < n; i++) {
		double u = g->buckets[i].util > 1 ? 1 : g->buckets[i].util < 0 ? 0 : g->buckets[i].util;

		strbuf_addf(o, "<rect x=\"%zu\" y=\"%.2f\" width=\"1\" height=\"%.2f\" fill=\"url(#p-kern)\">"
			    "<title>", i, UTIL_H * (1 - u), UTIL_H * u);
		html_dur(o, sat_sub64(g->buckets[i].start_ns, g->run_start_ns));
		strbuf_addf(o, ": %.0f%% busy</title></rect>", 100 * u);
	}
	strbuf_addstr(o, "\n</svg>\n<p class=\"dim\">each bar: the GPU's busy share of ");
	html_dur(o, g->bucket_ns);
	strbuf_addstr(o, " (full height: busy all the time)</p>\n");
}

static void kernels(struct html *h, const struct gpu_model *g)
{
	struct strbuf *o = h->out;

	strbuf_addstr(o, "<h3>Top kernels</h3>\n<table><thead><tr><th>kernel</th><th class=\"n\">runs</th>"
		      "<th class=\"n\">total</th><th class=\"n\">share</th><th class=\"n\">mean</th>"
		      "<th class=\"n\">shorter than launch</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < g->nkernel_stats && i < MAX_ROWS; i++) {
		const struct gpu_kernel_stat *k = &g->kernel_stats[i];

		strbuf_addstr(o, "<tr><td class=\"mono\">");
		html_esc(o, k->name);
		strbuf_addf(o, "</td><td class=\"n\">%lld</td><td class=\"n\">", (long long)k->count);
		html_dur(o, k->total_ns);
		strbuf_addf(o, "</td><td class=\"n\"><span class=\"bar c-kern\" style=\"width:%.1fem\"></span> %.1f%%"
			    "</td><td class=\"n\">", 4 * k->share, 100 * k->share);
		html_dur(o, (int64_t)k->mean_ns);
		strbuf_addf(o, "</td><td class=\"n\">%lld</td></tr>\n", (long long)k->short_count);
	}
	strbuf_addstr(o, "</tbody></table>\n");
	if (g->nkernel_stats > MAX_ROWS)
		strbuf_addf(o, "<p class=\"dim\">... %zu more kernels</p>\n", g->nkernel_stats - MAX_ROWS);
}

static void gaps(struct html *h, const struct gpu_model *g)
{
	struct strbuf *o = h->out;

	if (!g->ntop_gaps)
		return;
	strbuf_addstr(o, "<h3>Longest idle gaps</h3>\n<table><thead><tr><th class=\"n\">at</th><th class=\"n\">idle</th>"
		      "<th class=\"n\">host dispatching</th><th class=\"n\">eager ops</th><th class=\"n\">graph calls</th>"
		      "<th>most frequent op</th><th>line</th></tr></thead><tbody>\n");
	for (size_t i = 0; i < g->ntop_gaps && i < MAX_ROWS; i++) {
		const struct gpu_gap *gp = &g->top_gaps[i];
		struct source_loc loc = { gp->site.file, gp->site.line, NULL, 0, 0 };

		strbuf_addstr(o, "<tr><td class=\"n\">");
		html_dur(o, sat_sub64(gp->start_ns, g->run_start_ns));
		strbuf_addstr(o, "</td><td class=\"n\">");
		html_dur(o, sat_sub64(gp->end_ns, gp->start_ns));
		strbuf_addstr(o, "</td><td class=\"n\">");
		html_dur(o, gp->host_ns);
		strbuf_addf(o, "</td><td class=\"n\">%lld</td><td class=\"n\">%lld</td><td class=\"mono\">",
			    (long long)gp->eager_ops, (long long)gp->function_calls);
		html_esc(o, gp->top_op ? gp->top_op : gp->top_api);
		strbuf_addstr(o, "</td><td class=\"mono\">");
		html_loc(h, &loc);
		strbuf_addstr(o, "</td></tr>\n");
	}
	strbuf_addstr(o, "</tbody></table>\n");
}

void html_gpu(struct html *h)
{
	struct strbuf *o = h->out;
	const struct gpu_model *g = h->o->gpu;

	strbuf_addstr(o, "<section id=\"gpu\" aria-labelledby=\"gpu-h\"><h2 id=\"gpu-h\">GPU</h2>\n");
	if (!g || !g->has_data) {
		strbuf_addstr(o, "<p>GPU activity: not recorded (gpu ");
		html_esc(o, g && g->status ? g->status : "off");
		if (g && g->detail) {
			strbuf_addstr(o, ": ");
			html_esc(o, g->detail);
		}
		strbuf_addstr(o, ")</p>\n</section>\n");
		return;
	}
	summary(h, g);
	utilisation(h, g);
	kernels(h, g);
	gaps(h, g);
	strbuf_addstr(o, "</section>\n");
}
