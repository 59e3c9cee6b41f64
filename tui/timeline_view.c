/*
 * timeline_view.c - the timeline: a time axis with retrace and finding
 * marks, one row per lane (a kind of event on a thread or GPU stream),
 * grouped by process, and the details pane of the selected slice.
 */
#include "view.h"
#include "model.h"

#include <stdlib.h>
#include <string.h>

/* What each lane showed at the last draw, to draw again without a query. */
struct lane_cache {
	struct tl_render r;
	struct tl_window w;
	uint64_t gen;
	int valid;
};

struct timeline_priv {
	struct lane_cache *cache;
	size_t ncache;
	size_t top;        /* first layout row shown */
	int track_rows;    /* rows for lanes at the last draw */
	int slice_y;       /* screen row of the first lane row */
};

#define DETAILS_ROWS 7   /* the bottom pane, with its rule */
#define SIDE_COLS 50     /* the side pane of a wide terminal */
#define SIDE_MIN_WIDTH 150

static struct timeline_priv *priv_of(struct tui *t, struct view *v)
{
	struct timeline_priv *p = v->priv;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return NULL;
		v->priv = p;
	}
	/* lanes appear while the scan runs */
	if (p->ncache < t->tl->nlanes) {
		struct lane_cache *c = realloc(p->cache, t->tl->nlanes * sizeof(*c));
		if (!c)
			return NULL;
		memset(c + p->ncache, 0, (t->tl->nlanes - p->ncache) * sizeof(*c));
		p->cache = c;
		p->ncache = t->tl->nlanes;
	}
	return p;
}

static int tlview_open(struct tui *t, struct view *v)
{
	return priv_of(t, v) ? 0 : -1;
}

static void tlview_close(struct tui *t, struct view *v)
{
	struct timeline_priv *p = v->priv;

	(void)t;
	if (!p)
		return;
	for (size_t i = 0; i < p->ncache; i++)
		tl_render_release(&p->cache[i].r);
	free(p->cache);
	free(p);
	v->priv = NULL;
}

static const struct tl_render *lane_render(struct tui *t, struct timeline_priv *p, size_t lane)
{
	struct lane_cache *c = &p->cache[lane];

	if (c->valid && c->gen == t->data_gen && c->w.t0 == t->win.t0 && c->w.t1 == t->win.t1 &&
	    c->w.cols == t->win.cols)
		return &c->r;
	c->valid = 0;
	if (timeline_lane_render(t->tl, lane, &t->win, 0, &c->r) < 0)
		return NULL;
	c->w = t->win;
	c->gen = t->data_gen;
	c->valid = 1;
	return &c->r;
}

static void ensure_layout(struct tui *t)
{
	if (!t->layout_dirty)
		return;
	if (layout_build(&t->layout, t->tl, t->kind_mask) < 0)
		tui_message(t, 1, "out of memory");
	t->layout_dirty = 0;
	if (!t->has_lane || layout_row_of_lane(&t->layout, t->lane) < 0) {
		ptrdiff_t r = layout_next_lane_row(&t->layout, -1, 1);
		t->has_lane = r >= 0;
		if (r >= 0)
			t->lane = t->layout.rows[r].lane;
	}
}

/* ---- drawing ---- */

