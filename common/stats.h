/*
 * stats.h - comparing two samples of durations (agprof diff and
 * check --baseline): medians, quartiles, the Mann-Whitney U test and the
 * Hodges-Lehmann estimate of the ratio between them with its confidence
 * interval.  Rank-based: a few outliers (a trace inside a step, a stall of
 * the machine) move none of them much, and no distribution is assumed.
 */
#ifndef AGPROF_STATS_H
#define AGPROF_STATS_H

#include <stddef.h>
#include <stdint.h>

/* The q-quantile (0..1) of sorted v[0..n), interpolated; 0 for n == 0. */
double stats_quantile(const int64_t *sorted, size_t n, double q);

struct stats_compare {
	size_t na, nb;
	/*
	 * Mann-Whitney U of b over a, and the one-sided p-values (normal
	 * approximation, ties corrected) that b tends to be larger (slower)
	 * or smaller than a.  1 when either sample has under 2 values.
	 */
	double u, p_larger, p_smaller;
	/*
	 * Hodges-Lehmann: the median of the ratios b_j / a_i over all pairs,
	 * and its 95% interval (Moses).  1 and [0, inf] when it cannot be told.
	 */
	double ratio, ratio_lo, ratio_hi;
};

/*
 * Compare samples a and b (durations, sorted ascending, each value > 0);
 * samples over 1000 values are thinned to 1000 evenly spaced quantiles for
 * the ratio (the test uses every value).  0, or -1 when memory is short.
 */
int stats_compare(const int64_t *a, size_t na, const int64_t *b, size_t nb, struct stats_compare *out);

#endif
