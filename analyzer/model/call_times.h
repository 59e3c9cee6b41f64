/*
 * call_times.h - the graph calls of one user function, one by one: what
 * `agprof diff` and `check --baseline` compare between two recordings
 * (the model keeps only their totals); and the recording's CPU samples
 * (cpu_samples, thread_samples) as intervals, which they and the eager
 * share read.
 */
#ifndef AGPROF_CALL_TIMES_H
#define AGPROF_CALL_TIMES_H

#include <stddef.h>
#include <stdint.h>

struct model;
struct model_function;
struct cpu_intervals;

/* At most this many calls of one function are read (the first ones, in time order). */
#define CALL_TIMES_MAX 1000000

struct call_times {
	int64_t *dur_ns;    /* each call's end_ns - start_ns, sorted ascending */
	size_t n;
	/*
	 * The step period: from the start of each call to the start of the
	 * next on the same thread (the call, and whatever the loop did until
	 * the next one: tracing, eager ops, input waits), sorted ascending.
	 */
	int64_t *period_ns;
	size_t nperiods;
	/*
	 * The program's threads over the periods (cpu_samples, each sample
	 * spread evenly over its interval): their time on a CPU, and runnable
	 * but waiting for one (a machine loaded by other work).  sampled is 0
	 * when the recording has no samples (before schema 9, or a kernel
	 * without schedstat).
	 */
	double run_ns, wait_ns;
	int sampled;
	/*
	 * Set by the caller before call_times_add(): only the calls, and the
	 * periods, that start in [from_ns, to_ns) (to_ns 0: all of them).  A
	 * period that starts there and ends after to_ns is kept whole.
	 */
	int64_t from_ns, to_ns;
	/* Set by the caller too: the recording's samples (cpu_intervals_load()); NULL: not read */
	const struct cpu_intervals *cpu;
	size_t cap_dur, cap_period;  /* private */
};

/*
 * The recording's cpu_samples as intervals by process and time (tid 0),
 * and with threads its thread_samples too (each eager thread's own), read
 * once per recording.  *out is NULL (and 0 returned) when the recording
 * has none; -1 after an error line.
 */
int cpu_intervals_load(const struct model *m, int threads, struct cpu_intervals **out);
void cpu_intervals_free(struct cpu_intervals *ci);
/*
 * The threads' time on a CPU in [a, b) (CLOCK_MONOTONIC), summed over the
 * recording's processes, each sample's interval spread evenly over it; -1
 * when ci holds no sample (NULL, or none stored).
 */
int64_t cpu_intervals_run(const struct cpu_intervals *ci, int64_t a, int64_t b);

/*
 * Add to *run and *wait what the intervals of (pid, tid) (tid 0: the
 * process's cpu_samples) hold in [a, b), each interval's spread evenly
 * over it.  1 when an interval overlaps [a, b), else 0 (ci NULL: 0).
 */
int cpu_intervals_between(const struct cpu_intervals *ci, int64_t pid, int64_t tid, int64_t a, int64_t b,
			  double *run, double *wait);

/*
 * Thread (pid, tid)'s waits for a CPU in [a, b): its own samples where it
 * has them (thread_samples); else b - a times its process's wait share
 * there (cpu_samples), as if the thread were runnable throughout (a
 * recording made before thread_samples); else 0.
 */
double cpu_intervals_thread_wait(const struct cpu_intervals *ci, int64_t pid, int64_t tid, int64_t a, int64_t b);

/*
 * Append the kept (row) graph calls of f to *ct (zeroed by the caller, or
 * filled by an earlier call: several processes' copies of one function add
 * up), then keep both arrays sorted.  Calls past the budget's switch (in
 * buckets) have no single durations and are left out.  0, or -1 after an
 * error line.
 */
int call_times_add(const struct model *m, const struct model_function *f, struct call_times *ct);
void call_times_release(struct call_times *ct);

/*
 * The step function of m: the function called most (more than once), as
 * `agprof diff` picks it in a recording; NULL when none.
 */
const struct model_function *call_times_step_function(const struct model *m);

/* The share of the periods' runnable thread time spent waiting for a CPU (0 without samples). */
double call_times_wait_share(const struct call_times *ct);

#endif
