/* live_text.c - see live_text.h. */
#include "live_text.h"
#include "duration.h"
#include "model.h"
#include "pathdisp.h"
#include "strbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

struct out {
	void (*emit)(void *ctx, enum live_style style, const char *line);
	void *ctx;
	int width;
	struct strbuf sb;
};

static void __attribute__((format(printf, 3, 4))) put(struct out *o, enum live_style style, const char *fmt, ...)
{
	va_list ap;

	strbuf_reset(&o->sb);
	va_start(ap, fmt);
	strbuf_vaddf(&o->sb, fmt, ap);
	va_end(ap);
	/* recorded names reach a terminal (top --once) or curses: no control byte passes */
	strbuf_sanitize_text(&o->sb, 0, 0);
	if (o->sb.failed)
		return;
	if (o->sb.len > (size_t)o->width) {
		size_t cut = (size_t)o->width;

		while (cut > 0 && ((unsigned char)o->sb.buf[cut] & 0xc0) == 0x80)
			cut--; /* not inside a UTF-8 sequence */
		o->sb.buf[cut] = '\0';
	}
	o->emit(o->ctx, style, o->sb.buf);
}

static const char *dur(char *buf, int64_t ns)
{
	return duration_format(buf, DURATION_MAX, ns);
}

/* The whole run so far: traces, graph calls; once ended, the report's shares too. */
static void put_totals(struct out *o, const struct live *lv)
{
	const struct model_session *s = &lv->m.session;
	char a[DURATION_MAX];

	if (lv->parts & MODEL_EVENTS) {
		put(o, LIVE_TEXT, "whole run: %lld traces  %lld graph calls  eager share %.1f%%  input wait %s (%lld reads)",
		    (long long)s->traces, (long long)s->function_calls, 100.0 * s->eager_share, dur(a, s->input_ns),
		    (long long)s->input_waits);
		return;
	}
	put(o, LIVE_TEXT, "so far: %lld traces  %lld graph calls", (long long)s->traces,
	    (long long)(lv->calls_total + s->aggregated_calls));
}

static void put_window(struct out *o, const struct live *lv)
{
	const struct live_window *w = &lv->win;
	char a[DURATION_MAX], b[DURATION_MAX];

	put(o, LIVE_TEXT, "last second: %lld graph calls/s (%s)  eager %.1f%% (%lld ops)  input wait %s (%lld reads)  "
	    "%lld traces", (long long)w->calls, dur(a, w->call_ns), 100.0 * w->eager_share, (long long)w->eager_ops,
	    dur(b, w->input_ns), (long long)w->input_waits, (long long)w->traces);
}

/* "step, 0.4 s ago: shape: x: [2,8] -> [3,8]" */
static void put_last_retrace(struct out *o, const struct live *lv, int64_t now)
{
	const struct model_trace *t = lv->last_retrace;
	char a[DURATION_MAX];

	if (!t) {
		put(o, LIVE_TEXT, "newest retrace: none");
		return;
	}
	put(o, LIVE_ALERT, "newest retrace: %s, %s ago: %s: %s", lv->last_fn->name ? lv->last_fn->name : "?",
	    dur(a, now > t->start_ns ? now - t->start_ns : 0), retrace_cause_name(t->why.cause), t->why.detail);
}

/* The newest retrace of f that is not a follow-up, or NULL. */
static const struct model_trace *newest_retrace(const struct model_function *f)
{
	for (size_t k = f->ntraces; k-- > 1;)
		if (f->traces[k].why.cause != CAUSE_NONE && !f->traces[k].why.followup)
			return &f->traces[k];
	return NULL;
}

static void put_functions(struct out *o, const struct live *lv, int max)
{
	put(o, LIVE_HEADER, "%-28s %7s %8s %6s  %s", "FUNCTION", "TRACES", "RETRACES", "1 S", "NEWEST RETRACE (CAUSE)");
	for (size_t i = 0; i < lv->m.nfunctions && (int)i < max; i++) {
		const struct model_function *f = &lv->m.functions[i];
		const struct model_trace *t = newest_retrace(f);
		long long recent = 0;

		for (size_t k = 0; k < f->ntraces; k++)
			recent += f->traces[k].start_ns >= lv->win.from_ns && f->traces[k].start_ns < lv->win.to_ns;
		put(o, recent ? LIVE_ALERT : LIVE_TEXT, "%-28.28s %7zu %8zu %6lld  %s%s%s", f->name ? f->name : "?",
		    f->ntraces, f->retraces, recent, t ? retrace_cause_name(t->why.cause) : "-", t ? ": " : "",
		    t ? t->why.detail : "");
	}
	if (!lv->m.nfunctions)
		put(o, LIVE_TEXT, "(no tf.function traced yet)");
}

/* The last n bytes of a long path, from a '/' on: the file name matters, not its folders. */
static const char *path_tail(const char *path, size_t n)
{
	size_t len = strlen(path);
	const char *p = path + len - n, *slash;

	if (len <= n)
		return path;
	slash = strchr(p, '/');
	return slash ? slash + 1 : p;
}

static void put_lines(struct out *o, const struct live *lv, int max)
{
	const struct live_window *w = &lv->win;
	char a[DURATION_MAX], b[DURATION_MAX], c[DURATION_MAX], d[DURATION_MAX], where[80];

	put(o, LIVE_HEADER, "%-34s %9s %18s %18s %18s", "USER LINE (LAST SECOND)", "COST", "EAGER", "INPUT WAIT",
	    "GRAPH CALLS");
	for (size_t i = 0; i < w->nlines && (int)i < max; i++) {
		const struct live_line *l = &w->lines[i];

		if (l->loc.file)
			snprintf(where, sizeof(where), "%s:%d", path_tail(path_display(l->loc.file, lv->m.session.cwd), 28),
				 l->loc.line);
		else
			snprintf(where, sizeof(where), "%s", MODEL_NO_FRAME);
		put(o, LIVE_TEXT, "%-34.34s %9s %9s %8lld %9s %8lld %9s %8lld  %s", where, dur(a, l->cost_ns),
		    dur(b, l->eager_ns), (long long)l->eager_ops, dur(c, l->input_ns), (long long)l->input_waits,
		    dur(d, l->call_ns), (long long)l->calls, l->top_op ? l->top_op : "");
	}
	if (!w->nlines)
		put(o, LIVE_TEXT, "(nothing ran in the last second)");
}

void live_text(const struct live *lv, const struct live_text_opts *opts,
	       void (*emit)(void *ctx, enum live_style style, const char *line), void *ctx)
{
	struct out o = { emit, ctx, opts->width > 0 ? opts->width : 100, STRBUF_INIT };
	int64_t now = lv->ended ? lv->end_ns : opts->now_ns;
	char a[DURATION_MAX];

	put(&o, LIVE_TITLE, "agprof top - %s - %s, refresh %s CPU", opts->subject,
	    opts->state ? opts->state : lv->ended ? "the run ended" : "live", dur(a, (int64_t)(lv->cpu_s * 1e9)));
	put_window(&o, lv);
	put_totals(&o, lv);
	put_last_retrace(&o, lv, now);
	put(&o, LIVE_TEXT, "%s", "");
	put_functions(&o, lv, opts->max_functions > 0 ? opts->max_functions : 10);
	put(&o, LIVE_TEXT, "%s", "");
	put_lines(&o, lv, opts->max_lines > 0 ? opts->max_lines : 10);
	strbuf_release(&o.sb);
}
