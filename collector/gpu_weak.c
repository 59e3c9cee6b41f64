/*
 * gpu_weak.c - what the host side calls when the collector is built without
 * its GPU part: every GPU entry point is a no-op.  collector/gpu/ provides the
 * real (strong) definitions.
 */
#include "collector.h"
#include "gpu_record.h"

__attribute__((weak)) int gpu_tracing_on;
__attribute__((weak)) void gpu_external_push(uint64_t external_id) { (void)external_id; }
__attribute__((weak)) void gpu_external_pop(void) {}
__attribute__((weak)) void gpu_collector_init(void) { gpu_emit_status(0, "agprof built without its GPU part"); }
__attribute__((weak)) void gpu_collector_flush(void) {}
