/*
 * cupti_floor.c - what CUPTI itself costs a workload, without agprof: a CUDA
 * injection library that enables the activity kinds named in
 * $CUPTI_FLOOR_KINDS and throws the records away, counting them.
 * bench/gpu/overhead-split.sh runs a workload under it beside plain and
 * agprof runs, to split agprof's overhead into CUPTI's part and its own.
 *
 *   CUDA_INJECTION64_PATH=cupti_floor.so CUPTI_FLOOR_KINDS=kernel,runtime prog
 *
 * Kinds: kernel (CONCURRENT_KERNEL), runtime, driver, memcpy, memset, sync,
 * overhead, external.  CUPTI_FLOOR_MONO=1 also registers a CLOCK_MONOTONIC
 * timestamp callback, as agprof does.  At exit it prints one line to stderr:
 *   cupti_floor: kinds=... records=N dropped=N
 * Build (needs CUPTI's headers and library):
 *   cc -O2 -shared -fPIC -o cupti_floor.so cupti_floor.c \
 *      -I$CUDA/include -L$CUDA/lib64 -lcupti -Wl,-rpath,$CUDA/lib64
 */
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define FLOOR_BUFFER (4u << 20)     /* the size agprof uses */

static unsigned long long records, dropped;
static char kinds_seen[256];

static void CUPTIAPI give_buffer(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, FLOOR_BUFFER);
	*size = *buffer ? FLOOR_BUFFER : 0;
	*max_records = 0;
}

static void CUPTIAPI take_buffer(CUcontext ctx, uint32_t stream, uint8_t *buffer,
				 size_t size, size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t lost = 0;

	(void)size;
	while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS)
		__atomic_add_fetch(&records, 1, __ATOMIC_RELAXED);
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &lost) == CUPTI_SUCCESS)
		__atomic_add_fetch(&dropped, lost, __ATOMIC_RELAXED);
	free(buffer);
}

static uint64_t CUPTIAPI mono_stamp(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void report(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	fprintf(stderr, "cupti_floor: kinds=%s records=%llu dropped=%llu\n",
		kinds_seen, records, dropped);
}

static int kind_of(const char *name, CUpti_ActivityKind *kind)
{
	static const struct { const char *name; CUpti_ActivityKind kind; } table[] = {
		{ "kernel", CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL },
		{ "runtime", CUPTI_ACTIVITY_KIND_RUNTIME },
		{ "driver", CUPTI_ACTIVITY_KIND_DRIVER },
		{ "memcpy", CUPTI_ACTIVITY_KIND_MEMCPY },
		{ "memset", CUPTI_ACTIVITY_KIND_MEMSET },
		{ "sync", CUPTI_ACTIVITY_KIND_SYNCHRONIZATION },
		{ "overhead", CUPTI_ACTIVITY_KIND_OVERHEAD },
		{ "external", CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(name, table[i].name)) {
			*kind = table[i].kind;
			return 0;
		}
	return -1;
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
	const char *env = getenv("CUPTI_FLOOR_KINDS");
	const char *mono = getenv("CUPTI_FLOOR_MONO");
	char list[256];

	snprintf(list, sizeof(list), "%s", env && *env ? env : "kernel");
	if (mono && !strcmp(mono, "1"))
		cuptiActivityRegisterTimestampCallback(mono_stamp);
	if (cuptiActivityRegisterCallbacks(give_buffer, take_buffer) != CUPTI_SUCCESS) {
		fprintf(stderr, "cupti_floor: cuptiActivityRegisterCallbacks failed\n");
		return 1;
	}
	for (char *save = NULL, *name = strtok_r(list, ",", &save); name;
	     name = strtok_r(NULL, ",", &save)) {
		CUpti_ActivityKind kind;
		size_t n = strlen(kinds_seen);

		if (kind_of(name, &kind) < 0 || cuptiActivityEnable(kind) != CUPTI_SUCCESS) {
			fprintf(stderr, "cupti_floor: cannot enable '%s'\n", name);
			continue;
		}
		snprintf(kinds_seen + n, sizeof(kinds_seen) - n, "%s%s", n ? "," : "", name);
	}
	atexit(report);
	return 1;
}
