/* test-gpu-off.c - a collector built without CUPTI still answers, and says so. */
#include <criterion/criterion.h>

#include "emit_capture.h"

Test(gpu_off, entry_points_are_harmless_and_status_says_why)
{
	gpu_collector_init();
	gpu_external_push(1);
	gpu_external_pop();
	gpu_external_pop();            /* unbalanced: still harmless */
	cr_assert_eq(cap.nact + cap.napi, 0);
	gpu_collector_flush();
	cr_assert_eq(cap.status_calls, 1);
	cr_assert_eq(cap.status_on, 0);
	cr_assert_str_eq(cap.status_detail, "agprof built without CUPTI");
	capture_reset();
}
