/*
 * eager_runs.h - the eager ops of one user function with the Python time
 * between them, for the eager-hotspot saving (analyzer/saving.c).
 */
#ifndef AGPROF_EAGER_RUNS_H
#define AGPROF_EAGER_RUNS_H

#include <stdint.h>

struct model;

struct eager_runs {
	int64_t ops;        /* its eager ops, the aggregated ones (schema 5) included */
	int64_t eager_ns;   /* their dispatch, plus the time since the thread's previous event when that was one of them */
	int64_t graph_ns;   /* the same ops each at its op type's fastest recorded run */
	int64_t long_gaps;  /* gaps of at least gap_max among them (past the collector's python_ns bound) */
};

/*
 * The ops of func in file (user code: callsites.library 0), in each
 * thread's order; a graph call on the thread ends a run.  One pass over the
 * kept ops in row id order (in parallel rowid ranges), no sort; the graph
 * calls are saving_thread_calls()'s.  0, or -1 when the recording cannot be
 * read (out is then zero).
 */
int eager_runs_of(struct model *m, const char *file, const char *func, int64_t gap_max, struct eager_runs *out);

#endif
