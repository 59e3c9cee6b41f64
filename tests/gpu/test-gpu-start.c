/*
 * test-gpu-start.c - the CUPTI part as the collector builds it, started the
 * way the CUDA driver starts it (InitializeInjection), where it cannot work:
 * no CUPTI, a library that is not CUPTI, tracing turned off, no driver.
 * Each case must leave the process running, emit no record, and say why in
 * exactly one status.  (Criterion runs each test in its own process, so the
 * once-only start is fresh in each.)
 */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "emit_capture.h"

int InitializeInjection(void);

static void teardown(void)
{
	capture_reset();
}

TestSuite(start, .fini = teardown);

static void no_records_and_hooks_are_noops(void)
{
	gpu_external_push(7);
	gpu_external_pop();
	gpu_collector_flush();
	cr_assert_eq(cap.nact + cap.napi, 0);
}

Test(start, missing_cupti_library)
{
	setenv("AGPROF_CUPTI_LIB", "/nonexistent/libcupti.so", 1);
	cr_assert_eq(InitializeInjection(), 1, "the driver must never see a failure");
	cr_assert_eq(cap.status_calls, 1);
	cr_assert_eq(cap.status_on, 0);
	cr_assert(strstr(cap.status_detail, "cannot load AGPROF_CUPTI_LIB='/nonexistent/libcupti.so'"),
		  "detail: %s", cap.status_detail);
	no_records_and_hooks_are_noops();
	cr_assert_eq(cap.status_calls, 1, "flush after a failed start adds nothing");
}

Test(start, library_that_is_not_cupti)
{
	setenv("AGPROF_CUPTI_LIB", "libm.so.6", 1);
	InitializeInjection();
	cr_assert_eq(cap.status_on, 0);
	cr_assert(strstr(cap.status_detail, "'libm.so.6' lacks cuptiGetVersion"),
		  "detail: %s", cap.status_detail);
	no_records_and_hooks_are_noops();
}

Test(start, turned_off_by_environment)
{
	setenv("AGPROF_GPU", "0", 1);
	gpu_collector_init();
	InitializeInjection();
	InitializeInjection();
	cr_assert_eq(cap.status_calls, 1);
	cr_assert_str_eq(cap.status_detail, "GPU tracing turned off (AGPROF_GPU=0)");
	no_records_and_hooks_are_noops();
}

Test(start, constructor_does_nothing_without_cuda)
{
	/* No CUDA driver is loaded in this test program: nothing may start yet. */
	gpu_collector_init();
	cr_assert_eq(cap.status_calls, 0);
	gpu_external_push(1);
	gpu_external_pop();
	gpu_collector_flush();
	cr_assert_eq(cap.status_calls, 1);
	cr_assert_eq(cap.status_on, 0);
	cr_assert(strcmp(cap.status_detail, "no CUDA driver (libcuda.so.1 not found)") == 0 ||
		  strcmp(cap.status_detail, "the workload did not use CUDA (libcuda.so.1 never loaded)") == 0,
		  "detail: %s", cap.status_detail);
}

Test(start, real_cupti_where_installed)
{
	/*
	 * With the toolkit's libcupti (found through /usr/local/cuda or
	 * CUDA_HOME) but possibly no driver or GPU: either tracing starts, or
	 * one status says why not.  Never a crash, never a record here.
	 */
	void *cuda = dlopen("libcuda.so.1", RTLD_LAZY);

	InitializeInjection();
	cr_assert_eq(cap.status_calls, 1, "exactly one status");
	if (!cuda && strstr(cap.status_detail, "CUPTI library not found") == NULL)
		cr_assert_str_eq(cap.status_detail, "no CUDA driver (libcuda.so.1 not found)");
	if (cap.status_on)
		cr_assert(strncmp(cap.status_detail, "CUPTI ", 6) == 0, "detail: %s", cap.status_detail);
	else
		cr_assert_neq(cap.status_detail[0], '\0');
	cr_log_info("status: %s %s", cap.status_on ? "on" : "off", cap.status_detail);
	gpu_external_push(1);
	gpu_external_pop();
	gpu_collector_flush();
	cr_assert_eq(cap.nact, 0);
}
