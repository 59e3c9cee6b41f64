/* timeline_lod.c - levels of detail: window arithmetic, density cells, what a lane shows in a window. */
#include "timeline_internal.h"
#include "checked.h"
#include "recording.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* ---- window arithmetic (pure) ---- */

int64_t tl_col_of(const struct tl_window *w, int64_t t)
{
	int64_t span = w->t1 - w->t0;
	__int128 x;

	if (span <= 0 || w->cols <= 0)
		return 0;
	x = (__int128)(t - w->t0) * w->cols;
	/* floor, also for times before t0 */
	if (x < 0)
		return (int64_t)((x - span + 1) / span);
	return (int64_t)(x / span);
}

int64_t tl_col_start(const struct tl_window *w, int64_t col)
{
	int64_t span = w->t1 - w->t0;
	__int128 x;

	if (w->cols <= 0)
		return w->t0;
	x = (__int128)col * span;
	/* ceil: the first t with tl_col_of(t) == col */
	if (x >= 0)
		x = (x + w->cols - 1) / w->cols;
	else
		x = x / w->cols;
	return w->t0 + (int64_t)x;
}

int tl_cols_of(const struct tl_window *w, int64_t start, int64_t end, int *c0, int *c1)
{
	int64_t a, b;

	if (end <= start)
		end = start + 1;
	if (end <= w->t0 || start >= w->t1 || w->cols <= 0)
		return 0;
	a = tl_col_of(w, start);
	b = tl_col_of(w, end - 1);
	if (a < 0)
		a = 0;
	if (b >= w->cols)
		b = w->cols - 1;
	if (b < a)
		b = a;
	*c0 = (int)a;
	*c1 = (int)b;
	return 1;
}

int tl_shade(uint64_t busy, int64_t width)
{
	uint64_t q;

	if (busy == 0)
		return 0;
	if (width <= 0)
		return 4;
	q = (busy * 4 + (uint64_t)width - 1) / (uint64_t)width;
	if (q < 1)
		q = 1;
	return q > 4 ? 4 : (int)q;
}

/* ---- level of detail (pure) ---- */

/*
 * Per-column busy time is accumulated in a side array so that struct
 * tl_cell stays small; it is only needed while merging.
 */
static void lod_add(const struct tl_window *w, struct tl_cell *cells, uint64_t *busy, const struct tl_slice *s, int32_t idx)
{
	int c0, c1;

	if (!tl_cols_of(w, s->start_ns, s->end_ns, &c0, &c1))
		return;
	if (c1 > c0) {
		for (int c = c0; c <= c1; c++) {
			struct tl_cell *cell = &cells[c];

			cell->type = TL_CELL_SLICE;
			cell->slice = idx;
			cell->head = c == c0;
			cell->wide = 1;
			cell->count = 1;
		}
		return;
	}
	struct tl_cell *cell = &cells[c0];
	int64_t a = s->start_ns > tl_col_start(w, c0) ? s->start_ns : tl_col_start(w, c0);
	int64_t b = s->end_ns < tl_col_start(w, c0 + 1) ? s->end_ns : tl_col_start(w, c0 + 1);
	uint64_t d = b > a ? (uint64_t)(b - a) : 0;

	switch (cell->type) {
	case TL_CELL_EMPTY:
		cell->type = TL_CELL_SLICE;
		cell->slice = idx;
		cell->head = 1;
		cell->wide = 0;
		cell->count = 1;
		busy[c0] = d;
		break;
	case TL_CELL_SLICE:
		cell->count++;
		if (!cell->wide) {
			cell->type = TL_CELL_DENSITY;
			cell->slice = -1;
			busy[c0] += d;
		}
		break;
	default:
		cell->count++;
		busy[c0] += d;
		break;
	}
}

