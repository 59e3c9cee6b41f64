/*
 * findings_view.c - the analyzer's findings, worst first (the order of
 * agprof report), with the selected one's message and recommendation
 * below; Enter shows its events on the timeline.
 */
#include "view.h"
#include "duration.h"
#include "model.h"
#include "pathdisp.h"

#include <string.h>

static int findings_open(struct tui *t, struct view *v)
{
	(void)t;
	(void)v;
	return 0;
}

static size_t nfindings(const struct tui *t)
{
	return t->m ? t->m->nfindings : 0;
}

static void findings_draw(struct tui *t, struct view *v, int y, int x, int h, int w)
{
	size_t n = nfindings(t);
	int list_h = h / 2 > 3 ? h / 2 : 3;
	char cost[32];

	(void)x;
	tui_rule(t, y, 0, w, "findings (Enter: show on the timeline, q: back)");
	if (!t->m) {
		tui_put(t, y + 1, 0, w,
			t->model_pending ? "analyzing the recording (the same analysis as agprof report)..."
					 : t->model_why ? t->model_why : "the analysis failed",
			0);
		return;
	}
	if (n == 0) {
		tui_putf(t, y + 1, 0, w, 0, "no findings: %s", t->model_why ? t->model_why : "no rule fired on this recording");
		return;
	}
	if ((size_t)list_h - 1 > n)
		list_h = (int)n + 1;
	attrset(A_BOLD);
	tui_putf(t, y + 1, 0, w, 1, " %-8s %9s  %-22s %s", "severity", "cost", "rule", "function / title");
	attrset(A_NORMAL);
	tui_list_scroll(v, list_h - 1, n);
	for (int i = 0; i < list_h - 1 && v->top + (size_t)i < n; i++) {
		const struct finding *f = &t->m->findings[v->top + (size_t)i];
		int sel = v->top + (size_t)i == v->sel;

		duration_format(cost, sizeof(cost), f->cost_ns);
		attrset(sel ? (int)(A_REVERSE | A_BOLD) : (f->severity == SEV_ERROR ? tui_pair_attr(t, PAIR_MARK, A_BOLD) : 0));
		tui_putf(t, y + 2 + i, 0, w, 1, " %-8s %9s  %-22.22s %s%s%s", severity_name(f->severity), cost, f->rule,
			 f->function ? f->function : "", f->function ? ": " : "", f->title);
	}
	attrset(A_NORMAL);
	const struct finding *f = &t->m->findings[v->sel];
	int yy = y + 1 + list_h, left = h - 1 - list_h;
	char where[512];

	tui_rule(t, yy++, 0, w, f->rule);
	left--;
	if (f->loc.file && f->loc.lib_file)
		snprintf(where, sizeof(where), "at %s:%d \u2192 %s:%d", path_display(f->loc.file, t->m->session.cwd),
			 f->loc.line, path_display(f->loc.lib_file, t->m->session.cwd), f->loc.lib_line);
	else if (f->loc.file)
		snprintf(where, sizeof(where), "at %s:%d", path_display(f->loc.file, t->m->session.cwd), f->loc.line);
	else
		snprintf(where, sizeof(where), "no source line");
	if (left > 0) {
		tui_putf(t, yy++, 0, w, 0, "%s  %s", where, f->start_ns > 0 ? "" : "(no events to show on the timeline)");
		left--;
	}
	if (left > 0) {
		int l = tui_wrap(t, yy, 0, w, 0, left, f->message);
		yy += l;
		left -= l;
	}
	if (left > 1 && f->recommendation) {
		attrset(A_BOLD);
		tui_put(t, yy++, 0, w, "recommendation:", 0);
		attrset(A_NORMAL);
		left--;
		tui_wrap(t, yy, 2, w - 2, 0, left, f->recommendation);
	}
}

static int findings_request(struct tui *t, struct view *v, enum request req)
{
	size_t n = nfindings(t);
	int r = tui_list_request(t, v, req, n, 3);

	if (r)
		return r;
	if (req == REQ_ENTER && n) {
		const struct finding *f = &t->m->findings[v->sel];
		int64_t fn = -1;

		if (f->start_ns <= 0) {
			tui_message(t, 0, "this finding has no events on the timeline");
			return TUI_HANDLED | TUI_REDRAW;
		}
		for (size_t k = 0; f->function && k < t->m->nfunctions; k++)
			if (!strcmp(t->m->functions[k].name, f->function))
				fn = t->m->functions[k].id;
		tui_jump_span(t, f->start_ns, f->end_ns, fn);
		tui_message(t, 0, "finding %zu/%zu: %s", v->sel + 1, n, f->title);
		return TUI_HANDLED | TUI_REDRAW;
	}
	return 0;
}

const struct view_ops findings_view_ops = {
	"findings", findings_open, findings_draw, findings_request, NULL,
};
