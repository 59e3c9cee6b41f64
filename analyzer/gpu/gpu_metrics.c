/*
 * gpu_metrics.c - the GPU part of the model as metric sources for the rules
 * (rules/gpu-idle.rule, launch-bound.rule, host-device-sync.rule and user
 * rules).  analyze() calls gpu_metrics_register() after the built-in
 * sources.  Sources:
 *   gpu           one row: the run's GPU totals, utilisation, idle, latency
 *   gpu_kernels   one row per kernel name
 *   gpu_syncs     one row per synchronous host-device API (copies, syncs)
 *   gpu_gaps      the longest idle gaps, with the host activity in them
 * A recording without GPU data still has the "gpu" row (kernels = 0, status
 * and detail saying why), and no rows in the others.
 */
#include "gpu.h"
#include "model.h"
#include "metric_fields.h"

#include <stdlib.h>
#include <string.h>


/* One gpu_model shared by the four sources; the last release frees it. */
struct gpu_shared {
	struct gpu_model g;
	int refs;
};

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static void shared_release(void *data)
{
	struct gpu_shared *s = data;

	if (--s->refs == 0) {
		gpu_model_release(&s->g);
		free(s);
	}
}

/* ---- gpu -------------------------------------------------------------- */

static const char *const gpu_fields[] = {
	"status, detail: on/off and why (text)",
	"kernels, kernel_ns, kernel_mean_ns: kernels run and their time",
	"copies, copy_bytes, copy_ns, memsets: copies and memsets",
	"api_calls: CUDA runtime and driver calls recorded",
	"span_ns, start_ns, end_ns: first GPU activity to last",
	"wall_ns: the whole run",
	"busy_ns, utilisation: time the GPU ran something (union over streams), as a share of span_ns",
	"idle_ns, idle_share: the rest of the span, and its share",
	"gaps, idle_gap_p50_ns: idle gaps; half the idle time is in gaps shorter than idle_gap_p50_ns",
	"host_in_idle_ns, dispatch_share: host dispatch (eager ops, graph calls, CUDA calls) during idle time, as a share of it",
	"latency_mean_ns, latency_p50_ns, latency_p95_ns: launch latency, API call to kernel start",
	"launch_mean_ns: mean duration of a kernel's launching call",
	"short_kernels, short_share: kernels that ran shorter than their launch call, share of launched kernels",
	"correlated_share: kernels and copies tied to their launching call",
	"top_kernel, top_op: the kernel and the host op with the most GPU time (text)",
	"sync_calls, sync_ns: synchronous copies and synchronisations, host time blocked",
	NULL,
};

static size_t gpu_count(const struct model *m, void *data)
{
	(void)m;
	(void)data;
	return 1;
}

static int gpu_get(const struct model *m, void *data, size_t row, const char *field, struct metric_value *out)
{
	const struct gpu_model *g = &((struct gpu_shared *)data)->g;
	int64_t launched = 0, launch_ns = 0, sync_calls = 0, sync_ns = 0;

	(void)row;
	for (size_t i = 0; i < g->nkernel_stats; i++) {
		launched += g->kernel_stats[i].launched;
		launch_ns += g->kernel_stats[i].launch_ns;
	}
	for (size_t i = 0; i < g->nsync_stats; i++) {
		sync_calls += g->sync_stats[i].count;
		sync_ns += g->sync_stats[i].total_ns;
	}
	TEXT("status", g->status ? g->status : "off");
	TEXT("detail", g->detail);
	NUM("kernels", g->kernels);
	NUM("kernel_ns", g->kernel_ns);
	NUM("kernel_mean_ns", ratio((double)g->kernel_ns, (double)g->kernels));
	NUM("copies", g->copies);
	NUM("copy_bytes", g->copy_bytes);
	NUM("copy_ns", g->copy_ns);
	NUM("memsets", g->memsets);
	NUM("api_calls", g->api_calls);
	NUM("span_ns", gpu_span_ns(g));
	NUM("start_ns", g->first_ns);
	NUM("end_ns", g->last_ns);
	NUM("wall_ns", m->session.wall_ns ? m->session.wall_ns : g->run_end_ns - g->run_start_ns);
	NUM("busy_ns", g->busy_ns);
	NUM("utilisation", gpu_utilisation(g));
	NUM("idle_ns", g->idle_ns);
	NUM("idle_share", gpu_idle_share(g));
	NUM("gaps", g->gaps);
	NUM("idle_gap_p50_ns", g->idle_gap_p50_ns);
	NUM("host_in_idle_ns", g->host_in_idle_ns);
	NUM("dispatch_share", gpu_dispatch_share(g));
	NUM("latency_mean_ns", g->latency.mean_ns);
	NUM("latency_p50_ns", g->latency.p50_ns);
	NUM("latency_p95_ns", g->latency.p95_ns);
	NUM("launch_mean_ns", ratio((double)launch_ns, (double)launched));
	NUM("short_kernels", g->short_kernels);
	NUM("short_share", ratio((double)g->short_kernels, (double)launched));
	NUM("correlated_share", ratio((double)g->correlated, (double)(g->kernels + g->copies + g->memsets)));
	TEXT("top_kernel", g->nkernel_stats ? g->kernel_stats[0].name : NULL);
	TEXT("top_op", g->nop_stats ? g->op_stats[0].op : NULL);
	NUM("sync_calls", sync_calls);
	NUM("sync_ns", sync_ns);
	return -1;
}