static void lod_shade(const struct tl_window *w, struct tl_cell *cells, const uint64_t *busy)
{
	for (int c = 0; c < w->cols; c++) {
		if (cells[c].type != TL_CELL_DENSITY)
			continue;
		int s = tl_shade(busy[c], tl_col_start(w, c + 1) - tl_col_start(w, c));
		cells[c].shade = (uint8_t)(s ? s : 1);
	}
}

static void lod_merge_busy(const struct tl_window *w, const struct tl_slice *slices, size_t n, struct tl_cell *cells,
			   uint64_t *busy)
{
	for (size_t i = 0; i < n; i++)
		lod_add(w, cells, busy, &slices[i], (int32_t)i);
	lod_shade(w, cells, busy);
}

void tl_lod_merge(const struct tl_window *w, const struct tl_slice *slices, size_t n, struct tl_cell *cells)
{
	uint64_t *busy;

	if (w->cols <= 0)
		return;
	busy = calloc((size_t)w->cols, sizeof(*busy));
	if (!busy)
		return;
	for (int c = 0; c < w->cols; c++) {
		memset(&cells[c], 0, sizeof(cells[c]));
		cells[c].slice = -1;
	}
	lod_merge_busy(w, slices, n, cells, busy);
	free(busy);
}

/* ---- per-lane queries ---- */

void tl_bind_lane(sqlite3_stmt *st, const struct tl_lane *l)
{
	sqlite3_bind_int64(st, 1, l->pid);
	sqlite3_bind_int64(st, 2, l->tid);
	if (l->kind == TL_KERNEL || l->kind == TL_COPY)
		sqlite3_bind_int64(st, 6, l->device);
}

void tl_finish_slice(const struct timeline *tl, struct tl_slice *s, size_t lane)
{
	s->lane = (uint32_t)lane;
	if (s->kind == TL_TRACE && tl_is_retrace(tl, s->id))
		s->flags |= TL_SLICE_RETRACE;
}

static int render_push(struct tl_render *r, const struct tl_slice *s)
{
	if (ARRAY_GROW(r->slices, r->nslices, r->alloc))
		return error("out of memory");
	r->slices[r->nslices++] = *s;
	return 0;
}

int tl_loading(const struct timeline *tl)
{
	return tl->loader && !tl->loader->joined;
}

/* Long slices of the lane that overlap [t0, t1). */
int tl_push_longs(struct timeline *tl, const struct tl_lane *l, int64_t t0, int64_t t1, struct tl_render *r)
{
	int ret = 0, locked = tl_loading(tl);

	/* while the scan runs, longs grow under the lock and are not sorted yet */
	if (locked)
		pthread_mutex_lock(&tl->loader->lock);
	for (size_t i = 0; i < l->nlongs && ret == 0; i++)
		if (l->longs[i].start_ns < t1 && l->longs[i].end_ns > t0)
			ret = render_push(r, &l->longs[i]);
	if (locked)
		pthread_mutex_unlock(&tl->loader->lock);
	return ret;
}

/* How far before a window a short event may start and still reach into it. */
static int64_t look_back(const struct timeline *tl, const struct tl_lane *l)
{
	if (tl_loading(tl))
		return sat_mul64(TL_LONG_BINS, tl->bin_ns);
	return __atomic_load_n(&l->max_short_ns, __ATOMIC_RELAXED);
}

/*
 * Fetch the events of a lane starting in [t0 - look back, t1) that reach
 * into [t0, t1), at most limit rows; returns the rows read (limit + 1 means
 * too many) or -1.
 */
ptrdiff_t tl_fetch_range(struct timeline *tl, size_t lane, int64_t t0, int64_t t1, size_t limit, struct tl_render *r)
{
	struct tl_lane *l = &tl->lanes[lane];
	sqlite3_stmt *st = tl->range[l->kind];
	ptrdiff_t n = 0;
	int rc;

	sqlite3_reset(st);
	tl_bind_lane(st, l);
	sqlite3_bind_int64(st, 3, t0 - look_back(tl, l));
	sqlite3_bind_int64(st, 4, t1);
	sqlite3_bind_int64(st, 5, (int64_t)limit + 1);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct tl_slice s;

		n++;
		tl_row_to_slice(tl, st, l->kind, &s);
		if (s.end_ns <= t0 && s.start_ns < t0)
			continue;
		tl_finish_slice(tl, &s, lane);
		if (render_push(r, &s) < 0) {
			sqlite3_reset(st);
			return -1;
		}
	}
	sqlite3_reset(st);
	if (rc != SQLITE_DONE)
		return error("cannot read '%s': %s", tl->rec->path, sqlite3_errmsg(tl->rec->db));
	return n;
}

