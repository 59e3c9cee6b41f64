/* help_view.c - every key, from the request table, and what the marks mean. */
#include "view.h"

#include <string.h>

static int help_open(struct tui *t, struct view *v)
{
	(void)t;
	v->top = 0;
	return 0;
}

/* Line i of the help text into buf; returns 0 past the end. bold is set for headings. */
static int help_line(const struct tui *t, size_t i, char *buf, size_t len, int *bold)
{
	const char *section = NULL;
	size_t line = 0;

	*bold = 0;
	for (size_t r = 0; r < request_count; r++) {
		const struct request_info *ri = &request_info[r];
		if (!section || strcmp(section, ri->section)) {
			if (section && line++ == i) {
				buf[0] = '\0';
				return 1;
			}
			section = ri->section;
			if (line++ == i) {
				snprintf(buf, len, "%s", section);
				*bold = 1;
				return 1;
			}
		}
		if (line++ == i) {
			char keys[48] = "";
			for (int k = 0; k < 3 && ri->keys[k]; k++) {
				/* Enter is bound to three codes: name it once */
				if (k > 0 && !strcmp(key_label(ri->keys[k]), "Enter"))
					continue;
				snprintf(keys + strlen(keys), sizeof(keys) - strlen(keys), "%s%s", k ? " " : "",
					 key_label(ri->keys[k]));
			}
			snprintf(buf, len, "  %-18s %s", keys, ri->help);
			return 1;
		}
	}
	const char *tail[] = {
		"",
		"Mouse",
		"  click              select the slice under the pointer",
		"  wheel              zoom in / out around the pointer",
		"",
		"Marks",
		NULL,
	};
	for (size_t k = 0; tail[k]; k++) {
		if (line++ == i) {
			snprintf(buf, len, "%s", tail[k]);
			*bold = tail[k][0] && tail[k][0] != ' ';
			return 1;
		}
	}
	if (line++ == i) {
		snprintf(buf, len, "  %s  retrace on the time axis, %s  finding, %s  selection; %s%s%s%s density of small events",
			 t->g.retrace, t->g.finding, t->g.caret, t->g.shade[1], t->g.shade[2], t->g.shade[3], t->g.shade[4]);
		return 1;
	}
	return 0;
}

static void help_draw(struct tui *t, struct view *v, int y, int x, int h, int w)
{
	char buf[256];
	int bold;
	size_t n = 0;

	(void)x;
	tui_rule(t, y, 0, w, "agprof view: keys (Up/Down/PgUp/PgDn scroll, q: back)");
	while (help_line(t, n, buf, sizeof(buf), &bold))
		n++;
	v->height = (int)n;
	if (v->top + (size_t)(h - 1) > n)
		v->top = n > (size_t)(h - 1) ? n - (size_t)(h - 1) : 0;
	for (int i = 0; i < h - 1 && help_line(t, v->top + (size_t)i, buf, sizeof(buf), &bold); i++) {
		attrset(bold ? A_BOLD : A_NORMAL);
		tui_put(t, y + 1 + i, 1, w - 1, buf, 0);
	}
	attrset(A_NORMAL);
}

static int help_request(struct tui *t, struct view *v, enum request req)
{
	(void)t;
	switch (req) {
	case REQ_UP:
		if (v->top > 0)
			v->top--;
		break;
	case REQ_DOWN:
	case REQ_ENTER:
		v->top++;
		break;
	case REQ_PAGE_DOWN:
		v->top += 10;
		break;
	case REQ_PAGE_UP:
		v->top = v->top > 10 ? v->top - 10 : 0;
		break;
	case REQ_HELP:
		tui_switch(t, VIEW_TIMELINE);
		break;
	default:
		return 0;
	}
	return TUI_HANDLED | TUI_REDRAW;
}

const struct view_ops help_view_ops = {
	"help", help_open, help_draw, help_request, NULL,
};
