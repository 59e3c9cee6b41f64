/* emit_capture.c - see emit_capture.h. */
#include "emit_capture.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct captured cap;
static size_t cap_act_alloc, cap_api_alloc;

/* Grow *arr (of elem-sized items) to hold n + 1, doubling. */
static void *reserve(void *arr, size_t *alloc, size_t n, size_t elem)
{
	if (n < *alloc)
		return arr;
	*alloc = *alloc ? *alloc * 2 : 64;
	arr = realloc(arr, *alloc * elem);
	if (!arr)
		abort();
	return arr;
}

static char *dup_or_null(const char *s)
{
	return s ? strdup(s) : NULL;
}

void gpu_emit_activity(const struct gpu_activity_rec *r)
{
	struct gpu_activity_rec *a = reserve(cap.act, &cap_act_alloc, cap.nact, sizeof(*a));

	cap.act = a;
	a[cap.nact] = *r;
	a[cap.nact].name = dup_or_null(r->name);
	a[cap.nact].copy_kind = dup_or_null(r->copy_kind);
	cap.nact++;
}

void gpu_emit_api_call(const struct gpu_api_rec *r)
{
	struct gpu_api_rec *a = reserve(cap.api, &cap_api_alloc, cap.napi, sizeof(*a));

	cap.api = a;
	a[cap.napi] = *r;
	a[cap.napi].name = dup_or_null(r->name);
	cap.napi++;
}

void gpu_emit_status(int on, const char *detail)
{
	cap.status_calls++;
	cap.status_on = on;
	snprintf(cap.status_detail, sizeof(cap.status_detail), "%s", detail ? detail : "");
}

void capture_reset(void)
{
	for (size_t i = 0; i < cap.nact; i++) {
		free((char *)cap.act[i].name);
		free((char *)cap.act[i].copy_kind);
	}
	for (size_t i = 0; i < cap.napi; i++)
		free((char *)cap.api[i].name);
	free(cap.act);
	free(cap.api);
	memset(&cap, 0, sizeof(cap));
	cap_act_alloc = cap_api_alloc = 0;
}