/* Sort slices by time and drop the second copy of an event (SQL and memory). */
static void sort_unique(struct tl_render *r)
{
	size_t k = 0;

	sort_array(r->slices, r->nslices, sizeof(*r->slices), tl_slice_cmp);
	for (size_t i = 0; i < r->nslices; i++) {
		if (k > 0 && r->slices[k - 1].id == r->slices[i].id && r->slices[k - 1].kind == r->slices[i].kind)
			continue;
		r->slices[k++] = r->slices[i];
	}
	r->nslices = k;
}

/*
 * Sum bins [b0, b1): whole coarse bins in the middle, fine bins at the
 * edges.  One body for the 32-bit counts and the 64-bit busy times.
 */
#define SUM_BINS(fine, coarse, b0, b1)                                                             \
	({                                                                                         \
		uint64_t n_ = 0;                                                                   \
		for (int64_t b_ = (b0); b_ < (b1);) {                                              \
			int whole_ = (coarse) && b_ % TL_COARSE == 0 && b_ + TL_COARSE <= (b1);    \
			n_ += whole_ ? __atomic_load_n(&(coarse)[b_ / TL_COARSE], __ATOMIC_RELAXED) \
				     : __atomic_load_n(&(fine)[b_], __ATOMIC_RELAXED);              \
			b_ += whole_ ? TL_COARSE : 1;                                              \
		}                                                                                  \
		n_;                                                                                \
	})

uint64_t tl_sum_bins32(const uint32_t *fine, const uint32_t *coarse, int64_t b0, int64_t b1)
{
	return SUM_BINS(fine, coarse, b0, b1);
}

uint64_t tl_sum_bins64(const uint64_t *fine, const uint64_t *coarse, int64_t b0, int64_t b1)
{
	return SUM_BINS(fine, coarse, b0, b1);
}

/*
 * Short events counted in bins [b0, b1).  While the scan runs the bins are
 * summed (coarse ones where they fit); once it is done they hold running
 * sums (see scan_finished()), so a column costs two loads at any zoom.
 */
static uint64_t bins_count(const struct timeline *tl, const struct tl_lane *l, int64_t b0, int64_t b1)
{
	if (b1 <= b0)
		return 0;
	if (tl->loader && tl->loader->prefix)
		return l->count[b1 - 1] - (b0 > 0 ? l->count[b0 - 1] : 0);
	return tl_sum_bins32(l->count, l->coarse_count, b0, b1);
}

static uint64_t bins_busy(const struct timeline *tl, const struct tl_lane *l, int64_t b0, int64_t b1)
{
	if (b1 <= b0)
		return 0;
	if (tl->loader && tl->loader->prefix)
		return l->busy[b1 - 1] - (b0 > 0 ? l->busy[b0 - 1] : 0);
	return tl_sum_bins64(l->busy, l->coarse_busy, b0, b1);
}

/* Column c's density from the bins: the bins that start in it, pro rata when narrower than a bin. */
static void density_cell(const struct timeline *tl, const struct tl_lane *l, const struct tl_window *w, int c,
			 struct tl_cell *cell, uint64_t *busy)
{
	int64_t a = tl_col_start(w, c), e = tl_col_start(w, c + 1);
	int64_t ba, bb;
	uint64_t cnt, bsy;

