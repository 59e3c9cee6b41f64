/* top_view.c - see top_view.h. */
#include "top_view.h"
#include "term.h"
#include "util.h"

#include <curses.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { PAIR_TOP_TITLE = 1, PAIR_TOP_HEADER, PAIR_TOP_ALERT };

struct top_draw {
	int y, rows, cols, colors;
};

static void colors_init(struct top_draw *d)
{
	const char *no = getenv("NO_COLOR");

	d->colors = !(no && *no) && has_colors() && start_color() != ERR;
	if (!d->colors)
		return;
	use_default_colors();
	init_pair(PAIR_TOP_TITLE, COLOR_WHITE, COLOR_BLUE);
	init_pair(PAIR_TOP_HEADER, COLOR_YELLOW, -1);
	init_pair(PAIR_TOP_ALERT, COLOR_RED, -1);
}

static int style_attr(const struct top_draw *d, enum live_style style)
{
	switch (style) {
	case LIVE_TITLE: return d->colors ? (int)COLOR_PAIR(PAIR_TOP_TITLE) : A_REVERSE;
	case LIVE_HEADER: return d->colors ? (int)(COLOR_PAIR(PAIR_TOP_HEADER) | A_BOLD) : A_BOLD;
	case LIVE_ALERT: return d->colors ? (int)COLOR_PAIR(PAIR_TOP_ALERT) : A_BOLD;
	default: return A_NORMAL;
	}
}

/* One line at the next row; the title's colour spans the screen's width. */
static void draw_line(void *ctx, enum live_style style, const char *line)
{
	struct top_draw *d = ctx;
	int attr = style_attr(d, style);

	if (d->y >= d->rows - 1)
		return;
	attron(attr);
	mvaddnstr(d->y, 0, line, d->cols);
	if (style == LIVE_TITLE)
		for (int x = getcurx(stdscr); x < d->cols && x > 0; x++)
			addch(' ');
	attroff(attr);
	d->y++;
}

static void draw(const struct top_screen *s, struct top_draw *d, int ended)
{
	getmaxyx(stdscr, d->rows, d->cols);
	d->y = 0;
	erase();
	s->lines(s->ctx, d->cols, d->rows - 1, draw_line, d);
	attron(A_REVERSE);
	mvaddnstr(d->rows - 1, 0, ended ? "the run ended: q quits" : "q quits, space refreshes now", d->cols);
	attroff(A_REVERSE);
	refresh();
}

static SCREEN *screen_open(void)
{
	SCREEN *scr;

	setlocale(LC_ALL, "");
	scr = term_open("--once prints plain text");
	return scr;
}

int top_view_run(const struct top_screen *s)
{
	struct top_draw d = { 0 };
	SCREEN *scr = screen_open();
	int ended = 0, ret = 0, key;
	double next = 0;

	if (!scr)
		return -1;
	colors_init(&d);
	/* the first refresh was made by the caller */
	draw(s, &d, ended);
	next = monotonic_seconds() + s->delay;
	for (;;) {
		double wait = next - monotonic_seconds();

		timeout(ended ? -1 : wait > 0 ? (int)(wait * 1000) + 1 : 0);
		key = getch();
		if (key == 'q' || key == 'Q' || key == 3 /* Ctrl-C: raw keys when ISIG is off */)
			break;
		if (key != ERR && key != ' ' && key != KEY_RESIZE)
			continue;
		if (key == KEY_RESIZE || (ended && key == ERR)) {
			draw(s, &d, ended);
			continue;
		}
		if (key == ERR && monotonic_seconds() < next)
			continue;
		if ((ended = s->update(s->ctx)) < 0) {
			ret = -1;
			break;
		}
		draw(s, &d, ended);
		next = monotonic_seconds() + s->delay;
	}
	endwin();
	delscreen(scr);
	return ret;
}
