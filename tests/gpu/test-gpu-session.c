/*
 * test-gpu-session.c - the collector's CUPTI part (activity.c and the rest,
 * as built into the collector) driven end to end through a stand-in
 * libcupti (fake_cupti.c, path in $FAKE_CUPTI): start by injection, enabled
 * kinds, launches inside and outside host ops, buffers handed back, flush,
 * and the failure statuses.  Each test runs in its own process.
 */
#include <criterion/criterion.h>
#include <cupti.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "emit_capture.h"

int InitializeInjection(void);

static uint32_t (*launch)(const char *name, uint64_t *api_start);
static int (*enabled)(CUpti_ActivityKind k);
static int (*ext_depth)(void);

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void start_with(const char *mode)
{
	const char *fake = getenv("FAKE_CUPTI");
	void *h;

	cr_assert_not_null(fake, "FAKE_CUPTI not set (run through meson test)");
	if (mode)
		setenv("FAKE_CUPTI_MODE", mode, 1);
	setenv("AGPROF_CUPTI_LIB", fake, 1);
	/* A CUDA program has the C++ runtime loaded; kernel names get demangled. */
	cr_assert_not_null(dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL));
	cr_assert_eq(InitializeInjection(), 1);
	h = dlopen(fake, RTLD_NOW | RTLD_NOLOAD);
	cr_assert_not_null(h, "the collector did not load '%s'", fake);
	launch = (uint32_t (*)(const char *, uint64_t *))dlsym(h, "fake_launch");
	enabled = (int (*)(CUpti_ActivityKind))dlsym(h, "fake_enabled");
	ext_depth = (int (*)(void))dlsym(h, "fake_ext_depth");
	cr_assert(launch && enabled && ext_depth);
}

static const struct gpu_api_rec *api_by_corr(uint32_t corr)
{
	for (size_t i = 0; i < cap.napi; i++)
		if (cap.api[i].correlation_id == corr)
			return &cap.api[i];
	return NULL;
}

static void teardown(void)
{
	capture_reset();
}

TestSuite(session, .fini = teardown);

Test(session, starts_and_enables_the_kinds)
{
	static const CUpti_ActivityKind want[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION,
		CUPTI_ACTIVITY_KIND_RUNTIME, CUPTI_ACTIVITY_KIND_DRIVER,
		CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION, CUPTI_ACTIVITY_KIND_OVERHEAD,
	};

	start_with(NULL);
	cr_assert_eq(cap.status_calls, 1);
	cr_assert_eq(cap.status_on, 1, "detail: %s", cap.status_detail);
	cr_assert(strstr(cap.status_detail, "CUPTI 130001 from '"), "detail: %s", cap.status_detail);
	cr_assert(strstr(cap.status_detail, "fake_cupti"), "detail: %s", cap.status_detail);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_assert(enabled(want[i]), "kind %d not enabled", (int)want[i]);
}

Test(session, launches_are_correlated_to_calls_and_ops)
{
	uint64_t before, after, api_start;
	uint32_t corr[5];

	start_with(NULL);
	gpu_external_push(11);
	before = mono();
	corr[0] = launch("_Z6kernelv", &api_start);
	after = mono();
	corr[1] = launch("_Z6kernelv", NULL);
	corr[2] = launch("_Z6kernelv", NULL);
	gpu_external_pop();
	corr[3] = launch("_Z5otherPfi", NULL);
	gpu_external_push(12);
	gpu_external_push(13);
	corr[4] = launch("_Z6kernelv", NULL);
	gpu_external_pop();
	gpu_external_pop();
	cr_assert_eq(ext_depth(), 0, "pushes and pops balance");
	cr_assert_eq(cap.nact, 0, "nothing before CUPTI hands a buffer back");

	gpu_collector_flush();
	cr_assert_eq(cap.nact, 5);
	cr_assert_eq(cap.napi, 5);
	static const uint64_t want_ext[] = { 11, 11, 11, 0, 13 };
	for (int i = 0; i < 5; i++) {
		const struct gpu_api_rec *a = api_by_corr(corr[i]);
		cr_assert_not_null(a);
		cr_assert_eq(a->external_id, want_ext[i], "launch %d: external id %llu", i,
			     (unsigned long long)a->external_id);
		cr_assert_str_eq(a->name, "cudaLaunchKernel");
		cr_assert_eq(a->api, GPU_API_RUNTIME);
	}
	cr_assert_eq(cap.act[0].correlation_id, corr[0]);
	cr_assert_str_eq(cap.act[0].name, "kernel()");
	cr_assert_str_eq(cap.act[3].name, "other(float*, int)");
	cr_assert_eq(cap.act[0].stream, 7);
	cr_assert_eq(cap.act[0].block[0], 32);
	/* The timestamp callback puts CUPTI on CLOCK_MONOTONIC. */
	cr_assert(cap.act[0].start_ns >= before && cap.act[0].start_ns <= after,
		  "kernel at %llu outside [%llu, %llu]", (unsigned long long)cap.act[0].start_ns,
		  (unsigned long long)before, (unsigned long long)after);
	cr_assert_eq(cap.act[0].end_ns - cap.act[0].start_ns, 1000);
	cr_assert(strstr(cap.status_detail, "5 kernels, 0 copies"), "detail: %s", cap.status_detail);
	cr_assert(strstr(cap.status_detail, "5 API calls (4 with an op; 2 query APIs not traced)"),
		  "detail: %s", cap.status_detail);
	cr_assert(strstr(cap.status_detail, "0 records dropped"), "detail: %s", cap.status_detail);

	/* The collector's exit path flushes again after the atexit flush: nothing more. */
	int calls = cap.status_calls;
	gpu_collector_flush();
	cr_assert_eq(cap.status_calls, calls);
	gpu_external_push(99);
	cr_assert_eq(ext_depth(), 0, "no CUPTI call after the final flush");
	gpu_external_pop();
}