static void gpu_anchor(const struct model *m, void *data, size_t row, struct metric_anchor *a)
{
	const struct gpu_model *g = &((struct gpu_shared *)data)->g;

	(void)m;
	(void)row;
	a->cost_ns = g->idle_ns;
	a->start_ns = g->first_ns;
	a->end_ns = g->last_ns;
}

/* ---- gpu_kernels ------------------------------------------------------ */

static const char *const kernel_fields[] = {
	"name: the kernel (demangled)",
	"count, total_ns, mean_ns, min_ns, max_ns: its runs",
	"share: of all kernel time",
	"launched: runs whose launching call was recorded",
	"launch_mean_ns: mean duration of the launching call",
	"latency_mean_ns: mean time from the call's start to the kernel's start",
	"short_count, short_share: runs shorter than their launching call, share of launched runs",
	"launch_excess_ns: summed launch time beyond kernel time over those runs (the cost of launching)",
	NULL,
};

static size_t kernels_count(const struct model *m, void *data)
{
	(void)m;
	return ((struct gpu_shared *)data)->g.nkernel_stats;
}

static int kernels_get(const struct model *m, void *data, size_t row, const char *field, struct metric_value *out)
{
	const struct gpu_kernel_stat *k = &((struct gpu_shared *)data)->g.kernel_stats[row];
	double excess = (double)k->launch_ns - (double)k->total_ns * ratio((double)k->launched, (double)k->count);

	(void)m;
	TEXT("name", k->name);
	NUM("count", k->count);
	NUM("total_ns", k->total_ns);
	NUM("mean_ns", k->mean_ns);
	NUM("min_ns", k->min_ns);
	NUM("max_ns", k->max_ns);
	NUM("share", k->share);
	NUM("launched", k->launched);
	NUM("launch_mean_ns", ratio((double)k->launch_ns, (double)k->launched));
	NUM("latency_mean_ns", ratio((double)k->latency_ns, (double)k->launched));
	NUM("short_count", k->short_count);
	NUM("short_share", ratio((double)k->short_count, (double)k->launched));
	NUM("launch_excess_ns", excess > 0 ? excess : 0);
	return -1;
}

static void kernels_anchor(const struct model *m, void *data, size_t row, struct metric_anchor *a)
{
	const struct gpu_kernel_stat *k = &((struct gpu_shared *)data)->g.kernel_stats[row];
	double excess = (double)k->launch_ns - (double)k->total_ns * ratio((double)k->launched, (double)k->count);

	(void)m;
	a->cost_ns = excess > 0 ? (int64_t)excess : 0;
}

/* ---- gpu_syncs -------------------------------------------------------- */

static const char *const sync_fields[] = {
	"api: the CUDA call (cudaMemcpy, cudaStreamSynchronize, ...)",
	"kind: copy (a synchronous copy) or sync (a synchronisation)",
	"count, total_ns, mean_ns: calls and host time blocked in them",
	"share: total_ns as a share of the run",
	"span_share: total_ns as a share of the GPU's active span (where a step loop runs; start-up is not in it)",
	"with_op: calls made inside a TensorFlow op or graph call",
	"op, file, line, function: the host op issuing most of them and its user line",
	"first_ns, last_ns: first and last call",
	"spread: (last_ns - first_ns) / GPU span: near 1 when the calls recur through the run (a loop)",
	NULL,
};

static size_t syncs_count(const struct model *m, void *data)
{
	(void)m;
	return ((struct gpu_shared *)data)->g.nsync_stats;
}

