/*
 * functions_view.c - the per-function table of the model (the traced user
 * functions, worst retracing first); Enter shows the function's traces and
 * calls on the timeline, its first retrace selected.
 */
#include "view.h"
#include "duration.h"
#include "model.h"

#include <string.h>

static int functions_open(struct tui *t, struct view *v)
{
	(void)t;
	(void)v;
	return 0;
}

static size_t nfunctions(const struct tui *t)
{
	return t->m ? t->m->nfunctions : 0;
}

static void functions_draw(struct tui *t, struct view *v, int y, int x, int h, int w)
{
	size_t n = nfunctions(t);
	char trace[32], exec[32];

	(void)x;
	tui_rule(t, y, 0, w, "functions (Enter: show on the timeline, q: back)");
	if (!t->m) {
		tui_put(t, y + 1, 0, w,
			t->model_pending ? "analyzing the recording (the same analysis as agprof report)..."
					 : t->model_why ? t->model_why : "the analysis failed",
			0);
		return;
	}
	if (!n) {
		tui_put(t, y + 1, 0, w, "no traced function in this recording", 0);
		return;
	}
	attrset(A_BOLD);
	tui_putf(t, y + 1, 0, w, 1, " %-20s %6s %6s %-14s %9s %9s %9s  %s", "function", "traces", "retr.", "main cause",
		 "calls", "tracing", "exec", "defined at");
	attrset(A_NORMAL);
	tui_list_scroll(v, h - 2, n);
	for (int i = 0; i < h - 2 && v->top + (size_t)i < n; i++) {
		const struct model_function *f = &t->m->functions[v->top + (size_t)i];
		const char *cause = retrace_cause_name(f->main_cause);
		char def[256];

		duration_format(trace, sizeof(trace), f->trace_ns);
		duration_format(exec, sizeof(exec), f->exec_ns);
		if (f->def.file) {
			const char *base = strrchr(f->def.file, '/');
			snprintf(def, sizeof(def), "%s:%d", base ? base + 1 : f->def.file, f->def.line);
		} else {
			snprintf(def, sizeof(def), "?");
		}
		attrset(v->top + (size_t)i == v->sel ? (int)(A_REVERSE | A_BOLD) : 0);
		tui_putf(t, y + 2 + i, 0, w, 1, " %-20.20s %6zu %6zu %-14.14s %9lld %9s %9s  %s", f->name, f->ntraces,
			 f->retraces, cause ? cause : "-", (long long)f->calls, trace, exec, def);
	}
	attrset(A_NORMAL);
}

static int functions_request(struct tui *t, struct view *v, enum request req)
{
	size_t n = nfunctions(t);
	int r = tui_list_request(t, v, req, n, 3);

	if (r)
		return r;
	if (req == REQ_ENTER && n) {
		const struct model_function *f = &t->m->functions[v->sel];
		struct tl_slice s;

		if (f->first_ns <= 0 && f->last_ns <= 0) {
			tui_message(t, 0, "%s has no events", f->name);
			return TUI_HANDLED | TUI_REDRAW;
		}
		tui_jump_span(t, f->first_ns, f->last_ns > f->first_ns ? f->last_ns : f->first_ns + 1, f->id);
		/* without a retrace, its first trace is the event to look at */
		if (!f->retraces && f->ntraces && timeline_find(t->tl, TL_TRACE, f->traces[0].id, &s) == 1) {
			t->sel = s;
			t->has_sel = 1;
			t->lane = s.lane;
			t->has_lane = 1;
			t->cursor = s.start_ns;
		}
		tui_message(t, 0, "%s: %zu traces, %lld calls", f->name, f->ntraces, (long long)f->calls);
		return TUI_HANDLED | TUI_REDRAW;
	}
	return 0;
}

const struct view_ops functions_view_ops = {
	"functions", functions_open, functions_draw, functions_request, NULL,
};
