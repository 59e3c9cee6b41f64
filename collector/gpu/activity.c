/*
 * activity.c - CUPTI activity tracing: start, buffers, flush, and the entry
 * points of gpu_record.h.
 *
 * How CUPTI gets in: the launcher points CUDA_INJECTION64_PATH at the
 * collector library; the CUDA driver loads it at cuInit and calls
 * InitializeInjection(), which starts tracing before the workload's first
 * CUDA call returns.  When the collector is loaded after the driver (the
 * driver was already there at our constructor) we start at once.  Either
 * way the workload's code is not involved, and any failure leaves the
 * workload running with GPU tracing off and one status line saying why.
 *
 * Threads: CUPTI calls buffer_completed() from its worker thread, and from
 * whichever thread calls cuptiActivityFlushAll(); decode_lock serializes
 * decoding (the decoder keeps cross-record state).  The hot path is
 * gpu_dispatch_enter/leave (gpu_record.h), inline around every TensorFlow
 * dispatch: one relaxed load of gpu_tracing_on while tracing is off.
 */
#include "cupti_loader.h"
#include "gpu_internal.h"

#include <cupti.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BUFFER_SIZE (4u << 20)       /* as Kineto: few callbacks, little waste */
#define BUFFER_ALIGN 8
#define SPARE_BUFFERS 8

static struct cupti_api cupti;
static CUpti_SubscriberHandle subscriber;
int gpu_tracing_on;                  /* gpu_record.h; read with relaxed atomics */
static int start_attempted;
static pthread_once_t start_once = PTHREAD_ONCE_INIT;

static pthread_mutex_t decode_lock = PTHREAD_MUTEX_INITIALIZER;
static struct gpu_clock clock_map;
static struct gpu_names kernel_names;
static struct gpu_decoder *decoder;
static char api_names_rt[1024][64], api_names_drv[1024][64];
static char api_name_tmp[64];
static char api_note[64];        /* what the API filter did, for the final status */

static pthread_mutex_t spare_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *spare[SPARE_BUFFERS];
static int nspare;

static __thread int ext_depth __attribute__((tls_model("initial-exec")));

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CUPTI's timestamp source once registered: CUPTI then stamps on our clock. */
static uint64_t CUPTIAPI cupti_timestamp(void)
{
	return mono_ns();
}

static int cupti_clock_asked(void)
{
	const char *v = getenv("AGPROF_GPU_CLOCK");

	return v && !strcmp(v, "cupti");
}

static void calibrate(void)
{
	struct gpu_clock_sample s[8];
	uint64_t at;
	size_t n = 0;

	for (size_t i = 0; i < 8; i++) {
		s[n].mono_before = mono_ns();
		if (cupti.GetTimestamp(&s[n].cupti) != CUPTI_SUCCESS)
			continue;
		s[n].mono_after = mono_ns();
		n++;
	}
	if (n == 0)
		return;
	int64_t off = gpu_clock_offset(s, n, &at);
	gpu_clock_add_point(&clock_map, at, off);
}

