/*
 * cpu_wait.h - how long the program's threads waited for a CPU: the
 * writer reads /proc/PID/task/TID/schedstat (time on a CPU, time runnable
 * but waiting on a run queue) of every recorded process about every 50 ms
 * and stores the sums in cpu_samples (docs/schema.md), and the threads
 * that dispatched eager ops each on its own in thread_samples (their eager
 * share is read on their time less that wait).  Off the hot path: the
 * collector does nothing for it.  A machine loaded by other work makes
 * every time in the recording longer; this says by how much
 * (analyzer/model/cpu_load.c).
 */
#ifndef AGPROF_CPU_WAIT_H
#define AGPROF_CPU_WAIT_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

/*
 * The sampling period, for every 32 threads read at the last sample: a
 * read costs about 10 us a thread (77 us for a TensorFlow process of 7
 * threads on a loaded 2-core machine), so sampling stays near 0.2% of a CPU.
 */
#define CPU_WAIT_PERIOD_NS 50000000ull
/* At most this many threads of one process are read per sample (the first in /proc's order). */
#define CPU_WAIT_MAX_TASKS 1024
/* At most this many threads, all processes, get rows of their own (thread_samples). */
#define CPU_WAIT_MAX_TRACKED 256
/*
 * Reads of every thread kept back, so that a thread tracked late (the
 * writer drains its first eager op up to a few periods after it ran) gets
 * its rows from before that op.
 */
#define CPU_WAIT_BACK 4

struct cpu_read {
	uint64_t t_ns, run_ns, wait_ns;  /* the thread's totals, read at t_ns */
};

struct cpu_task {
	int tid;
	uint64_t run_ns, wait_ns;  /* the thread's totals at the last sample */
	struct cpu_read back[CPU_WAIT_BACK]; /* its last reads, back[(nback - 1) % CPU_WAIT_BACK] the latest */
	uint64_t nback;            /* its reads since it was first seen (0: never read) */
	int rows;                  /* it has rows of its own (thread_samples) */
	int seen;
};

struct cpu_proc {
	int pid;
	struct cpu_task *tasks;
	size_t n, cap;
	int gone;                  /* /proc/PID/task no longer opens: sampled no more */
	uint64_t seen_ns;          /* the tick that read it */
};

struct cpu_wait {
	sqlite3_stmt *ins;         /* NULL: the recording has no cpu_samples table */
	struct cpu_proc *procs;
	size_t n, cap;
	uint64_t last_ns;
	long last_threads;         /* read at the last sample, all processes */
	sqlite3_stmt *ins_thread;  /* NULL: the recording has no thread_samples table */
	int64_t tracked[CPU_WAIT_MAX_TRACKED]; /* pid << 32 | tid of the threads with rows of their own */
	size_t ntracked;
	int64_t last_tracked;      /* the latest thread cpu_wait_track() was given (most calls repeat it) */
};

struct run_writer;

/* Prepare the insert; a recording without the table (an old schema) samples nothing. */
void cpu_wait_init(struct cpu_wait *cw, sqlite3 *db);
/*
 * Sample every stream's process when a period passed since the last
 * sample, or now when force (the finish); rows go into the open
 * transaction.  The first sample of a process sets its baseline only.
 */
void cpu_wait_tick(struct run_writer *w, uint64_t now_ns, int force);
/*
 * Thread tid of pid dispatched an eager op: from the next sample on, its
 * own run and wait go into thread_samples too (at most
 * CPU_WAIT_MAX_TRACKED threads; a call for a thread already tracked costs
 * a compare).
 */
static inline int64_t cpu_wait_key(int pid, int tid)
{
	return (int64_t)((uint64_t)(uint32_t)pid << 32 | (uint32_t)tid);
}

void cpu_wait_track_key(struct cpu_wait *cw, int64_t key);  /* cpu_wait_track()'s search */
static inline void cpu_wait_track(struct cpu_wait *cw, int pid, int tid)
{
	int64_t key = cpu_wait_key(pid, tid);

	if (key != cw->last_tracked)
		cpu_wait_track_key(cw, key);
}
void cpu_wait_release(struct cpu_wait *cw);

#endif
