/*
 * tui.h - `agprof view`: the interactive timeline of a recording.
 *
 * Owns: the terminal (curses is included only under tui/), the views and
 * their key bindings.  Structure after tig: one file per view (timeline,
 * details, findings, functions, search, help), each a struct view_ops; one
 * X-macro table of requests with their keys that also yields the help
 * screen (request.h); request handlers return flag bits (TUI_HANDLED,
 * TUI_REDRAW) so that the main loop alone decides when to redraw.
 *
 * Data: the views read the analyzer's timeline (timeline.h) and model
 * (model.h), never SQL.
 */
#ifndef AGPROF_TUI_H
#define AGPROF_TUI_H

#include "timeline.h"

#include <stddef.h>
#include <stdint.h>

struct model;

/*
 * What cmd_view hands to the TUI; nothing is owned by the TUI.  The model
 * (findings, functions) is computed while the timeline is already shown:
 * model_ready() returns 0 while it is not ready, then 1 with *m set (NULL
 * when the analysis failed) and *why a one-line reason or NULL.
 */
struct tui_input {
	const char *path;            /* shown in the title bar */
	struct timeline *tl;
	int (*model_ready)(void *ctx, const struct model **m, const char **why);
	void *model_ctx;
	double started;              /* monotonic seconds when the command started */
	const char *stats_path;      /* AGPROF_VIEW_STATS: write frame timings there */
};

/*
 * Run the interactive view until the user quits.  Returns 0, or -1 after
 * printing an error (e.g. the terminal cannot be initialised).
 */
int tui_run(const struct tui_input *in);

#endif
