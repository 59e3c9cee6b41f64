/*
 * gpu_off.c - the GPU entry points of a collector built without CUPTI
 * headers: the host side may call them unconditionally, and the recording
 * says why there is no GPU activity.
 */
#include "gpu_record.h"

int gpu_tracing_on;  /* never on */

void gpu_collector_init(void)
{
}

void gpu_collector_flush(void)
{
	gpu_emit_status(0, "agprof built without CUPTI");
}

void gpu_external_push(uint64_t external_id)
{
	(void)external_id;
}

void gpu_external_pop(void)
{
}