Test(session, query_apis_are_not_traced)
{
	int (*off)(int, uint32_t);

	start_with(NULL);
	off = (int (*)(int, uint32_t))dlsym(dlopen(getenv("FAKE_CUPTI"), RTLD_NOW | RTLD_NOLOAD), "fake_api_off");
	cr_assert_not_null(off);
	cr_assert(off(0, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
	cr_assert(off(1, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent));
	cr_assert_not(off(0, CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000));
	cr_assert_not(off(1, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel));
}

Test(session, query_api_filter_can_be_turned_off)
{
	int (*off)(int, uint32_t);

	setenv("AGPROF_GPU_API_FILTER", "0", 1);
	start_with(NULL);
	off = (int (*)(int, uint32_t))dlsym(dlopen(getenv("FAKE_CUPTI"), RTLD_NOW | RTLD_NOLOAD), "fake_api_off");
	cr_assert_not(off(0, CUPTI_RUNTIME_TRACE_CBID_cudaGetDevice_v3020));
	cr_assert_not(off(1, CUPTI_DRIVER_TRACE_CBID_cuCtxGetCurrent));
}

Test(session, many_launches_span_many_buffers)
{
	enum { N = 100000 };

	start_with(NULL);
	for (uint32_t i = 0; i < N; i++) {
		gpu_external_push(1 + i / 100);
		launch("_Z6kernelv", NULL);
		gpu_external_pop();
	}
	gpu_collector_flush();
	cr_assert_eq(cap.nact, N);
	cr_assert_eq(cap.napi, N);
	/* Correlation ids are dense from 1: index the API records by them. */
	size_t bad_api = 0, bad_kernel = 0;
	for (size_t i = 0; i < cap.napi; i++)
		bad_api += cap.api[i].correlation_id != i + 1;
	cr_assert_eq(bad_api, 0);
	for (size_t i = 0; i < cap.nact; i++) {
		uint32_t c = cap.act[i].correlation_id;
		bad_kernel += c < 1 || c > N || cap.api[c - 1].external_id != 1 + (c - 1) / 100;
	}
	cr_assert_eq(bad_kernel, 0, "%zu kernels not tied to their call and op", bad_kernel);
}

Test(session, realtime_clock_is_converted)
{
	uint64_t before, after;

	start_with("realtime");
	cr_assert_eq(cap.status_on, 1);
	before = mono();
	launch("k", NULL);
	after = mono();
	gpu_collector_flush();
	cr_assert_eq(cap.nact, 1);
	/* Calibration error is the width of a clock_gettime pair: allow 1 ms. */
	cr_assert(cap.act[0].start_ns + 1000000 >= before && cap.act[0].start_ns <= after + 1000000,
		  "kernel at %llu, launch in [%llu, %llu]", (unsigned long long)cap.act[0].start_ns,
		  (unsigned long long)before, (unsigned long long)after);
}

Test(session, cupti_taken_by_another_profiler)
{
	start_with("busy");
	cr_assert_eq(cap.status_calls, 1);
	cr_assert_eq(cap.status_on, 0);
	cr_assert_str_eq(cap.status_detail, "CUPTI is already in use by another profiler in this process");
	gpu_external_push(1);
	cr_assert_eq(ext_depth(), 0, "nothing pushed while off");
	gpu_external_pop();
	launch("k", NULL);
	gpu_collector_flush();
	cr_assert_eq(cap.nact + cap.napi, 0);
	cr_assert_eq(cap.status_calls, 1);
}

Test(session, kernel_tracing_refused)
{
	start_with("no_kernels");
	cr_assert_eq(cap.status_on, 0);
	cr_assert_str_eq(cap.status_detail,
			 "cannot enable CUPTI activity CONCURRENT_KERNEL: CUPTI_ERROR_NOT_COMPATIBLE");
	cr_assert_not(enabled(CUPTI_ACTIVITY_KIND_RUNTIME), "kinds enabled before the failure are undone");
	gpu_external_push(1);
	cr_assert_eq(ext_depth(), 0);
}

Test(session, forked_child_stops_tracing)
{
	int st;

	start_with(NULL);
	capture_reset();
	pid_t pid = fork();
	cr_assert_neq(pid, -1);
	if (pid == 0) {
		gpu_external_push(5);
		int ok = ext_depth() == 0 && cap.status_calls == 1 && cap.status_on == 0 &&
			 strstr(cap.status_detail, "forked");
		_exit(ok ? 0 : 1);
	}
	cr_assert_eq(waitpid(pid, &st, 0), pid);
	cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child kept tracing or said nothing");
	/* The parent still traces. */
	gpu_external_push(5);
	cr_assert_eq(ext_depth(), 1);
	gpu_external_pop();
}
