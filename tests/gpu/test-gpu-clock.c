/* test-gpu-clock.c - CUPTI time to CLOCK_MONOTONIC. */
#include <criterion/criterion.h>

#include "gpu_internal.h"

Test(clock, offset_from_narrowest_sample)
{
	struct gpu_clock_sample s[] = {
		{ .mono_before = 1000, .cupti = 9001500, .mono_after = 3000 },  /* wide */
		{ .mono_before = 5000, .cupti = 9005100, .mono_after = 5200 },  /* narrow */
		{ .mono_before = 8000, .cupti = 9008000, .mono_after = 8900 },
	};
	uint64_t at = 0;

	/* Middle of the narrow window, 5100, against 9005100. */
	cr_assert_eq(gpu_clock_offset(s, 3, &at), -9000000);
	cr_assert_eq(at, 9005100);
}

Test(clock, backwards_sample_is_ignored)
{
	struct gpu_clock_sample s[] = {
		{ .mono_before = 5000, .cupti = 100, .mono_after = 4000 },
		{ .mono_before = 6000, .cupti = 200, .mono_after = 6400 },
	};

	cr_assert_eq(gpu_clock_offset(s, 2, NULL), 6200 - 200);
}

Test(clock, identity_without_calibration)
{
	struct gpu_clock c;

	gpu_clock_init(&c);
	cr_assert_eq(gpu_clock_to_mono(&c, 123456), 123456);
	cr_assert_eq(gpu_clock_to_mono(&c, 0), 0);
}

Test(clock, single_point_is_a_constant_offset)
{
	struct gpu_clock c;
	/* CUPTI's default clock is CLOCK_REALTIME: ~1.7e18 ns against a monotonic of hours. */
	uint64_t realtime = 1764500000000000000ull, mono = 7200000000000ull;

	gpu_clock_init(&c);
	gpu_clock_add_point(&c, realtime, (int64_t)(mono - realtime));
	cr_assert_eq(gpu_clock_to_mono(&c, realtime + 2500), mono + 2500);
	cr_assert_eq(gpu_clock_to_mono(&c, realtime - 1000), mono - 1000);
	cr_assert_eq(gpu_clock_to_mono(&c, 0), 0, "0 means no timestamp and stays 0");
}

Test(clock, drift_is_interpolated_between_points)
{
	struct gpu_clock c;

	gpu_clock_init(&c);
	gpu_clock_add_point(&c, 1000000, -1000);     /* offset -1000 at 1 ms */
	gpu_clock_add_point(&c, 3000000, -3000);     /* offset -3000 at 3 ms */
	cr_assert_eq(gpu_clock_to_mono(&c, 500000), 500000 - 1000, "before the first: first offset");
	cr_assert_eq(gpu_clock_to_mono(&c, 2000000), 2000000 - 2000, "halfway: halfway offset");
	cr_assert_eq(gpu_clock_to_mono(&c, 3000000), 3000000 - 3000);
	cr_assert_eq(gpu_clock_to_mono(&c, 9000000), 9000000 - 3000, "after the last: last offset");
}

Test(clock, later_points_replace_the_last)
{
	struct gpu_clock c;

	gpu_clock_init(&c);
	gpu_clock_add_point(&c, 1000, 0);
	gpu_clock_add_point(&c, 2000, 100);
	gpu_clock_add_point(&c, 5000, 400);
	gpu_clock_add_point(&c, 500, 999999);        /* older than the first: ignored */
	cr_assert_eq(gpu_clock_to_mono(&c, 3000), 3000 + 200);
	cr_assert_eq(gpu_clock_to_mono(&c, 6000), 6000 + 400);
}
