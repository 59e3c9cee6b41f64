/* view.c - `agprof view`: the interactive timeline of a recording. */
#include "builtin.h"
#include "analyze.h"
#include "options.h"
#include "recording.h"
#include "timeline.h"
#include "tui.h"
#include "util.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static const char *const view_usage =
	"usage: agprof view [--rules DIR] [--set RULE.NAME=VALUE] RECORDING\n"
	"\n"
	"Interactive timeline of a recording in the terminal: one track per thread\n"
	"(grouped by process) and per GPU stream, slices coloured by kind (tracing,\n"
	"graph function call, eager op, py_function, GPU kernel and copy, CPU kernel),\n"
	"retraces marked on the time axis, the details of the selected slice (a CPU\n"
	"kernel's op, op type, source line and graph call), the findings of\n"
	"'agprof report' and the per-function table.  Press ? in the view for every\n"
	"key; q quits.\n"
	"\n"
	"options:\n";

static const char *const view_epilogue =
	"\n"
	"Environment: NO_COLOR turns colours off; AGPROF_ASCII=1 draws with ASCII\n"
	"only; AGPROF_VIEW_STATS=FILE writes the open and frame times there on exit.\n"
	"\n"
	"Exit codes: 0 success, 2 usage error, not a terminal, or a recording that\n"
	"cannot be read, 3 internal error.\n";

struct view_cmd {
	const char *path;
	struct rules_args rules;
};

/*
 * The analysis (the model and the findings of agprof report) runs on its
 * own thread and connection while the timeline is already on screen.
 */
struct analysis {
	pthread_t thread;
	struct recording rec;
	struct model m;
	struct ruleset rs;
	const struct analyze_opts *ao;
	int ret;
	int done;     /* atomic */
	int started;
};

static void *analysis_thread(void *arg)
{
	struct analysis *a = arg;

	/*
	 * Below the timeline's scan and far below the thread that draws; the
	 * analysis' own threads inherit this (Linux nice values are per thread).
	 */
	setpriority(PRIO_PROCESS, (id_t)gettid(), 10);
	a->ret = analyze(&a->m, &a->rs, &a->rec, a->ao);
	__atomic_store_n(&a->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static int analysis_ready(void *ctx, const struct model **m, const char **why)
{
	struct analysis *a = ctx;

	if (!__atomic_load_n(&a->done, __ATOMIC_ACQUIRE))
		return 0;
	*m = a->ret ? NULL : &a->m;
	*why = a->ret ? "the analysis failed; its error is printed when the view closes" : model_empty_reason(&a->m);
	return 1;
}

/*
 * The recording for the timeline (rec, tl) and, on its own connection, for
 * the analysis (*a).  0, or an exit code after an error (nothing left open).
 */
static int view_open(const struct view_cmd *c, struct recording *rec, struct timeline *tl, struct analysis **a)
{
	/* a bad recording gets the error of 'agprof report', terminal or not */
	if (recording_open(rec, c->path))
		return EXIT_USAGE;
	if (!isatty(STDIN_FILENO) || !isatty(STDOUT_FILENO)) {
		error("'agprof view' needs a terminal; for a text report run 'agprof report %s'", c->path);
		recording_close(rec);
		return EXIT_USAGE;
	}
	if (!(*a = calloc(1, sizeof(**a)))) {
		error("out of memory");
		recording_close(rec);
		return EXIT_INTERNAL;
	}
	if (recording_open_private(&(*a)->rec, c->path) || timeline_open(tl, rec, 0) < 0) {
		recording_close(&(*a)->rec);  /* a no-op when it was not opened */
		free(*a);
		recording_close(rec);
		return EXIT_USAGE;
	}
	(*a)->ao = &c->rules.ao;
	return 0;
}

/* The view, with the analysis on its own thread; an exit code (or _exit). */
static int view_run(const struct view_cmd *c, struct timeline *tl, struct analysis *a, struct tui_input *in)
{
	FILE *held = NULL;
	int saved = stderr_hold(&held), ret;

	a->started = pthread_create(&a->thread, NULL, analysis_thread, a) == 0;
	if (!a->started)
		analysis_thread(a);
	in->path = c->path;
	in->tl = tl;
	in->model_ready = analysis_ready;
	in->model_ctx = a;
	in->stats_path = getenv("AGPROF_VIEW_STATS");
	ret = tui_run(in) < 0 ? EXIT_USAGE : EXIT_OK;
	timeline_release(tl);
	if (!__atomic_load_n(&a->done, __ATOMIC_ACQUIRE)) {
		/*
		 * The analysis cannot be interrupted inside SQLite (it runs its own
		 * connections): end the process without waiting for it.
		 */
		stderr_release(held, saved);
		fflush(stdout);
		_exit(ret);
	}
	if (a->started)
		pthread_join(a->thread, NULL);
	stderr_release(held, saved);
	if (a->ret != ANALYZE_OK)
		return ret == EXIT_OK ? EXIT_USAGE : ret;  /* the analysis said why */
	model_release(&a->m);
	ruleset_release(&a->rs);
	return ret;
}

int cmd_view(int argc, char **argv)
{
	struct view_cmd c = { 0 };
	struct opt_cmd cmd = { "view", view_usage, view_epilogue, 0,
			       { { rules_options, rules_option, &c.rules }, { help_options, NULL, NULL } } };
	struct tui_input in = { 0 };
	struct recording rec;
	struct timeline tl;
	struct analysis *a;
	int ret;

	in.started = monotonic_seconds();
	c.rules.ao.allow_empty = 1;
	if ((ret = parse_recording_command(&cmd, argc, argv, &c.path)) != 0 ||
	    (ret = view_open(&c, &rec, &tl, &a)) != 0) {
		rules_args_release(&c.rules);
		return ret < 0 ? EXIT_OK : ret;
	}
	ret = view_run(&c, &tl, a, &in);
	recording_close(&a->rec);
	free(a);
	recording_close(&rec);
	rules_args_release(&c.rules);
	return ret;
}
