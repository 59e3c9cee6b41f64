/*
 * search_view.c - the slices whose name contains the search text, in time
 * order, of the kinds shown; Enter selects one on the timeline.
 */
#include "view.h"
#include "duration.h"

#include <stdlib.h>
#include <string.h>

#define SEARCH_MAX 1000

struct search_priv {
	char needle[128];
	unsigned mask;
	struct tl_slice *res;
	ptrdiff_t n;
};

static int search_open(struct tui *t, struct view *v)
{
	struct search_priv *p = v->priv;

	if (!p) {
		p = calloc(1, sizeof(*p));
		if (!p)
			return -1;
		v->priv = p;
	}
	if (p->res && !strcmp(p->needle, t->needle) && p->mask == t->kind_mask)
		return 0;
	free(p->res);
	p->res = NULL;
	snprintf(p->needle, sizeof(p->needle), "%s", t->needle);
	p->mask = t->kind_mask;
	p->n = timeline_search(t->tl, p->needle, p->mask, SEARCH_MAX, &p->res);
	v->top = v->sel = 0;
	return p->n < 0 ? -1 : 0;
}

static void search_close(struct tui *t, struct view *v)
{
	struct search_priv *p = v->priv;

	(void)t;
	if (p)
		free(p->res);
	free(p);
	v->priv = NULL;
}

static void search_draw(struct tui *t, struct view *v, int y, int x, int h, int w)
{
	struct search_priv *p = v->priv;
	char title[320], dur[32];
	size_t n;

	(void)x;
	if (!p || p->n < 0) {
		tui_put(t, y, 0, w, "search failed", 0);
		return;
	}
	n = (size_t)p->n;
	snprintf(title, sizeof(title), "search '%s': %zu%s match%s (Enter: select on the timeline, q: back)", p->needle, n,
		 n >= SEARCH_MAX ? "+" : "", n == 1 ? "" : "es");
	tui_rule(t, y, 0, w, title);
	if (!n) {
		tui_put(t, y + 1, 0, w, "no slice of the shown kinds has a name containing this text", 0);
		return;
	}
	attrset(A_BOLD);
	tui_putf(t, y + 1, 0, w, 1, " %12s  %-11s %-10s %9s  %s", "start", "kind", "track", "duration", "name");
	attrset(A_NORMAL);
	tui_list_scroll(v, h - 2, n);
	for (int i = 0; i < h - 2 && v->top + (size_t)i < n; i++) {
		const struct tl_slice *s = &p->res[v->top + (size_t)i];
		const struct tl_track *tr = &t->tl->tracks[t->tl->lanes[s->lane].track];

		duration_format(dur, sizeof(dur), s->end_ns - s->start_ns);
		attrset(v->top + (size_t)i == v->sel ? (int)(A_REVERSE | A_BOLD) : 0);
		tui_putf(t, y + 2 + i, 0, w, 1, " %11.6fs  %-11s %-10s %9s  %s", (double)(s->start_ns - t->tl->start_ns) / 1e9,
			 tl_kind_name(s->kind), tr->label, dur, timeline_slice_name(t->tl, s));
	}
	attrset(A_NORMAL);
}

static int search_request(struct tui *t, struct view *v, enum request req)
{
	struct search_priv *p = v->priv;
	size_t n = p && p->n > 0 ? (size_t)p->n : 0;
	int r = tui_list_request(t, v, req, n, 3);

	if (r)
		return r;
	if (req == REQ_ENTER && n) {
		tui_jump_slice(t, &p->res[v->sel]);
		tui_message(t, 0, "match %zu/%zu%s for '%s'", v->sel + 1, n, n >= SEARCH_MAX ? "+" : "", p->needle);
		return TUI_HANDLED | TUI_REDRAW;
	}
	return 0;
}

const struct view_ops search_view_ops = {
	"search", search_open, search_draw, search_request, search_close,
};