static const char *api_name(uint32_t api, uint32_t cbid)
{
	CUpti_CallbackDomain dom = api == GPU_API_DRIVER ? CUPTI_CB_DOMAIN_DRIVER_API
							 : CUPTI_CB_DOMAIN_RUNTIME_API;
	char (*cache)[64] = api == GPU_API_DRIVER ? api_names_drv : api_names_rt;
	char *out = cbid < 1024 ? cache[cbid] : api_name_tmp;
	const char *name = NULL;

	/*
	 * Called under decode_lock, so the caches need no lock of their own;
	 * api_name_tmp (ids beyond the cache) is rewritten by the next call,
	 * after gpu_emit_api_call() has copied it.
	 */
	if (out != api_name_tmp && out[0])
		return out;
	if (cupti.GetCallbackName(dom, cbid, &name) != CUPTI_SUCCESS || !name)
		snprintf(out, 64, "%s#%u", api == GPU_API_DRIVER ? "driver" : "runtime", cbid);
	else
		gpu_api_name_clean(name, out, 64);
	return out;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint8_t *b = NULL;

	pthread_mutex_lock(&spare_lock);
	if (nspare > 0)
		b = spare[--nspare];
	pthread_mutex_unlock(&spare_lock);
	if (!b && posix_memalign((void **)&b, BUFFER_ALIGN, BUFFER_SIZE) != 0)
		b = NULL;     /* CUPTI drops records and counts them */
	*buffer = b;
	*size = b ? BUFFER_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
				      size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;

	(void)size;
	pthread_mutex_lock(&decode_lock);
	if (decoder) {
		calibrate();
		while (valid > 0 && cupti.ActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
			gpu_decode_record(decoder, rec);
		if (cupti.ActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
			decoder->stats.dropped += dropped;
	}
	pthread_mutex_unlock(&decode_lock);

	pthread_mutex_lock(&spare_lock);
	if (nspare < SPARE_BUFFERS) {
		spare[nspare++] = buffer;
		buffer = NULL;
	}
	pthread_mutex_unlock(&spare_lock);
	free(buffer);
}

/* Subscribing with no domain enabled costs nothing and tells us whether another profiler holds CUPTI. */
static void CUPTIAPI no_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
				 const void *data)
{
	(void)ud; (void)dom; (void)cbid; (void)data;
}

static int env_off(const char *name)
{
	const char *v = getenv(name);

	return v && (strcmp(v, "0") == 0 || strcmp(v, "off") == 0 || strcmp(v, "no") == 0);
}

static void child_after_fork(void)
{
	/* CUDA does not survive fork; the child's CUPTI state is the parent's ghost. */
	if (__atomic_load_n(&gpu_tracing_on, __ATOMIC_RELAXED)) {
		__atomic_store_n(&gpu_tracing_on, 0, __ATOMIC_RELAXED);
		ext_depth = 0;
		gpu_emit_status(0, "process forked after CUDA was initialized: GPU not traced in the child");
	}
}

/* Whether a file named libcuda.so.1 is where the dynamic linker would look. */
static int driver_installed(void)
{
	static const char *const dirs[] = {
		"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib/aarch64-linux-gnu",
		"/usr/local/nvidia/lib64", "/usr/lib/wsl/lib", "/usr/lib",
	};
	char path[PATH_MAX];
	const char *llp = getenv("LD_LIBRARY_PATH");

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/libcuda.so.1", dirs[i]);
		if (access(path, R_OK) == 0)
			return 1;
	}
	while (llp && *llp) {
		size_t n = strcspn(llp, ":");
		if (n > 0 && n < sizeof(path) - 16) {
			snprintf(path, sizeof(path), "%.*s/libcuda.so.1", (int)n, llp);
			if (access(path, R_OK) == 0)
				return 1;
		}
		llp += n + (llp[n] == ':');
	}
	return 0;
}

/*
 * Stop recording chatty query calls (gpu_api_is_chatty()), one callback id
 * at a time; needs CUPTI 12.x's per-API switches.  Must follow enabling the
 * RUNTIME and DRIVER kinds, which reset them.  Returns how many were turned off.
 */
static int filter_chatty_apis(int driver_api)
{
	struct { CUpti_CallbackDomain dom; uint32_t size; __typeof__(cupti.ActivityEnableRuntimeApi) off; } d[] = {
		{ CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE, cupti.ActivityEnableRuntimeApi },
		{ CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE,
		  driver_api ? cupti.ActivityEnableDriverApi : NULL },
	};
	char clean[64];
	int n = 0;

	if (env_off("AGPROF_GPU_API_FILTER"))
		return 0;
	for (size_t k = 0; k < 2; k++) {
		if (!d[k].off)
			continue;
		for (uint32_t cbid = 1; cbid < d[k].size; cbid++) {
			const char *name = NULL;

			if (cupti.GetCallbackName(d[k].dom, cbid, &name) != CUPTI_SUCCESS || !name)
				continue;
			gpu_api_name_clean(name, clean, sizeof(clean));
			if (gpu_api_is_chatty(clean) && d[k].off(cbid, 0) == CUPTI_SUCCESS)
				n++;
		}
	}
	return n;
}

struct kind_req {
	CUpti_ActivityKind kind;
	const char *name;
	int required;
};

static const struct kind_req kinds[] = {
	{ CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "CONCURRENT_KERNEL", 1 },
	{ CUPTI_ACTIVITY_KIND_RUNTIME, "RUNTIME", 1 },
	{ CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, "EXTERNAL_CORRELATION", 0 },
	{ CUPTI_ACTIVITY_KIND_DRIVER, "DRIVER", 0 },
	{ CUPTI_ACTIVITY_KIND_MEMCPY, "MEMCPY", 0 },
	{ CUPTI_ACTIVITY_KIND_MEMCPY2, "MEMCPY2", 0 },
	{ CUPTI_ACTIVITY_KIND_MEMSET, "MEMSET", 0 },
	{ CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "SYNCHRONIZATION", 0 },
	{ CUPTI_ACTIVITY_KIND_OVERHEAD, "OVERHEAD", 0 },
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

/* Load CUPTI and subscribe; 0, or -1 after emitting why not. */
static int subscribe(void)
{
	char why[PATH_MAX + 128];
	CUptiResult rc;
	void *cuda;

	if (cupti_load(&cupti, why, sizeof(why)) < 0) {
		gpu_emit_status(0, why);
		return -1;
	}
	rc = cupti.Subscribe(&subscriber, no_callback, NULL);
	if (rc == CUPTI_SUCCESS)
		return 0;
	if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
		gpu_emit_status(0, "CUPTI is already in use by another profiler in this process");
		return -1;
	}
	/* CUPTI's own word for a missing driver is CUPTI_ERROR_UNKNOWN. */
	cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (cuda)
		dlclose(cuda);
	if (!cuda && !driver_installed())
		snprintf(why, sizeof(why), "no CUDA driver (libcuda.so.1 not found)");
	else
		snprintf(why, sizeof(why), "cuptiSubscribe failed: %s", cupti_error(&cupti, rc));
	gpu_emit_status(0, why);
	return -1;
}

