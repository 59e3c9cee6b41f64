/*
 * emit_capture.h - test double of the collector's gpu_emit_*() (the real
 * ones, in collector/emit.c, queue records for the launcher): keeps copies
 * of what the GPU code emitted so that tests can look at them.
 */
#ifndef AGPROF_TEST_EMIT_CAPTURE_H
#define AGPROF_TEST_EMIT_CAPTURE_H

#include "gpu_record.h"

#include <stddef.h>

struct captured {
	struct gpu_activity_rec *act;
	size_t nact;
	struct gpu_api_rec *api;
	size_t napi;
	int status_calls;
	int status_on;
	char status_detail[1024];
};

extern struct captured cap;

/* Free everything captured and start empty. */
void capture_reset(void);

#endif
