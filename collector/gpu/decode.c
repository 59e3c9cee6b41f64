/*
 * decode.c - CUPTI activity records to the collector's GPU records.
 *
 * Pure: no CUPTI call, no allocation beyond the name cache.  activity.c feeds
 * it the records of each completed buffer; tests/gpu/ feeds it records laid
 * out with cupti_activity.h's own structs.
 *
 * Record versions.  CUPTI writes each record in the layout of the newest
 * struct of its own version (CUpti_ActivityKernel10 for CUPTI 13, Kernel9 for
 * 12.x, ...), which may be older or newer than the header we were built
 * with.  Every field read here sits in the prefix that all versions since
 * CUDA 11 share; the assertions below pin those offsets so that a header
 * that moved one fails the build instead of misreading records.
 */
#include "gpu_internal.h"

#include <cupti_activity.h>
#include <stddef.h>
#include <string.h>

#define AT(type, field, off) \
	_Static_assert(offsetof(type, field) == (off), #type "." #field " moved")

AT(CUpti_ActivityKernel10, start, 16);
AT(CUpti_ActivityKernel10, end, 24);
AT(CUpti_ActivityKernel10, deviceId, 40);
AT(CUpti_ActivityKernel10, contextId, 44);
AT(CUpti_ActivityKernel10, streamId, 48);
AT(CUpti_ActivityKernel10, gridX, 52);
AT(CUpti_ActivityKernel10, blockZ, 72);
AT(CUpti_ActivityKernel10, correlationId, 92);
AT(CUpti_ActivityKernel10, name, 104);
AT(CUpti_ActivityMemcpy6, copyKind, 4);
AT(CUpti_ActivityMemcpy6, bytes, 8);
AT(CUpti_ActivityMemcpy6, start, 16);
AT(CUpti_ActivityMemcpy6, deviceId, 32);
AT(CUpti_ActivityMemcpy6, correlationId, 44);
AT(CUpti_ActivityMemcpyPtoP4, correlationId, 60);
AT(CUpti_ActivityMemset4, bytes, 8);
AT(CUpti_ActivityMemset4, correlationId, 44);
AT(CUpti_ActivityAPI, cbid, 4);
AT(CUpti_ActivityAPI, start, 8);
AT(CUpti_ActivityAPI, threadId, 28);
AT(CUpti_ActivityAPI, correlationId, 32);
AT(CUpti_ActivityExternalCorrelation, externalId, 8);
AT(CUpti_ActivityExternalCorrelation, correlationId, 16);
AT(CUpti_ActivitySynchronization2, start, 8);
AT(CUpti_ActivitySynchronization2, correlationId, 24);
AT(CUpti_ActivitySynchronization2, streamId, 32);
AT(CUpti_ActivityOverhead3, start, 24);
AT(CUpti_ActivityOverhead3, end, 32);

/* The kind of external correlation the collector pushes (activity.c). */
#define AGPROF_EXTERNAL_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0

void gpu_decoder_init(struct gpu_decoder *d, const struct gpu_clock *clock,
		      struct gpu_names *names, gpu_api_name_fn api_name)
{
	memset(d, 0, sizeof(*d));
	d->clock = clock;
	d->names = names;
	d->api_name = api_name;
}

const char *gpu_copy_kind_name(unsigned kind)
{
	static const char *const names[] = {
		[CUPTI_ACTIVITY_MEMCPY_KIND_UNKNOWN] = "unknown",
		[CUPTI_ACTIVITY_MEMCPY_KIND_HTOD] = "HtoD",
		[CUPTI_ACTIVITY_MEMCPY_KIND_DTOH] = "DtoH",
		[CUPTI_ACTIVITY_MEMCPY_KIND_HTOA] = "HtoA",
		[CUPTI_ACTIVITY_MEMCPY_KIND_ATOH] = "AtoH",
		[CUPTI_ACTIVITY_MEMCPY_KIND_ATOA] = "AtoA",
		[CUPTI_ACTIVITY_MEMCPY_KIND_ATOD] = "AtoD",
		[CUPTI_ACTIVITY_MEMCPY_KIND_DTOA] = "DtoA",
		[CUPTI_ACTIVITY_MEMCPY_KIND_DTOD] = "DtoD",
		[CUPTI_ACTIVITY_MEMCPY_KIND_HTOH] = "HtoH",
		[CUPTI_ACTIVITY_MEMCPY_KIND_PTOP] = "PtoP",
	};

	if (kind < sizeof(names) / sizeof(names[0]) && names[kind])
		return names[kind];
	return "unknown";
}

static const char *sync_name(unsigned type)
{
	switch (type) {
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
		return "cudaEventSynchronize";
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
		return "cudaStreamWaitEvent";
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
		return "cudaStreamSynchronize";
	case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
		return "cudaDeviceSynchronize";
	default:
		return "synchronize";
	}
}

static void ctx_remember(struct gpu_decoder *d, uint32_t ctx, uint32_t device)
{
	uint32_t i = ctx & (GPU_CTX_SLOTS - 1);

	for (uint32_t n = 0; n < GPU_CTX_SLOTS; n++, i = (i + 1) & (GPU_CTX_SLOTS - 1)) {
		if (d->ctx[i].used && d->ctx[i].ctx == ctx) {
			d->ctx[i].device = device;
			return;
		}
		if (!d->ctx[i].used) {
			d->ctx[i].used = 1;
			d->ctx[i].ctx = ctx;
			d->ctx[i].device = device;
			return;
		}
	}
}

/* Device of a context, or UINT32_MAX when no kernel or copy named it yet. */
static uint32_t ctx_device(const struct gpu_decoder *d, uint32_t ctx)
{
	uint32_t i = ctx & (GPU_CTX_SLOTS - 1);

	for (uint32_t n = 0; n < GPU_CTX_SLOTS; n++, i = (i + 1) & (GPU_CTX_SLOTS - 1)) {
		if (!d->ctx[i].used)
			break;
		if (d->ctx[i].ctx == ctx)
			return d->ctx[i].device;
	}
	return UINT32_MAX;
}

static uint64_t to_mono(const struct gpu_decoder *d, uint64_t t)
{
	return gpu_clock_to_mono(d->clock, t);
}

static int decode_kernel(struct gpu_decoder *d, const CUpti_ActivityKernel10 *k)
{
	struct gpu_activity_rec r = {
		.kind = GPU_KERNEL,
		.device = k->deviceId,
		.context = k->contextId,
		.stream = k->streamId,
		.start_ns = to_mono(d, k->start),
		.end_ns = to_mono(d, k->end),
		.correlation_id = k->correlationId,
		.grid = { (uint32_t)k->gridX, (uint32_t)k->gridY, (uint32_t)k->gridZ },
		.block = { (uint32_t)k->blockX, (uint32_t)k->blockY, (uint32_t)k->blockZ },
		.name = d->names ? gpu_names_get(d->names, k->name) : k->name,
	};

	ctx_remember(d, k->contextId, k->deviceId);
	d->stats.kernels++;
	gpu_emit_activity(&r);
	return 1;
}

static int decode_memcpy(struct gpu_decoder *d, const CUpti_ActivityMemcpy6 *m)
{
	struct gpu_activity_rec r = {
		.kind = GPU_MEMCPY,
		.device = m->deviceId,
		.context = m->contextId,
		.stream = m->streamId,
		.start_ns = to_mono(d, m->start),
		.end_ns = to_mono(d, m->end),
		.correlation_id = m->correlationId,
		.bytes = m->bytes,
		.copy_kind = gpu_copy_kind_name(m->copyKind),
	};

	ctx_remember(d, m->contextId, m->deviceId);
	d->stats.memcpys++;
	gpu_emit_activity(&r);
	return 1;
}

static int decode_memcpy_p2p(struct gpu_decoder *d, const CUpti_ActivityMemcpyPtoP4 *m)
{
	struct gpu_activity_rec r = {
		.kind = GPU_MEMCPY,
		.device = m->deviceId,
		.context = m->contextId,
		.stream = m->streamId,
		.start_ns = to_mono(d, m->start),
		.end_ns = to_mono(d, m->end),
		.correlation_id = m->correlationId,
		.bytes = m->bytes,
		.copy_kind = "PtoP",
	};

	d->stats.memcpys++;
	gpu_emit_activity(&r);
	return 1;
}

static int decode_memset(struct gpu_decoder *d, const CUpti_ActivityMemset4 *m)
{
	struct gpu_activity_rec r = {
		.kind = GPU_MEMSET,
		.device = m->deviceId,
		.context = m->contextId,
		.stream = m->streamId,
		.start_ns = to_mono(d, m->start),
		.end_ns = to_mono(d, m->end),
		.correlation_id = m->correlationId,
		.bytes = m->bytes,
	};

	ctx_remember(d, m->contextId, m->deviceId);
	d->stats.memsets++;
	gpu_emit_activity(&r);
	return 1;
}

static int decode_sync(struct gpu_decoder *d, const CUpti_ActivitySynchronization2 *s)
{
	struct gpu_activity_rec r = {
		.kind = GPU_SYNC,
		.device = ctx_device(d, s->contextId),
		.context = s->contextId,
		.stream = s->streamId,
		.start_ns = to_mono(d, s->start),
		.end_ns = to_mono(d, s->end),
		.correlation_id = s->correlationId,
		.name = sync_name(s->type),
	};

	d->stats.syncs++;
	gpu_emit_activity(&r);
	return 1;
}

static int decode_api(struct gpu_decoder *d, const CUpti_ActivityAPI *a)
{
	uint32_t slot = a->correlationId & (GPU_CORR_SLOTS - 1);
	uint32_t api = a->kind == CUPTI_ACTIVITY_KIND_DRIVER ? GPU_API_DRIVER : GPU_API_RUNTIME;
	struct gpu_api_rec r = {
		.api = api,
		.tid = a->threadId,
		.start_ns = to_mono(d, a->start),
		.end_ns = to_mono(d, a->end),
		.correlation_id = a->correlationId,
		.name = d->api_name ? d->api_name(api, a->cbid) : NULL,
	};

	if (d->corr[slot].corr == a->correlationId && d->corr[slot].ext) {
		r.external_id = d->corr[slot].ext;
		d->stats.api_with_external++;
	}
	d->stats.api_calls++;
	gpu_emit_api_call(&r);
	return 1;
}

static int decode_external(struct gpu_decoder *d, const CUpti_ActivityExternalCorrelation *e)
{
	uint32_t slot;

	if (e->externalKind != AGPROF_EXTERNAL_KIND)
		return 0;      /* another library's ids: not ours to map */
	slot = e->correlationId & (GPU_CORR_SLOTS - 1);
	d->corr[slot].corr = e->correlationId;
	d->corr[slot].ext = e->externalId;
	d->stats.external_ids++;
	return 0;
}

static int decode_overhead(struct gpu_decoder *d, const CUpti_ActivityOverhead3 *o)
{
	d->stats.overhead_records++;
	if (o->end > o->start)
		d->stats.overhead_ns += o->end - o->start;
	return 0;
}

int gpu_decode_record(struct gpu_decoder *d, const void *record)
{
	const CUpti_Activity *rec = record;

	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return decode_kernel(d, record);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return decode_memcpy(d, record);
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return decode_memcpy_p2p(d, record);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return decode_memset(d, record);
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
		return decode_sync(d, record);
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return decode_api(d, record);
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
		return decode_external(d, record);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return decode_overhead(d, record);
	default:
		d->stats.other++;
		return 0;
	}
}

