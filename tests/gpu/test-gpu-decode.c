/*
 * test-gpu-decode.c - CUPTI activity records, laid out with the header's own
 * structs, through the decoder.
 */
#include <criterion/criterion.h>
#include <cupti.h>
#include <stdlib.h>
#include <string.h>

#include "emit_capture.h"
#include "gpu_internal.h"

static struct gpu_clock clk;
static struct gpu_names names;
static struct gpu_decoder *dec;

static const char *fake_api_name(uint32_t api, uint32_t cbid)
{
	if (api == GPU_API_RUNTIME && cbid == CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000)
		return "cudaLaunchKernel";
	if (api == GPU_API_DRIVER && cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel)
		return "cuLaunchKernel";
	return "other";
}

static void setup(void)
{
	gpu_clock_init(&clk);
	gpu_names_init(&names, NULL);
	dec = calloc(1, sizeof(*dec));
	cr_assert_not_null(dec);
	gpu_decoder_init(dec, &clk, &names, fake_api_name);
}

static void teardown(void)
{
	free(dec);
	gpu_names_release(&names);
	capture_reset();
}

TestSuite(decode, .init = setup, .fini = teardown);

static CUpti_ActivityKernel10 kernel(uint32_t corr, uint64_t start, uint64_t end, const char *name)
{
	CUpti_ActivityKernel10 k;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = start;
	k.end = end;
	k.deviceId = 1;
	k.contextId = 7;
	k.streamId = 13;
	k.gridX = 64; k.gridY = 2; k.gridZ = 1;
	k.blockX = 256; k.blockY = 1; k.blockZ = 1;
	k.correlationId = corr;
	k.name = name;
	return k;
}

Test(decode, kernel_fields)
{
	CUpti_ActivityKernel10 k = kernel(42, 1000, 3500, "_Z10add_kernelPfi");

	cr_assert_eq(gpu_decode_record(dec, &k), 1);
	cr_assert_eq(cap.nact, 1);
	const struct gpu_activity_rec *r = &cap.act[0];
	cr_assert_eq(r->kind, GPU_KERNEL);
	cr_assert_eq(r->device, 1);
	cr_assert_eq(r->context, 7);
	cr_assert_eq(r->stream, 13);
	cr_assert_eq(r->start_ns, 1000);
	cr_assert_eq(r->end_ns, 3500);
	cr_assert_eq(r->correlation_id, 42);
	cr_assert_eq(r->grid[0], 64);
	cr_assert_eq(r->grid[1], 2);
	cr_assert_eq(r->grid[2], 1);
	cr_assert_eq(r->block[0], 256);
	cr_assert_eq(r->block[2], 1);
	/* No demangler given: the name is kept as CUPTI wrote it. */
	cr_assert_str_eq(r->name, "_Z10add_kernelPfi");
	cr_assert_null(r->copy_kind);
	cr_assert_eq(dec->stats.kernels, 1);
}

Test(decode, kernel_times_go_through_the_clock)
{
	/* CUPTI 5 s ahead of CLOCK_MONOTONIC. */
	gpu_clock_add_point(&clk, 10000000000ull, -5000000000ll);
	CUpti_ActivityKernel10 k = kernel(1, 10000001000ull, 10000002000ull, "k");

	gpu_decode_record(dec, &k);
	cr_assert_eq(cap.act[0].start_ns, 5000001000ull);
	cr_assert_eq(cap.act[0].end_ns, 5000002000ull);
}

Test(decode, legacy_kernel_kind_is_a_kernel)
{
	CUpti_ActivityKernel10 k = kernel(5, 10, 20, "k");

	k.kind = CUPTI_ACTIVITY_KIND_KERNEL;
	cr_assert_eq(gpu_decode_record(dec, &k), 1);
	cr_assert_eq(cap.act[0].kind, GPU_KERNEL);
}

