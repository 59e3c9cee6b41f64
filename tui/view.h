/*
 * view.h - what the views of `agprof view` share: the view_ops table, the
 * state of the session (struct tui), the drawing helpers that hide colour
 * depth and UTF-8 versus ASCII, and the jumps from a list to the timeline.
 */
#ifndef AGPROF_TUI_VIEW_H
#define AGPROF_TUI_VIEW_H

#include "layout.h"
#include "request.h"
#include "timeline.h"
#include "tui.h"

#include <curses.h>
#include <stddef.h>
#include <stdint.h>

/* Request handlers return these bits; the main loop redraws on TUI_REDRAW. */
enum {
	TUI_HANDLED = 1,
	TUI_REDRAW = 2,
	TUI_QUIT = 4,
};

struct tui;
struct view;

struct view_ops {
	const char *name;
	/* Called each time the view becomes current; 0 or -1. */
	int (*open)(struct tui *t, struct view *v);
	/* Draw into the rectangle; never touches the data source beyond reading. */
	void (*draw)(struct tui *t, struct view *v, int y, int x, int h, int w);
	/* Returns TUI_* bits; 0 when the request is not for this view. */
	int (*request)(struct tui *t, struct view *v, enum request req);
	void (*close)(struct tui *t, struct view *v);
};

enum view_id { VIEW_TIMELINE, VIEW_DETAILS, VIEW_FINDINGS, VIEW_FUNCTIONS, VIEW_SEARCH, VIEW_HELP, VIEW__COUNT };

struct view {
	const struct view_ops *ops;
	void *priv;
	size_t top, sel;   /* list views: first shown row, selected row */
	int height;        /* rows of the list at the last draw */
};

extern const struct view_ops timeline_view_ops, details_view_ops, findings_view_ops, functions_view_ops,
	search_view_ops, help_view_ops;

/* Glyphs for a UTF-8 terminal or plain ASCII. */
struct glyphs {
	const char *shade[5];  /* density 1..4 */
	const char *retrace;   /* axis mark of a retrace */
	const char *finding;   /* axis mark of a finding */
	const char *caret;     /* axis mark of the selection */
	const char *tick, *hline, *sep;
	const char *micro;
	int utf8;
};

/* Colour pairs. */
enum {
	PAIR_TITLE = 1,
	PAIR_STATUS,
	PAIR_MARK,
	PAIR_SEL,
	PAIR_ERROR,
	PAIR_HEADER,
	PAIR_SLICE,                 /* + kind: slices */
	PAIR_DENSITY = PAIR_SLICE + TL_NKINDS, /* + kind: density blocks */
	PAIR__END = PAIR_DENSITY + TL_NKINDS,
};

/* A place n / N jump to: a retrace, or a finding with a time span. */
struct mark {
	int64_t t;
	int is_finding;
	size_t index;   /* in timeline.retraces or model.findings */
};

struct tui {
	const struct tui_input *in;
	struct timeline *tl;
	const struct model *m;
	int rows, cols;
	int colors;          /* 0 (monochrome or NO_COLOR), 8 or 256 */
	struct glyphs g;
	struct view views[VIEW__COUNT];
	enum view_id cur;
	int details_pane;    /* the bottom pane under the timeline */

	/* the timeline's state, which the other views read and jump into */
	struct tl_window win;    /* win.cols is the width of the slice area */
	unsigned kind_mask;
	size_t lane;             /* selected lane */
	int has_lane;
	struct tl_slice sel;
	int has_sel;
	/* the selection's collective across ranks (a query per selection, not per frame) */
	struct tl_collective sel_coll;
	struct tl_slice sel_coll_of;
	int sel_coll_rc, has_sel_coll;
	int64_t cursor;          /* time of interest: the selection, a click, a jump */
	struct layout layout;
	int layout_dirty;

	struct mark *marks;
	size_t nmarks;
	ptrdiff_t mark_cur;

	char message[256];
	int message_error;
	MEVENT mouse;

	char needle[128];        /* the last search */

	/* background work: the timeline's scan and the analysis */
	uint64_t data_gen;       /* bumped when the timeline has new data: caches drop */
	int loading;             /* the scan runs */
	double progress;
	int model_pending;       /* the analysis runs */
	const char *model_why;   /* why there is no model, or why it is empty */

	/* frame timings for AGPROF_VIEW_STATS */
	double first_frame, frame_max, frame_sum;
	long frames;
	double frame_max_idle;      /* slowest frame with no background work running */
	int64_t frame_max_span;     /* window width of the slowest frame */
};

#define LABEL_COLS 18   /* the track label column of the timeline */

/* Status line message (cleared at the next key). */
void tui_message(struct tui *t, int is_error, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Make view current (calls its open). */
void tui_switch(struct tui *t, enum view_id id);

/* Attributes of a slice / density cell of kind, selected or not. */
int tui_slice_attr(const struct tui *t, int kind, int selected);
int tui_density_attr(const struct tui *t, int kind);
int tui_pair_attr(const struct tui *t, int pair, int mono);

/*
 * Write s at (y, x), at most w columns, padding with spaces to w when pad.
 * Control bytes become '?', and so do non-ASCII bytes on an ASCII terminal.
 * Returns the columns written.
 */
int tui_put(struct tui *t, int y, int x, int w, const char *s, int pad);
/* printf-style tui_put. */
int tui_putf(struct tui *t, int y, int x, int w, int pad, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
/*
 * Write text wrapped at w columns from row y, skipping the first skip
 * lines, at most maxlines; returns the number of lines the whole text takes.
 */
int tui_wrap(struct tui *t, int y, int x, int w, int skip, int maxlines, const char *text);
/* A horizontal rule with a title. */
void tui_rule(struct tui *t, int y, int x, int w, const char *title);

/* Read a line in the status row; 1 entered, 0 cancelled. */
int tui_prompt(struct tui *t, const char *prompt, char *buf, size_t len);

/*
 * Jumps into the timeline (and make it current): select s and make it
 * visible, keeping the zoom unless the slice would be lost in one column;
 * show the span [a, b) and select the first retrace or slice in it.
 */
void tui_jump_slice(struct tui *t, const struct tl_slice *s);
void tui_jump_span(struct tui *t, int64_t a, int64_t b, int64_t function_id);

/* Clamp the window inside the recording, keeping its width when it fits. */
void tui_clamp_window(struct tui *t);

/* The retrace explanation the model gives for trace id, or NULL. */
const char *tui_retrace_why(const struct tui *t, int64_t trace_id, const char **cause);

/*
 * Moves in a list view of n rows (Up/Down, pages, Home/End, mouse click on
 * a row drawn at list_y, wheel); returns TUI_* bits, 0 when not a move.
 */
int tui_list_request(struct tui *t, struct view *v, enum request req, size_t n, int list_y);
/* Keep v->sel visible in a list of height rows. */
void tui_list_scroll(struct view *v, int height, size_t n);

/* Label / value lines of the selection (timeline details + the model's explanation). */
ptrdiff_t tui_selection_details(struct tui *t, struct tl_detail **out);

#endif