size_t gpu_api_name_clean(const char *name, char *out, size_t len)
{
	size_t n = strlen(name), keep = n;

	/*
	 * CUPTI names runtime callbacks after the API version that introduced
	 * them: "cudaLaunchKernel_v7000".  The suffix is noise in a report;
	 * "_v2" of the driver's cuMemcpyHtoD_v2 is part of the symbol and stays.
	 */
	for (size_t i = n; i > 2; i--) {
		if (name[i - 1] < '0' || name[i - 1] > '9') {
			if (name[i - 1] == 'v' && name[i - 2] == '_' && n - i >= 4)
				keep = i - 2;
			break;
		}
	}
	if (len == 0)
		return keep;
	if (keep >= len)
		keep = len - 1;
	memcpy(out, name, keep);
	out[keep] = '\0';
	return keep;
}

int gpu_api_is_chatty(const char *name)
{
	/*
	 * Queries and context bookkeeping that frameworks call around every op
	 * (PyTorch asks cudaGetDevice and cudaStreamIsCapturing per op; the
	 * runtime does cuCtxGetCurrent per call; on an H200 with CUDA 13 every
	 * cudaLaunchKernel came with a cuKernelGetName).  Polls of events and
	 * streams do not wait either.  None of these launches, copies or waits,
	 * and each traced call costs a record.  Prefixes.
	 */
	static const char *const chatty[] = {
		"cudaGetDevice", "cudaSetDevice", "cudaDeviceGetAttribute",
		"cudaDeviceGetStreamPriorityRange", "cudaGetLastError", "cudaPeekAtLastError",
		"cudaGetError", "cudaPointerGetAttributes", "cudaStreamIsCapturing",
		"cudaStreamGet", "cudaDriverGetVersion", "cudaRuntimeGetVersion",
		"cudaFuncGetAttributes", "cudaOccupancy", "cudaGetDriverEntryPoint",
		"cudaThreadExchangeStreamCaptureMode", "cudaGetFuncBySymbol",
		"cuCtxGet", "cuCtxSetCurrent", "cuCtxPushCurrent", "cuCtxPopCurrent",
		"cuDeviceGet", "cuDevicePrimaryCtxGetState", "cuDriverGetVersion", "cuGetError",
		"cuGetProcAddress", "cuGetExportTable", "cuPointerGetAttribute", "cuStreamIsCapturing",
		"cuStreamGet", "cuFuncGetAttribute", "cuOccupancy", "cuThreadExchangeStreamCaptureMode",
		"cuModuleGetFunction", "cuKernelGetFunction", "cuLibraryGetKernel",
		"cuKernelGetName", "cuFuncGetName", "cuEventQuery", "cuStreamQuery",
		"cudaEventQuery", "cudaStreamQuery",
	};

	if (!name)
		return 0;
	for (size_t i = 0; i < sizeof(chatty) / sizeof(chatty[0]); i++)
		if (!strncmp(name, chatty[i], strlen(chatty[i])))
			return 1;
	return 0;
}
