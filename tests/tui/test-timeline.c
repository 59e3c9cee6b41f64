/* test-timeline.c - the pure parts of analyzer/timeline/timeline.c: time-to-column
 * mapping, level-of-detail merging, density shades, duration text. */
#include "timeline.h"

#include <criterion/criterion.h>
#include <string.h>

Test(timeline_window, col_of_maps_the_window_onto_columns)
{
	struct tl_window w = { 1000, 2000, 10 };

	cr_assert_eq(tl_col_of(&w, 1000), 0);
	cr_assert_eq(tl_col_of(&w, 1099), 0);
	cr_assert_eq(tl_col_of(&w, 1100), 1);
	cr_assert_eq(tl_col_of(&w, 1999), 9);
	cr_assert_eq(tl_col_of(&w, 2000), 10, "the end is one past the last column");
	cr_assert_eq(tl_col_of(&w, 999), -1, "before the window: floor, not truncation");
	cr_assert_eq(tl_col_of(&w, 900), -1);
	cr_assert_eq(tl_col_of(&w, 899), -2);
}

Test(timeline_window, col_start_is_the_inverse_of_col_of)
{
	/* a span that does not divide evenly into the columns */
	struct tl_window w = { 5, 5 + 997, 80 };

	for (int c = 0; c <= 80; c++) {
		int64_t t = tl_col_start(&w, c);
		cr_assert_eq(tl_col_of(&w, t), c, "column %d starts at %lld", c, (long long)t);
		cr_assert_eq(tl_col_of(&w, t - 1), c - 1, "the time before column %d's start is in the previous column", c);
	}
}

Test(timeline_window, huge_times_do_not_overflow)
{
	struct tl_window w = { INT64_C(9000000000000000000), INT64_C(9000000600000000000), 200 };

	cr_assert_eq(tl_col_of(&w, INT64_C(9000000300000000000)), 100);
	cr_assert_eq(tl_col_start(&w, 100), INT64_C(9000000300000000000));
}

Test(timeline_window, cols_of_clips_and_covers_at_least_one_column)
{
	struct tl_window w = { 0, 1000, 10 };
	int a, b;

	cr_assert(tl_cols_of(&w, 150, 160, &a, &b));
	cr_assert_eq(a, 1);
	cr_assert_eq(b, 1);
	cr_assert(tl_cols_of(&w, 150, 150, &a, &b), "an instant still takes its column");
	cr_assert_eq(a, 1);
	cr_assert(tl_cols_of(&w, -500, 250, &a, &b));
	cr_assert_eq(a, 0);
	cr_assert_eq(b, 2);
	cr_assert(tl_cols_of(&w, 900, 5000, &a, &b));
	cr_assert_eq(a, 9);
	cr_assert_eq(b, 9);
	cr_assert(tl_cols_of(&w, 100, 200, &a, &b));
	cr_assert_eq(b, 1, "the end is exclusive: [100, 200) is column 1 only");
	cr_assert_not(tl_cols_of(&w, 1000, 1100, &a, &b));
	cr_assert_not(tl_cols_of(&w, -100, 0, &a, &b));
}

Test(timeline_shade, quarters_rounded_up)
{
	cr_assert_eq(tl_shade(0, 100), 0);
	cr_assert_eq(tl_shade(1, 100), 1);
	cr_assert_eq(tl_shade(25, 100), 1);
	cr_assert_eq(tl_shade(26, 100), 2);
	cr_assert_eq(tl_shade(75, 100), 3);
	cr_assert_eq(tl_shade(76, 100), 4);
	cr_assert_eq(tl_shade(500, 100), 4, "overlapping events saturate");
}

static struct tl_slice slice(int64_t id, int64_t a, int64_t b)
{
	struct tl_slice s;

	memset(&s, 0, sizeof(s));
	s.id = id;
	s.start_ns = a;
	s.end_ns = b;
	s.name_id = -1;
	return s;
}

Test(timeline_lod, wide_slices_stay_slices)
{
	struct tl_window w = { 0, 1000, 10 };
	struct tl_slice s[] = { slice(1, 100, 400), slice(2, 600, 900) };
	struct tl_cell cells[10];

	tl_lod_merge(&w, s, 2, cells);
	cr_assert_eq(cells[0].type, TL_CELL_EMPTY);
	for (int c = 1; c <= 3; c++) {
		cr_assert_eq(cells[c].type, TL_CELL_SLICE);
		cr_assert_eq(cells[c].slice, 0);
		cr_assert_eq(cells[c].head, c == 1);
	}
	cr_assert_eq(cells[4].type, TL_CELL_EMPTY);
	cr_assert_eq(cells[5].type, TL_CELL_EMPTY);
	cr_assert_eq(cells[6].slice, 1);
	cr_assert_eq(cells[8].slice, 1);
	cr_assert_eq(cells[9].type, TL_CELL_EMPTY);
}

