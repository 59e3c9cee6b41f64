/*
 * capture_log.h - the capture windows of a run (run --delay, --duration,
 * --capture, SIGUSR2, agprof.start/stop): the changes of the window's
 * "closed" bits as the launcher made them and as each process reported
 * them (AGP_SIDE_CAPTURE), turned into the recording's capture_windows rows
 * (docs/schema.md) when the run ends.
 */
#ifndef AGPROF_CAPTURE_LOG_H
#define AGPROF_CAPTURE_LOG_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

struct capture_change {
	int pid;          /* 0: the launcher's bit, for every process */
	uint64_t ns;
	uint32_t bits;    /* the owner's bits after the change (AGP_CAPTURE_*) */
	size_t seq;       /* order of arrival: ties keep it */
	char why[64];
};

struct capture_process {
	int pid;
	uint64_t start_ns;
};

struct capture_log {
	int used;                  /* a capture option was given or the window was toggled */
	uint32_t launcher_bits;    /* AGP_CAPTURE_LAUNCHER now */
	int64_t calls;             /* --capture function calls the processes reported, most of any */
	struct capture_change *changes;
	size_t nchanges, cap;
	struct capture_process *procs;
	size_t nprocs, procs_cap;
	int64_t windows, window_ns; /* what capture_log_write stored */
};

/* Changes kept at most (each window is two): past it, capture_log_add refuses. */
#define CAPTURE_LOG_MAX_CHANGES 100000

/* Append a change (copies why, truncated); -1 when out of memory or past the bound. */
int capture_log_add(struct capture_log *log, int pid, uint64_t ns, uint32_t bits, const char *why);

/* A process whose windows are to be written (start: its ring header's start_ns). */
int capture_log_process(struct capture_log *log, int pid, uint64_t start_ns);

/*
 * Store the windows (the times all bits of a process were clear) up to
 * end_ns into capture_windows; 0 or -1.  Nothing is stored unless log->used.
 */
int capture_log_write(struct capture_log *log, sqlite3 *db, uint64_t end_ns);

void capture_log_release(struct capture_log *log);

#endif
