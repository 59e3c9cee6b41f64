/*
 * top.c - `agprof top`: a recording being written, refreshed every second
 * (the model's live view, analyzer/model/live.h), in the terminal
 * (tui/top_view.c) or as plain text.
 *
 * The recording is opened read-only for each refresh and closed after it:
 * between refreshes nothing holds the launcher's WAL, so its checkpoints
 * and its final close go on as if nobody read (live.h).
 */
#include "builtin.h"
#include "live.h"
#include "live_text.h"
#include "options.h"
#include "recording.h"
#include "top_find.h"
#include "top_view.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Exit codes past the shared ones (builtin.h); the same as agprof attach's. */
enum { EXIT_NO_PROCESS = 4 };

static const char *const top_usage =
	"usage: agprof top [--once] [-d SECONDS] [-n N] [--no-attach] [-o FILE] (RECORDING | PID)\n"
	"\n"
	"A live view of a run in progress, refreshed every second: the traces of\n"
	"each tf.function with the newest retrace's cause as it happens, and for\n"
	"the last second the graph calls, the eager share, the input wait and the\n"
	"user lines that cost the most.  In a terminal it is a full-screen view\n"
	"(q quits, space refreshes now); otherwise, or with --once, plain text.\n"
	"\n"
	"RECORDING is the file an 'agprof run -o FILE' in progress is writing:\n"
	"FILE itself, or its hidden .FILE.XXXXXX while the run goes on.  A\n"
	"finished recording is shown once (its last second and whole-run totals,\n"
	"as agprof report counts them), saying that the run ended.  PID is a\n"
	"process: the 'agprof run' launcher or any process it started, a program\n"
	"recording itself (agprof.start(), agprof attach); a Python program with\n"
	"TensorFlow that nobody records is attached to as 'agprof attach PID'\n"
	"does, and let go when top quits.\n"
	"\n"
	"options:\n";

static const char *const top_epilogue =
	"\n"
	"Exit codes: 0 success (q, the run's end, --once, -n); 2 usage error, a\n"
	"file that is not a recording; 3 internal error; 4 no such process, or it\n"
	"has no recording and could not be attached (--no-attach); 5-9 as\n"
	"agprof attach when attaching failed.\n";

enum { TOP_ONCE = OPT_KEY_BASE + 90, TOP_NO_ATTACH };

static const struct opt top_options[] = {
	{ "once", TOP_ONCE, NULL, "print one refresh as plain text and exit" },
	{ "delay", 'd', "SECONDS", "seconds between refreshes (default 1)" },
	{ "iterations", 'n', "N", "plain text: stop after N refreshes (default: the run's end)" },
	{ "no-attach", TOP_NO_ATTACH, NULL, "PID: never attach; fail when it has no recording" },
	{ "output", 'o', "FILE", "PID: where attaching records (agprof attach -o; default\n"
				 "agprof-PID.agprof)" },
	OPT_HELP,
	OPT_END,
};

