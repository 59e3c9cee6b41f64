/*
 * details_view.c - every detail of the selected slice on a full screen:
 * what the timeline's details pane shows when a signature or a source path
 * is too long for it.
 */
#include "view.h"

#include <string.h>

static int details_open(struct tui *t, struct view *v)
{
	(void)t;
	v->top = 0;
	return 0;
}

static void details_draw(struct tui *t, struct view *v, int y, int x, int h, int w)
{
	struct tl_detail *d = NULL;
	ptrdiff_t n;
	int line = 0, skip = (int)v->top;

	(void)x;
	tui_rule(t, y, 0, w, "details of the selected slice (q: back to the timeline)");
	if (!t->has_sel) {
		tui_put(t, y + 1, 0, w, "no slice selected", 0);
		return;
	}
	n = tui_selection_details(t, &d);
	for (ptrdiff_t i = 0; i < n; i++) {
		int lines = tui_wrap(t, y + 1 + line - skip, 16, w - 16, 0, 0, d[i].value);
		int shown = line - skip;

		if (lines < 1)
			lines = 1;
		if (shown + lines > 0 && shown < h - 1) {
			int first = shown < 0 ? -shown : 0;
			if (first == 0) {
				attrset(A_BOLD);
				tui_putf(t, y + 1 + shown, 0, 15, 0, "%s", d[i].label);
				attrset(A_NORMAL);
			}
			tui_wrap(t, y + 1 + shown + first, 16, w - 16, first, h - 1 - (shown + first), d[i].value);
		}
		line += lines;
	}
	v->height = line;
	tl_details_free(d, n > 0 ? (size_t)n : 0);
}

static int details_request(struct tui *t, struct view *v, enum request req)
{
	(void)t;
	switch (req) {
	case REQ_UP:
		if (v->top > 0)
			v->top--;
		break;
	case REQ_DOWN:
		if ((int)v->top + 1 < v->height)
			v->top++;
		break;
	case REQ_ENTER:
		tui_switch(t, VIEW_TIMELINE);
		break;
	default:
		return 0;
	}
	return TUI_HANDLED | TUI_REDRAW;
}

const struct view_ops details_view_ops = {
	"details", details_open, details_draw, details_request, NULL,
};
