/* layout.c - see layout.h. */
#include "layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int layout_push(struct layout *lo, const struct layout_row *r)
{
	if (lo->nrows == lo->alloc) {
		size_t n = lo->alloc ? lo->alloc * 2 : 32;
		struct layout_row *p = realloc(lo->rows, n * sizeof(*p));
		if (!p)
			return -1;
		lo->rows = p;
		lo->alloc = n;
	}
	lo->rows[lo->nrows++] = *r;
	return 0;
}

int layout_build(struct layout *lo, const struct timeline *tl, unsigned mask)
{
	int have_pid = 0;
	int64_t pid = 0;

	lo->nrows = 0;
	for (size_t i = 0; i < tl->ntracks; i++) {
		const struct tl_track *t = &tl->tracks[i];
		int first = 1;

		for (size_t j = 0; j < t->nlanes; j++) {
			size_t lane = t->lanes[j];
			struct layout_row r = { ROW_LANE, 0, lane, t->pid };

			if (!(mask & (1u << tl->lanes[lane].kind)))
				continue;
			if (!have_pid || pid != t->pid) {
				struct layout_row p = { ROW_PROCESS, 0, 0, t->pid };
				if (layout_push(lo, &p) < 0)
					return -1;
				have_pid = 1;
				pid = t->pid;
			}
			r.first = first;
			first = 0;
			if (layout_push(lo, &r) < 0)
				return -1;
		}
	}
	return 0;
}

void layout_release(struct layout *lo)
{
	free(lo->rows);
	memset(lo, 0, sizeof(*lo));
}

ptrdiff_t layout_row_of_lane(const struct layout *lo, size_t lane)
{
	for (size_t i = 0; i < lo->nrows; i++)
		if (lo->rows[i].type == ROW_LANE && lo->rows[i].lane == lane)
			return (ptrdiff_t)i;
	return -1;
}

ptrdiff_t layout_next_lane_row(const struct layout *lo, ptrdiff_t row, int dir)
{
	for (ptrdiff_t i = row + (dir > 0 ? 1 : -1); i >= 0 && (size_t)i < lo->nrows; i += dir > 0 ? 1 : -1)
		if (lo->rows[i].type == ROW_LANE)
			return i;
	return -1;
}

size_t layout_scroll(size_t top, size_t sel, size_t height, size_t nrows)
{
	if (height == 0)
		return sel;
	if (sel < top)
		top = sel;
	else if (sel >= top + height)
		top = sel - height + 1;
	/* no empty space below the last row when the rows could fill it */
	if (nrows > height && top > nrows - height)
		top = nrows - height;
	if (nrows <= height)
		top = 0;
	/* a lane right under its process row brings the process row along */
	if (top > 0 && sel == top && top - 1 + height > sel)
		top--;
	return top;
}

int64_t axis_step(int64_t span, int cols, int min_cols)
{
	int64_t want, step = 1;

	if (cols < 1)
		cols = 1;
	if (span < 1)
		span = 1;
	/* smallest nice step such that step / span * cols >= min_cols */
	want = (int64_t)((__int128)span * min_cols / cols);
	if (want < 1)
		want = 1;
	for (;;) {
		if (step >= want)
			return step;
		if (step * 2 >= want)
			return step * 2;
		if (step * 5 >= want)
			return step * 5;
		if (step > INT64_MAX / 10)
			return step;
		step *= 10;
	}
}

void axis_label(char *buf, size_t len, int64_t t, int64_t step, const char *micro)
{
	static const int64_t units[] = { 1000000000LL, 1000000LL, 1000LL, 1 };
	static const char *const names[] = { "s", "ms", NULL, "ns" };
	size_t u = 0;
	int decimals = 0;

	/* the largest unit at most ten steps long: "1.5s" rather than "1500ms" (not step * 10: a hostile span overflows) */
	while (u + 1 < sizeof(units) / sizeof(units[0]) && units[u] / 10 > step)
		u++;
	for (int64_t d = units[u]; d > 1 && step % d; d /= 10)
		decimals++;
	snprintf(buf, len, "%.*f%s", decimals, (double)t / (double)units[u], names[u] ? names[u] : micro);
}
