/*
 * gpu_record.h - the GPU records the CUPTI part of the collector hands to the
 * recording.  The CUPTI code (collector/gpu/) fills these structs from CUPTI
 * activity records; gpu_emit_*() (collector/emit.c) queues them for the
 * launcher, which writes the gpu_* tables of docs/schema.md.
 *
 * gpu_emit_*() may be called from any thread, including CUPTI's buffer
 * completion thread; they copy what they are given.
 */
#ifndef AGPROF_GPU_RECORD_H
#define AGPROF_GPU_RECORD_H

#include <stdint.h>

enum gpu_activity_kind {
	GPU_KERNEL = 1,
	GPU_MEMCPY = 2,
	GPU_MEMSET = 3,
	GPU_SYNC = 4,
};

struct gpu_activity_rec {
	uint32_t kind;            /* enum gpu_activity_kind */
	uint32_t device;
	uint32_t context;
	uint32_t stream;
	uint64_t start_ns;        /* already on CLOCK_MONOTONIC */
	uint64_t end_ns;
	uint32_t correlation_id;
	uint32_t grid[3];
	uint32_t block[3];
	uint64_t bytes;
	const char *name;         /* demangled kernel name, NULL for copies */
	const char *copy_kind;    /* "HtoD", "DtoH", ... or NULL */
};

enum gpu_api_kind {
	GPU_API_RUNTIME = 1,
	GPU_API_DRIVER = 2,
};

struct gpu_api_rec {
	uint32_t api;             /* enum gpu_api_kind */
	uint32_t tid;
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t correlation_id;
	uint64_t external_id;     /* 0 when none was pushed */
	const char *name;         /* e.g. "cudaLaunchKernel" */
};

void gpu_emit_activity(const struct gpu_activity_rec *r);
void gpu_emit_api_call(const struct gpu_api_rec *r);
/* on = 1 when tracing started; detail says why not otherwise. */
void gpu_emit_status(int on, const char *detail);

/*
 * Hooks the host side calls around each TensorFlow dispatch so that kernels
 * map back to the op (CUPTI external correlation).  Provided by collector/gpu/;
 * cheap no-ops while GPU tracing is off.  external_id is the host event's
 * per-process sequence number (see emit.h).
 */
void gpu_external_push(uint64_t external_id);
void gpu_external_pop(void);

/* Nonzero while CUPTI tracing is on (collector/gpu/activity.c; always 0 without it). */
extern int gpu_tracing_on __attribute__((visibility("hidden")));

/*
 * Around a dispatch: one load and no call while GPU tracing is off, as on a
 * CPU-only machine (two calls a dispatch were 3 of the eager hook's ~80
 * instruction-cache misses, bench/hook_cachegrind.py).  Returns whether
 * it pushed, for gpu_dispatch_leave.
 */
static inline int gpu_dispatch_enter(uint64_t external_id)
{
	if (__builtin_expect(!__atomic_load_n(&gpu_tracing_on, __ATOMIC_RELAXED), 1))
		return 0;
	gpu_external_push(external_id);
	return 1;
}

static inline void gpu_dispatch_leave(int entered)
{
	if (entered)
		gpu_external_pop();  /* pops only what this thread pushed */
}

/* Called once from the collector's constructor; must never harm the workload. */
void gpu_collector_init(void);
/* Called from the collector's exit path: flush CUPTI buffers. */
void gpu_collector_flush(void);

#endif