static void draw_axis(struct tui *t, int y, int x)
{
	int64_t span = t->win.t1 - t->win.t0;
	int64_t step = axis_step(span, t->win.cols, 11);
	int64_t rel0 = t->win.t0 - t->tl->start_ns;
	int64_t first = (rel0 + step - 1) / step * step;
	char buf[32];

	attrset(A_BOLD);
	tui_put(t, y, 0, LABEL_COLS, "time", 1);
	tui_put(t, y + 1, 0, LABEL_COLS, "", 1);
	attrset(A_NORMAL);
	move(y + 1, x);
	for (int c = 0; c < t->win.cols; c++)
		addstr(t->g.hline);
	for (int64_t tick = first; tick - rel0 < span; tick += step) {
		int64_t c = tl_col_of(&t->win, tick + t->tl->start_ns);
		if (c < 0 || c >= t->win.cols)
			continue;
		axis_label(buf, sizeof(buf), tick, step, t->g.micro);
		if (c + (int)strlen(buf) <= t->win.cols)
			tui_put(t, y, x + (int)c, t->win.cols - (int)c, buf, 0);
		mvaddstr(y + 1, x + (int)c, t->g.tick);
	}
	/* findings first, retraces over them: retraces are what n/N is mostly for */
	attrset(tui_pair_attr(t, PAIR_HEADER, A_BOLD) | A_BOLD);
	for (size_t i = 0; t->m && i < t->m->nfindings; i++) {
		const struct finding *f = &t->m->findings[i];
		int64_t c = tl_col_of(&t->win, f->start_ns);
		if (f->start_ns > 0 && c >= 0 && c < t->win.cols)
			mvaddstr(y + 1, x + (int)c, t->g.finding);
	}
	attrset(tui_pair_attr(t, PAIR_MARK, A_BOLD) | A_BOLD);
	for (size_t i = 0; i < t->tl->nretraces; i++) {
		int64_t c = tl_col_of(&t->win, t->tl->retraces[i].slice.start_ns);
		if (c >= 0 && c < t->win.cols)
			mvaddstr(y + 1, x + (int)c, t->g.retrace);
	}
	attrset(A_NORMAL);
	if (t->has_sel) {
		int64_t c = tl_col_of(&t->win, t->sel.start_ns);
		if (c >= 0 && c < t->win.cols) {
			attrset(A_BOLD | A_REVERSE);
			mvaddstr(y + 1, x + (int)c, t->g.caret);
			attrset(A_NORMAL);
		}
	}
}

static void draw_lane_label(struct tui *t, int y, const struct layout_row *row)
{
	const struct tl_lane *l = &t->tl->lanes[row->lane];
	const struct tl_track *tr = &t->tl->tracks[l->track];
	int selected = t->has_lane && t->lane == row->lane;
	char label[LABEL_COLS + 1];

	snprintf(label, sizeof(label), "%-11.11s%-5s ", row->first ? tr->label : "", tl_kind_short(l->kind));
	attrset(selected ? (int)(A_REVERSE | A_BOLD) : (int)A_BOLD);
	tui_put(t, y, 0, LABEL_COLS - 1, label, 1);
	attrset(A_NORMAL);
	tui_put(t, y, LABEL_COLS - 1, 1, t->g.sep, 0);
}

static int same_slice(const struct tl_slice *a, const struct tl_slice *b)
{
	return a->id == b->id && a->kind == b->kind;
}

static void draw_lane(struct tui *t, struct timeline_priv *p, int y, int x, size_t lane)
{
	const struct tl_render *r = lane_render(t, p, lane);
	const struct tl_lane *l = &t->tl->lanes[lane];

	if (!r) {
		tui_put(t, y, x, t->win.cols, "(cannot read this lane)", 1);
		return;
	}
	for (int c = 0; c < t->win.cols;) {
		const struct tl_cell *cell = &r->cells[c];

		if (cell->type == TL_CELL_EMPTY) {
			c++;
			continue;
		}
		if (cell->type == TL_CELL_DENSITY) {
			attrset(tui_density_attr(t, l->kind));
			mvaddstr(y, x + c, t->g.shade[cell->shade ? cell->shade : 1]);
			attrset(A_NORMAL);
			c++;
			continue;
		}
		/* a run of cells of one slice: its name inside, clipped */
		int c1 = c;
		while (c1 + 1 < t->win.cols && r->cells[c1 + 1].type == TL_CELL_SLICE && r->cells[c1 + 1].slice == cell->slice)
			c1++;
		const struct tl_slice *s = &r->slices[cell->slice];
		int selected = t->has_sel && same_slice(s, &t->sel);
		int boundary = c > 0 && r->cells[c - 1].type == TL_CELL_SLICE && c1 > c;
		attrset(tui_slice_attr(t, l->kind, selected) | (s->flags & TL_SLICE_RETRACE ? A_BOLD : 0));
		move(y, x + c);
		if (boundary)
			addstr(t->g.sep);
		tui_put(t, y, x + c + boundary, c1 - c + 1 - boundary, timeline_slice_name(t->tl, s), 1);
		attrset(A_NORMAL);
		c = c1 + 1;
	}
}

