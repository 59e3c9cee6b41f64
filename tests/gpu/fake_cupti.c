/*
 * fake_cupti.c - test fixture: a stand-in libcupti.so with the real entry
 * points and record layouts, so that the collector's CUPTI part
 * (activity.c: loading, subscribing, enabling, buffer callbacks, external
 * correlation, flushing) runs end to end on a machine without a GPU.
 *
 * The test "launches" kernels with fake_launch(): like CUPTI, that writes an
 * external correlation record when an id is pushed on the calling thread,
 * the API record, and the kernel record, into buffers obtained from the
 * client's buffer-request callback, and hands full buffers back through the
 * completion callback.  FAKE_CUPTI_MODE selects a failure:
 *   busy         cuptiSubscribe says another subscriber exists
 *   no_kernels   cuptiActivityEnable(CONCURRENT_KERNEL) fails
 *   realtime     no timestamp callback: stamps on CLOCK_REALTIME, as CUPTI's default
 */
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))

static CUpti_BuffersCallbackRequestFunc on_request;
static CUpti_BuffersCallbackCompleteFunc on_complete;
static CUpti_TimestampCallbackFunc ts_cb;
static int subscribed, enabled[64];
static uint8_t *buf;
static size_t buf_size, buf_used;
static uint32_t next_corr = 1;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static __thread uint64_t ext_stack[16];
static __thread int ext_top;

static const char *mode(void)
{
	const char *m = getenv("FAKE_CUPTI_MODE");
	return m ? m : "";
}

static uint64_t now(void)
{
	struct timespec ts;

	if (ts_cb)
		return ts_cb();
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

EXPORT CUptiResult cuptiGetVersion(uint32_t *v) { *v = 130001; return CUPTI_SUCCESS; }

EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
	*s = r == CUPTI_ERROR_NOT_COMPATIBLE ? "CUPTI_ERROR_NOT_COMPATIBLE" : "CUPTI_ERROR_UNKNOWN";
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *t) { *t = now(); return CUPTI_SUCCESS; }

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc f, void *ud)
{
	(void)f; (void)ud;
	if (strcmp(mode(), "busy") == 0 || subscribed)
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	subscribed = 1;
	*h = (CUpti_SubscriberHandle)&subscribed;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h) { (void)h; subscribed = 0; return CUPTI_SUCCESS; }

EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain d, uint32_t cbid, const char **name)
{
	if (d == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
		*name = "cudaLaunchKernel_v7000";
	else if (d == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020)
		*name = "cudaGetDevice_v3020";
	else if (d == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent)
		*name = "cuCtxGetCurrent";
	else if (d == CUPTI_CB_DOMAIN_DRIVER_API && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)
		*name = "cuLaunchKernel";
	else
		return CUPTI_ERROR_INVALID_PARAMETER;
	return CUPTI_SUCCESS;
}

/* Per-API switches: which callback ids the client turned off, per domain. */
static uint8_t api_off[2][1024];

EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
	if (cbid < 1024)
		api_off[0][cbid] = !enable;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
	if (cbid < 1024)
		api_off[1][cbid] = !enable;
	return CUPTI_SUCCESS;
}

/* For the test: whether the client turned a callback id off (domain 0 runtime, 1 driver). */
EXPORT int fake_api_off(int domain, uint32_t cbid) { return cbid < 1024 && api_off[domain][cbid]; }

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
						  CUpti_BuffersCallbackCompleteFunc done)
{
	on_request = req;
	on_complete = done;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc f)
{
	if (strcmp(mode(), "realtime") == 0)
		return CUPTI_ERROR_NOT_SUPPORTED;
	ts_cb = f;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType t) { (void)t; return CUPTI_SUCCESS; }

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind k)
{
	if (k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL && strcmp(mode(), "no_kernels") == 0)
		return CUPTI_ERROR_NOT_COMPATIBLE;
	if ((unsigned)k < 64)
		enabled[k] = 1;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind k)
{
	if ((unsigned)k < 64)
		enabled[k] = 0;
	return CUPTI_SUCCESS;
}

