/*
 * attach.c - `agprof __attach` (hidden): the writer of a recording started
 * from inside a running Python program (`import agprof; agprof.start()`,
 * python/agprof/_record.py).  It makes the output file and the buffer folder
 * as `agprof run` does, says on stdout where they are and where the
 * collector is, drains the rings while the program runs, and ends the
 * recording when its stdin closes (agprof.stop(), or the program's exit).
 * A child process, so that the program's own threads keep their CPU.
 *
 *   agprof __attach [-f] [-q] --pid PID -o FILE [--note TEXT] [-- ARGV...]
 *
 * stdout: one line "ready\t<buffer folder>\t<collector>\n", then nothing.
 * exit status: 0 recorded; 2 usage or the recording cannot be created;
 * 3 the recording failed (disk full, internal error).
 *
 *   agprof __cell-facts FILE PYTHON CELLS
 *
 * After agprof.stop() in IPython wrote the notebook cells into FILE
 * (python/agprof/_cells.py): the code facts of the cells' code (CELLS, a
 * JSON file), parsed by PYTHON (the notebook's interpreter) as the writer
 * parses the user's files (writer/parse_source.h).  Exit status 0, or 1
 * when none were written.
 */
#include "builtin.h"
#include "db.h"
#include "parse_source.h"
#include "run_attach.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct attach_opts {
	const char *output, *note;
	int force, quiet;
	int pid;
	char **argv;
};

static volatile sig_atomic_t attach_stop;

static void on_term(int sig)
{
	(void)sig;
	attach_stop = 1;
}

static int parse_attach(struct attach_opts *o, int argc, char **argv)
{
	static char *no_argv[] = { "python", NULL };

	memset(o, 0, sizeof(*o));
	o->argv = no_argv;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-f") || !strcmp(a, "--force")) {
			o->force = 1;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			o->quiet = 1;
		} else if ((!strcmp(a, "-o") || !strcmp(a, "--output")) && i + 1 < argc) {
			o->output = argv[++i];
		} else if (!strcmp(a, "--note") && i + 1 < argc) {
			o->note = argv[++i];
		} else if (!strcmp(a, "--pid") && i + 1 < argc) {
			o->pid = atoi(argv[++i]);
		} else if (!strcmp(a, "--")) {
			if (i + 1 < argc)
				o->argv = argv + i + 1;
			break;
		} else {
			return error("'%s': unknown option of agprof __attach", a);
		}
	}
	if (o->pid <= 0 || !o->output)
		return error("agprof __attach needs --pid PID and -o FILE (it is started by 'import agprof')");
	return 0;
}

/* stdin closed (the program said stop, or exited), the program gone, or SIGTERM; waits up to wait_ms for stdin. */
static int should_stop(int pid, int wait_ms)
{
	struct pollfd p = { 0, POLLIN, 0 };
	char buf[64];

	if (attach_stop || getppid() != pid)
		return 1;
	if (poll(&p, 1, wait_ms) > 0) {
		ssize_t n = read(0, buf, sizeof(buf));

		if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN))
			return 1;
	}
	return 0;
}

static void drain_until_stopped(struct run_writer *w, const struct attach_opts *o, const char *path)
{
	int said = 0;

	while (!should_stop(o->pid, (int)(run_writer_idle_us(w) / 1000))) {
		if (run_writer_poll(w) != 0 && !said) {
			error("cannot write '%s': %s; recording stopped, the program goes on", path,
			      run_writer_error(w));
			said = 1;
		}
	}
}

int cmd_attach(int argc, char **argv)
{
	struct attach_opts o;
	struct run_state *rs;
	struct run_writer *w;
	struct run_session sess;
	struct run_totals totals;
	char err[512], cwd[PATH_MAX] = "";
	int rc;

	if (parse_attach(&o, argc, argv) != 0)
		return EXIT_USAGE;
	/* The program decides when to stop: a terminal's Ctrl-C goes to it, not to us. */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, on_term);
	signal(SIGXFSZ, SIG_IGN);
	rs = run_attach_prepare(o.output, o.force, o.quiet, &rc);
	if (!rs)
		return rc;
	w = run_writer_create(run_attach_tmp_path(rs), run_attach_shm_dir(rs), err, sizeof(err));
	if (!w) {
		error("%s", err);
		run_attach_end(rs);
		return EXIT_USAGE;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	memset(&sess, 0, sizeof(sess));
	sess.argv = o.argv;
	sess.cwd = cwd;
	sess.main_pid = o.pid;
	sess.attached = o.note ? o.note : "recorded from agprof.start() to agprof.stop() inside a running program";
	sess.start_wall_ns = clock_ns(CLOCK_REALTIME);
	sess.start_ns = clock_ns(CLOCK_MONOTONIC);
	printf("ready\t%s\t%s\n", run_attach_shm_dir(rs), run_attach_collector(rs));
	fflush(stdout);
	drain_until_stopped(w, &o, run_attach_output(rs));
	sess.end_ns = clock_ns(CLOCK_MONOTONIC);
	rc = EXIT_OK;
	if (run_writer_finish(w, &sess, &totals) != 0) {
		error("cannot write '%s': %s; it keeps the %llu events stored before", run_attach_output(rs),
		      totals.error ? totals.error : "internal error", (unsigned long long)totals.events);
		rc = EXIT_INTERNAL;
	}
	if (run_attach_publish(rs, &totals) != 0)
		rc = EXIT_INTERNAL;
	run_attach_end(rs);
	return rc;
}

int cmd_cell_facts(int argc, char **argv)
{
	sqlite3 *db = NULL;
	int rc;

	if (argc != 4)
		return error("usage: agprof __cell-facts FILE PYTHON CELLS"), EXIT_USAGE;
	if (sqlite3_open_v2(argv[1], &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW, NULL) != SQLITE_OK) {
		sqlite3_close(db);
		return error("cannot open '%s'", argv[1]), EXIT_USAGE;
	}
	sqlite3_busy_timeout(db, 10000);
	rc = code_facts_record_cells(db, argv[2], argv[3]) ? 1 : 0;
	sqlite3_close(db);
	return rc;
}
