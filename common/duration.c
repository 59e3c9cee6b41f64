/* duration.c - see duration.h. */
#include "duration.h"

#include <stdio.h>

/* v / unit with two decimals below 10 and one above: three digits at least. */
static void with_unit(char *buf, size_t len, const char *sign, uint64_t v, double unit, const char *name)
{
	double x = (double)v / unit;

	snprintf(buf, len, x < 9.995 ? "%s%.2f %s" : "%s%.1f %s", sign, x, name);
}

const char *duration_format(char *buf, size_t len, int64_t ns)
{
	const char *sign = ns < 0 ? "-" : "";
	/* In unsigned arithmetic, so that INT64_MIN has a magnitude too. */
	uint64_t v = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;

	if (v < 1000)
		snprintf(buf, len, "%s%llu ns", sign, (unsigned long long)v);
	else if (v < 999950ull)
		with_unit(buf, len, sign, v, 1e3, "us");
	else if (v < 999950000ull)
		with_unit(buf, len, sign, v, 1e6, "ms");
	else if (v < 119950000000ull)
		with_unit(buf, len, sign, v, 1e9, "s");
	else {
		uint64_t s = (v + 500000000ull) / 1000000000ull;

		if (s < 3600) {
			snprintf(buf, len, "%s%llu min %llu s", sign, (unsigned long long)(s / 60),
				 (unsigned long long)(s % 60));
		} else {
			uint64_t min = (s + 30) / 60;

			snprintf(buf, len, "%s%llu h %llu min", sign, (unsigned long long)(min / 60),
				 (unsigned long long)(min % 60));
		}
	}
	return buf;
}

void strbuf_add_duration(struct strbuf *sb, int64_t ns)
{
	char buf[DURATION_MAX];

	strbuf_addstr(sb, duration_format(buf, sizeof(buf), ns));
}
