/*
 * html_timeline.c - the timeline section: per thread (and GPU stream) one
 * row per kind of event, drawn from the timeline's density bins as an area
 * (height: the busy share of each column), and the retraces as marks whose
 * tooltip gives the function, the cause and the time.  The element count
 * is bounded by COLS x MAX_LANES + MAX_MARKS, whatever the recording holds.
 */
#include "html_internal.h"
#include "model.h"
#include "timeline.h"

#include <stdlib.h>
#include <string.h>

#define COLS 400       /* columns of the whole run */
#define NBINS 4000     /* timeline bins over the part drawn: 10 a column */
#define MAX_BINS 262144 /* 3 MB a lane */
#define ROW 18         /* height of a lane, px and viewBox units */
#define LEVELS 8       /* busy share steps: equal neighbours merge into one rect */
#define MAX_LANES 48
#define MAX_MARKS 300

static const char *pattern_of(enum tl_kind k)
{
	static const char *const p[TL_NKINDS] = { [TL_TRACE] = "p-trace", [TL_CALL] = "p-call", [TL_EAGER] = "p-eager",
						  [TL_BLACKBOX] = "p-bb", [TL_KERNEL] = "p-kern", [TL_COPY] = "p-copy",
						  [TL_CPUK] = "p-kern" };
	return (unsigned)k < TL_NKINDS ? p[k] : "p-rest";
}

/* The lane's busy time per column: its bins, then its long events spread over the columns they cover. */
static void lane_busy(const struct timeline *tl, int64_t t0, const struct tl_lane *l, double *busy)
{
	double span = (double)(tl->end_ns - t0), per = span / COLS, skip = (double)(t0 - tl->start_ns);

	memset(busy, 0, COLS * sizeof(*busy));
	if (span <= 0)
		return;
	for (uint32_t b = 0; b < tl->nbins; b++) {
		double at = (double)b * (double)tl->bin_ns - skip;
		/* once loaded, the bins are running sums (timeline_lanes.c) */
		uint64_t v = l->busy[b] - (b ? l->busy[b - 1] : 0);
		int c;

		if (at < 0 || !v)
			continue;
		c = (int)(at / per);
		busy[c < COLS ? c : COLS - 1] += (double)v;
	}
	for (size_t i = 0; i < l->nlongs; i++) {
		double s = (double)(l->longs[i].start_ns - t0), e = (double)(l->longs[i].end_ns - t0);

		if (s >= span || e <= 0 || e <= s)
			continue;
		for (int c = s > 0 ? (int)(s / per) : 0; c < COLS && c * per < e; c++) {
			double lo = c * per > s ? c * per : s, hi = (c + 1) * per < e ? (c + 1) * per : e;

			if (hi > lo)
				busy[c] += hi - lo;
		}
	}
	for (int c = 0; c < COLS; c++)
		busy[c] = busy[c] / per > 1 ? LEVELS : (double)(int)(busy[c] / per * LEVELS + 0.999);
}

/* One lane's area: a rect per run of columns with the same level. */
static void lane_area(struct strbuf *o, const double *level, int row, enum tl_kind kind)
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

static const struct model_trace *find_trace(const struct model *m, int64_t id, const struct model_function **fn)
{
	for (size_t i = 0; i < m->nfunctions; i++)
		for (size_t k = 0; k < m->functions[i].ntraces; k++)
			if (m->functions[i].traces[k].id == id) {
				*fn = &m->functions[i];
				return &m->functions[i].traces[k];
			}
	return NULL;
}

/* The retraces row: a mark per retrace, its cause on hover and on focus. */
static void marks(struct html *h, const struct timeline *tl, int64_t t0)
{
	struct strbuf *o = h->out;
	double span = (double)(tl->end_ns - t0);

	for (size_t i = 0; i < tl->nretraces && i < MAX_MARKS && span > 0; i++) {
		const struct tl_mark *mk = &tl->retraces[i];
		const struct model_function *fn = NULL;
		const struct model_trace *tr = find_trace(h->m, mk->slice.id, &fn);
		double x = 1000.0 * (double)(mk->slice.start_ns - t0) / span;
		double w = 1000.0 * (double)(mk->slice.end_ns - mk->slice.start_ns) / span;

		strbuf_addf(o, "<rect class=\"mark\" tabindex=\"0\" x=\"%.2f\" y=\"2\" width=\"%.2f\" height=\"%d\" "
			    "fill=\"url(#p-trace)\" stroke=\"var(--fg)\" stroke-width=\"1\" "
			    "vector-effect=\"non-scaling-stroke\"><title>retrace #%d of ",
			    x < 0 ? 0 : x > 1000 ? 1000 : x, w < 0.8 ? 0.8 : w, ROW - 4, mk->object_trace_no);
		html_esc(o, fn ? fn->name : "?");
		strbuf_addstr(o, ": ");
		html_esc(o, tr && tr->why.cause ? retrace_cause_name(tr->why.cause) : "cause unknown");
		if (tr && tr->why.detail) {
			strbuf_addstr(o, ", ");
			html_esc(o, tr->why.detail);
		}
		strbuf_addstr(o, " (tracing took ");
		html_dur(o, mk->slice.end_ns - mk->slice.start_ns);
		strbuf_addstr(o, ")</title></rect>\n");
	}
}

