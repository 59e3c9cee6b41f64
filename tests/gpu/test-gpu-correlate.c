/*
 * test-gpu-correlate.c - tying kernels to the API call that launched them
 * and API calls to the host op that was running (external correlation), as
 * CUPTI orders the records: the external correlation record first, then the
 * API record, the device records later and in other buffers.
 */
#include <criterion/criterion.h>
#include <cupti.h>
#include <stdlib.h>
#include <string.h>

#include "emit_capture.h"
#include "gpu_internal.h"

static struct gpu_clock clk;
static struct gpu_decoder *dec;

static void setup(void)
{
	gpu_clock_init(&clk);
	dec = calloc(1, sizeof(*dec));
	cr_assert_not_null(dec);
	gpu_decoder_init(dec, &clk, NULL, NULL);
}

static void teardown(void)
{
	free(dec);
	capture_reset();
}

TestSuite(correlate, .init = setup, .fini = teardown);

static void feed_external(uint32_t corr, uint64_t ext, CUpti_ExternalCorrelationKind kind)
{
	CUpti_ActivityExternalCorrelation e;

	memset(&e, 0, sizeof(e));
	e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
	e.externalKind = kind;
	e.externalId = ext;
	e.correlationId = corr;
	cr_assert_eq(gpu_decode_record(dec, &e), 0, "external ids only update state");
}

static void feed_api(uint32_t corr, uint64_t start, uint64_t end)
{
	CUpti_ActivityAPI a;

	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
	a.start = start;
	a.end = end;
	a.threadId = 100;
	a.correlationId = corr;
	gpu_decode_record(dec, &a);
}

static void feed_kernel(uint32_t corr, uint64_t start, uint64_t end)
{
	CUpti_ActivityKernel10 k;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.correlationId = corr;
	k.start = start;
	k.end = end;
	k.name = "k";
	gpu_decode_record(dec, &k);
}

static const struct gpu_api_rec *api_by_corr(uint32_t corr)
{
	for (size_t i = 0; i < cap.napi; i++)
		if (cap.api[i].correlation_id == corr)
			return &cap.api[i];
	return NULL;
}

Test(correlate, external_id_reaches_its_api_call)
{
	feed_external(10, 5001, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
	feed_api(10, 100, 120);
	feed_api(11, 130, 150);         /* launched outside any op */
	cr_assert_eq(api_by_corr(10)->external_id, 5001);
	cr_assert_eq(api_by_corr(11)->external_id, 0);
	cr_assert_eq(dec->stats.external_ids, 1);
	cr_assert_eq(dec->stats.api_with_external, 1);
}

Test(correlate, kernels_and_api_calls_share_correlation_ids)
{
	/* 100 launches inside 10 ops, kernels delivered in a later buffer. */
	for (uint32_t i = 0; i < 100; i++) {
		feed_external(1000 + i, 1 + i / 10, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
		feed_api(1000 + i, 10 * i, 10 * i + 5);
	}
	for (uint32_t i = 0; i < 100; i++)
		feed_kernel(1000 + i, 10 * i + 8, 10 * i + 9);
	cr_assert_eq(cap.nact, 100);
	cr_assert_eq(cap.napi, 100);
	for (size_t i = 0; i < cap.nact; i++) {
		const struct gpu_api_rec *a = api_by_corr(cap.act[i].correlation_id);
		cr_assert_not_null(a, "kernel %zu has no launching call", i);
		cr_assert_eq(a->external_id, 1 + (a->correlation_id - 1000) / 10);
		cr_assert_geq(cap.act[i].start_ns, a->start_ns, "a kernel starts after its launch");
	}
}

Test(correlate, other_libraries_external_kinds_are_ignored)
{
	/* Kineto-style ids of another kind must not be taken for agprof's. */
	feed_external(20, 777, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM1);
	feed_api(20, 1, 2);
	cr_assert_eq(api_by_corr(20)->external_id, 0);
}

Test(correlate, stale_slot_does_not_leak_into_a_later_id)
{
	/* Same slot, different correlation id: the old external id must not apply. */
	feed_external(5, 99, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
	feed_api(5 + GPU_CORR_SLOTS, 1, 2);
	cr_assert_eq(api_by_corr(5 + GPU_CORR_SLOTS)->external_id, 0);
}

Test(correlate, state_survives_buffer_boundaries)
{
	/* External record at the end of one buffer, API record at the start of the next. */
	feed_external(300, 42, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
	for (uint32_t i = 0; i < 1000; i++)
		feed_kernel(i, 1, 2);
	feed_api(300, 3, 4);
	cr_assert_eq(api_by_corr(300)->external_id, 42);
}

Test(correlate, the_latest_external_record_wins)
{
	/*
	 * CUPTI sends one record per kind with the top of the thread's stack
	 * (the innermost op); should two arrive for one call, the later one,
	 * written closer to the call, is taken.
	 */
	feed_external(400, 1, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
	feed_external(400, 2, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0);
	feed_api(400, 1, 2);
	cr_assert_eq(api_by_corr(400)->external_id, 2);
}
