/* tui.c - terminal setup, the main loop and the helpers the views share. */
#include "view.h"
#include "term.h"
#include "duration.h"
#include "model.h"
#include "strbuf.h"
#include "util.h"

#include <langinfo.h>
#include <limits.h>
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MIN_COLS 60
#define MIN_ROWS 15

static const struct glyphs glyphs_utf8 = {
	{ " ", "\xe2\x96\x91", "\xe2\x96\x92", "\xe2\x96\x93", "\xe2\x96\x88" }, /* ░ ▒ ▓ █ */
	"\xe2\x96\xbc",  /* ▼ */
	"\xe2\x97\x86",  /* ◆ */
	"\xe2\x96\xb2",  /* ▲ */
	"\xe2\x94\xac",  /* ┬ */
	"\xe2\x94\x80",  /* ─ */
	"\xe2\x96\x8f",  /* ▏ */
	"\xc2\xb5s",     /* µs */
	1,
};

static const struct glyphs glyphs_ascii = {
	{ " ", ".", ":", "%", "#" }, "R", "F", "^", "+", "-", "|", "us", 0,
};

void tui_message(struct tui *t, int is_error, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->message, sizeof(t->message), fmt, ap);
	va_end(ap);
	t->message_error = is_error;
}

/* ---- colours ---- */

static void colors_init(struct tui *t)
{
	const char *no = getenv("NO_COLOR");

	t->colors = 0;
	if ((no && *no) || !has_colors() || start_color() == ERR)
		return;
	use_default_colors();
	t->colors = COLORS >= 256 ? 256 : 8;
	init_pair(PAIR_TITLE, COLOR_WHITE, COLOR_BLUE);
	init_pair(PAIR_STATUS, COLOR_BLACK, COLOR_CYAN);
	init_pair(PAIR_MARK, COLOR_RED, -1);
	init_pair(PAIR_SEL, COLOR_BLACK, COLOR_WHITE);
	init_pair(PAIR_ERROR, COLOR_WHITE, COLOR_RED);
	init_pair(PAIR_HEADER, COLOR_YELLOW, -1);
	for (int k = 0; k < TL_NKINDS; k++) {
		/* per kind: the catalog's 8-colour and 256-colour choices (common/kinds.c) */
		const struct agp_lane *l = agp_lane_find(k);
		short c = t->colors == 256 ? l->color256 : l->color8;
		init_pair((short)(PAIR_SLICE + k), t->colors == 256 ? 16 : COLOR_BLACK, c);
		init_pair((short)(PAIR_DENSITY + k), c, -1);
	}
}

int tui_pair_attr(const struct tui *t, int pair, int mono)
{
	return t->colors ? (int)COLOR_PAIR(pair) : mono;
}

int tui_slice_attr(const struct tui *t, int kind, int selected)
{
	if (selected)
		return t->colors ? (int)(COLOR_PAIR(PAIR_SEL) | A_BOLD) : (int)(A_BOLD | A_UNDERLINE);
	return t->colors ? (int)COLOR_PAIR(PAIR_SLICE + kind) : (int)A_REVERSE;
}

int tui_density_attr(const struct tui *t, int kind)
{
	return t->colors ? (int)COLOR_PAIR(PAIR_DENSITY + kind) : (int)A_NORMAL;
}

/* ---- text ---- */

int tui_put(struct tui *t, int y, int x, int w, const char *s, int pad)
{
	int col = 0;
	char out[8];

	if (w <= 0)
		return 0;
	move(y, x);
	/* recorded text: control characters (C0, DEL, C1) and invalid UTF-8 never reach the terminal */
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && col < w; col++) {
		uint32_t c;
		size_t n = utf8_seq(p, strnlen((const char *)p, 4), &c);

		if (!n || c < 0x20 || (c >= 0x7f && c <= 0x9f)) {
			addch('?');
			p += n ? n : 1;
		} else if (n == 1) {
			addch(*p++);
		} else {
			/* one UTF-8 sequence: one column (wide characters are rare here) */
			if (t->g.utf8) {
				memcpy(out, p, n);
				out[n] = '\0';
				addstr(out);
			} else {
				addch('?');
			}
			p += n;
		}
	}
	while (pad && col < w) {
		addch(' ');
		col++;
	}
	return col;
}