/* The details pane: label/value pairs packed on lines. */
static void draw_details_pane(struct tui *t, int y, int h, int w)
{
	struct tl_detail *d = NULL;
	ptrdiff_t n;
	int line = 0, x = 0;

	tui_rule(t, y, 0, w, "details");
	if (!t->has_sel) {
		tui_put(t, y + 1, 1, w - 1,
			t->has_lane ? "no slice selected: . and , select slices, n/N retraces, click a slice" : "empty recording",
			0);
		return;
	}
	n = tui_selection_details(t, &d);
	for (ptrdiff_t i = 0; i < n && line < h - 1; i++) {
		int need = (int)strlen(d[i].label) + 2 + (int)strlen(d[i].value);
		if (x > 0 && x + 2 + need > w) {
			line++;
			x = 0;
		}
		if (line >= h - 1)
			break;
		if (x > 0)
			x += 2;
		attrset(A_BOLD);
		x += tui_putf(t, y + 1 + line, x, w - x, 0, "%s: ", d[i].label);
		attrset(A_NORMAL);
		x += tui_put(t, y + 1 + line, x, w - x, d[i].value, 0);
		if (x >= w) {
			line++;
			x = 0;
		}
	}
	tl_details_free(d, n > 0 ? (size_t)n : 0);
}

/* The side pane of a wide terminal: one label/value pair a line, values wrapped. */
static void draw_details_side(struct tui *t, int y, int x, int h, int w)
{
	struct tl_detail *d = NULL;
	ptrdiff_t n;
	int line = 0;

	for (int i = 0; i < h; i++)
		mvaddstr(y + i, x - 1, t->g.sep);
	attrset(A_BOLD);
	tui_put(t, y, x, w, "details", 1);
	attrset(A_NORMAL);
	if (!t->has_sel) {
		tui_wrap(t, y + 1, x, w, 0, h - 1, "no slice selected: . and , select slices, n/N retraces, click a slice");
		return;
	}
	n = tui_selection_details(t, &d);
	for (ptrdiff_t i = 0; i < n && line < h - 1; i++) {
		int lw = (int)strlen(d[i].label) + 2;
		attrset(A_BOLD);
		tui_putf(t, y + 1 + line, x, w, 0, "%s: ", d[i].label);
		attrset(A_NORMAL);
		if (lw + (int)strlen(d[i].value) <= w) {
			tui_put(t, y + 1 + line, x + lw, w - lw, d[i].value, 0);
			line++;
		} else {
			line += tui_wrap(t, y + 2 + line, x + 2, w - 2, 0, h - 2 - line, d[i].value) + 1;
		}
	}
	tl_details_free(d, n > 0 ? (size_t)n : 0);
}

static void tlview_draw(struct tui *t, struct view *v, int y, int x, int h, int w)
{
	struct timeline_priv *p = priv_of(t, v);
	int side = t->details_pane && w >= SIDE_MIN_WIDTH;
	int pane = t->details_pane && !side && h >= 14 ? DETAILS_ROWS : 0;
	int rows = h - 2 - pane;
	ptrdiff_t selrow;

	(void)x;
	if (!p)
		return;
	t->win.cols = w - LABEL_COLS - (side ? SIDE_COLS + 1 : 0);
	tui_clamp_window(t);
	ensure_layout(t);
	draw_axis(t, y, LABEL_COLS);
	selrow = t->has_lane ? layout_row_of_lane(&t->layout, t->lane) : -1;
	if (selrow >= 0)
		p->top = layout_scroll(p->top, (size_t)selrow, (size_t)rows, t->layout.nrows);
	if (p->top >= t->layout.nrows)
		p->top = 0;
	p->track_rows = rows;
	p->slice_y = y + 2;
	for (int i = 0; i < rows && p->top + (size_t)i < t->layout.nrows; i++) {
		const struct layout_row *row = &t->layout.rows[p->top + (size_t)i];
		int ry = y + 2 + i;

		if (row->type == ROW_PROCESS) {
			const char *cmd = NULL;
			for (size_t k = 0; k < t->tl->ntracks && !cmd; k++)
				if (t->tl->tracks[k].pid == row->pid)
					cmd = t->tl->tracks[k].command;
			attrset(tui_pair_attr(t, PAIR_HEADER, A_BOLD) | A_BOLD);
			tui_putf(t, ry, 0, w, 1, "process %lld%s%s", (long long)row->pid, cmd ? ": " : "", cmd ? cmd : "");
			attrset(A_NORMAL);
			continue;
		}
		draw_lane_label(t, ry, row);
		draw_lane(t, p, ry, LABEL_COLS, row->lane);
	}
	if (t->layout.nrows == 0)
		tui_put(t, y + 2, 0, w,
			t->tl->nlanes ? "every kind is hidden: press a to show all"
			: t->loading  ? "reading the recording..."
				      : "this recording holds no events",
			0);
	if (pane)
		draw_details_pane(t, y + h - pane, pane, w);
	if (side)
		draw_details_side(t, y, w - SIDE_COLS, h, SIDE_COLS);
}

