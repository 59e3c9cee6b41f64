/*
 * live_text.h - the screen of `agprof top` as lines of text: one
 * formatter for the plain output (stdout not a terminal, --once) and the
 * terminal view (tui/top_view.c), which only places and colours them.
 */
#ifndef AGPROF_LIVE_TEXT_H
#define AGPROF_LIVE_TEXT_H

#include "live.h"

#include <stdint.h>

/* How a line is shown in the terminal; the plain output ignores it. */
enum live_style { LIVE_TITLE, LIVE_HEADER, LIVE_TEXT, LIVE_ALERT };

struct live_text_opts {
	const char *subject;    /* "run.agprof", "pid 1234 (run.agprof)" */
	int64_t now_ns;         /* CLOCK_MONOTONIC now; retraces say how long ago from it (the end once ended) */
	int width;              /* the lines' width: a longer one is cut; 0: 100 */
	int max_functions, max_lines; /* rows of each table; 0: 10 */
	const char *state;      /* the title's state instead of "live" / "the run ended", or NULL */
};

/* Each line, in order, handed to emit (NUL-terminated, no newline). */
void live_text(const struct live *lv, const struct live_text_opts *o,
	       void (*emit)(void *ctx, enum live_style style, const char *line), void *ctx);

#endif
