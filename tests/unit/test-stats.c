/*
 * test-stats.c - common/stats.h against values computed independently:
 * SciPy 1.x mannwhitneyu(b, a, method='asymptotic', use_continuity=True)
 * and the Hodges-Lehmann ratio / Moses interval by brute force in Python.
 */
#include "stats.h"
#include "util.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

static int64_t A[] = { 10, 12, 15, 11, 13, 14, 9, 16, 12, 11 };
static int64_t B[] = { 14, 15, 17, 13, 18, 16, 19, 15, 14, 20 };

static void sorted(int64_t *v, size_t n)
{
	sort_array(v, n, sizeof(*v), cmp_int64);
}

Test(stats, mann_whitney_matches_scipy)
{
	struct stats_compare s;

	sorted(A, 10);
	sorted(B, 10);
	cr_assert_eq(stats_compare(A, 10, B, 10, &s), 0);
	cr_assert_float_eq(s.u, 88.0, 1e-9);
	cr_assert_float_eq(s.p_larger, 0.0022024502565204268, 1e-12);
	cr_assert_float_eq(s.p_smaller, 0.9982696504088532, 1e-12);
}

Test(stats, hodges_lehmann_ratio_and_interval)
{
	struct stats_compare s;

	sorted(A, 10);
	sorted(B, 10);
	cr_assert_eq(stats_compare(A, 10, B, 10, &s), 0);
	cr_assert_float_eq(s.ratio, 1.3038404810405297, 1e-6);
	cr_assert_float_eq(s.ratio_lo, 1.125, 1e-6);
	cr_assert_float_eq(s.ratio_hi, 1.555555555555555, 1e-6);
}

/* Twice as slow everywhere: the ratio is exactly 2, and the test sees it. */
Test(stats, doubled_sample)
{
	int64_t a[200], b[200];
	struct stats_compare s;

	for (int i = 0; i < 200; i++) {
		a[i] = 1000 + (i * 7919) % 503;
		b[i] = 2 * a[i];
	}
	sorted(a, 200);
	sorted(b, 200);
	cr_assert_eq(stats_compare(a, 200, b, 200, &s), 0);
	cr_assert_float_eq(s.ratio, 2.0, 1e-6);
	cr_assert(s.ratio_lo <= 2.0 && s.ratio_hi >= 2.0);
	cr_assert(s.p_larger < 1e-10);
	cr_assert(s.p_smaller > 0.99);
}

/* The same sample: no difference, and the interval holds 1. */
Test(stats, same_sample)
{
	int64_t a[50];
	struct stats_compare s;

	for (int i = 0; i < 50; i++)
		a[i] = 100 + i % 9;
	sorted(a, 50);
	cr_assert_eq(stats_compare(a, 50, a, 50, &s), 0);
	cr_assert_float_eq(s.ratio, 1.0, 1e-9);
	cr_assert(s.ratio_lo <= 1.0 && s.ratio_hi >= 1.0);
	cr_assert(s.p_larger > 0.4 && s.p_smaller > 0.4);
}

/* Too few values: nothing claimed. */
Test(stats, tiny_samples)
{
	int64_t a[] = { 5 }, b[] = { 7 };
	struct stats_compare s;

	cr_assert_eq(stats_compare(a, 1, b, 1, &s), 0);
	cr_assert_float_eq(s.p_larger, 1.0, 1e-12);
	cr_assert_eq(stats_compare(a, 0, b, 1, &s), 0);
	cr_assert_float_eq(s.ratio, 1.0, 1e-12);
	cr_assert(isinf(s.ratio_hi));
}

Test(stats, quantiles)
{
	int64_t v[] = { 1, 2, 3, 4 };

	cr_assert_float_eq(stats_quantile(v, 4, 0.5), 2.5, 1e-12);
	cr_assert_float_eq(stats_quantile(v, 4, 0.25), 1.75, 1e-12);
	cr_assert_float_eq(stats_quantile(v, 0, 0.5), 0.0, 1e-12);
}