/* ---- requests ---- */

static void zoom(struct tui *t, int64_t center, double factor)
{
	int64_t span = t->win.t1 - t->win.t0;
	int64_t nspan = (int64_t)((double)span * factor);
	double frac = span > 0 ? (double)(center - t->win.t0) / (double)span : 0.5;

	if (nspan < t->win.cols)
		nspan = t->win.cols;
	/* the time under the centre stays in the same column */
	t->win.t0 = center - (int64_t)(frac * (double)nspan);
	t->win.t1 = t->win.t0 + nspan;
	tui_clamp_window(t);
}

static int64_t zoom_center(const struct tui *t)
{
	if (t->has_sel && t->sel.start_ns >= t->win.t0 && t->sel.start_ns < t->win.t1)
		return t->sel.start_ns + (t->sel.end_ns - t->sel.start_ns) / 2;
	if (t->cursor >= t->win.t0 && t->cursor < t->win.t1)
		return t->cursor;
	return t->win.t0 + (t->win.t1 - t->win.t0) / 2;
}

static void pan(struct tui *t, int64_t by)
{
	t->win.t0 += by;
	t->win.t1 += by;
	tui_clamp_window(t);
}

/* Width of one column in ns. */
static int64_t col_ns(const struct tui *t)
{
	int64_t w = (t->win.t1 - t->win.t0) / (t->win.cols > 0 ? t->win.cols : 1);
	return w > 0 ? w : 1;
}

/* Select the slice of the current lane at the cursor time, if any near. */
static void select_at_cursor(struct tui *t, int64_t slop)
{
	struct tl_slice s;

	if (!t->has_lane)
		return;
	if (timeline_lane_step(t->tl, t->lane, t->cursor, 0, slop, &s) == 1) {
		t->sel = s;
		t->has_sel = 1;
	} else {
		t->has_sel = 0;
	}
}

static int step_slice(struct tui *t, int dir)
{
	struct tl_slice s;
	int64_t from = t->has_sel ? t->sel.start_ns : t->cursor;
	int rc;

	if (!t->has_lane)
		return TUI_HANDLED;
	rc = timeline_lane_step(t->tl, t->lane, from, dir, 0, &s);
	if (rc != 1) {
		tui_message(t, 0, "no %s slice on this track", dir > 0 ? "later" : "earlier");
		return TUI_HANDLED | TUI_REDRAW;
	}
	t->sel = s;
	t->has_sel = 1;
	t->cursor = s.start_ns;
	if (s.start_ns < t->win.t0 || s.start_ns >= t->win.t1)
		pan(t, s.start_ns - (t->win.t0 + (t->win.t1 - t->win.t0) / 2));
	return TUI_HANDLED | TUI_REDRAW;
}

/* c: the selected collective on the next rank, selected and brought into view. */
static int goto_peer(struct tui *t)
{
	struct tl_collective c;
	int rc;

	if (!t->has_sel) {
		tui_message(t, 0, "no slice selected: select a collective (an eager op or CPU kernel)");
		return TUI_HANDLED | TUI_REDRAW;
	}
	rc = timeline_collective_peer(t->tl, &t->sel, &c);
	if (rc < 0) {
		tui_message(t, 1, "cannot read the collectives of this recording");
	} else if (rc == 0) {
		tui_message(t, 0, "%s", c.is_collective ? "its peer on the next rank is not on the timeline"
						     : "not a collective of a merged recording (agprof merge)");
	} else {
		tui_jump_slice(t, &c.peer);
		tui_message(t, 0, "rank %lld: the same collective, %s: %.3f ms here, %.3f ms on rank %lld",
			    (long long)c.peer_rank, c.text, (double)c.peer_span_ns / 1e6, (double)c.span_ns / 1e6,
			    (long long)c.rank);
	}
	return TUI_HANDLED | TUI_REDRAW;
}

