/*
 * slices.h - the run's figures per time slice: what `agprof report
 * --slices T0,T1,...,Tn` writes (docs/report-json.md, "slices") and the
 * Keras callback turns into one TensorBoard point per epoch.
 *
 * Owns: cutting an analyzed recording at the given times (CLOCK_MONOTONIC
 * nanoseconds, the recording's clock) and computing, for each slice, the
 * figures the whole-run report gives, by the same definitions and from the
 * same model: traces and retraces from the model's traces (a trace is a
 * retrace when it is not its function's first in the whole recording, so a
 * retrace in slice 3 of a function first traced in slice 0 is a retrace in
 * slice 3), eager dispatch and eager iterator reads as the session counts
 * them (input waits apart, ops inside black-box runs left out, the budget's
 * buckets in), over the recorded time of the slice (model_recorded_ns from
 * the first TensorFlow event); the step period of the step function
 * (call_times, as `agprof diff` reads it); the executor overhead of graph
 * calls (graph_ops_busy_in, the graph_ops section's rule).  An event
 * belongs to the slice its start falls in.
 *
 * May include model/ only.  Strings point into the model; the arrays are
 * the slices' own, freed by slices_release().
 */
#ifndef AGPROF_SLICES_H
#define AGPROF_SLICES_H

#include <stddef.h>
#include <stdint.h>

struct model;
struct model_function;

/* The most slices one report cuts (--slices): more edges are refused. */
#define SLICES_MAX 100000

/* One function's traces in a slice (only functions with a trace there). */
struct slice_function {
	const struct model_function *fn;
	int64_t traces, retraces;
};

struct slice {
	int64_t start_ns, end_ns;
	int64_t traces, retraces;         /* every function's, as session.traces and the functions' retraces */
	struct slice_function *functions; /* in the model's function order */
	size_t nfunctions;
	int64_t active_ns;                /* recorded time of the slice from the first TensorFlow event */
	int64_t eager_ops, eager_ns;      /* eager dispatch, as session.eager_ops/eager_ns (as recorded) */
	int64_t eager_steady_ns;          /* the same at its steady cost, as session.eager_steady_ns */
	int64_t input_waits, input_ns;    /* eager iterator reads, as session.input_waits/input_ns */
	/*
	 * eager_share: as the session's (model_eager_share()), of the eager
	 * threads' time in the slice less their waits for a CPU; input_share:
	 * of active_ns; 0 when it is 0.
	 */
	double eager_share, input_share;
	const struct model_function *step; /* the step function (call_times_step_function), or NULL */
	size_t step_periods;              /* its periods that start in the slice */
	int64_t step_median_ns;           /* their median, 0 when none */
	int64_t call_ns, busy_ns;         /* graph calls with kernels starting in the slice (graph_ops_busy_in) */
	double overhead_share;            /* (call_ns - busy_ns) / call_ns, 0 when call_ns is 0 */
};

struct slices {
	struct slice *v;
	size_t n;
};

/*
 * Parse "T0,T1,...,Tn" (n >= 1, each an integer number of nanoseconds,
 * strictly ascending) into *edges (malloc'ed) and *n (the count of edges).
 * 0, or -1 after an error line.
 */
int slices_parse(const char *text, int64_t **edges, size_t *n);

/*
 * The nedges - 1 slices [edges[i], edges[i+1]) of m into *s (zeroed by the
 * caller).  0, or -1 after an error line (*s is then released).
 */
int slices_compute(struct slices *s, const struct model *m, const int64_t *edges, size_t nedges);
void slices_release(struct slices *s);

#endif
