/* test-layout.c - the timeline's track layout, scrolling and axis ticks
 * (tui/layout.c, no terminal needed). */
#include "layout.h"

#include <criterion/criterion.h>
#include <string.h>

/*
 * Two processes: 100 with a main thread (trace, call, eager) and an
 * executor (py_function); 200 with a main thread (eager) and a GPU stream
 * (kernel, copy).
 */
static struct tl_track tracks[4];
static struct tl_lane lanes[7];
static struct timeline tl;

static void setup(void)
{
	static const struct {
		size_t track;
		enum tl_kind kind;
	} spec[] = { { 0, TL_TRACE }, { 0, TL_CALL }, { 0, TL_EAGER }, { 1, TL_BLACKBOX },
		     { 2, TL_EAGER }, { 3, TL_KERNEL }, { 3, TL_COPY } };
	static const int64_t pids[] = { 100, 100, 200, 200 };

	memset(&tl, 0, sizeof(tl));
	memset(tracks, 0, sizeof(tracks));
	memset(lanes, 0, sizeof(lanes));
	for (size_t i = 0; i < 7; i++) {
		lanes[i].kind = spec[i].kind;
		lanes[i].track = spec[i].track;
		tracks[spec[i].track].lanes[tracks[spec[i].track].nlanes++] = i;
	}
	for (size_t i = 0; i < 4; i++)
		tracks[i].pid = pids[i];
	tl.tracks = tracks;
	tl.ntracks = 4;
	tl.lanes = lanes;
	tl.nlanes = 7;
}

TestSuite(layout, .init = setup);

Test(layout, a_process_row_heads_each_process)
{
	struct layout lo = { 0 };

	cr_assert_eq(layout_build(&lo, &tl, TL_ALL_KINDS), 0);
	cr_assert_eq(lo.nrows, 9, "2 process rows + 7 lanes");
	cr_assert_eq(lo.rows[0].type, ROW_PROCESS);
	cr_assert_eq(lo.rows[0].pid, 100);
	cr_assert_eq(lo.rows[1].type, ROW_LANE);
	cr_assert_eq(lo.rows[1].lane, 0);
	cr_assert(lo.rows[1].first, "the first lane of a track carries its label");
	cr_assert_not(lo.rows[2].first);
	cr_assert(lo.rows[4].first, "the executor is a new track");
	cr_assert_eq(lo.rows[5].type, ROW_PROCESS);
	cr_assert_eq(lo.rows[5].pid, 200);
	cr_assert_eq(lo.rows[8].lane, 6);
	layout_release(&lo);
}

Test(layout, hidden_kinds_take_no_row_and_empty_tracks_vanish)
{
	struct layout lo = { 0 };

	/* only eager: process 100 main, process 200 main */
	cr_assert_eq(layout_build(&lo, &tl, 1u << TL_EAGER), 0);
	cr_assert_eq(lo.nrows, 4);
	cr_assert_eq(lo.rows[1].lane, 2);
	cr_assert(lo.rows[1].first, "the first shown lane carries the label even if trace is hidden");
	cr_assert_eq(lo.rows[3].lane, 4);
	/* only GPU kinds: process 100 disappears entirely */
	cr_assert_eq(layout_build(&lo, &tl, 1u << TL_KERNEL | 1u << TL_COPY), 0);
	cr_assert_eq(lo.nrows, 3);
	cr_assert_eq(lo.rows[0].pid, 200);
	cr_assert_eq(layout_build(&lo, &tl, 0), 0);
	cr_assert_eq(lo.nrows, 0);
	layout_release(&lo);
}

Test(layout, moving_between_lanes_skips_process_rows)
{
	struct layout lo = { 0 };

	layout_build(&lo, &tl, TL_ALL_KINDS);
	cr_assert_eq(layout_row_of_lane(&lo, 3), 4);
	cr_assert_eq(layout_next_lane_row(&lo, 4, 1), 6, "row 5 is process 200's header");
	cr_assert_eq(layout_next_lane_row(&lo, 6, -1), 4);
	cr_assert_eq(layout_next_lane_row(&lo, 1, -1), -1);
	cr_assert_eq(layout_next_lane_row(&lo, 8, 1), -1);
	cr_assert_eq(layout_next_lane_row(&lo, -1, 1), 1, "from nowhere, the first lane");
	layout_release(&lo);
	layout_build(&lo, &tl, 1u << TL_EAGER);
	cr_assert_eq(layout_row_of_lane(&lo, 0), -1, "a hidden lane has no row");
	layout_release(&lo);
}

Test(layout, scrolling_keeps_the_selection_visible)
{
	cr_assert_eq(layout_scroll(0, 3, 5, 20), 0);
	cr_assert_eq(layout_scroll(0, 7, 5, 20), 3);
	cr_assert_eq(layout_scroll(10, 4, 5, 20), 3, "scrolling up shows the row above (a process header)");
	cr_assert_eq(layout_scroll(0, 19, 5, 20), 15);
	cr_assert_eq(layout_scroll(12, 19, 5, 20), 15);
	cr_assert_eq(layout_scroll(6, 2, 10, 8), 0, "everything fits: no scrolling");
	cr_assert_eq(layout_scroll(14, 16, 5, 20), 14, "a visible selection does not move the view");
}

Test(axis, steps_are_1_2_5_and_leave_room_for_labels)
{
	cr_assert_eq(axis_step(1000000000, 100, 10), 100000000);
	cr_assert_eq(axis_step(1000000000, 62, 10), 200000000);
	cr_assert_eq(axis_step(1000000000, 30, 10), 500000000);
	cr_assert_eq(axis_step(600000000000LL, 62, 11), 200000000000LL);
	cr_assert_eq(axis_step(50, 100, 10), 5);
	cr_assert_eq(axis_step(1, 100, 10), 1, "never below a nanosecond");
}

Test(axis, labels_take_the_unit_of_the_step)
{
	char buf[32];

	axis_label(buf, sizeof(buf), 1500000000, 500000000, "us");
	cr_assert_str_eq(buf, "1.5s");
	axis_label(buf, sizeof(buf), 4000000000, 2000000000, "us");
	cr_assert_str_eq(buf, "4s");
	axis_label(buf, sizeof(buf), 12000, 2000, "us");
	cr_assert_str_eq(buf, "12us");
	axis_label(buf, sizeof(buf), 12000, 2000, "\xc2\xb5s");
	cr_assert_str_eq(buf, "12\xc2\xb5s");
	axis_label(buf, sizeof(buf), 50, 10, "us");
	cr_assert_str_eq(buf, "50ns");
	axis_label(buf, sizeof(buf), 0, 100000000, "us");
	cr_assert_str_eq(buf, "0.0s");
	axis_label(buf, sizeof(buf), 1400000, 200000, "us");
	cr_assert_str_eq(buf, "1.4ms");
	axis_label(buf, sizeof(buf), 150000000, 50000000, "us");
	cr_assert_str_eq(buf, "150ms");
}
