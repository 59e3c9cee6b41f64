/*
 * top_find.h - which recording `agprof top` follows, and who writes it.
 *
 * A recording in progress is the hidden file .FILE.XXXXXX beside its
 * final name, held open by its writer: the `agprof run` launcher, or the
 * `agprof __attach` child that agprof.start() (and `agprof attach PID`)
 * starts in the program.  Those processes are found through /proc: the
 * files a process holds open (/proc/PID/fd) that are agprof recordings
 * (an SQLite header whose application id is agprof's).
 */
#ifndef AGPROF_TOP_FIND_H
#define AGPROF_TOP_FIND_H

#include <stddef.h>
#include <sys/types.h>


/*
 * The recording being written for process pid: one that pid itself holds
 * open (a launcher or writer was named), else one of its ancestors' (the
 * `agprof run` that started it), else one of its children's (agprof.start()
 * or `agprof attach`).  Returns the writer's pid with out filled, 0 when
 * none.
 */
pid_t top_pid_recording(pid_t pid, char *out, size_t len);

/* The process that holds the file at path open for writing it, 0 when none (a scan of /proc). */
pid_t top_path_writer(const char *path);

/* FILE of a hidden .FILE.XXXXXX (dir kept); 0, -1 when path is not such a name. */
int top_final_path(const char *hidden, char *out, size_t len);

#endif
