/* timeline_search.c - moving between events: step to the next or previous one, find by id, search by name. */
#include "timeline_internal.h"
#include "checked.h"
#include "db.h"
#include "duration.h"
#include "recording.h"
#include "strbuf.h"
#include "util.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int timeline_lane_step(struct timeline *tl, size_t lane, int64_t t, int dir, int64_t slop, struct tl_slice *out)
{
	struct tl_lane *l = &tl->lanes[lane];
	struct tl_slice best;
	int found = 0, rc;

	if (dir == 0) {
		struct tl_render r = { 0 };
		int64_t bestd = INT64_MAX;

		if (tl_fetch_range(tl, lane, t - slop, t + slop + 1, 4096, &r) < 0 ||
		    tl_push_longs(tl, l, t - slop, t + slop + 1, &r) < 0) {
			tl_render_release(&r);
			return -1;
		}
		for (size_t i = 0; i < r.nslices; i++) {
			const struct tl_slice *s = &r.slices[i];
			int64_t d = t < s->start_ns ? s->start_ns - t : t >= s->end_ns ? t - s->end_ns + 1 : 0;
			/* the innermost (shortest) containing slice wins */
			if (d < bestd || (d == bestd && found && s->end_ns - s->start_ns < best.end_ns - best.start_ns)) {
				bestd = d;
				best = *s;
				found = 1;
			}
		}
		tl_render_release(&r);
		if (found && bestd <= slop)
			*out = best;
		return found && bestd <= slop;
	}
	sqlite3_stmt *st = tl->step[dir > 0][l->kind];
	sqlite3_reset(st);
	tl_bind_lane(st, l);
	sqlite3_bind_int64(st, 3, t);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		tl_row_to_slice(tl, st, l->kind, &best);
		tl_finish_slice(tl, &best, lane);
		found = 1;
	}
	sqlite3_reset(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error("cannot read '%s': %s", tl->rec->path, sqlite3_errmsg(tl->rec->db));
	/* the step statements see long events too: they are rows like the others */
	if (found)
		*out = best;
	return found;
}

static int row_slice_lane(const struct timeline *tl, sqlite3_stmt *st, enum tl_kind kind, struct tl_slice *s)
{
	tl_row_to_slice(tl, st, kind, s);
	tl_finish_slice(tl, s, 0);
	return tl_lane_of(tl, (enum tl_kind)s->kind, sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2),
		       sqlite3_column_int64(st, 7), &s->lane);
}

int timeline_find(struct timeline *tl, enum tl_kind kind, int64_t id, struct tl_slice *out)
{
	char sql[512];
	sqlite3_stmt *st;
	int found = 0, rc;

	if (kind >= TL_NKINDS || !tl->range[kind])
		return 0;
	snprintf(sql, sizeof(sql), "%s WHERE id = ?1", tl_lane_def(kind)->slice);
	st = db_prepare(tl->rec->db, sql);
	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, id);
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		found = row_slice_lane(tl, st, kind, out);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error("cannot read '%s': %s", tl->rec->path, sqlite3_errmsg(tl->rec->db));
	return found;
}

/* Add to the JSON list sb the ids of the rows of t whose text contains needle. */
static void add_matching_rows(const struct tl_idrows *t, const char *needle, struct strbuf *sb, int *first)
{
	for (size_t i = 0; i < t->n; i++) {
		if (t->text[i] && strcasestr(t->text[i], needle)) {
			strbuf_addf(sb, "%s%" PRId64, *first ? "" : ",", t->id[i]);
			*first = 0;
		}
	}
}

/*
 * JSON array of the ids whose text contains needle: string ids, for traces
 * function ids, for CPU kernels graph node ids (by op name or op type).
 */
static void matching_ids(const struct timeline *tl, const char *needle, enum tl_kind kind, struct strbuf *sb)
{
	int first = 1;

	strbuf_addch(sb, '[');
	if (kind == TL_TRACE) {
		for (size_t i = 0; i < tl->functions.n; i++) {
			const char *s = timeline_string(tl, tl->functions.value[i]);
			if (s && strcasestr(s, needle)) {
				strbuf_addf(sb, "%s%" PRId64, first ? "" : ",", tl->functions.id[i]);
				first = 0;
			}
		}
	} else if (kind == TL_CPUK) {
		add_matching_rows(&tl->nodes, needle, sb, &first);
		add_matching_rows(&tl->node_types, needle, sb, &first);
	} else {
		add_matching_rows(&tl->strings, needle, sb, &first);
	}
	strbuf_addch(sb, ']');
}

static int slice_time_cmp(const void *a, const void *b)
{
	return tl_slice_cmp(a, b);
}

ptrdiff_t timeline_search(struct timeline *tl, const char *needle, unsigned mask, size_t max, struct tl_slice **out)
{
	struct strbuf ids = STRBUF_INIT, fids = STRBUF_INIT, nids = STRBUF_INIT;
	struct tl_slice *res = NULL;
	size_t n = 0, alloc = 0;
	ptrdiff_t ret = -1;

	*out = NULL;
	matching_ids(tl, needle, TL_CALL, &ids);
	matching_ids(tl, needle, TL_TRACE, &fids);
	matching_ids(tl, needle, TL_CPUK, &nids);
	for (int k = 0; k < TL_NKINDS; k++) {
		char sql[1024];
		sqlite3_stmt *st;
		int rc;

		if (!(mask & (1u << k)) || !tl->range[k])
			continue;
		snprintf(sql, sizeof(sql), "%s WHERE %s IN (SELECT value FROM json_each(?1)) ORDER BY start_ns LIMIT ?2",
			 tl_lane_def(k)->slice, tl_lane_def(k)->search);
		st = db_prepare(tl->rec->db, sql);
		if (!st)
			goto cleanup;
		sqlite3_bind_text(st, 1, k == TL_TRACE ? fids.buf : k == TL_CPUK ? nids.buf : ids.buf, -1, SQLITE_STATIC);
		sqlite3_bind_int64(st, 2, (int64_t)max);
		while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
			struct tl_slice s;

			if (!row_slice_lane(tl, st, (enum tl_kind)k, &s))
				continue;
			if (ARRAY_GROW(res, n, alloc)) {
				sqlite3_finalize(st);
				error("out of memory");
				goto cleanup;
			}
			res[n++] = s;
		}
		sqlite3_finalize(st);
		if (rc != SQLITE_DONE) {
			error("cannot search '%s': %s", tl->rec->path, sqlite3_errmsg(tl->rec->db));
			goto cleanup;
		}
	}
	sort_array(res, n, sizeof(*res), slice_time_cmp);
	if (n > max)
		n = max;
	*out = res;
	res = NULL;
	ret = (ptrdiff_t)n;
cleanup:
	free(res);
	strbuf_release(&ids);
	strbuf_release(&fids);
	strbuf_release(&nids);
	return ret;
}

