/* test-duration.c - the one duration formatter (common/duration.h), at its unit boundaries. */
#include "duration.h"

#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

static const struct {
	int64_t ns;
	const char *text;
} cases[] = {
	{ 0, "0 ns" },
	{ 850, "850 ns" },
	{ 999, "999 ns" },
	{ 1000, "1.00 us" },               /* ns -> us */
	{ 9994, "9.99 us" },
	{ 9995, "10.0 us" },               /* would round to 10.00 us */
	{ 12345, "12.3 us" },
	{ 999949, "999.9 us" },
	{ 999950, "1.00 ms" },              /* would round to 1000.0 us */
	{ 45600000, "45.6 ms" },
	{ 999949999, "999.9 ms" },
	{ 999950000, "1.00 s" },            /* would round to 1000.0 ms */
	{ 12400000000, "12.4 s" },
	{ 1070000000, "1.07 s" },
	{ 119682800000, "119.7 s" },       /* the "119682.8 ms" */
	{ 119949999999, "119.9 s" },
	{ 119950000000, "2 min 0 s" },     /* seconds end at two minutes */
	{ 123000000000, "2 min 3 s" },
	{ 3599400000000, "59 min 59 s" },
	{ 3599500000000, "1 h 0 min" },    /* would round to 60 min 0 s */
	{ 3723000000000, "1 h 2 min" },
	{ -1500, "-1.50 us" },              /* timeline offsets */
	{ INT64_MIN, "-2562047 h 47 min" },
};

Test(duration, boundaries_between_units)
{
	char buf[DURATION_MAX];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		cr_assert_str_eq(duration_format(buf, sizeof(buf), cases[i].ns), cases[i].text, "%lld ns",
				 (long long)cases[i].ns);
	}
}

Test(duration, strbuf_matches_buffer)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[DURATION_MAX];

	strbuf_addstr(&sb, "took ");
	strbuf_add_duration(&sb, 45600000);
	cr_assert_str_eq(sb.buf, "took 45.6 ms");
	cr_assert_str_eq(duration_format(buf, sizeof(buf), 45600000), "45.6 ms");
	strbuf_release(&sb);
}

Test(duration, truncates_safely_in_a_short_buffer)
{
	char buf[4];

	duration_format(buf, sizeof(buf), 45600000);
	cr_assert_eq(strlen(buf), 3);
}
