/*
 * keeper.h - the recording gets its name even when agprof is killed.
 *
 * Owns: a small process forked by the launcher once the hidden recording
 * exists.  It waits on a pipe whose only writer is the launcher.  When the
 * launcher finishes it says so and the keeper exits; when the launcher dies
 * without a word (SIGKILL, a crash, the OOM killer), the pipe reaches end of
 * file and the keeper marks the recording as cut short (meta cut_short and
 * end_ns; no exit status: nobody saw the program's end), which also folds
 * SQLite's WAL back, and moves it to FILE as the launcher would have
 * (publish.h).  The rows committed before the kill are kept; the rows of
 * the transaction that was open are not (at most one commit interval).
 * The keeper ignores the signals a terminal or the launcher forwards, and
 * holds no descriptor but the pipe.
 */
#ifndef AGPROF_KEEPER_H
#define AGPROF_KEEPER_H

#include <sys/types.h>

struct keeper {
	int fd;      /* the pipe's write end, -1 when no keeper runs */
	pid_t pid;
};

#define KEEPER_INIT { -1, 0 }

/* What the keeper writes when the launcher could not (INSERT OR IGNORE: the launcher's own win). */
struct keeper_run {
	char *const *argv;   /* the program and its arguments, or NULL (agprof.record()) */
	int force, default_name; /* as recording_publish() takes them */
};

/*
 * Fork the keeper of tmp_path, to be published as out.  0, or -1 when it
 * cannot be started (the run goes on without one: a kill then leaves the
 * hidden file, which recording_open()'s hint names).
 */
int keeper_start(struct keeper *k, const char *tmp_path, const char *out, const struct keeper_run *run);
/* The launcher finished (published, or removed the file): the keeper exits. */
void keeper_done(struct keeper *k);

#endif