int tui_putf(struct tui *t, int y, int x, int w, int pad, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return tui_put(t, y, x, w, buf, pad);
}

int tui_wrap(struct tui *t, int y, int x, int w, int skip, int maxlines, const char *text)
{
	const char *p = text ? text : "";
	int line = 0;

	if (w <= 0)
		return 0;
	while (*p) {
		/* take up to w columns (counting UTF-8 sequences as one), break at a space */
		const char *e = p, *brk = NULL;
		int cols = 0;

		while (*e && *e != '\n' && cols < w) {
			if (*e == ' ')
				brk = e;
			e++;
			while ((*e & 0xc0) == 0x80)
				e++;
			cols++;
		}
		if (*e && *e != '\n' && *e != ' ' && brk && brk > p)
			e = brk;
		if (line >= skip && line - skip < maxlines) {
			char buf[1024];
			size_t n = (size_t)(e - p) < sizeof(buf) - 1 ? (size_t)(e - p) : sizeof(buf) - 1;
			memcpy(buf, p, n);
			buf[n] = '\0';
			tui_put(t, y + line - skip, x, w, buf, 0);
		}
		line++;
		p = e;
		while (*p == ' ' || *p == '\n')
			p++;
	}
	return line;
}

void tui_rule(struct tui *t, int y, int x, int w, const char *title)
{
	int n = 0;

	move(y, x);
	attron(A_BOLD);
	for (int i = 0; i < 2 && n < w; i++, n++)
		addstr(t->g.hline);
	if (title && n < w) {
		n += tui_putf(t, y, x + n, w - n, 0, " %s ", title);
		move(y, x + n);
	}
	for (; n < w; n++)
		addstr(t->g.hline);
	attroff(A_BOLD);
}

/* ---- marks (n / N) ---- */

static int mark_cmp(const void *a, const void *b)
{
	const struct mark *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->is_finding - y->is_finding;
}

static int marks_build(struct tui *t)
{
	size_t n = t->tl->nretraces + (t->m ? t->m->nfindings : 0);

	free(t->marks);
	t->nmarks = 0;
	t->marks = calloc(n ? n : 1, sizeof(*t->marks));
	if (!t->marks)
		return -1;
	for (size_t i = 0; i < t->tl->nretraces; i++)
		t->marks[t->nmarks++] = (struct mark){ t->tl->retraces[i].slice.start_ns, 0, i };
	for (size_t i = 0; t->m && i < t->m->nfindings; i++)
		if (t->m->findings[i].start_ns > 0)
			t->marks[t->nmarks++] = (struct mark){ t->m->findings[i].start_ns, 1, i };
	qsort(t->marks, t->nmarks, sizeof(*t->marks), mark_cmp);
	t->mark_cur = -1;
	return 0;
}

/* ---- model look-ups ---- */

const char *tui_retrace_why(const struct tui *t, int64_t trace_id, const char **cause)
{
	if (!t->m)
		return NULL;
	for (size_t i = 0; i < t->m->nfunctions; i++) {
		const struct model_function *f = &t->m->functions[i];
		for (size_t j = 0; j < f->ntraces; j++) {
			if (f->traces[j].id != trace_id)
				continue;
			if (f->traces[j].why.cause == CAUSE_NONE)
				return NULL;
			*cause = retrace_cause_name(f->traces[j].why.cause);
			return f->traces[j].why.detail;
		}
	}
	return NULL;
}

/* A collective of a merged recording: what it is across ranks, and its peer on the next one (key c). */
static ptrdiff_t add_collective_detail(struct tui *t, struct tl_detail **out, ptrdiff_t n)
{
	const struct tl_collective *c = &t->sel_coll;
	struct tl_detail *p;
	char text[256];

	if (!t->has_sel_coll || memcmp(&t->sel_coll_of, &t->sel, sizeof(t->sel))) {
		t->sel_coll_rc = timeline_collective_peer(t->tl, &t->sel, &t->sel_coll);
		t->sel_coll_of = t->sel;
		t->has_sel_coll = 1;
	}
	if (t->sel_coll_rc <= 0 && !c->is_collective)
		return n;
	p = realloc(*out, (size_t)(n + 1) * sizeof(*p));
	if (!p)
		return n;
	*out = p;
	if (t->sel_coll_rc > 0)
		snprintf(text, sizeof(text), "%s: %.3f ms here, %.3f ms on rank %lld (c: go there)", c->text,
			 (double)c->span_ns / 1e6, (double)c->peer_span_ns / 1e6, (long long)c->peer_rank);
	else
		snprintf(text, sizeof(text), "%s", c->text);
	snprintf(p[n].label, sizeof(p[n].label), "collective");
	p[n].value = strdup(text);
	if (!p[n].value)
		return n;
	return n + 1;
}