static size_t record_size(const CUpti_Activity *r)
{
	switch (r->kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_RUNTIME: return sizeof(CUpti_ActivityAPI);
	case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: return sizeof(CUpti_ActivityExternalCorrelation);
	case CUPTI_ACTIVITY_KIND_MEMCPY: return sizeof(CUpti_ActivityMemcpy6);
	default: return 0;
	}
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *b, size_t valid, CUpti_Activity **rec)
{
	size_t off = 0;

	if (*rec) {
		off = (size_t)((uint8_t *)*rec - b) + record_size(*rec);
		off = (off + 7) & ~(size_t)7;
	}
	if (off >= valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)(b + off);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext c, uint32_t s, size_t *n)
{
	(void)c; (void)s;
	*n = 0;
	return CUPTI_SUCCESS;
}

/* Hand the current buffer back; lock held. */
static void complete_locked(void)
{
	if (buf) {
		uint8_t *b = buf;
		size_t size = buf_size, used = buf_used;
		buf = NULL;
		buf_used = 0;
		on_complete(NULL, 0, b, size, used);
	}
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	pthread_mutex_lock(&lock);
	complete_locked();
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind k, uint64_t id)
{
	(void)k;
	if (ext_top >= 16)
		return CUPTI_ERROR_INVALID_PARAMETER;
	ext_stack[ext_top++] = id;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind k, uint64_t *last)
{
	(void)k;
	if (ext_top == 0)
		return CUPTI_ERROR_QUEUE_EMPTY;
	ext_top--;
	if (last)
		*last = ext_stack[ext_top];
	return CUPTI_SUCCESS;
}

/* Append one record; lock held.  Asks the client for buffers as CUPTI does. */
static void put_locked(const void *rec, size_t size)
{
	size_t need = (size + 7) & ~(size_t)7;

	if (!on_request)
		return;           /* no client: CUPTI records nothing */
	if (buf && buf_used + need > buf_size)
		complete_locked();
	if (!buf) {
		size_t max = 0;
		on_request(&buf, &buf_size, &max);
		buf_used = 0;
		if (!buf)
			return;
	}
	memcpy(buf + buf_used, rec, size);
	buf_used += need;
}

/* For the test: the enabled kinds, and one simulated kernel launch. */
EXPORT int fake_enabled(CUpti_ActivityKind k) { return (unsigned)k < 64 && enabled[k]; }

EXPORT uint32_t fake_launch(const char *name, uint64_t *api_start)
{
	CUpti_ActivityAPI a;
	CUpti_ActivityKernel10 k;
	CUpti_ActivityExternalCorrelation e;

	pthread_mutex_lock(&lock);
	uint32_t corr = next_corr++;
	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
	a.start = now();
	a.threadId = 1;
	a.correlationId = corr;
	a.end = now();
	if (ext_top > 0 && enabled[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION]) {
		memset(&e, 0, sizeof(e));
		e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
		e.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;
		e.externalId = ext_stack[ext_top - 1];
		e.correlationId = corr;
		put_locked(&e, sizeof(e));
	}
	put_locked(&a, sizeof(a));
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = now();
	k.end = k.start + 1000;
	k.deviceId = 0;
	k.contextId = 1;
	k.streamId = 7;
	k.gridX = k.gridY = k.gridZ = 1;
	k.blockX = 32; k.blockY = k.blockZ = 1;
	k.correlationId = corr;
	k.name = name;
	put_locked(&k, sizeof(k));
	pthread_mutex_unlock(&lock);
	if (api_start)
		*api_start = a.start;
	return corr;
}

/* For the test: how many external ids the calling thread has pushed. */
EXPORT int fake_ext_depth(void) { return ext_top; }
