/*
 * gpu_internal.h - the pieces of the CUPTI part of the collector, and how
 * they fit together.  Only collector/gpu/ and tests/gpu/ include this.
 *
 *   cupti_loader.c  finds libcupti at run time and fills struct cupti_api
 *   clock.c         CUPTI timestamps -> CLOCK_MONOTONIC (pure arithmetic)
 *   decode.c        one CUPTI activity record -> gpu_emit_*() (pure, no CUPTI
 *                   call: the tests feed it records laid out by hand)
 *   demangle.c      C++ kernel names through __cxa_demangle when present
 *   activity.c      buffer callbacks, enabling activity kinds, the
 *                   entry points of gpu_record.h and InitializeInjection()
 *   gpu_off.c       the same entry points for a build without CUPTI headers
 */
#ifndef AGPROF_GPU_INTERNAL_H
#define AGPROF_GPU_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "gpu_record.h"

/* ---- clock.c ---------------------------------------------------------- */

/*
 * One calibration point: a CUPTI timestamp taken between two readings of
 * CLOCK_MONOTONIC.  The narrower the window, the better the point.
 */
struct gpu_clock_sample {
	uint64_t mono_before;
	uint64_t cupti;
	uint64_t mono_after;
};

/*
 * Maps CUPTI time to CLOCK_MONOTONIC: t_mono = t_cupti + offset, where the
 * offset is interpolated linearly between a first and a last calibration
 * point (CUPTI's default clock is CLOCK_REALTIME, which NTP may slew against
 * CLOCK_MONOTONIC during a long run).
 */
struct gpu_clock {
	int have_first, have_last;
	uint64_t first_cupti, last_cupti;
	int64_t first_offset, last_offset;
};

void gpu_clock_init(struct gpu_clock *c);
/*
 * Offset of the best (narrowest) of n samples: the CUPTI reading is taken as
 * simultaneous with the middle of its monotonic window.  n must be >= 1.
 * Stores the CUPTI time of that sample in *at when at is not NULL.
 */
int64_t gpu_clock_offset(const struct gpu_clock_sample *s, size_t n, uint64_t *at);
/* Record a calibration point; the first call sets the first point, later calls the last. */
void gpu_clock_add_point(struct gpu_clock *c, uint64_t cupti_at, int64_t offset);
/* Convert; 0 (CUPTI's "no timestamp") stays 0. */
uint64_t gpu_clock_to_mono(const struct gpu_clock *c, uint64_t cupti_ns);

/* ---- demangle.c ------------------------------------------------------- */

typedef char *(*gpu_demangle_fn)(const char *mangled, char *out, size_t *len, int *status);

/*
 * Cache of demangled kernel names, keyed by the name pointer CUPTI hands out
 * (CUPTI shares one name string among all records of a kernel) and checked by
 * content.  Owns the strings it returns; they live until gpu_names_release().
 */
struct gpu_names {
	gpu_demangle_fn demangle;  /* NULL: names are kept as they are */
	struct gpu_name_slot *slots;
	size_t cap, used;
};

/* demangle may be NULL; gpu_demangler() finds __cxa_demangle when loaded. */
void gpu_names_init(struct gpu_names *n, gpu_demangle_fn demangle);
gpu_demangle_fn gpu_demangler(void);
/* The demangled form of name (or name itself when that fails); never NULL for a non-NULL name. */
const char *gpu_names_get(struct gpu_names *n, const char *name);
void gpu_names_release(struct gpu_names *n);

/* ---- decode.c --------------------------------------------------------- */

#define GPU_CORR_SLOTS 65536u   /* power of two */
#define GPU_CTX_SLOTS 64u

/* Counters the decoder keeps, for the status line and the tests. */
struct gpu_decode_stats {
	uint64_t kernels, memcpys, memsets, syncs, api_calls;
	uint64_t external_ids;       /* external correlation records seen */
	uint64_t api_with_external;  /* API records that got an external id */
	uint64_t overhead_records;
	uint64_t overhead_ns;        /* CUPTI's own overhead, summed */
	uint64_t other;              /* records of kinds we do not decode */
	uint64_t dropped;            /* records CUPTI dropped (buffer callbacks) */
};

/* Resolves an API callback id to its name ("cudaLaunchKernel"), or NULL. */
typedef const char *(*gpu_api_name_fn)(uint32_t api, uint32_t cbid);

/*
 * State carried from one record to the next.  CUPTI emits an external
 * correlation record just before the API record it belongs to, possibly at
 * the end of the previous buffer: corr[] remembers the last external id per
 * correlation id (direct-mapped; correlation ids grow, so a slot only ever
 * holds an older id that is no longer needed).  Synchronization records carry
 * a context but no device: ctx[] maps the contexts seen on kernels and copies
 * to their device.
 */
struct gpu_decoder {
	const struct gpu_clock *clock;
	struct gpu_names *names;
	gpu_api_name_fn api_name;
	struct { uint32_t corr; uint64_t ext; } corr[GPU_CORR_SLOTS];
	struct { uint32_t ctx, device, used; } ctx[GPU_CTX_SLOTS];
	struct gpu_decode_stats stats;
};

/* Zeroes d and sets its collaborators; api_name may be NULL. */
void gpu_decoder_init(struct gpu_decoder *d, const struct gpu_clock *clock,
		      struct gpu_names *names, gpu_api_name_fn api_name);
/*
 * Decode one record (a CUpti_Activity* of any kind) and pass what it says to
 * gpu_emit_activity() / gpu_emit_api_call().  Returns 1 when something was
 * emitted, 0 for records that only update state or are ignored.
 */
int gpu_decode_record(struct gpu_decoder *d, const void *record);
/* "HtoD", "DtoH", ... for a CUpti_ActivityMemcpyKind value. */
const char *gpu_copy_kind_name(unsigned kind);
/*
 * Copy a CUPTI callback name into out without the API-version suffix CUPTI
 * adds to runtime names ("cudaLaunchKernel_v7000" -> "cudaLaunchKernel").
 * Returns the length written (or that would be, when len is 0).
 */
size_t gpu_api_name_clean(const char *name, char *out, size_t len);
/*
 * Whether a CUDA call (name as gpu_api_name_clean() leaves it) is a query
 * or bookkeeping call not worth a record: cudaGetDevice, cuCtxGetCurrent...
 * Launches, copies, memsets, synchronisation and allocation are never chatty.
 */
int gpu_api_is_chatty(const char *name);
/* The external correlation kind the collector pushes; others are ignored. */
#define GPU_EXTERNAL_KIND_CUSTOM0 3

#endif
