/*
 * clock.c - CUPTI timestamps to CLOCK_MONOTONIC.
 *
 * Host events are stamped with CLOCK_MONOTONIC; CUPTI stamps with its own
 * clock (CLOCK_REALTIME on Linux unless a timestamp callback is registered,
 * see activity.c).  We read both side by side and keep the offset.  Pure
 * arithmetic, so that tests can check it without CUPTI.
 */
#include "gpu_internal.h"

#include <string.h>

void gpu_clock_init(struct gpu_clock *c)
{
	memset(c, 0, sizeof(*c));
}

int64_t gpu_clock_offset(const struct gpu_clock_sample *s, size_t n, uint64_t *at)
{
	size_t best = 0;
	uint64_t best_width = UINT64_MAX;

	for (size_t i = 0; i < n; i++) {
		/* A sample whose monotonic readings went backwards is unusable. */
		if (s[i].mono_after < s[i].mono_before)
			continue;
		uint64_t w = s[i].mono_after - s[i].mono_before;
		if (w < best_width) {
			best_width = w;
			best = i;
		}
	}
	uint64_t mid = s[best].mono_before + (s[best].mono_after - s[best].mono_before) / 2;
	if (at)
		*at = s[best].cupti;
	return (int64_t)(mid - s[best].cupti);
}

void gpu_clock_add_point(struct gpu_clock *c, uint64_t cupti_at, int64_t offset)
{
	if (!c->have_first) {
		c->have_first = 1;
		c->first_cupti = cupti_at;
		c->first_offset = offset;
		return;
	}
	if (cupti_at <= c->first_cupti)
		return;         /* a point before the first one adds nothing */
	c->have_last = 1;
	c->last_cupti = cupti_at;
	c->last_offset = offset;
}

uint64_t gpu_clock_to_mono(const struct gpu_clock *c, uint64_t t)
{
	int64_t off;

	if (t == 0)
		return 0;
	if (!c->have_first)
		return t;
	off = c->first_offset;
	if (c->have_last && t > c->first_cupti) {
		/*
		 * Interpolate between the two points; beyond the last one the
		 * last offset holds (extrapolating a drift estimate from a few
		 * samples would amplify their noise).
		 */
		if (t >= c->last_cupti) {
			off = c->last_offset;
		} else {
			double frac = (double)(t - c->first_cupti) /
				      (double)(c->last_cupti - c->first_cupti);
			off = c->first_offset +
			      (int64_t)(frac * (double)(c->last_offset - c->first_offset));
		}
	}
	return (uint64_t)((int64_t)t + off);
}