/* The decoder, our clock and the buffer callbacks; 0, or -1 after emitting why not. */
static int setup_decoding(void)
{
	char why[256];
	CUptiResult rc;

	decoder = calloc(1, sizeof(*decoder));
	if (!decoder) {
		gpu_emit_status(0, "out of memory for the CUPTI decoder");
		return -1;
	}
	if (cupti.SetThreadIdType)
		cupti.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	gpu_clock_init(&clock_map);
	/*
	 * Must precede enabling any kind, or early records keep CUPTI's clock.
	 * AGPROF_GPU_CLOCK=cupti leaves CUPTI on its own clock, which
	 * calibrate() maps to ours (bench/gpu/overhead-split.sh compares both).
	 */
	if (cupti.ActivityRegisterTimestampCallback && !cupti_clock_asked())
		cupti.ActivityRegisterTimestampCallback(cupti_timestamp);
	calibrate();
	gpu_names_init(&kernel_names, gpu_demangler());
	gpu_decoder_init(decoder, &clock_map, &kernel_names, api_name);
	rc = cupti.ActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (rc != CUPTI_SUCCESS) {
		snprintf(why, sizeof(why), "cuptiActivityRegisterCallbacks failed: %s", cupti_error(&cupti, rc));
		gpu_emit_status(0, why);
		return -1;
	}
	return 0;
}

/*
 * Enable the activity kinds; the optional ones that fail are listed in
 * missing.  0, or -1 after emitting why a required one failed.
 */
static int enable_kinds(int driver_api, char *missing, size_t size)
{
	char why[256];

	for (size_t i = 0; i < NKINDS; i++) {
		CUptiResult rc;
		size_t n;

		if (kinds[i].kind == CUPTI_ACTIVITY_KIND_DRIVER && !driver_api)
			continue;
		rc = cupti.ActivityEnable(kinds[i].kind);
		if (rc == CUPTI_SUCCESS)
			continue;
		if (kinds[i].required) {
			snprintf(why, sizeof(why), "cannot enable CUPTI activity %s: %s", kinds[i].name,
				 cupti_error(&cupti, rc));
			gpu_emit_status(0, why);
			return -1;
		}
		n = strlen(missing);
		snprintf(missing + n, size - n, "%s%s", n ? "," : "", kinds[i].name);
	}
	return 0;
}

/* Tracing is on: flush at fork and exit, say so in the status. */
static void started(int driver_api, const char *missing)
{
	char why[PATH_MAX + 512];
	int filtered = filter_chatty_apis(driver_api);

	pthread_atfork(NULL, NULL, child_after_fork);
	/*
	 * Exit handlers run last-registered first: this one runs before the
	 * ones CUDA and CUPTI registered while initializing, so the final
	 * flush sees CUPTI and the contexts still alive.  The collector's own
	 * exit path calls gpu_collector_flush() again; that call does nothing.
	 */
	atexit(gpu_collector_flush);
	__atomic_store_n(&gpu_tracing_on, 1, __ATOMIC_RELEASE);
	snprintf(why, sizeof(why), "CUPTI %u from '%s'%s%s%s%s", cupti.version, cupti.path,
		 missing[0] ? ", not available: " : "", missing,
		 driver_api ? "" : ", driver API not traced (AGPROF_GPU_DRIVER_API=0)",
		 cupti_clock_asked() ? ", CUPTI's own clock (AGPROF_GPU_CLOCK=cupti)" : "");
	snprintf(api_note, sizeof(api_note), "%d query APIs not traced", filtered);
	gpu_emit_status(1, why);
}

