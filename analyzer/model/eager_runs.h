/*
 * eager_runs.h - the eager ops of each user function with the Python time
 * between them, for the eager-hotspot saving (analyzer/advice/saving.c).
 *
 * Owns: one walk over the kept ops in each thread's order that sums every
 * user function at once (a walk per finding was a second pass over the 8 M
 * ops of a 10 M-event report: 1.3 s).  On schema 6 the walk runs inside the
 * model load's scan of eager_op_rows (eager_runs_walk(), scan.h's walk);
 * otherwise, or when that scan did not walk, on first use.  Released with
 * the model (model_release()).
 */
#ifndef AGPROF_EAGER_RUNS_H
#define AGPROF_EAGER_RUNS_H

#include <stdint.h>

struct model;
struct scan_walk;
struct eager_runs_table;

struct eager_runs {
	int64_t ops;        /* its eager ops, the aggregated ones (schema 5) included */
	int64_t eager_ns;   /* their dispatch, plus the time since the thread's previous event when that was one of them */
	int64_t graph_ns;   /* the same ops each at its op type's fastest recorded run */
	int64_t long_gaps;  /* gaps of at least AGP_PYTHON_GAP_MAX_NS among them (past the collector's python_ns bound) */
	/*
	 * Their steady cost: dispatch and the Python before each op with no
	 * wait for a CPU (m->eager_keys, scan_group_steady_ns()); input waits
	 * and ops inside black boxes left out.
	 */
	int64_t steady_ns;
	int64_t steady_graph_ns; /* those ops each at its op type's fastest recorded run, at most its steady cost */
};

/*
 * The ops of func in file (a user function: its own lines, and the library
 * frames whose chain leads to one of its lines), in each
 * thread's order; a graph call on the thread ends a run (the graph calls
 * are saving_thread_calls()'s).  0, or -1 when the recording cannot be
 * read (out is then zero).
 */
int eager_runs_of(struct model *m, const char *file, const char *func, struct eager_runs *out);

/*
 * The walk for the model load's scan of schema 6's eager_op_rows
 * (scan_table_walk()), NULL when there is none to run (older schema, out of
 * memory: eager_runs_of() then walks on its own).  After the scan,
 * eager_runs_walked() sums the parts (scan_ok: the scan succeeded).
 */
const struct scan_walk *eager_runs_walk(struct model *m);
void eager_runs_walked(struct model *m, int scan_ok);

void eager_runs_release(struct eager_runs_table *t);

#endif
