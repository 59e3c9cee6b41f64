/*
 * html_timeline.c - the timeline section: per thread (and GPU stream) one
 * row per kind of event, drawn from a bounded read of the event tables
 * (html_bins.c) as an area (height: the busy share of each column), and
 * the retraces as marks whose tooltip gives the function, the cause and
 * the time.  The element count
 * is bounded by COLS x MAX_LANES + MAX_MARKS, whatever the recording holds.
 */
#include "html_internal.h"
#include "html_bins.h"
#include "model.h"
#include "recording.h"
#include "report.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define COLS HB_COLS   /* columns of the whole run */
#define ROW 18         /* height of a lane, px and viewBox units */
#define LEVELS 8       /* busy share steps: equal neighbours merge into one rect */
#define MAX_LANES 48
#define MAX_MARKS 300

static const char *pattern_of(enum hb_kind k)
{
	static const char *const p[HB_NKINDS] = { [HB_TRACE] = "p-trace", [HB_CALL] = "p-call", [HB_EAGER] = "p-eager",
						  [HB_BLACKBOX] = "p-bb", [HB_GPU_KERNEL] = "p-kern",
						  [HB_GPU_COPY] = "p-copy", [HB_CPU_KERNEL] = "p-kern" };
	return (unsigned)k < HB_NKINDS ? p[k] : "p-rest";
}

/* The lane's busy share per column, in LEVELS steps (rounded up: a busy column is never empty). */
static void lane_levels(const struct hb *b, const struct hb_lane *l, double *level)
{
	double per = ((double)b->t1 - (double)b->t0) / COLS;

	for (int c = 0; c < COLS; c++)
		level[c] = !(per > 0) || !(l->busy[c] > 0) ? 0 : l->busy[c] / per > 1 ? LEVELS :
			   (double)(int)(l->busy[c] / per * LEVELS + 0.999);
}

/* One lane's area: a rect per run of columns with the same level. */
static void lane_area(struct strbuf *o, const double *level, int row, enum hb_kind kind)
{
	double cw = 1000.0 / COLS;

	for (int c = 0; c < COLS;) {
		int k = c;
		double h;

		while (k < COLS && level[k] == level[c])
			k++;
		h = ROW * level[c] / LEVELS;
		if (level[c] > 0)
			strbuf_addf(o, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"url(#%s)\"/>",
				    c * cw, row * ROW + (ROW - h), (k - c) * cw, h, pattern_of(kind));
		c = k;
	}
	strbuf_addch(o, '\n');
}

/* The retraces row: a mark per retrace (a function's traces after its first), its cause on hover and on focus. */
static void marks(struct html *h, const struct hb *b)
{
	struct strbuf *o = h->out;
	const struct model *m = h->m;
	double span = (double)b->t1 - (double)b->t0;
	size_t shown = 0;

	for (size_t i = 0; i < m->nfunctions && span > 0; i++)
		for (size_t k = 1; k < m->functions[i].ntraces && shown < MAX_MARKS; k++, shown++) {
			const struct model_function *fn = &m->functions[i];
			const struct model_trace *tr = &fn->traces[k];
			double x = 1000.0 * ((double)tr->start_ns - (double)b->t0) / span;
			double w = 1000.0 * ((double)tr->end_ns - (double)tr->start_ns) / span;

			strbuf_addf(o, "<rect class=\"mark\" tabindex=\"0\" x=\"%.2f\" y=\"2\" width=\"%.2f\" height=\"%d\" "
				    "fill=\"url(#p-trace)\" stroke=\"var(--fg)\" stroke-width=\"1\" "
				    "vector-effect=\"non-scaling-stroke\"><title>retrace #%zu of ",
				    x < 0 ? 0 : x > 1000 ? 1000 : x, w < 0.8 ? 0.8 : w, ROW - 4, k);
			html_esc(o, fn->name);
			strbuf_addstr(o, ": ");
			html_esc(o, tr->why.cause ? retrace_cause_name(tr->why.cause) : "cause unknown");
			if (tr->why.detail) {
				strbuf_addstr(o, ", ");
				html_esc(o, tr->why.detail);
			}
			strbuf_addstr(o, " (tracing took ");
			html_dur(o, tr->end_ns - tr->start_ns);
			strbuf_addstr(o, ")</title></rect>\n");
		}
}