static void start(void)
{
	char missing[256] = "";
	int driver_api = !env_off("AGPROF_GPU_DRIVER_API");

	start_attempted = 1;
	if (subscribe())
		return;
	if (setup_decoding() == 0) {
		if (enable_kinds(driver_api, missing, sizeof(missing)) == 0) {
			started(driver_api, missing);
			return;
		}
		for (size_t i = 0; i < NKINDS; i++)
			cupti.ActivityDisable(kinds[i].kind);
	}
	cupti.Unsubscribe(subscriber);
	pthread_mutex_lock(&decode_lock);
	free(decoder);
	decoder = NULL;
	pthread_mutex_unlock(&decode_lock);
}

static void start_once_fn(void)
{
	if (env_off("AGPROF_GPU")) {
		start_attempted = 1;
		gpu_emit_status(0, "GPU tracing turned off (AGPROF_GPU=0)");
		return;
	}
	start();
}

/*
 * Called by the CUDA driver inside cuInit when CUDA_INJECTION64_PATH names
 * this library.  The return value is ignored by current drivers; 1 means
 * success to those that read it.  Never fails the workload.
 */
__attribute__((visibility("default"))) int InitializeInjection(void)
{
	pthread_once(&start_once, start_once_fn);
	return 1;
}

void gpu_collector_init(void)
{
	void *cuda;

	if (env_off("AGPROF_GPU"))
		return;        /* the status is set when flushing */
	/*
	 * Loaded after the driver (dlopen'ed by a workload that already uses
	 * CUDA, or a driver that does not honour the injection variable):
	 * start now.  Otherwise wait for InitializeInjection(); a workload
	 * that never calls cuInit never loads CUPTI.
	 */
	cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (cuda) {
		dlclose(cuda);
		pthread_once(&start_once, start_once_fn);
	}
}

void gpu_external_push(uint64_t external_id)
{
	if (!__atomic_load_n(&gpu_tracing_on, __ATOMIC_RELAXED))
		return;
	if (cupti.ActivityPushExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0,
						    external_id) == CUPTI_SUCCESS)
		ext_depth++;
}

void gpu_external_pop(void)
{
	/* Only pop what this thread pushed: tracing may have started in between. */
	if (ext_depth == 0)
		return;
	ext_depth--;
	if (__atomic_load_n(&gpu_tracing_on, __ATOMIC_RELAXED))
		cupti.ActivityPopExternalCorrelationId(CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0, NULL);
}

void gpu_collector_flush(void)
{
	static int flushed;
	char detail[PATH_MAX + 256];
	struct gpu_decode_stats st;

	if (__atomic_exchange_n(&flushed, 1, __ATOMIC_ACQ_REL))
		return;

	if (!start_attempted) {
		void *cuda;

		if (env_off("AGPROF_GPU")) {
			gpu_emit_status(0, "GPU tracing turned off (AGPROF_GPU=0)");
			return;
		}
		cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
		if (cuda) {
			const char *inj = getenv("CUDA_INJECTION64_PATH");
			char why[PATH_MAX + 128];

			dlclose(cuda);
			if (inj && *inj && !strstr(inj, "agprof"))
				snprintf(why, sizeof(why), "CUDA_INJECTION64_PATH names another tool ('%s'), "
					 "so the CUDA driver did not load agprof's CUPTI part", inj);
			else
				snprintf(why, sizeof(why), "the CUDA driver was loaded but did not call "
					 "InitializeInjection (CUDA_INJECTION64_PATH not set to the collector)");
			gpu_emit_status(0, why);
		} else if (driver_installed()) {
			gpu_emit_status(0, "the workload did not use CUDA (libcuda.so.1 never loaded)");
		} else {
			gpu_emit_status(0, "no CUDA driver (libcuda.so.1 not found)");
		}
		return;
	}
	if (!__atomic_load_n(&gpu_tracing_on, __ATOMIC_ACQUIRE))
		return;        /* start() already said why */
	cupti.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	/* No CUPTI call from the hooks after this: CUPTI may be torn down next. */
	__atomic_store_n(&gpu_tracing_on, 0, __ATOMIC_RELEASE);

	pthread_mutex_lock(&decode_lock);
	st = decoder->stats;
	pthread_mutex_unlock(&decode_lock);
	snprintf(detail, sizeof(detail),
		 "CUPTI %u from '%s': %llu kernels, %llu copies, %llu memsets, %llu syncs, "
		 "%llu API calls (%llu with an op; %s), CUPTI overhead %.3f ms, %llu records dropped",
		 cupti.version, cupti.path, (unsigned long long)st.kernels,
		 (unsigned long long)st.memcpys, (unsigned long long)st.memsets,
		 (unsigned long long)st.syncs, (unsigned long long)st.api_calls,
		 (unsigned long long)st.api_with_external, api_note, st.overhead_ns / 1e6,
		 (unsigned long long)st.dropped);
	gpu_emit_status(1, detail);
}