/*
 * The drawing starts at TensorFlow's first event: interpreter start-up and
 * imports can be most of a short run and hold nothing to draw.
 */
static int64_t first_tf(const struct model *m, const struct timeline *tl)
{
	int64_t t = m->session.first_tf_ns;

	return t > tl->start_ns && t < tl->end_ns ? t : tl->start_ns;
}

/* Bins enough for COLS columns of 10 over the part drawn, at most MAX_BINS. */
static uint32_t bins_for(const struct model *m)
{
	const struct model_session *s = &m->session;
	double all = (double)(s->end_ns - s->start_ns), drawn = (double)(s->end_ns - s->first_tf_ns);
	double n = drawn > 0 && all > drawn ? NBINS * all / drawn : NBINS;

	return n < MAX_BINS ? (uint32_t)n : MAX_BINS;
}

static void label(struct strbuf *o, const char *track, const char *kind, const char *extra)
{
	strbuf_addstr(o, "<div class=\"lab\">");
	html_esc(o, track);
	strbuf_addf(o, " &middot; %s%s</div>\n", kind, extra);
}

/* Labels, then the drawing (lanes in track order, at most MAX_LANES). */
static void draw(struct html *h, const struct timeline *tl)
{
	struct strbuf svg = STRBUF_INIT, *o = h->out;
	double *level = malloc(COLS * sizeof(*level));
	int row = 1, left = 0;
	int64_t t0 = first_tf(h->m, tl);

	strbuf_addstr(o, "<div class=\"tl\"><div>\n");
	label(o, "retraces", "marks", "");
	for (size_t t = 0; t < tl->ntracks; t++) {
		const struct tl_track *tk = &tl->tracks[t];

		for (size_t k = 0; k < tk->nlanes; k++) {
			const struct tl_lane *l = &tl->lanes[tk->lanes[k]];

			if (row > MAX_LANES || !level) {
				left++;
				continue;
			}
			label(o, tk->label, tl_kind_name(l->kind), "");
			lane_busy(tl, t0, l, level);
			lane_area(&svg, level, row, l->kind);
			strbuf_addf(&svg, "<line x1=\"0\" x2=\"1000\" y1=\"%d\" y2=\"%d\" stroke=\"var(--line)\" "
				    "vector-effect=\"non-scaling-stroke\"/>\n", (row + 1) * ROW, (row + 1) * ROW);
			row++;
		}
	}
	strbuf_addf(o, "</div>\n<svg id=\"tl-svg\" role=\"img\" tabindex=\"0\" aria-labelledby=\"tl-title\" "
		    "data-ns=\"%lld\" data-h=\"%d\" height=\"%d\" viewBox=\"0 0 1000 %d\" preserveAspectRatio=\"none\">"
		    "<title id=\"tl-title\">timeline: per thread, the busy share of each kind of event; "
		    "retraces marked on top (keys: + - arrows 0)</title>\n",
		    (long long)(tl->end_ns - t0), row * ROW, row * ROW, row * ROW);
	marks(h, tl, t0);
	strbuf_addstr(o, svg.buf ? svg.buf : "");
	strbuf_addstr(o, "</svg></div>\n");
	if (left)
		strbuf_addf(o, "<p class=\"dim\">%d more lanes not drawn (agprof view shows them all)</p>\n", left);
	strbuf_release(&svg);
	free(level);
}

int html_timeline(struct html *h)
{
	struct strbuf *o = h->out;
	struct timeline tl;
	int ret = 0;

	strbuf_addstr(o, "<section id=\"timeline\" aria-labelledby=\"timeline-h\"><h2 id=\"timeline-h\">Timeline</h2>\n"
		      "<p><button type=\"button\" data-zoom=\"in\">zoom in (+)</button>"
		      "<button type=\"button\" data-zoom=\"out\">zoom out (-)</button>"
		      "<button type=\"button\" data-zoom=\"left\">&larr;</button>"
		      "<button type=\"button\" data-zoom=\"right\">&rarr;</button>"
		      "<button type=\"button\" data-zoom=\"reset\">whole run (0)</button> "
		      "<span id=\"tl-range\" class=\"dim\" aria-live=\"polite\"></span></p>\n");
	if (!h->m->rec || timeline_open(&tl, h->m->rec, bins_for(h->m)) < 0) {
		strbuf_addstr(o, "<p>the timeline cannot be read from this recording</p>\n</section>\n");
		return -1;
	}
	if (timeline_wait(&tl) < 0) {
		strbuf_addstr(o, "<p>the timeline cannot be read from this recording</p>\n");
		ret = -1;
	} else {
		strbuf_addstr(o, "<p class=\"dim\">Each lane's height is the share of the column's time its events "
			      "took (a full lane: busy all the time), from TensorFlow's first event to the end; hover or focus a retrace mark "
			      "for its cause.</p>\n");
		draw(h, &tl);
	}
	timeline_release(&tl);
	strbuf_addstr(o, "</section>\n");
	return ret;
}