Test(decode, memcpy_fields)
{
	CUpti_ActivityMemcpy6 m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
	m.flags = 0;
	m.bytes = 1 << 20;
	m.start = 500;
	m.end = 900;
	m.deviceId = 0;
	m.contextId = 3;
	m.streamId = 7;
	m.correlationId = 99;
	cr_assert_eq(gpu_decode_record(dec, &m), 1);
	const struct gpu_activity_rec *r = &cap.act[0];
	cr_assert_eq(r->kind, GPU_MEMCPY);
	cr_assert_eq(r->bytes, 1 << 20);
	cr_assert_str_eq(r->copy_kind, "DtoH");
	cr_assert_eq(r->start_ns, 500);
	cr_assert_eq(r->end_ns, 900);
	cr_assert_eq(r->stream, 7);
	cr_assert_eq(r->correlation_id, 99);
	cr_assert_null(r->name);
}

Test(decode, peer_copy)
{
	CUpti_ActivityMemcpyPtoP4 m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	m.bytes = 4096;
	m.start = 1;
	m.end = 2;
	m.deviceId = 1;
	m.srcDeviceId = 0;
	m.dstDeviceId = 1;
	m.correlationId = 1234;
	gpu_decode_record(dec, &m);
	cr_assert_eq(cap.act[0].kind, GPU_MEMCPY);
	cr_assert_str_eq(cap.act[0].copy_kind, "PtoP");
	cr_assert_eq(cap.act[0].correlation_id, 1234);
	cr_assert_eq(cap.act[0].bytes, 4096);
}

Test(decode, memset_fields)
{
	CUpti_ActivityMemset4 m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m.value = 0;
	m.bytes = 256;
	m.start = 10;
	m.end = 15;
	m.deviceId = 2;
	m.contextId = 4;
	m.streamId = 9;
	m.correlationId = 77;
	gpu_decode_record(dec, &m);
	cr_assert_eq(cap.act[0].kind, GPU_MEMSET);
	cr_assert_eq(cap.act[0].bytes, 256);
	cr_assert_eq(cap.act[0].device, 2);
	cr_assert_eq(cap.act[0].correlation_id, 77);
}

Test(decode, sync_takes_device_from_context)
{
	CUpti_ActivityKernel10 k = kernel(1, 10, 20, "k");     /* context 7 on device 1 */
	CUpti_ActivitySynchronization2 s;

	gpu_decode_record(dec, &k);
	memset(&s, 0, sizeof(s));
	s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	s.start = 30;
	s.end = 80;
	s.correlationId = 2;
	s.contextId = 7;
	s.streamId = 13;
	gpu_decode_record(dec, &s);
	cr_assert_eq(cap.nact, 2);
	cr_assert_eq(cap.act[1].kind, GPU_SYNC);
	cr_assert_eq(cap.act[1].device, 1);
	cr_assert_str_eq(cap.act[1].name, "cudaStreamSynchronize");
	cr_assert_eq(cap.act[1].start_ns, 30);
	cr_assert_eq(cap.act[1].end_ns, 80);

	/* A context no kernel ran on yet: the device is unknown. */
	s.contextId = 8;
	s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
	gpu_decode_record(dec, &s);
	cr_assert_eq(cap.act[2].device, UINT32_MAX);
	cr_assert_str_eq(cap.act[2].name, "cudaDeviceSynchronize");
}

Test(decode, runtime_and_driver_api)
{
	CUpti_ActivityAPI a;

	memset(&a, 0, sizeof(a));
	a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
	a.start = 100;
	a.end = 140;
	a.processId = 1;
	a.threadId = 4242;
	a.correlationId = 42;
	cr_assert_eq(gpu_decode_record(dec, &a), 1);
	a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
	a.cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
	a.correlationId = 43;
	gpu_decode_record(dec, &a);
	cr_assert_eq(cap.napi, 2);
	cr_assert_eq(cap.api[0].api, GPU_API_RUNTIME);
	cr_assert_str_eq(cap.api[0].name, "cudaLaunchKernel");
	cr_assert_eq(cap.api[0].tid, 4242);
	cr_assert_eq(cap.api[0].start_ns, 100);
	cr_assert_eq(cap.api[0].end_ns, 140);
	cr_assert_eq(cap.api[0].correlation_id, 42);
	cr_assert_eq(cap.api[0].external_id, 0);
	cr_assert_eq(cap.api[1].api, GPU_API_DRIVER);
	cr_assert_str_eq(cap.api[1].name, "cuLaunchKernel");
}