ptrdiff_t tui_selection_details(struct tui *t, struct tl_detail **out)
{
	ptrdiff_t n;
	const char *why, *cause = NULL;

	if (!t->has_sel)
		return 0;
	n = timeline_details(t->tl, &t->sel, out);
	if (n >= 0 && (t->sel.kind == TL_EAGER || t->sel.kind == TL_CPUK))
		return add_collective_detail(t, out, n);
	if (n < 0 || t->sel.kind != TL_TRACE)
		return n;
	why = tui_retrace_why(t, t->sel.id, &cause);
	if (!why)
		return n;
	/* the cause goes right after what and which trace: it is why a person looks at a retrace */
	struct tl_detail *p = realloc(*out, (size_t)(n + 1) * sizeof(*p));
	ptrdiff_t at = 0;
	if (!p)
		return n;
	*out = p;
	while (at < n && (!strcmp(p[at].label, "kind") || !strcmp(p[at].label, "name") || !strcmp(p[at].label, "trace #")))
		at++;
	memmove(p + at + 1, p + at, (size_t)(n - at) * sizeof(*p));
	snprintf(p[at].label, sizeof(p[at].label), "retrace cause");
	size_t len = strlen(cause) + strlen(why) + 3;
	p[at].value = malloc(len);
	if (p[at].value)
		snprintf(p[at].value, len, "%s: %s", cause, why);
	else
		p[at].value = strdup("");
	return n + 1;
}

/* ---- window and jumps ---- */

void tui_clamp_window(struct tui *t)
{
	int64_t span = t->win.t1 - t->win.t0, full = t->tl->end_ns - t->tl->start_ns;
	int64_t min_span = t->win.cols > 0 ? t->win.cols : 1;

	if (span < min_span)
		span = min_span;
	if (span >= full) {
		t->win.t0 = t->tl->start_ns;
		t->win.t1 = t->tl->end_ns;
		return;
	}
	if (t->win.t0 < t->tl->start_ns)
		t->win.t0 = t->tl->start_ns;
	if (t->win.t0 + span > t->tl->end_ns)
		t->win.t0 = t->tl->end_ns - span;
	t->win.t1 = t->win.t0 + span;
}

static void select_slice(struct tui *t, const struct tl_slice *s)
{
	t->sel = *s;
	t->has_sel = 1;
	t->lane = s->lane;
	t->has_lane = 1;
	t->cursor = s->start_ns;
	/* a jump to a kind that is hidden shows that kind again */
	if (!(t->kind_mask & (1u << s->kind))) {
		t->kind_mask |= 1u << s->kind;
		t->layout_dirty = 1;
	}
}

void tui_jump_slice(struct tui *t, const struct tl_slice *s)
{
	int64_t span = t->win.t1 - t->win.t0, d = s->end_ns - s->start_ns;
	int cols = t->win.cols > 0 ? t->win.cols : 1;

	select_slice(t, s);
	/* a slice thinner than a column would be lost: zoom until it takes a tenth */
	if (d > 0 && (__int128)d * cols < span)
		span = d * 10 > cols ? d * 10 : cols;
	if (s->start_ns < t->win.t0 || s->end_ns > t->win.t1 || span != t->win.t1 - t->win.t0) {
		t->win.t0 = s->start_ns + d / 2 - span / 2;
		t->win.t1 = t->win.t0 + span;
	}
	tui_clamp_window(t);
	tui_switch(t, VIEW_TIMELINE);
}

