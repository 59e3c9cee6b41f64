/*
 * gpu.h - the GPU part of the analyzed recording: what `agprof report --gpu`
 * prints and what the GPU rules read (through analyzer/gpu/gpu_metrics.c).
 *
 * Owns: the kernel summary, copies, per-stream activity, GPU utilisation
 * over the run, idle gaps with the host activity that overlapped them,
 * launch latency, synchronous host-device calls, and kernels per host op
 * (through CUPTI external correlation).  Everything is read with SQL from
 * the gpu_* tables of docs/schema.md; one pass over gpu_activity in time
 * order gives busy time, gaps and buckets, so memory stays one row per
 * kernel name, stream, bucket and kept gap, plus one number per gap.
 *
 * "Busy" is the union of kernel, copy and memset intervals over all devices
 * and streams; "idle" is the rest of the GPU span (first to last activity):
 * before its first kernel a workload is starting up, not waiting on the GPU.
 *
 * Lifetime: every string and array reachable from a struct gpu_model is
 * owned by it and freed by gpu_model_release().
 */
#ifndef AGPROF_GPU_H
#define AGPROF_GPU_H

#include <stddef.h>
#include <stdint.h>

struct recording;

struct gpu_options {
	int64_t bucket_ns;      /* utilisation bucket width; 0: the run in 100 buckets */
	size_t max_gaps;        /* longest gaps kept with their host activity; 0: 10 */
};

/* Kernels aggregated by (demangled) name. */
struct gpu_kernel_stat {
	const char *name;
	int64_t count;
	int64_t total_ns, min_ns, max_ns;
	double mean_ns;
	double share;           /* of all kernel time, 0..1 */
	int64_t launched;       /* kernels whose launching API call was recorded */
	int64_t launch_ns;      /* summed duration of those calls */
	int64_t latency_ns;     /* summed launch latency: kernel start - call start */
	int64_t short_count;    /* kernels that ran shorter than their launch call */
};

/* Copies by direction ("HtoD", ...), and memsets as kind "memset". */
struct gpu_copy_stat {
	const char *kind;
	int64_t count, bytes, total_ns;
	double gbps;            /* bytes / total_ns */
	int64_t sync_count;     /* issued by a synchronous API call (cudaMemcpy, not ...Async) */
	int64_t sync_ns;        /* host time blocked in those calls */
};

struct gpu_stream_stat {
	int64_t pid, device, stream;
	int64_t kernels, copies;
	int64_t busy_ns;        /* summed activity time on the stream */
	int64_t first_ns, last_ns;
};

/* Utilisation of one time bucket: busy time (union) inside it. */
struct gpu_bucket {
	int64_t start_ns;
	int64_t busy_ns;
	double util;            /* busy_ns / bucket width, 0..1 */
};

/* A user source location; file NULL when unknown. */
struct gpu_site {
	const char *file;
	int line;
	const char *func;
};

/* One idle gap (between two GPU activities) and what the host did meanwhile. */
struct gpu_gap {
	int64_t start_ns, end_ns;
	int64_t host_ns;        /* host dispatch time overlapping the gap (union) */
	int64_t eager_ops;      /* eager ops overlapping the gap */
	int64_t function_calls; /* graph function calls overlapping it */
	int64_t api_calls;      /* CUDA API calls overlapping it */
	const char *top_op;     /* most frequent eager op in the gap, or NULL */
	struct gpu_site site;   /* the user line that dispatched most of them */
	const char *top_api;    /* most frequent CUDA call in the gap, or NULL */
};

/* Synchronous host-device calls by API name. */
struct gpu_sync_stat {
	const char *api;        /* "cudaStreamSynchronize", "cudaMemcpy", ... */
	int is_copy;            /* 1: a synchronous copy, 0: a synchronisation */
	int64_t count, total_ns;
	int64_t with_op;        /* calls made inside a host op (external id) */
	const char *top_op;     /* the host op (eager op or graph function) issuing most of them */
	struct gpu_site site;   /* its user source line, when recorded */
	int64_t first_ns, last_ns;
};

/* Kernels by the host op that launched them (external correlation). */
struct gpu_op_stat {
	const char *op;         /* eager op type ("MatMul") or graph function name */
	const char *table;      /* "eager_ops" or "function_calls" */
	int64_t kernels, kernel_ns;
};

struct gpu_latency {
	int64_t count;          /* kernels with a launching call */
	double mean_ns;
	int64_t p50_ns, p95_ns, max_ns;
};

struct gpu_model {
	int has_data;           /* any gpu_activity row */
	const char *status;     /* "on"/"off" (meta gpu_status), NULL when absent */
	const char *detail;     /* why off, or what CUPTI said when on */
	int64_t run_start_ns, run_end_ns;   /* the recording (meta), else the GPU span */
	int64_t first_ns, last_ns;          /* GPU span: first activity start, last end */
	int64_t kernels, kernel_ns;
	int64_t copies, copy_bytes, copy_ns;
	int64_t memsets, memset_ns;
	int64_t syncs;                      /* gpu_activity rows of kind sync */
	int64_t api_calls;
	int64_t busy_ns;                    /* union of kernel/copy/memset time */
	int64_t idle_ns;                    /* GPU span - busy_ns */
	int64_t gaps;                       /* idle gaps in the span */
	int64_t host_in_idle_ns;            /* host dispatch overlapping idle time */
	int64_t idle_gap_p50_ns;            /* half the idle time is in gaps shorter than this */
	int64_t correlated;                 /* kernels and copies tied to a recorded API call */
	int64_t short_kernels;              /* kernels shorter than their launch call */
	struct gpu_latency latency;

	struct gpu_kernel_stat *kernel_stats;  /* by total_ns, largest first */
	size_t nkernel_stats;
	struct gpu_copy_stat *copy_stats;      /* by total_ns */
	size_t ncopy_stats;
	struct gpu_stream_stat *streams;       /* by pid, device, stream */
	size_t nstreams;
	struct gpu_bucket *buckets;            /* the run, in time order */
	size_t nbuckets;
	int64_t bucket_ns;
	struct gpu_gap *top_gaps;              /* longest first */
	size_t ntop_gaps;
	struct gpu_sync_stat *sync_stats;      /* by total_ns */
	size_t nsync_stats;
	struct gpu_op_stat *op_stats;          /* by kernel_ns */
	size_t nop_stats;

	struct strpool *pool;                 /* private: the strings */
};

/*
 * Load the GPU part of rec.  opt may be NULL.  A recording without GPU data
 * loads fine (has_data 0, status/detail say why).  Prints one "error: ..."
 * line and returns -1 on failure (g is then released).
 */
int gpu_model_load(struct gpu_model *g, struct recording *rec, const struct gpu_options *opt);
void gpu_model_release(struct gpu_model *g);

/* Shares the printers and rules use; 0 when the denominator is 0. */
int64_t gpu_span_ns(const struct gpu_model *g);      /* first GPU activity to last */
double gpu_utilisation(const struct gpu_model *g);   /* busy / GPU span */
double gpu_idle_share(const struct gpu_model *g);    /* idle / GPU span */
double gpu_dispatch_share(const struct gpu_model *g);/* host_in_idle / idle */

/*
 * Classify a CUDA API name: 1 for a synchronous copy (cudaMemcpy,
 * cuMemcpyDtoH_v2, ...), 2 for a synchronisation (cudaDeviceSynchronize,
 * cuStreamSynchronize, ...), 0 otherwise (async copies, launches, ...).
 */
int gpu_sync_kind(const char *api);

#endif
