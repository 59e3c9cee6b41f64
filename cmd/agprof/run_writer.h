/*
 * run_writer.h - the launcher's side of the collector's shared memory: drains
 * every process's rings and side file (collector/ring.h) into the SQLite
 * recording (docs/schema.md).
 */
#ifndef AGPROF_RUN_WRITER_H
#define AGPROF_RUN_WRITER_H

#include <stdint.h>
#include <stddef.h>

struct run_writer;

struct run_session {
	char **argv;           /* the program and its arguments */
	const char *cwd;
	uint64_t start_ns, end_ns, start_wall_ns;
	int main_pid;
	int exit_status;       /* as a shell reports it */
	int exit_signal;
};

struct run_totals {
	uint64_t events, traces, calls, eager_ops, blackbox, gpu, dropped;
	uint64_t session_runs;  /* TF1 Session steps */
	int processes;
};

/* Create the recording at path (must not exist); NULL with err filled on failure. */
struct run_writer *run_writer_create(const char *path, const char *shm_dir, char *err, size_t errlen);

/* Drain what the collector published so far; commits every so often. */
void run_writer_poll(struct run_writer *w);

/* Final drain, session facts, links between tables; closes the file. */
int run_writer_finish(struct run_writer *w, const struct run_session *s, struct run_totals *totals);

#endif