Test(decode, overhead_is_counted_not_emitted)
{
	CUpti_ActivityOverhead3 o;

	memset(&o, 0, sizeof(o));
	o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH;
	o.start = 1000;
	o.end = 4000;
	cr_assert_eq(gpu_decode_record(dec, &o), 0);
	o.start = 5000;
	o.end = 5500;
	gpu_decode_record(dec, &o);
	cr_assert_eq(cap.nact + cap.napi, 0);
	cr_assert_eq(dec->stats.overhead_records, 2);
	cr_assert_eq(dec->stats.overhead_ns, 3500);
}

Test(decode, unknown_kinds_are_skipped)
{
	CUpti_ActivityMarker2 m;

	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MARKER;
	cr_assert_eq(gpu_decode_record(dec, &m), 0);
	cr_assert_eq(dec->stats.other, 1);
	cr_assert_eq(cap.nact + cap.napi, 0);
}

Test(decode, copy_kind_names)
{
	cr_assert_str_eq(gpu_copy_kind_name(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD), "HtoD");
	cr_assert_str_eq(gpu_copy_kind_name(CUPTI_ACTIVITY_MEMCPY_KIND_DTOD), "DtoD");
	cr_assert_str_eq(gpu_copy_kind_name(CUPTI_ACTIVITY_MEMCPY_KIND_HTOH), "HtoH");
	cr_assert_str_eq(gpu_copy_kind_name(200), "unknown");
}

Test(decode, api_name_suffix)
{
	char out[64];

	gpu_api_name_clean("cudaLaunchKernel_v7000", out, sizeof(out));
	cr_assert_str_eq(out, "cudaLaunchKernel");
	gpu_api_name_clean("cudaMemcpyAsync_v3020", out, sizeof(out));
	cr_assert_str_eq(out, "cudaMemcpyAsync");
	gpu_api_name_clean("cuMemcpyHtoD_v2", out, sizeof(out));
	cr_assert_str_eq(out, "cuMemcpyHtoD_v2");
	gpu_api_name_clean("cuLaunchKernel", out, sizeof(out));
	cr_assert_str_eq(out, "cuLaunchKernel");
	cr_assert_eq(gpu_api_name_clean("cudaFree_v3020", NULL, 0), strlen("cudaFree"));
	gpu_api_name_clean("cudaLaunchKernel_v7000", out, 5);
	cr_assert_str_eq(out, "cuda");
}

Test(decode, chatty_apis)
{
	static const char *const chatty[] = {
		"cudaGetDevice", "cudaGetDeviceCount", "cudaGetLastError", "cudaStreamIsCapturing",
		"cudaPointerGetAttributes", "cuCtxGetCurrent", "cuCtxSetCurrent", "cuDeviceGetAttribute",
		"cuGetProcAddress_v2", "cuPointerGetAttributes", "cuStreamGetCaptureInfo_v2",
		"cuKernelGetName", "cuFuncGetName", "cuEventQuery", "cudaStreamQuery",
	};
	static const char *const kept[] = {
		"cudaLaunchKernel", "cudaMemcpyAsync", "cudaMemcpy", "cudaMemsetAsync",
		"cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaMalloc", "cudaFree",
		"cudaEventRecord", "cudaStreamWaitEvent", "cudaGraphLaunch", "cuLaunchKernel",
		"cuMemcpyHtoDAsync_v2", "cuStreamSynchronize", "cuCtxSynchronize", "cuMemAlloc_v2",
		"cuEventSynchronize", "cuLaunchKernelEx",
	};

	for (size_t i = 0; i < sizeof(chatty) / sizeof(chatty[0]); i++)
		cr_assert(gpu_api_is_chatty(chatty[i]), "%s should not be traced", chatty[i]);
	for (size_t i = 0; i < sizeof(kept) / sizeof(kept[0]); i++)
		cr_assert_not(gpu_api_is_chatty(kept[i]), "%s must be traced", kept[i]);
	cr_assert_not(gpu_api_is_chatty(NULL));
}
