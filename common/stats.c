/* stats.c - see stats.h. */
#include "stats.h"
#include "util.h"

#include <math.h>
#include <stdlib.h>

double stats_quantile(const int64_t *v, size_t n, double q)
{
	double pos, frac;
	size_t i;

	if (!n)
		return 0;
	pos = q * (double)(n - 1);
	i = (size_t)pos;
	frac = pos - (double)i;
	if (i + 1 >= n)
		return (double)v[n - 1];
	return (double)v[i] + frac * (double)(v[i + 1] - v[i]);
}

/* Upper tail of the standard normal distribution. */
static double normal_upper(double z)
{
	return 0.5 * erfc(z / sqrt(2.0));
}

/*
 * U of b over a from the ranks of the merged sorted samples, ties given
 * their mean rank; *tie_term is sum(t^3 - t) over groups of ties.
 */
static double mann_whitney_u(const int64_t *a, size_t na, const int64_t *b, size_t nb, double *tie_term)
{
	size_t i = 0, j = 0, rank = 1;
	double rb = 0;

	*tie_term = 0;
	while (i < na || j < nb) {
		int64_t v = i < na && (j >= nb || a[i] <= b[j]) ? a[i] : b[j];
		size_t ta = 0, tb = 0, t;

		while (i < na && a[i] == v)
			i++, ta++;
		while (j < nb && b[j] == v)
			j++, tb++;
		t = ta + tb;
		rb += (double)tb * ((double)rank + (double)(t - 1) / 2);
		*tie_term += (double)t * (double)t * (double)t - (double)t;
		rank += t;
	}
	return rb - (double)nb * (double)(nb + 1) / 2;
}

static void mann_whitney(const int64_t *a, size_t na, const int64_t *b, size_t nb, struct stats_compare *out)
{
	double n = (double)(na + nb), ties, mean, var, z;

	out->u = mann_whitney_u(a, na, b, nb, &ties);
	out->p_larger = out->p_smaller = 1;
	if (na < 2 || nb < 2)
		return;
	mean = (double)na * (double)nb / 2;
	var = (double)na * (double)nb / 12 * ((n + 1) - ties / (n * (n - 1)));
	if (var <= 0)
		return;
	/* continuity correction of 0.5 toward the mean */
	z = (out->u - mean - 0.5) / sqrt(var);
	out->p_larger = normal_upper(z);
	z = (mean - out->u - 0.5) / sqrt(var);
	out->p_smaller = normal_upper(z);
}

/* Up to cap evenly spaced order statistics of sorted v, as logarithms. */
static double *thin_logs(const int64_t *v, size_t n, size_t cap, size_t *out_n)
{
	size_t k = n < cap ? n : cap;
	double *l = malloc((k ? k : 1) * sizeof(*l));

	if (!l)
		return NULL;
	for (size_t i = 0; i < k; i++) {
		size_t at = k == n ? i : (size_t)((double)i * (double)(n - 1) / (double)(k - 1));

		l[i] = log((double)(v[at] > 0 ? v[at] : 1));
	}
	*out_n = k;
	return l;
}

#define THIN 1000  /* 1 M pairs: the interval from 1000 quantiles is a little wider, never narrower */
#define LOG_SCALE 1e9  /* log-ratios as integers, for nth_int64 */

/* Hodges-Lehmann ratio and Moses' 95% interval from the pairwise log-ratios. */
static int hodges_lehmann(const int64_t *a, size_t na, const int64_t *b, size_t nb, struct stats_compare *out)
{
	size_t ka, kb, np, lo;
	double *la = thin_logs(a, na, THIN, &ka), *lb = thin_logs(b, nb, THIN, &kb), half;
	int64_t *d = NULL;
	int ret = -1;

	if (!la || !lb || !(d = malloc(ka * kb * sizeof(*d))))
		goto out;
	np = 0;
	for (size_t i = 0; i < ka; i++)
		for (size_t j = 0; j < kb; j++)
			d[np++] = (int64_t)llround((lb[j] - la[i]) * LOG_SCALE);
	out->ratio = exp((double)(nth_int64(d, np, (np - 1) / 2) + nth_int64(d, np, np / 2)) / 2 / LOG_SCALE);
	half = 1.959964 * sqrt((double)ka * (double)kb * (double)(ka + kb + 1) / 12);
	if ((double)np / 2 - half >= 1) {
		lo = (size_t)floor((double)np / 2 - half);  /* 1-based rank of the lower bound */
		out->ratio_lo = exp((double)nth_int64(d, np, lo - 1) / LOG_SCALE);
		out->ratio_hi = exp((double)nth_int64(d, np, np - lo) / LOG_SCALE);
	}
	ret = 0;
out:
	free(la);
	free(lb);
	free(d);
	return ret;
}

int stats_compare(const int64_t *a, size_t na, const int64_t *b, size_t nb, struct stats_compare *out)
{
	out->na = na;
	out->nb = nb;
	out->ratio = 1;
	out->ratio_lo = 0;
	out->ratio_hi = INFINITY;
	mann_whitney(a, na, b, nb, out);
	if (!na || !nb)
		return 0;
	return hodges_lehmann(a, na, b, nb, out);
}