/* "main 4242", "pid 17 exec 4250", "GPU0 stream 7": the thread's role from the recording. */
static void lane_label(struct html *h, sqlite3_stmt *role, const struct hb *b, const struct hb_lane *l)
{
	struct strbuf *o = h->out;
	char buf[96];

	strbuf_addstr(o, "<div class=\"lab\">");
	if (b->n && b->lanes[0].pid != b->lanes[b->n - 1].pid)
		strbuf_addf(o, "pid %lld ", (long long)l->pid);
	if (l->dev >= 0) {
		snprintf(buf, sizeof(buf), "GPU%lld stream %lld", (long long)l->dev, (long long)l->tid);
		strbuf_addstr(o, buf);
	} else {
		const char *r = NULL;

		if (role) {
			sqlite3_bind_int64(role, 1, l->pid);
			sqlite3_bind_int64(role, 2, l->tid);
			if (sqlite3_step(role) == SQLITE_ROW)
				r = (const char *)sqlite3_column_text(role, 0);
		}
		html_esc(o, r ? r : "thread");
		strbuf_addf(o, " %lld", (long long)l->tid);
		if (role)
			sqlite3_reset(role);
	}
	strbuf_addf(o, " &middot; %s", hb_kind_name(l->kind));
	if (l->sampled > 1)
		strbuf_addf(o, " (sampled 1 in %d)", l->sampled);
	strbuf_addstr(o, "</div>\n");
}

/* Labels, then the drawing (lanes in order, at most MAX_LANES). */
static void draw(struct html *h, const struct hb *b)
{
	struct strbuf svg = STRBUF_INIT, *o = h->out;
	double level[COLS];
	sqlite3_stmt *role = NULL;
	int row = 1, left = 0;

	if (sqlite3_prepare_v2(h->m->rec->db, "SELECT role FROM threads WHERE pid = ? AND tid = ?", -1, &role,
			       NULL) != SQLITE_OK) {
		sqlite3_finalize(role);
		role = NULL;
	}
	strbuf_addstr(o, "<div class=\"tl\"><div>\n<div class=\"lab\">retraces &middot; marks</div>\n");
	for (size_t i = 0; i < b->n; i++) {
		if (row > MAX_LANES) {
			left++;
			continue;
		}
		lane_label(h, role, b, &b->lanes[i]);
		lane_levels(b, &b->lanes[i], level);
		lane_area(&svg, level, row, b->lanes[i].kind);
		strbuf_addf(&svg, "<line x1=\"0\" x2=\"1000\" y1=\"%d\" y2=\"%d\" stroke=\"var(--line)\" "
			    "vector-effect=\"non-scaling-stroke\"/>\n", (row + 1) * ROW, (row + 1) * ROW);
		row++;
	}
	sqlite3_finalize(role);
	strbuf_addf(o, "</div>\n<svg id=\"tl-svg\" role=\"img\" tabindex=\"0\" aria-labelledby=\"tl-title\" "
		    "data-ns=\"%lld\" data-h=\"%d\" height=\"%d\" viewBox=\"0 0 1000 %d\" preserveAspectRatio=\"none\">"
		    "<title id=\"tl-title\">timeline: per thread, the busy share of each kind of event; "
		    "retraces marked on top (keys: + - arrows 0)</title>\n",
		    (long long)((double)b->t1 - (double)b->t0), row * ROW, row * ROW, row * ROW);
	marks(h, b);
	strbuf_addstr(o, svg.buf ? svg.buf : "");
	strbuf_addstr(o, "</svg></div>\n");
	if (left || b->lanes_left)
		strbuf_addf(o, "<p class=\"dim\">%d more lanes not drawn%s (agprof view shows them all)</p>\n", left,
			    b->lanes_left ? ", nor any past the first 256 found" : "");
	strbuf_release(&svg);
}

int html_timeline(struct html *h)
{
	struct strbuf *o = h->out;
	struct hb b;
	int ret = 0;

	strbuf_addstr(o, "<section id=\"timeline\" aria-labelledby=\"timeline-h\"><h2 id=\"timeline-h\">Timeline</h2>\n"
		      "<p><button type=\"button\" data-zoom=\"in\">zoom in (+)</button>"
		      "<button type=\"button\" data-zoom=\"out\">zoom out (-)</button>"
		      "<button type=\"button\" data-zoom=\"left\">&larr;</button>"
		      "<button type=\"button\" data-zoom=\"right\">&rarr;</button>"
		      "<button type=\"button\" data-zoom=\"reset\">whole run (0)</button> "
		      "<span id=\"tl-range\" class=\"dim\" aria-live=\"polite\"></span></p>\n");
	if (hb_read(&b, h->m) < 0) {
		fprintf(stderr, "error: the timeline cannot be read from %s: %s\n", h->o->recording,
			h->m->rec ? sqlite3_errmsg(h->m->rec->db) : "not open");
		strbuf_addstr(o, "<p>the timeline cannot be read from this recording</p>\n");
		ret = -1;
	} else {
		strbuf_addf(o, "<p class=\"dim\">Each lane's height is the share of the column's time its events "
			    "took (a full lane: busy all the time), from TensorFlow's first event to the end; hover or "
			    "focus a retrace mark for its cause.  Read from %lld rows: a table of more than 262,144 "
			    "is sampled by id, each row read standing for the ones it stands in for (the lane says "
			    "so).</p>\n", (long long)b.rows_read);
		draw(h, &b);
	}
	hb_release(&b);
	strbuf_addstr(o, "</section>\n");
	return ret;
}