static int syncs_get(const struct model *m, void *data, size_t row, const char *field, struct metric_value *out)
{
	const struct gpu_model *g = &((struct gpu_shared *)data)->g;
	const struct gpu_sync_stat *y = &g->sync_stats[row];
	int64_t wall = m->session.wall_ns ? m->session.wall_ns : g->run_end_ns - g->run_start_ns;

	TEXT("api", y->api);
	TEXT("kind", y->is_copy ? "copy" : "sync");
	NUM("count", y->count);
	NUM("total_ns", y->total_ns);
	NUM("mean_ns", ratio((double)y->total_ns, (double)y->count));
	NUM("share", ratio((double)y->total_ns, (double)wall));
	NUM("span_share", ratio((double)y->total_ns, (double)gpu_span_ns(g)));
	NUM("with_op", y->with_op);
	TEXT("op", y->top_op);
	TEXT("file", y->site.file);
	NUM("line", y->site.line);
	TEXT("function", y->site.func);
	NUM("first_ns", y->first_ns);
	NUM("last_ns", y->last_ns);
	NUM("spread", ratio((double)(y->last_ns - y->first_ns), (double)gpu_span_ns(g)));
	return -1;
}

static void syncs_anchor(const struct model *m, void *data, size_t row, struct metric_anchor *a)
{
	const struct gpu_sync_stat *y = &((struct gpu_shared *)data)->g.sync_stats[row];

	(void)m;
	a->function = y->site.func;
	a->loc.file = y->site.file;
	a->loc.line = y->site.line;
	a->cost_ns = y->total_ns;
	a->start_ns = y->first_ns;
	a->end_ns = y->last_ns;
}

/* ---- gpu_gaps --------------------------------------------------------- */

static const char *const gap_fields[] = {
	"start_ns, end_ns, dur_ns: the gap (longest first)",
	"host_ns, host_share: host dispatch during the gap, and its share of the gap",
	"eager_ops, function_calls, api_calls: host events overlapping the gap",
	"op: the eager op dispatched most during the gap (text)",
	"file, line, function: the user line that dispatched most of them",
	"api: the CUDA call made most during the gap (text)",
	NULL,
};

static size_t gaps_count(const struct model *m, void *data)
{
	(void)m;
	return ((struct gpu_shared *)data)->g.ntop_gaps;
}

static int gaps_get(const struct model *m, void *data, size_t row, const char *field, struct metric_value *out)
{
	const struct gpu_gap *p = &((struct gpu_shared *)data)->g.top_gaps[row];

	(void)m;
	NUM("start_ns", p->start_ns);
	NUM("end_ns", p->end_ns);
	NUM("dur_ns", p->end_ns - p->start_ns);
	NUM("host_ns", p->host_ns);
	NUM("host_share", ratio((double)p->host_ns, (double)(p->end_ns - p->start_ns)));
	NUM("eager_ops", p->eager_ops);
	NUM("function_calls", p->function_calls);
	NUM("api_calls", p->api_calls);
	TEXT("op", p->top_op);
	TEXT("file", p->site.file);
	NUM("line", p->site.line);
	TEXT("function", p->site.func);
	TEXT("api", p->top_api);
	return -1;
}

static void gaps_anchor(const struct model *m, void *data, size_t row, struct metric_anchor *a)
{
	const struct gpu_gap *p = &((struct gpu_shared *)data)->g.top_gaps[row];

	(void)m;
	a->function = p->site.func;
	a->loc.file = p->site.file;
	a->loc.line = p->site.line;
	a->cost_ns = p->end_ns - p->start_ns;
	a->start_ns = p->start_ns;
	a->end_ns = p->end_ns;
}

const struct gpu_model *gpu_metrics_model(const struct model *m)
{
	const struct metric_source *src = model_find_source(m, "gpu");

	return src && src->release == shared_release ? &((struct gpu_shared *)src->data)->g : NULL;
}

int gpu_metrics_register(struct model *m)
{
	const struct metric_source sources[] = {
		{ "gpu", gpu_fields, gpu_count, gpu_get, gpu_anchor, shared_release, NULL },
		{ "gpu_kernels", kernel_fields, kernels_count, kernels_get, kernels_anchor, shared_release, NULL },
		{ "gpu_syncs", sync_fields, syncs_count, syncs_get, syncs_anchor, shared_release, NULL },
		{ "gpu_gaps", gap_fields, gaps_count, gaps_get, gaps_anchor, shared_release, NULL },
	};
	struct gpu_shared *s = calloc(1, sizeof(*s));

	if (!s || !m->rec)
		goto fail;
	if (gpu_model_load(&s->g, m->rec, NULL))
		goto fail;
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
		struct metric_source src = sources[i];

		src.data = s;
		s->refs++;
		if (model_add_source(m, &src)) {
			/* Registered sources release their reference with the model. */
			if (--s->refs == 0) {
				gpu_model_release(&s->g);
				free(s);
			}
			return -1;
		}
	}
	return 0;
fail:
	free(s);
	return -1;
}
