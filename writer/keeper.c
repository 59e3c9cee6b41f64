/* keeper.c - a killed launcher's recording still gets its name; see keeper.h. */
#include "keeper.h"
#include "links.h"
#include "publish.h"
#include "db.h"
#include "strbuf.h"
#include "trust.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define KEEPER_DONE 'D'
#define CUT_SHORT "agprof was killed before the run's finish: what it committed until then is kept"

/* What the launcher writes at its finish, as far as the keeper knows it; the launcher's own values win. */
static void run_meta(sqlite3 *db, const struct keeper_run *run, uint64_t start_ns, uint64_t start_wall_ns)
{
	struct strbuf argv = STRBUF_INIT;
	char cwd[PATH_MAX], sql[160];
	sqlite3_stmt *s = db_prepare(db, "INSERT OR IGNORE INTO meta(key, value) VALUES (?, ?)");

	if (!s)
		return;
	if (run->argv) {
		strbuf_add_json_argv(&argv, run->argv);
		if (!strbuf_failed(&argv)) {
			sqlite3_bind_text(s, 1, "argv", -1, SQLITE_STATIC);
			sqlite3_bind_text(s, 2, argv.buf, -1, SQLITE_STATIC);
			db_step_done(db, s);
			sqlite3_reset(s);
		}
	}
	if (getcwd(cwd, sizeof(cwd))) {
		char mac[COMMAND_MAC_HEX];

		sqlite3_bind_text(s, 1, "cwd", -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, cwd, -1, SQLITE_STATIC);
		db_step_done(db, s);
		sqlite3_reset(s);
		/* what the launcher wrote wins: its argv and cwd come with its own MAC */
		if (run->argv && !strbuf_failed(&argv) && !command_mac(argv.buf, cwd, mac)) {
			sqlite3_bind_text(s, 1, "command_mac", -1, SQLITE_STATIC);
			sqlite3_bind_text(s, 2, mac, -1, SQLITE_STATIC);
			db_step_done(db, s);
		}
	}
	sqlite3_finalize(s);
	strbuf_release(&argv);
	snprintf(sql, sizeof(sql), "INSERT OR IGNORE INTO meta(key, value) VALUES ('start_ns', '%llu'), "
		 "('start_wall_ns', '%llu')", (unsigned long long)start_ns, (unsigned long long)start_wall_ns);
	db_exec(db, sql);
}

/* Mark the recording cut short; opening it folds the committed WAL back. */
static void mark_cut_short(const char *path, const struct keeper_run *run, uint64_t start_ns,
			   uint64_t start_wall_ns)
{
	sqlite3 *db = NULL;
	char end[128];

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) == SQLITE_OK) {
		sqlite3_busy_timeout(db, 2000);
		/*
		 * What the launcher had not made: the links of the committed
		 * rows (kernels to their calls: their seq is in both rows),
		 * before kernels_call indexes call_id; the schema, when it died
		 * at start-up (a file without tables is no recording); the late
		 * indexes, always: without kernels_call a report of a cut-short
		 * run looked up each call's kernels by a scan (16,000 calls,
		 * 17,738 kernels: 18.7 s of CPU instead of 0.02; it grows as
		 * their product).
		 */
		links_cut_short(db);
		db_schema_complete(db);
		if (db_exec(db, "BEGIN IMMEDIATE") == 0) {
			db_meta_set(db, "cut_short", CUT_SHORT);
			/* no exit status: nobody saw the program end; the end is the launcher's death unless it wrote one */
			db_exec(db, "DELETE FROM meta WHERE key IN ('exit_status', 'exit_signal')");
			snprintf(end, sizeof(end), "INSERT OR IGNORE INTO meta(key, value) VALUES ('end_ns', '%llu')",
				 (unsigned long long)clock_ns(CLOCK_MONOTONIC));
			db_exec(db, end);
			run_meta(db, run, start_ns, start_wall_ns);
			db_exec(db, "COMMIT");
		}
	}
	sqlite3_close(db);
}

static void keep(int rfd, const char *tmp_path, const char *out, const struct keeper_run *run)
{
	uint64_t start_ns = clock_ns(CLOCK_MONOTONIC), start_wall_ns = clock_ns(CLOCK_REALTIME);
	char name[PATH_MAX], word;
	ssize_t n;
	int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGTSTP };

	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_IGN);
	setsid();  /* out of the terminal's process group: its ^C and ^Z are the launcher's business */
	do
		n = read(rfd, &word, 1);
	while (n < 0 && errno == EINTR);
	if (n == 1 && word == KEEPER_DONE)
		_exit(0);
	if (access(tmp_path, F_OK) != 0)
		_exit(0);
	mark_cut_short(tmp_path, run, start_ns, start_wall_ns);
	snprintf(name, sizeof(name), "%s", out);
	_exit(recording_publish(tmp_path, name, sizeof(name), run->force, run->default_name) ? 1 : 0);
}

/*
 * Descriptors 0 to 2 on /dev/null: else SQLite opens the recording there,
 * and an error message written to "stderr" would land in the database.
 */
static void null_stdio(int pipe_fd)
{
	int fd = open("/dev/null", O_RDWR | O_CLOEXEC);

	for (int i = 0; i < 3 && fd >= 0; i++)
		if (i != pipe_fd && i != fd)
			dup2(fd, i);
	if (fd > 2)
		close(fd);
}

int keeper_start(struct keeper *k, const char *tmp_path, const char *out, const struct keeper_run *run)
{
	int fds[2];
	pid_t pid;

	k->fd = -1;
	if (pipe2(fds, O_CLOEXEC) != 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		/* nothing of the launcher's but the pipe: no lock, no database, no terminal */
		for (int fd = 0; fd < 1024; fd++)
			if (fd != fds[0])
				close(fd);
		null_stdio(fds[0]);
		keep(fds[0], tmp_path, out, run);
	}
	close(fds[0]);
	k->fd = fds[1];
	k->pid = pid;
	return 0;
}

void keeper_done(struct keeper *k)
{
	char word = KEEPER_DONE;

	if (k->fd < 0)
		return;
	if (write(k->fd, &word, 1) != 1) {
		/* it is gone already; nothing to tell */
	}
	close(k->fd);
	k->fd = -1;
	waitpid(k->pid, NULL, 0);
}