void tui_jump_span(struct tui *t, int64_t a, int64_t b, int64_t function_id)
{
	struct tl_slice best;
	int found = 0;

	if (b <= a)
		b = a + 1;
	t->win.t0 = a - (b - a) / 20;
	t->win.t1 = b + (b - a) / 20 + 1;
	tui_clamp_window(t);
	t->cursor = a;
	/* prefer a retrace of the function in the span, then any slice from a on */
	for (size_t i = 0; i < t->tl->nretraces && !found; i++) {
		const struct tl_mark *m = &t->tl->retraces[i];
		if (m->slice.start_ns >= a && m->slice.start_ns < b && (function_id < 0 || m->function_id == function_id)) {
			best = m->slice;
			found = 1;
		}
	}
	for (size_t l = 0; l < t->tl->nlanes && !found; l++) {
		struct tl_slice s;
		if (!(t->kind_mask & (1u << t->tl->lanes[l].kind)))
			continue;
		if (timeline_lane_step(t->tl, l, a - 1, 1, 0, &s) == 1 && s.start_ns < b &&
		    (!found || s.start_ns < best.start_ns)) {
			best = s;
			found = 1;
		}
	}
	if (found)
		select_slice(t, &best);
	tui_switch(t, VIEW_TIMELINE);
}

/* ---- views ---- */

void tui_switch(struct tui *t, enum view_id id)
{
	struct view *v = &t->views[id];

	t->cur = id;
	if (v->ops->open && v->ops->open(t, v) < 0)
		tui_message(t, 1, "cannot open the %s view", v->ops->name);
}

/* ---- lists ---- */

void tui_list_scroll(struct view *v, int height, size_t n)
{
	v->height = height;
	if (n == 0) {
		v->sel = v->top = 0;
		return;
	}
	if (v->sel >= n)
		v->sel = n - 1;
	v->top = layout_scroll(v->top, v->sel, height > 0 ? (size_t)height : 1, n);
}

int tui_list_request(struct tui *t, struct view *v, enum request req, size_t n, int list_y)
{
	size_t page = v->height > 1 ? (size_t)v->height - 1 : 1;

	switch (req) {
	case REQ_UP:
		if (v->sel > 0)
			v->sel--;
		break;
	case REQ_DOWN:
		if (v->sel + 1 < n)
			v->sel++;
		break;
	case REQ_PAGE_UP:
		v->sel = v->sel > page ? v->sel - page : 0;
		break;
	case REQ_PAGE_DOWN:
		v->sel = v->sel + page < n ? v->sel + page : (n ? n - 1 : 0);
		break;
	case REQ_HOME:
		v->sel = 0;
		break;
	case REQ_END:
		v->sel = n ? n - 1 : 0;
		break;
	case REQ_MOUSE:
		if (t->mouse.bstate & BUTTON4_PRESSED) {
			v->sel = v->sel > 3 ? v->sel - 3 : 0;
		}
#ifdef BUTTON5_PRESSED
		else if (t->mouse.bstate & BUTTON5_PRESSED) {
			v->sel = v->sel + 3 < n ? v->sel + 3 : (n ? n - 1 : 0);
		}
#endif
		else if (t->mouse.y >= list_y && v->top + (size_t)(t->mouse.y - list_y) < n) {
			v->sel = v->top + (size_t)(t->mouse.y - list_y);
		}
		break;
	default:
		return 0;
	}
	return TUI_HANDLED | TUI_REDRAW;
}

/* ---- prompt ---- */

int tui_prompt(struct tui *t, const char *prompt, char *buf, size_t len)
{
	size_t n = strlen(buf);

	curs_set(1);
	for (;;) {
		int key;

		attrset(A_NORMAL);
		tui_putf(t, t->rows - 1, 0, t->cols, 1, "%s%s", prompt, buf);
		move(t->rows - 1, (int)(strlen(prompt) + n) < t->cols ? (int)(strlen(prompt) + n) : t->cols - 1);
		refresh();
		key = getch();
		if (key == '\n' || key == '\r' || key == KEY_ENTER) {
			curs_set(0);
			return n > 0;
		}
		if (key == 27 || key == KEY_CTRL('c') || key == KEY_CTRL('g')) {
			curs_set(0);
			return 0;
		}
		if ((key == KEY_BACKSPACE || key == 127 || key == 8) && n > 0) {
			/* drop a whole UTF-8 sequence */
			do
				n--;
			while (n > 0 && ((unsigned char)buf[n] & 0xc0) == 0x80);
			buf[n] = '\0';
		} else if (key == KEY_CTRL('u')) {
			n = 0;
			buf[0] = '\0';
		} else if (key >= 32 && key < 256 && key != 127 && n + 1 < len) {
			buf[n++] = (char)key;
			buf[n] = '\0';
		} else if (key == KEY_RESIZE) {
			getmaxyx(stdscr, t->rows, t->cols);
		}
	}
}