struct top_cmd {
	int once, no_attach, count;
	double delay;
	const char *output;
	pid_t pid;             /* PID given, else 0 */
	pid_t writer;          /* the process writing the recording, 0 unknown */
	pid_t attach;          /* our `agprof attach`, 0 none */
	char path[PATH_MAX];   /* the recording read now: the hidden file while the run goes on */
	char final[PATH_MAX];  /* its name after the run, "" when it has it already */
	char subject[PATH_MAX + 64];
	struct recording rec;
	struct live lv;
	int live_started;
	int gone;              /* the writer died before the run's end */
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static int top_option(void *ctx, int key, const char *value)
{
	struct top_cmd *c = ctx;
	char *end;

	switch (key) {
	case TOP_ONCE: c->once = 1; break;
	case TOP_NO_ATTACH: c->no_attach = 1; break;
	case 'o': c->output = value; break;
	case 'd':
		c->delay = strtod(value, &end);
		if (*end || end == value || !(c->delay >= 0.1 && c->delay <= 3600))
			return error("--delay needs seconds from 0.1 to 3600, not '%s'", value);
		break;
	case 'n':
		c->count = (int)strtol(value, &end, 10);
		if (*end || end == value || c->count <= 0)
			return error("--iterations needs a number > 0, not '%s'", value);
		break;
	}
	return 0;
}

static int64_t now_ns(void)
{
	return (int64_t)clock_ns(CLOCK_MONOTONIC);
}

/* Open the recording for one refresh, following it to its final name once the run renamed it.  0 or -1. */
static int top_open(struct top_cmd *c)
{
	if (access(c->path, F_OK) != 0 && c->final[0] && access(c->final, F_OK) == 0) {
		snprintf(c->path, sizeof(c->path), "%s", c->final);
		c->final[0] = '\0';
	}
	return recording_open(&c->rec, c->path);
}

/*
 * One refresh: open, read, close.  A writer that died without the run's
 * end (agprof and its keeper killed) ends the view too.  0 or -1.
 */
static int top_refresh(struct top_cmd *c)
{
	int ret;

	if (top_open(c))
		return -1;
	if (!c->live_started && live_init(&c->lv, &c->rec, 0) == 0)
		c->live_started = 1;
	ret = c->live_started ? live_refresh(&c->lv, c->lv.ended || c->gone ? 0 : now_ns()) : -1;
	if (!ret && !c->lv.ended && (c->writer <= 0 || !process_running(c->writer)))
		c->gone = 1;  /* nobody writes it (its agprof was killed): nothing more will come */
	if (!ret && (c->lv.ended || c->gone) && !(c->lv.parts & MODEL_EVENTS)) {
		/* the last refresh reads the whole run, as agprof report does */
		c->lv.parts = MODEL_ALL;
		c->lv.trace_mark = -1;
		ret = live_refresh(&c->lv, 0);
	}
	if (c->gone)
		c->lv.ended = 1;
	recording_close(&c->rec);
	return ret;
}

static void emit_line(void *ctx, enum live_style style, const char *line)
{
	(void)style;
	fprintf(ctx, "%s\n", line);
}

static void top_lines(void *ctx, int width, int rows, void (*emit)(void *, enum live_style, const char *), void *ectx)
{
	struct top_cmd *c = ctx;
	/* 6 lines of header and blanks, then the two tables share the rest */
	int table = rows > 12 ? (rows - 8) / 2 : 2;
	struct live_text_opts o = { c->subject, now_ns(), width, table, table,
				    c->gone ? "nobody writes it any more (its agprof was killed?)" : NULL };

	live_text(&c->lv, &o, emit, ectx);
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };

