/*
 * cupti_loader.h - libcupti, loaded at run time.
 *
 * The collector never links libcupti: a workload without CUDA must not pay
 * for it, and the CUPTI that matches the workload's CUDA is the one to use.
 * The function types come from the CUPTI headers (typeof of the
 * declarations), the addresses from dlsym.
 */
#ifndef AGPROF_CUPTI_LOADER_H
#define AGPROF_CUPTI_LOADER_H

#include <limits.h>
#include <stddef.h>

#include <cupti.h>

#define CUPTI_FN(name) __typeof__(&cupti##name) name

struct cupti_api {
	void *handle;
	char path[PATH_MAX];
	uint32_t version;             /* CUPTI_API_VERSION of the library */

	/* Required. */
	CUPTI_FN(GetVersion);
	CUPTI_FN(GetResultString);
	CUPTI_FN(GetTimestamp);
	CUPTI_FN(Subscribe);
	CUPTI_FN(Unsubscribe);
	CUPTI_FN(GetCallbackName);
	CUPTI_FN(ActivityRegisterCallbacks);
	CUPTI_FN(ActivityEnable);
	CUPTI_FN(ActivityDisable);
	CUPTI_FN(ActivityGetNextRecord);
	CUPTI_FN(ActivityGetNumDroppedRecords);
	CUPTI_FN(ActivityFlushAll);
	CUPTI_FN(ActivityPushExternalCorrelationId);
	CUPTI_FN(ActivityPopExternalCorrelationId);
	/* Optional: NULL when the library predates them. */
	CUPTI_FN(ActivityRegisterTimestampCallback);
	CUPTI_FN(SetThreadIdType);
	CUPTI_FN(ActivityEnableRuntimeApi);
	CUPTI_FN(ActivityEnableDriverApi);
};

/*
 * Find and load libcupti; see cupti_loader.c for the search order.  Returns
 * 0, or -1 with a one-line reason in why.
 */
int cupti_load(struct cupti_api *api, char *why, size_t whylen);

/* CUPTI's text for rc ("CUPTI_ERROR_NOT_INITIALIZED"), or the number. */
const char *cupti_error(const struct cupti_api *api, CUptiResult rc);

#endif