/* ---- the frame ---- */

static const char *const view_titles[VIEW__COUNT] = {
	"timeline", "details", "findings", "functions", "search", "help",
};

static void draw_title(struct tui *t)
{
	char span[32], win[32], at[32];
	const char *base = strrchr(t->in->path, '/');
	int x;

	duration_format(span, sizeof(span), t->tl->end_ns - t->tl->start_ns);
	duration_format(win, sizeof(win), t->win.t1 - t->win.t0);
	duration_format(at, sizeof(at), t->win.t0 - t->tl->start_ns);
	/* what matters first comes first: a narrow terminal cuts the end */
	attrset(tui_pair_attr(t, PAIR_TITLE, A_REVERSE) | A_BOLD);
	x = tui_putf(t, 0, 0, t->cols, 0, " [%s] window %s at +%s of %s  %s", view_titles[t->cur], win, at, span,
		     base ? base + 1 : t->in->path);
	if (t->loading)
		x += tui_putf(t, 0, x, t->cols - x, 0, "  reading %d%%", (int)(t->progress * 100));
	if (t->model_pending)
		x += tui_put(t, 0, x, t->cols - x, "  analyzing", 0);
	if (x + 14 <= t->cols) {
		tui_put(t, 0, x, t->cols - x - 12, "", 1);
		tui_put(t, 0, t->cols - 12, 12, " agprof view", 1);
	} else {
		tui_put(t, 0, x, t->cols - x, "", 1);
	}
	attrset(A_NORMAL);
}

static void draw_status(struct tui *t)
{
	int y = t->rows - 1, x = 0;

	if (t->message[0]) {
		attrset(t->message_error ? tui_pair_attr(t, PAIR_ERROR, A_REVERSE | A_BOLD) : (int)A_BOLD);
		tui_put(t, y, 0, t->cols, t->message, 1);
		attrset(A_NORMAL);
		return;
	}
	/* the legend of kinds doubles as the filter state: hidden kinds are dim */
	move(y, 0);
	clrtoeol();
	for (int k = 0; k < TL_NKINDS && x < t->cols; k++) {
		int shown = (t->kind_mask >> k) & 1;
		attrset(A_BOLD);
		x += tui_putf(t, y, x, t->cols - x, 0, "%d", k + 1);
		attrset(shown ? tui_slice_attr(t, k, 0) : (int)A_DIM);
		x += tui_putf(t, y, x, t->cols - x, 0, "%s", shown ? tl_kind_short(k) : "-");
		attrset(A_NORMAL);
		x += tui_put(t, y, x, t->cols - x, " ", 0);
	}
	tui_put(t, y, x, t->cols - x, " / search  n/N retrace  f findings  u functions  ? help  q quit", 1);
}

static void draw(struct tui *t)
{
	struct view *v = &t->views[t->cur];
	double a = monotonic_seconds();

	erase();
	getmaxyx(stdscr, t->rows, t->cols);
	if (t->rows < MIN_ROWS || t->cols < MIN_COLS) {
		char msg[3][64];
		snprintf(msg[0], sizeof(msg[0]), "terminal too small (%dx%d)", t->cols, t->rows);
		snprintf(msg[1], sizeof(msg[1]), "agprof view needs at least %dx%d:", MIN_COLS, MIN_ROWS);
		snprintf(msg[2], sizeof(msg[2]), "enlarge it, or press q to quit");
		for (int i = 0; i < 3; i++)
			mvaddnstr(t->rows / 2 - 1 + i, 0, msg[i], t->cols);
		refresh();
		return;
	}
	draw_title(t);
	v->ops->draw(t, v, 1, 0, t->rows - 2, t->cols);
	draw_status(t);
	refresh();
	a = monotonic_seconds() - a;
	if (!t->frames)
		t->first_frame = monotonic_seconds() - t->in->started;
	t->frames++;
	t->frame_sum += a;
	if (a > t->frame_max) {
		t->frame_max = a;
		t->frame_max_span = t->win.t1 - t->win.t0;
	}
	if (!t->loading && !t->model_pending && a > t->frame_max_idle)
		t->frame_max_idle = a;
}

