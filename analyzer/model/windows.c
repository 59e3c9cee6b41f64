/*
 * windows.c - the recording's capture windows (schema 4, capture_windows;
 * run --delay/--duration/--capture, SIGUSR2, agprof.start/stop) as the
 * model needs them: their union, merged and in time order, so that every
 * share and rate is of recorded time only (model_recorded_ns).
 */
#include "model_internal.h"
#include "db.h"
#include "util.h"

#include <string.h>

static int cmp_windows(const void *a, const void *b)
{
	const struct model_window *x = a, *y = b;

	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

/* Merge overlapping windows of sorted w[0..n); returns the new count. */
static size_t merge_windows(struct model_window *w, size_t n)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++) {
		if (k && w[i].start_ns <= w[k - 1].end_ns) {
			if (w[i].end_ns > w[k - 1].end_ns)
				w[k - 1].end_ns = w[i].end_ns;
			continue;
		}
		w[k++] = w[i];
	}
	return k;
}

int model_load_windows(struct model *m, sqlite3 *db)
{
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	m->nwindows = 0;
	/* Recordings before schema 4, or made without a capture option: the whole run. */
	if (!m->session.capture)
		return 0;
	st = db_prepare(db, "SELECT start_ns, end_ns, why FROM capture_windows WHERE end_ns > start_ns LIMIT 1000000");
	if (!st)
		return -1;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct model_window *w;

		if (ARRAY_GROW(m->windows, m->nwindows, cap)) {
			sqlite3_finalize(st);
			return -1;
		}
		w = &m->windows[m->nwindows++];
		w->start_ns = sqlite3_column_int64(st, 0);
		w->end_ns = sqlite3_column_int64(st, 1);
		w->why = model_strdup(m, (const char *)sqlite3_column_text(st, 2));
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return -1;
	sort_array(m->windows, m->nwindows, sizeof(*m->windows), cmp_windows);
	m->session.capture_windows = (int64_t)m->nwindows;
	m->nwindows = merge_windows(m->windows, m->nwindows);
	return 0;
}

int64_t model_recorded_ns(const struct model *m, int64_t from, int64_t to)
{
	int64_t sum = 0;

	if (!m->session.capture)
		return to > from ? to - from : 0;
	for (size_t i = 0; i < m->nwindows; i++) {
		int64_t a = m->windows[i].start_ns > from ? m->windows[i].start_ns : from;
		int64_t b = m->windows[i].end_ns < to ? m->windows[i].end_ns : to;

		if (b > a)
			sum = sat_add64(sum, b - a);
	}
	return sum;
}