	while (!interrupted && nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* Plain text: one refresh per delay, until the run's end, -n or a signal. */
static int top_plain(struct top_cmd *c)
{
	for (int i = 0;; i++) {
		if (top_refresh(c))
			return EXIT_USAGE;
		if (i)
			fputs("\n", stdout);
		top_lines(c, 132, 60, emit_line, stdout);
		fflush(stdout);
		if (c->once || c->lv.ended || (c->count && i + 1 >= c->count) || interrupted)
			return EXIT_OK;
		sleep_s(c->delay);
	}
}

static int screen_refresh(void *ctx)
{
	struct top_cmd *c = ctx;

	return top_refresh(c) ? -1 : c->lv.ended;
}

/*
 * The recording FILE names: the hidden file beside it while a run writes
 * it (even when FILE is there from an earlier run: -f replaces it at the
 * end), else FILE, else a hidden file nobody writes any more.  0.
 */
static int find_file(struct top_cmd *c, const char *arg)
{
	char hidden[PATH_MAX];
	int has_hidden = recording_hidden_path(arg, hidden, sizeof(hidden));
	pid_t writer = has_hidden ? top_path_writer(hidden) : 0;

	if (has_hidden && (writer > 0 || access(arg, F_OK) != 0)) {
		snprintf(c->path, sizeof(c->path), "%s", hidden);
		snprintf(c->final, sizeof(c->final), "%s", arg);
		c->writer = writer;
	} else {
		snprintf(c->path, sizeof(c->path), "%s", arg);
		if (top_final_path(arg, c->final, sizeof(c->final)) != 0)
			c->final[0] = '\0';
		c->writer = top_path_writer(c->path);
	}
	snprintf(c->subject, sizeof(c->subject), "%s", c->final[0] ? c->final : c->path);
	return 0;
}

/* Start `agprof attach -q [-o FILE] PID` as our child.  0 or an exit code. */
static int attach_start(struct top_cmd *c)
{
	char pid[32], exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *argv[8] = { "agprof", "attach", "-q" };
	int i = 3;

	if (n <= 0)
		return error("cannot find the agprof program: %s", strerror(errno)), EXIT_INTERNAL;
	exe[n] = '\0';
	snprintf(pid, sizeof(pid), "%d", (int)c->pid);
	if (c->output) {
		argv[i++] = "-o";
		argv[i++] = (char *)c->output;
	}
	argv[i++] = pid;
	argv[i] = NULL;
	if ((c->attach = fork()) < 0)
		return error("cannot start agprof attach: %s", strerror(errno)), EXIT_INTERNAL;
	if (c->attach == 0) {
		execv(exe, argv);
		_exit(127);
	}
	return 0;
}

/* Wait for the attached program's writer (agprof attach says why it failed); 0 or an exit code. */
static int attach_wait(struct top_cmd *c)
{
	/* agprof attach gives up after 20 s without an answer from the program */
	for (int i = 0; i < 300 && !interrupted; i++) {
		int status;

		if ((c->writer = top_pid_recording(c->pid, c->path, sizeof(c->path))) > 0)
			return 0;
		if (waitpid(c->attach, &status, WNOHANG) == c->attach) {
			c->attach = 0;
			return WIFEXITED(status) && WEXITSTATUS(status) ? WEXITSTATUS(status) : EXIT_INTERNAL;
		}
		sleep_s(0.1);
	}
	return error("process %d: agprof attach started no recording", (int)c->pid), EXIT_INTERNAL;
}

/* Let the program go: agprof attach stops the recording on SIGINT and waits for its file. */
static void attach_end(struct top_cmd *c)
{
	int status;

	if (c->attach <= 0)
		return;
	kill(c->attach, SIGINT);
	while (waitpid(c->attach, &status, 0) < 0 && errno == EINTR)
		;
	c->attach = 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		fprintf(stderr, "agprof: process %d goes on; its recording is '%s'\n", (int)c->pid,
			c->final[0] ? c->final : c->path);
}

/* The recording of process PID, attaching to it when nobody records it.  0 or an exit code. */
static int find_pid(struct top_cmd *c)
{
	int rc;

	if (!process_running(c->pid))
		return error("no such process: %d", (int)c->pid), EXIT_NO_PROCESS;
	c->writer = top_pid_recording(c->pid, c->path, sizeof(c->path));
	if (!c->writer && c->no_attach)
		return error("process %d has no recording in progress (no agprof run, agprof.start() or "
			     "agprof attach); without --no-attach top attaches to it", (int)c->pid), EXIT_NO_PROCESS;
	if (!c->writer && ((rc = attach_start(c)) != 0 || (rc = attach_wait(c)) != 0))
		return rc;
	if (top_final_path(c->path, c->final, sizeof(c->final)) != 0)
		c->final[0] = '\0';
	snprintf(c->subject, sizeof(c->subject), "pid %d (%s)", (int)c->pid, c->final[0] ? c->final : c->path);
	return 0;
}

/* PID when arg is all digits and no file has that name. */
static pid_t arg_pid(const char *arg)
{
	char *end;
	long pid = strtol(arg, &end, 10);

	if (*end || end == arg || access(arg, F_OK) == 0 || pid <= 0 || pid > INT_MAX)
		return 0;
	return (pid_t)pid;
}

static int top_run(struct top_cmd *c)
{
	struct top_screen s = { screen_refresh, top_lines, c, c->delay };
	FILE *held = NULL;
	int saved, ret;

	if (c->once || !isatty(STDOUT_FILENO) || !isatty(STDIN_FILENO))
		return top_plain(c);
	/* a finished recording is shown once, as text: nothing will change */
	if (top_refresh(c))
		return EXIT_USAGE;
	if (c->lv.ended) {
		top_lines(c, 132, 60, emit_line, stdout);
		return EXIT_OK;
	}
	saved = stderr_hold(&held);
	ret = top_view_run(&s) < 0 ? EXIT_USAGE : EXIT_OK;
	stderr_release(held, saved);
	return ret;
}

int cmd_top(int argc, char **argv)
{
	static struct top_cmd c;
	struct opt_cmd cmd = { "top", top_usage, top_epilogue, 0, { { top_options, top_option, &c } } };
	int first, rc;

	c.delay = 1.0;
	first = opt_parse(&cmd, argc, argv);
	if (first < 0)
		return first == OPT_DONE ? EXIT_OK : EXIT_USAGE;
	if (first != argc - 1)
		return error("agprof top needs one RECORDING or PID; see 'agprof top --help'"), EXIT_USAGE;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	c.pid = arg_pid(argv[first]);
	rc = c.pid ? find_pid(&c) : find_file(&c, argv[first]);
	if (!rc)
		rc = top_run(&c);
	if (c.live_started)
		live_release(&c.lv);
	attach_end(&c);
	return rc;
}