static int change_lane(struct tui *t, int dir)
{
	ptrdiff_t row = t->has_lane ? layout_row_of_lane(&t->layout, t->lane) : -1;
	ptrdiff_t next = layout_next_lane_row(&t->layout, row, dir);

	if (next < 0)
		return TUI_HANDLED;
	t->lane = t->layout.rows[next].lane;
	t->has_lane = 1;
	if (t->has_sel)
		t->cursor = t->sel.start_ns;
	select_at_cursor(t, 2 * col_ns(t));
	return TUI_HANDLED | TUI_REDRAW;
}

static int goto_mark(struct tui *t, int dir)
{
	ptrdiff_t i;
	const struct mark *mk;

	if (!t->nmarks) {
		tui_message(t, 0, "no retraces and no findings with a time in this recording");
		return TUI_HANDLED | TUI_REDRAW;
	}
	if (t->mark_cur >= 0 && t->marks[t->mark_cur].t == t->cursor) {
		i = t->mark_cur + dir;
	} else if (dir > 0) {
		for (i = 0; (size_t)i < t->nmarks && t->marks[i].t <= t->cursor; i++)
			;
	} else {
		for (i = (ptrdiff_t)t->nmarks - 1; i >= 0 && t->marks[i].t >= t->cursor; i--)
			;
	}
	if (i < 0 || (size_t)i >= t->nmarks) {
		/* wrap like a search does, and say so */
		i = dir > 0 ? 0 : (ptrdiff_t)t->nmarks - 1;
		tui_message(t, 0, "wrapped to the %s", dir > 0 ? "first mark" : "last mark");
	}
	t->mark_cur = i;
	mk = &t->marks[i];
	if (!mk->is_finding) {
		const struct tl_mark *m = &t->tl->retraces[mk->index];
		const char *cause = NULL, *why = tui_retrace_why(t, m->slice.id, &cause);
		int wrapped = t->message[0] != '\0';

		tui_jump_slice(t, &m->slice);
		if (!wrapped)
			tui_message(t, 0, "retrace %zu/%zu: %s, trace #%d%s%s%s%s", mk->index + 1, t->tl->nretraces,
				    timeline_slice_name(t->tl, &m->slice), m->object_trace_no, why ? " (" : "",
				    why ? cause : "", why ? ": " : "", why ? why : "");
		if (why && !wrapped)
			strncat(t->message, ")", sizeof(t->message) - strlen(t->message) - 1);
	} else {
		const struct finding *f = &t->m->findings[mk->index];
		int64_t fn = -1;

		for (size_t k = 0; f->function && k < t->m->nfunctions; k++)
			if (!strcmp(t->m->functions[k].name, f->function))
				fn = t->m->functions[k].id;
		tui_jump_span(t, f->start_ns, f->end_ns > f->start_ns ? f->end_ns : f->start_ns + 1, fn);
		t->cursor = f->start_ns;
		tui_message(t, 0, "finding %zu/%zu [%s] %s: %s", mk->index + 1, t->m->nfindings, severity_name(f->severity),
			    f->rule, f->title);
	}
	t->cursor = mk->t;
	return TUI_HANDLED | TUI_REDRAW;
}

static int toggle_kind(struct tui *t, int kind)
{
	t->kind_mask ^= 1u << kind;
	t->layout_dirty = 1;
	if (t->has_sel && !(t->kind_mask & (1u << t->sel.kind)))
		t->has_sel = 0;
	tui_message(t, 0, "%s %s", tl_kind_name(kind), t->kind_mask & (1u << kind) ? "shown" : "hidden");
	return TUI_HANDLED | TUI_REDRAW;
}

static int mouse(struct tui *t, struct view *v)
{
	struct timeline_priv *p = v->priv;
	MEVENT *e = &t->mouse;
	int row = e->y - p->slice_y;
	int64_t at;

	if (e->x < LABEL_COLS || t->win.cols <= 0)
		return TUI_HANDLED;
	at = tl_col_start(&t->win, e->x - LABEL_COLS) + col_ns(t) / 2;
	if (e->bstate & BUTTON4_PRESSED) {
		zoom(t, at, 0.5);
		return TUI_HANDLED | TUI_REDRAW;
	}
#ifdef BUTTON5_PRESSED
	if (e->bstate & BUTTON5_PRESSED) {
		zoom(t, at, 2.0);
		return TUI_HANDLED | TUI_REDRAW;
	}
#endif
	if (!(e->bstate & (BUTTON1_PRESSED | BUTTON1_CLICKED)))
		return TUI_HANDLED;
	if (row >= 0 && row < p->track_rows && p->top + (size_t)row < t->layout.nrows &&
	    t->layout.rows[p->top + (size_t)row].type == ROW_LANE) {
		t->lane = t->layout.rows[p->top + (size_t)row].lane;
		t->has_lane = 1;
		t->cursor = at;
		select_at_cursor(t, col_ns(t));
	}
	return TUI_HANDLED | TUI_REDRAW;
}