Test(timeline_lod, a_lone_small_slice_is_shown_as_itself)
{
	struct tl_window w = { 0, 1000, 10 };
	struct tl_slice s[] = { slice(7, 310, 320) };
	struct tl_cell cells[10];

	tl_lod_merge(&w, s, 1, cells);
	cr_assert_eq(cells[3].type, TL_CELL_SLICE);
	cr_assert_eq(cells[3].slice, 0);
	cr_assert_eq(cells[3].count, 1);
}

Test(timeline_lod, small_slices_in_one_column_merge_into_density)
{
	struct tl_window w = { 0, 1000, 10 };
	/* column 2 [200, 300): three events busy 10 + 20 + 30 = 60 of 100 ns */
	struct tl_slice s[] = { slice(1, 200, 210), slice(2, 220, 240), slice(3, 250, 280) };
	struct tl_cell cells[10];

	tl_lod_merge(&w, s, 3, cells);
	cr_assert_eq(cells[2].type, TL_CELL_DENSITY);
	cr_assert_eq(cells[2].count, 3);
	cr_assert_eq(cells[2].shade, 3, "60%% busy is the third quarter");
	cr_assert_eq(cells[2].slice, -1);
	cr_assert_eq(cells[1].type, TL_CELL_EMPTY);
	cr_assert_eq(cells[3].type, TL_CELL_EMPTY);
}

Test(timeline_lod, a_wide_slice_covers_the_small_ones_under_it)
{
	struct tl_window w = { 0, 1000, 10 };
	/* a call over columns 1..5 and an op inside it, sorted by start */
	struct tl_slice s[] = { slice(1, 100, 600), slice(2, 300, 310) };
	struct tl_cell cells[10];

	tl_lod_merge(&w, s, 2, cells);
	cr_assert_eq(cells[3].type, TL_CELL_SLICE);
	cr_assert_eq(cells[3].slice, 0, "the wide slice keeps the column");
	cr_assert_eq(cells[3].count, 2, "the hidden one is still counted");
}

Test(timeline_lod, zoom_splits_density_back_into_slices)
{
	struct tl_slice s[] = { slice(1, 200, 210), slice(2, 220, 240), slice(3, 250, 280) };
	struct tl_window wide = { 0, 1000, 10 }, narrow = { 200, 300, 10 };
	struct tl_cell cells[10];
	int slices = 0;

	tl_lod_merge(&wide, s, 3, cells);
	cr_assert_eq(cells[2].type, TL_CELL_DENSITY);
	tl_lod_merge(&narrow, s, 3, cells);
	for (int c = 0; c < 10; c++)
		if (cells[c].type == TL_CELL_SLICE && cells[c].head)
			slices++;
	cr_assert_eq(slices, 3, "at 10 ns a column, each event is its own slice");
}

Test(timeline_bins, coarse_sums_match_the_fine_bins)
{
	enum { N = 64 * 20 + 17 };
	static uint32_t fine[N], coarse[N / TL_COARSE + 1];
	static uint64_t fine64[N], coarse64[N / TL_COARSE + 1];
	unsigned seed = 7;

	for (int i = 0; i < N; i++) {
		seed = seed * 1103515245 + 12345;
		fine[i] = (seed >> 16) % 100;
		fine64[i] = (uint64_t)fine[i] * 1000000007ULL;
		coarse[i / TL_COARSE] += fine[i];
		coarse64[i / TL_COARSE] += fine64[i];
	}
	/* every range that starts and ends at a few interesting places */
	static const int64_t at[] = { 0, 1, 63, 64, 65, 127, 128, 500, 640, 1279, 1280, 1290, N };
	for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		for (size_t j = i; j < sizeof(at) / sizeof(at[0]); j++) {
			uint64_t want = 0, want64 = 0;
			for (int64_t b = at[i]; b < at[j]; b++) {
				want += fine[b];
				want64 += fine64[b];
			}
			cr_assert_eq(tl_sum_bins32(fine, coarse, at[i], at[j]), want, "[%lld, %lld)", (long long)at[i],
				     (long long)at[j]);
			cr_assert_eq(tl_sum_bins64(fine64, coarse64, at[i], at[j]), want64);
			cr_assert_eq(tl_sum_bins32(fine, NULL, at[i], at[j]), want);
		}
	}
}