/* Requests any view may make; returns TUI_* bits. */
static int global_request(struct tui *t, enum request req)
{
	switch (req) {
	case REQ_QUIT_ALL:
		return TUI_QUIT;
	case REQ_QUIT:
		if (t->cur == VIEW_TIMELINE)
			return TUI_QUIT;
		tui_switch(t, VIEW_TIMELINE);
		return TUI_REDRAW;
	case REQ_TIMELINE:
		tui_switch(t, VIEW_TIMELINE);
		return TUI_REDRAW;
	case REQ_HELP:
		tui_switch(t, VIEW_HELP);
		return TUI_REDRAW;
	case REQ_FINDINGS:
		tui_switch(t, VIEW_FINDINGS);
		return TUI_REDRAW;
	case REQ_FUNCTIONS:
		tui_switch(t, VIEW_FUNCTIONS);
		return TUI_REDRAW;
	case REQ_DETAILS_PANE:
		t->details_pane = !t->details_pane;
		return TUI_REDRAW;
	case REQ_SEARCH: {
		char buf[sizeof(t->needle)];

		snprintf(buf, sizeof(buf), "%s", t->needle);
		if (tui_prompt(t, "search: ", buf, sizeof(buf))) {
			snprintf(t->needle, sizeof(t->needle), "%s", buf);
			tui_switch(t, VIEW_SEARCH);
		}
		return TUI_REDRAW;
	}
	case REQ_REFRESH:
		clearok(curscr, TRUE);
		return TUI_REDRAW;
	case REQ_RESIZE:
		return TUI_REDRAW;
	default:
		return 0;
	}
}

/* What the scan and the analysis brought since the last call; TUI_REDRAW when something. */
static int poll_background(struct tui *t)
{
	int r = 0;

	if (t->loading) {
		int f = timeline_poll(t->tl, &t->progress);
		if (f & TL_POLL_CHANGED) {
			t->data_gen++;
			t->layout_dirty = 1;
			r = TUI_REDRAW;
		}
		if (!(f & TL_POLL_LOADING)) {
			t->loading = 0;
			r = TUI_REDRAW;
		}
	}
	if (t->model_pending) {
		const struct model *m = NULL;
		const char *why = NULL;

		if (t->in->model_ready(t->in->model_ctx, &m, &why)) {
			t->model_pending = 0;
			t->m = m;
			t->model_why = why;
			if (marks_build(t) < 0)
				tui_message(t, 1, "out of memory");
			else if (!m || why)
				tui_message(t, 1, "no findings: %s", why ? why : "the analysis failed");
			else if (!t->message[0])
				tui_message(t, 0, "analysis done: %zu finding%s (f), %zu function%s (u)", m->nfindings,
					    m->nfindings == 1 ? "" : "s", m->nfunctions, m->nfunctions == 1 ? "" : "s");
			r = TUI_REDRAW;
		}
	}
	return r;
}

static void write_stats(const struct tui *t, const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return;
	fprintf(f, "timeline_open_ms %.1f\n", t->tl->open_seconds * 1e3);
	fprintf(f, "timeline_scan_ms %.1f\n", t->tl->load_seconds * 1e3);
	fprintf(f, "scan_threads %d\n", t->tl->threads_used);
	fprintf(f, "first_frame_ms %.1f\n", t->first_frame * 1e3);
	fprintf(f, "frames %ld\n", t->frames);
	fprintf(f, "frame_max_ms %.2f\n", t->frame_max * 1e3);
	fprintf(f, "frame_max_window_ns %lld\n", (long long)t->frame_max_span);
	fprintf(f, "frame_max_idle_ms %.2f\n", t->frame_max_idle * 1e3);
	fprintf(f, "frame_mean_ms %.2f\n", t->frames ? t->frame_sum / t->frames * 1e3 : 0.0);
	fclose(f);
}

/* The terminal in curses mode; NULL after an error line. */
static SCREEN *screen_open(const struct tui_input *in)
{
	SCREEN *scr;
	char instead[PATH_MAX + 32];

	if (!getenv("ESCDELAY"))
		set_escdelay(25);
	snprintf(instead, sizeof(instead), "try 'agprof report %s'", in->path);
	if (!(scr = term_open(instead)))
		return NULL;
	mousemask(BUTTON1_CLICKED | BUTTON1_PRESSED | BUTTON4_PRESSED | BUTTON5_PRESSED, NULL);
	mouseinterval(0);
	return scr;
}