	if (e <= tl->start_ns || a >= tl->end_ns)
		return;
	ba = (a - tl->start_ns + tl->bin_ns - 1) / tl->bin_ns;
	bb = (e - tl->start_ns + tl->bin_ns - 1) / tl->bin_ns;
	if (ba < 0)
		ba = 0;
	if (bb > (int64_t)tl->nbins)
		bb = tl->nbins;
	if (bb <= ba) {
		/* columns narrower than a bin show the bin they lie in, pro rata */
		ba = tl_bin_of(tl, a);
		bb = ba + 1;
		cnt = bins_count(tl, l, ba, bb);
		bsy = bins_busy(tl, l, ba, bb) * (uint64_t)(e - a) / (uint64_t)tl->bin_ns;
	} else {
		cnt = bins_count(tl, l, ba, bb);
		bsy = bins_busy(tl, l, ba, bb);
	}
	if (!cnt && !bsy)
		return;
	cell->type = TL_CELL_DENSITY;
	cell->count = (uint32_t)cnt;
	*busy = bsy ? bsy : 1;
}

/*
 * The window as single events when there are at most max_events of them:
 * 1 (r holds them, sorted), 0 (too many: density it is), -1 on error.
 */
static int render_exact(struct timeline *tl, size_t lane, const struct tl_window *w, size_t max_events,
			struct tl_render *r)
{
	/* while loading, the bins may not know the window yet: ask SQLite, bounded */
	ptrdiff_t n = tl_fetch_range(tl, lane, w->t0, w->t1, max_events, r);

	if (n < 0)
		return -1;
	if ((size_t)n > max_events) {
		r->nslices = 0;
		return 0;
	}
	r->exact = 1;
	if (tl_push_longs(tl, &tl->lanes[lane], w->t0, w->t1, r) < 0)
		return -1;
	sort_unique(r);
	r->events = (int64_t)r->nslices;
	return 1;
}

int timeline_lane_render(struct timeline *tl, size_t lane, const struct tl_window *w, size_t max_events,
			 struct tl_render *r)
{
	struct tl_lane *l = &tl->lanes[lane];
	uint64_t *busy;
	int exact = 0;

	if (w->cols <= 0 || w->t1 <= w->t0)
		return 0;
	if (grow_array((void **)&r->cells, &r->cells_alloc, (size_t)w->cols, sizeof(*r->cells)))
		return error("out of memory");
	busy = calloc((size_t)w->cols, sizeof(*busy));
	if (!busy)
		return error("out of memory");
	for (int c = 0; c < w->cols; c++) {
		memset(&r->cells[c], 0, sizeof(r->cells[c]));
		r->cells[c].slice = -1;
	}
	r->nslices = 0;
	/* more than a few events a column are read as density, not one by one */
	if (!max_events)
		max_events = w->cols * 4 > 128 ? (size_t)w->cols * 4 : 128;
	r->events = (int64_t)bins_count(tl, l, tl_bin_of(tl, w->t0 - look_back(tl, l)), tl_bin_of(tl, w->t1) + 1);
	r->exact = 0;
	/* where only aggregates were kept there is nothing to draw one by one: density */
	if (l->agg_t1 > w->t0 && l->agg_t0 < w->t1)
		r->events = (int64_t)max_events + 1;
	if ((size_t)r->events <= max_events && (exact = render_exact(tl, lane, w, max_events, r)) < 0)
		goto fail;
	if (!exact) {
		for (int c = 0; c < w->cols; c++)
			density_cell(tl, l, w, c, &r->cells[c], &busy[c]);
		if (tl_push_longs(tl, l, w->t0, w->t1, r) < 0)
			goto fail;
		sort_array(r->slices, r->nslices, sizeof(*r->slices), tl_slice_cmp);
	}
	lod_merge_busy(w, r->slices, r->nslices, r->cells, busy);
	free(busy);
	return 0;
fail:
	free(busy);
	return -1;
}

void tl_render_release(struct tl_render *r)
{
	free(r->cells);
	free(r->slices);
	memset(r, 0, sizeof(*r));
}