/* Pan and zoom requests: 1 when req was one (the window moved), 0 otherwise. */
static int move_window(struct tui *t, enum request req)
{
	int64_t span = t->win.t1 - t->win.t0, step = span / 8 > 0 ? span / 8 : 1;

	switch (req) {
	case REQ_PAN_LEFT:
		pan(t, -step);
		break;
	case REQ_PAN_RIGHT:
		pan(t, step);
		break;
	case REQ_PAN_LEFT_FAR:
		pan(t, -span);
		break;
	case REQ_PAN_RIGHT_FAR:
		pan(t, span);
		break;
	case REQ_ZOOM_IN:
		zoom(t, zoom_center(t), 0.5);
		break;
	case REQ_ZOOM_OUT:
		zoom(t, zoom_center(t), 2.0);
		break;
	case REQ_ZOOM_ALL:
		t->win.t0 = t->tl->start_ns;
		t->win.t1 = t->tl->end_ns;
		break;
	case REQ_ZOOM_SEL:
		if (!t->has_sel) {
			tui_message(t, 0, "no slice selected");
			break;
		}
		t->win.t0 = t->sel.start_ns - (t->sel.end_ns - t->sel.start_ns) / 10;
		t->win.t1 = t->sel.end_ns + (t->sel.end_ns - t->sel.start_ns) / 10 + 1;
		tui_clamp_window(t);
		break;
	case REQ_HOME:
		pan(t, t->tl->start_ns - t->win.t0);
		t->cursor = t->tl->start_ns;
		break;
	case REQ_END:
		pan(t, t->tl->end_ns - t->win.t1);
		t->cursor = t->tl->end_ns - 1;
		break;
	default:
		return 0;
	}
	return 1;
}

static int tlview_request(struct tui *t, struct view *v, enum request req)
{
	ensure_layout(t);
	if (move_window(t, req))
		return TUI_HANDLED | TUI_REDRAW;
	switch (req) {
	case REQ_PREV_SLICE:
		return step_slice(t, -1);
	case REQ_NEXT_SLICE:
		return step_slice(t, 1);
	case REQ_UP:
		return change_lane(t, -1);
	case REQ_DOWN:
		return change_lane(t, 1);
	case REQ_PAGE_UP:
	case REQ_PAGE_DOWN: {
		int r = 0;
		for (int i = 0; i < 8; i++)
			r |= change_lane(t, req == REQ_PAGE_UP ? -1 : 1);
		return r | TUI_HANDLED;
	}
	case REQ_NEXT_MARK:
		return goto_mark(t, 1);
	case REQ_PREV_MARK:
		return goto_mark(t, -1);
	case REQ_PEER:
		return goto_peer(t);
	case REQ_KIND_TRACE:
	case REQ_KIND_CALL:
	case REQ_KIND_EAGER:
	case REQ_KIND_BLACKBOX:
	case REQ_KIND_KERNEL:
	case REQ_KIND_COPY:
	case REQ_KIND_CPUK:
		return toggle_kind(t, req - REQ_KIND_TRACE);
	case REQ_KIND_ALL:
		t->kind_mask = TL_ALL_KINDS;
		t->layout_dirty = 1;
		break;
	case REQ_ENTER:
		if (!t->has_sel) {
			tui_message(t, 0, "no slice selected: . and , select slices on the track");
			break;
		}
		tui_switch(t, VIEW_DETAILS);
		break;
	case REQ_MOUSE:
		return mouse(t, v);
	default:
		return 0;
	}
	return TUI_HANDLED | TUI_REDRAW;
}

const struct view_ops timeline_view_ops = {
	"timeline", tlview_open, tlview_draw, tlview_request, tlview_close,
};