/* The state of a fresh view of the whole timeline. */
static void tui_init(struct tui *t, const struct tui_input *in)
{
	static const struct view_ops *const ops[VIEW__COUNT] = {
		[VIEW_TIMELINE] = &timeline_view_ops, [VIEW_DETAILS] = &details_view_ops,
		[VIEW_FINDINGS] = &findings_view_ops, [VIEW_FUNCTIONS] = &functions_view_ops,
		[VIEW_SEARCH] = &search_view_ops,     [VIEW_HELP] = &help_view_ops,
	};
	const char *ascii = getenv("AGPROF_ASCII");

	memset(t, 0, sizeof(*t));
	t->in = in;
	t->tl = in->tl;
	t->m = NULL;
	t->model_pending = in->model_ready != NULL;
	t->loading = 1;
	t->g = !strcmp(nl_langinfo(CODESET), "UTF-8") && !(ascii && *ascii) ? glyphs_utf8 : glyphs_ascii;
	t->kind_mask = TL_ALL_KINDS;
	t->layout_dirty = 1;
	t->details_pane = 1;
	t->win.t0 = t->tl->start_ns;
	t->win.t1 = t->tl->end_ns;
	t->cursor = t->tl->start_ns;
	for (int i = 0; i < VIEW__COUNT; i++)
		t->views[i].ops = ops[i];
}

/* The request of the next key; REQ_NONE for nothing to do (a timeout, a failed mouse read). */
static enum request next_request(struct tui *t, int *key)
{
	/* while work runs in the background, wake up to show its progress */
	timeout(t->loading || t->model_pending ? 150 : -1);
	*key = getch();
	if (*key == ERR)
		return REQ_NONE;
	t->message[0] = '\0';
	if (*key == KEY_RESIZE)
		return REQ_RESIZE;
	if (*key == KEY_MOUSE)
		return getmouse(&t->mouse) == OK ? REQ_MOUSE : REQ_NONE;
	return request_of_key(*key);
}

/* One request; the TUI_* flags of what to do next. */
static int handle_request(struct tui *t, enum request req, int key)
{
	struct view *v;
	int flags;

	/* a terminal below the minimum only takes quit and resize */
	if (t->rows < MIN_ROWS || t->cols < MIN_COLS)
		return req == REQ_QUIT || req == REQ_QUIT_ALL ? TUI_QUIT : TUI_REDRAW;
	if (req == REQ_NONE) {
		tui_message(t, 0, "unknown key %s; press ? for help", key_label(key));
		return TUI_REDRAW;
	}
	v = &t->views[t->cur];
	flags = v->ops->request ? v->ops->request(t, v, req) : 0;
	if (!(flags & TUI_HANDLED))
		flags |= global_request(t, req);
	return flags | TUI_REDRAW;
}

static void event_loop(struct tui *t)
{
	int flags = TUI_REDRAW;

	for (;;) {
		enum request req;
		int key;

		flags |= poll_background(t);
		if (flags & TUI_REDRAW)
			draw(t);
		req = next_request(t, &key);
		flags = 0;
		if (key == ERR || (key == KEY_MOUSE && req == REQ_NONE))
			continue;
		flags = handle_request(t, req, key);
		if (flags & TUI_QUIT)
			break;
	}
}

int tui_run(const struct tui_input *in)
{
	struct tui t;
	SCREEN *scr;

	setlocale(LC_ALL, "");
	tui_init(&t, in);
	if (!(scr = screen_open(in)))
		return -1;
	colors_init(&t);
	getmaxyx(stdscr, t.rows, t.cols);
	if (marks_build(&t) < 0) {
		endwin();
		delscreen(scr);
		error("out of memory");
		return -1;
	}
	tui_switch(&t, VIEW_TIMELINE);
	event_loop(&t);
	for (int i = 0; i < VIEW__COUNT; i++)
		if (t.views[i].ops->close)
			t.views[i].ops->close(&t, &t.views[i]);
	endwin();
	delscreen(scr);
	if (in->stats_path)
		write_stats(&t, in->stats_path);
	layout_release(&t.layout);
	free(t.marks);
	return 0;
}
