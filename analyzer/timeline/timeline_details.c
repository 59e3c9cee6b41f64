/* timeline_details.c - the labelled details of one slice, for the details panel. */
#include "timeline_internal.h"
#include "checked.h"
#include "db.h"
#include "duration.h"
#include "recording.h"
#include "strbuf.h"
#include "util.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- details ---- */

struct details {
	struct tl_detail *v;
	size_t n, alloc;
	int oom;
};

static void detail_add(struct details *d, const char *label, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void detail_add(struct details *d, const char *label, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	if (ARRAY_GROW(d->v, d->n, d->alloc)) {
		d->oom = 1;
		return;
	}
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	snprintf(d->v[d->n].label, sizeof(d->v[d->n].label), "%s", label);
	d->v[d->n].value = strbuf_detach(&sb);
	if (!d->v[d->n].value)
		d->v[d->n].value = strdup("");
	d->n++;
}


/*
 * What a small pane must show first: what it is, which trace, where in the
 * source, how long; the rest keeps its order (a stable insertion sort_array).
 */
static int detail_rank(const char *label)
{
	static const char *const first[] = { "kind", "name", "trace #", "source", "duration", "start", "thread", "stream" };

	for (size_t i = 0; i < sizeof(first) / sizeof(first[0]); i++)
		if (!strcmp(label, first[i]))
			return (int)i;
	return (int)(sizeof(first) / sizeof(first[0]));
}

static void details_order(struct details *d)
{
	for (size_t i = 1; i < d->n; i++) {
		struct tl_detail x = d->v[i];
		size_t j = i;
		while (j > 0 && detail_rank(d->v[j - 1].label) > detail_rank(x.label)) {
			d->v[j] = d->v[j - 1];
			j--;
		}
		d->v[j] = x;
	}
}

/* What every slice has: kind, name, duration, start, and its thread or stream. */
static void details_common(struct timeline *tl, const struct tl_slice *s, struct details *d)
{
	const struct tl_track *t = &tl->tracks[tl->lanes[s->lane].track];
	char buf[64];

	detail_add(d, "kind", "%s%s", tl_kind_name((enum tl_kind)s->kind),
		   s->flags & TL_SLICE_RETRACE ? " (retrace)" : "");
	detail_add(d, "name", "%s", timeline_slice_name(tl, s));
	duration_format(buf, sizeof(buf), s->end_ns - s->start_ns);
	detail_add(d, "duration", "%s", buf);
	detail_add(d, "start", "%.6f s", (double)(s->start_ns - tl->start_ns) / 1e9);
	if (t->device >= 0)
		detail_add(d, "stream", "GPU %" PRId64 " stream %" PRId64 " (pid %" PRId64 ")", t->device, t->tid, t->pid);
	else
		detail_add(d, "thread", "%" PRId64 " %s%s%s (%s), pid %" PRId64, t->tid, t->name ? "'" : "",
			   t->name ? t->name : "", t->name ? "'" : "", t->role, t->pid);
}

/* The kind's own columns (its details query in the catalog), one labelled detail each.  0 or -1. */
static int details_of_kind(struct timeline *tl, const struct tl_slice *s, struct details *d)
{
	const struct agp_lane *def = tl_lane_def((enum tl_kind)s->kind);
	sqlite3_stmt *st = db_prepare(tl->rec->db, def->details);
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, s->id);
	rc = sqlite3_step(st);
	for (int i = 0; rc == SQLITE_ROW && i < sqlite3_column_count(st) && i < 12 && def->labels[i]; i++) {
		const char *v = db_col_text(st, i);

		if (v && *v)
			detail_add(d, def->labels[i], "%s", v);
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		return error("cannot read '%s': %s", tl->rec->path, sqlite3_errmsg(tl->rec->db));
	return 0;
}

/* One trace input as "name: dtype[shape]", "name: kind value" or "name: kind". */
static void add_trace_input(struct strbuf *sb, sqlite3_stmt *st)
{
	const char *name = db_col_text(st, 0), *kind = db_col_text(st, 1);

	if (sb->len)
		strbuf_addstr(sb, ", ");
	strbuf_addf(sb, "%s: ", name ? name : "?");
	if (kind && (!strcmp(kind, "tensor") || !strcmp(kind, "variable")))
		strbuf_addf(sb, "%s%s%s", db_col_text_or(st, 2, "?"), db_col_text_or(st, 3, ""),
			    !strcmp(kind, "variable") ? " var" : "");
	else if (db_col_text(st, 4))
		strbuf_addf(sb, "%s %s", kind ? kind : "?", db_col_text(st, 4));
	else
		strbuf_addstr(sb, kind ? kind : "?");
}

/* Move the last detail to right after the one labelled label, if there is one. */
static void detail_move_after(struct details *d, const char *label)
{
	for (size_t i = 0; !d->oom && i + 1 < d->n; i++) {
		struct tl_detail last;

		if (strcmp(d->v[i].label, label))
			continue;
		last = d->v[d->n - 1];
		memmove(d->v + i + 2, d->v + i + 1, (d->n - i - 2) * sizeof(*d->v));
		d->v[i + 1] = last;
		return;
	}
}

/* A trace's concrete inputs, right after TensorFlow's signature text.  0 or -1. */
static int details_trace_inputs(struct timeline *tl, const struct tl_slice *s, struct details *d)
{
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *st = db_prepare(tl->rec->db, "SELECT name, kind, dtype, shape, value FROM trace_inputs"
						    " WHERE trace_id = ?1 ORDER BY position");
	int rc;

	if (!st)
		return -1;
	sqlite3_bind_int64(st, 1, s->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		add_trace_input(&sb, st);
	sqlite3_finalize(st);
	if (sb.len) {
		detail_add(d, "inputs", "%s", sb.buf);
		detail_move_after(d, "signature");
	}
	strbuf_release(&sb);
	if (rc != SQLITE_DONE)
		return error("cannot read '%s': %s", tl->rec->path, sqlite3_errmsg(tl->rec->db));
	return 0;
}

ptrdiff_t timeline_details(struct timeline *tl, const struct tl_slice *s, struct tl_detail **out)
{
	struct details d = { 0 };

	*out = NULL;
	if (s->kind >= TL_NKINDS || s->lane >= tl->nlanes)
		return 0;
	details_common(tl, s, &d);
	if (details_of_kind(tl, s, &d) || (s->kind == TL_TRACE && details_trace_inputs(tl, s, &d))) {
		tl_details_free(d.v, d.n);
		return -1;
	}
	if (d.oom) {
		error("out of memory");
		tl_details_free(d.v, d.n);
		return -1;
	}
	details_order(&d);
	*out = d.v;
	return (ptrdiff_t)d.n;
}

void tl_details_free(struct tl_detail *d, size_t n)
{
	for (size_t i = 0; d && i < n; i++)
		free(d[i].value);
	free(d);
}

