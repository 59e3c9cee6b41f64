/*
 * layout.h - the pure arithmetic of the timeline screen: which row shows
 * which lane, vertical scrolling, and the time axis ticks.  No curses here,
 * so that the unit tests run it without a terminal.
 */
#ifndef AGPROF_TUI_LAYOUT_H
#define AGPROF_TUI_LAYOUT_H

#include "timeline.h"

#include <stddef.h>
#include <stdint.h>

enum layout_row_type { ROW_PROCESS, ROW_LANE };

struct layout_row {
	enum layout_row_type type;
	int first;     /* lane row: the first shown lane of its track (carries the track label) */
	size_t lane;   /* lane row: index in timeline.lanes */
	int64_t pid;   /* process row: its pid */
};

struct layout {
	struct layout_row *rows;
	size_t nrows, alloc;
};

/*
 * One process row before the tracks of each process, then one row per lane
 * whose kind is in mask (1u << kind), in the timeline's track order.
 * Tracks with no shown lane take no row.  0 or -1 (out of memory).
 */
int layout_build(struct layout *lo, const struct timeline *tl, unsigned mask);
void layout_release(struct layout *lo);

/* Row of lane, or -1 when it is not shown. */
ptrdiff_t layout_row_of_lane(const struct layout *lo, size_t lane);
/* The lane row after (dir > 0) or before (dir < 0) row, or -1. */
ptrdiff_t layout_next_lane_row(const struct layout *lo, ptrdiff_t row, int dir);

/*
 * First row to show in a pane of height rows so that row sel is visible,
 * moving the current top as little as possible.
 */
size_t layout_scroll(size_t top, size_t sel, size_t height, size_t nrows);

/*
 * Tick spacing for an axis of cols columns showing span ns: 1, 2 or 5
 * times a power of ten, so that labels are at least min_cols apart.
 */
int64_t axis_step(int64_t span, int cols, int min_cols);

/*
 * Label of time t (ns from the recording's start) on an axis whose ticks
 * are step apart: the largest unit at most ten steps long ("1.5s", "250ms",
 * "12us"), with as many decimals as the step needs.  micro is the symbol
 * for micro ("us" or the UTF-8 "µs").
 */
void axis_label(char *buf, size_t len, int64_t t, int64_t step, const char *micro);

#endif
