/*
 * top_view.h - `agprof top` in the terminal: the lines of the live view
 * (analyzer/report/live_text.h) placed on the screen and refreshed.  The
 * view never reads the recording: cmd/agprof/top.c refreshes the data
 * through the callbacks, the view draws what they hand it.
 */
#ifndef AGPROF_TOP_VIEW_H
#define AGPROF_TOP_VIEW_H

#include "live_text.h"

struct top_screen {
	/* Read what is new: 0, 1 once the run ended (shown, then the view waits for q), -1 on error. */
	int (*update)(void *ctx);
	/* Hand the screen's lines to emit, for a screen of width x rows. */
	void (*lines)(void *ctx, int width, int rows, void (*emit)(void *, enum live_style, const char *), void *ectx);
	void *ctx;
	double delay;          /* seconds between refreshes */
};

/*
 * Until q (or Ctrl-C): refresh every delay, or at once on space.  0, or -1
 * after an error line (the terminal cannot be used, a refresh failed: the
 * refresh printed why once the terminal is back).
 */
int top_view_run(const struct top_screen *s);

#endif
