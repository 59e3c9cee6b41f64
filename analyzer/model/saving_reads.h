/*
 * saving_reads.h - what the savings (analyzer/advice/saving.c) read from the
 * recording, read once per model.
 *
 * Owns: every function's graph calls in time order, reduced to what a
 * retrace saving needs (its steps), and the recorded eager dispatch times
 * that price what a fix adds back.  A 10 M-event report computed a saving
 * per finding, each one re-reading and sorting the function's calls through
 * SQLite (an index lookup per call, then a temporary B-tree): seconds per
 * finding.  Here one table scan reads the calls of every function, and the
 * first kept eager ops are read once for every dispatch median.  Built on
 * first use, released with the model (model_release()).
 */
#ifndef AGPROF_SAVING_READS_H
#define AGPROF_SAVING_READS_H

#include <stddef.h>
#include <stdint.h>

struct model;
struct model_function;
struct saving_reads;

/*
 * A function's graph calls in time order (the first SAVING_MAX_CALLS of
 * them): when each trace's graph first ran, and what a call that did not
 * trace takes.
 */
#define SAVING_MAX_CALLS 1000000

struct call_steps {
	int64_t *first_end;     /* per trace of fn: the end of its graph's first call, -1 when it never ran */
	size_t nplain;          /* calls that did not trace (not a graph's first) */
	int64_t typical;        /* the lower median of their spans (start to end); 0 when none */
};

/*
 * The steps of fn (one of m->functions).  NULL when out of memory; a
 * recording whose calls cannot be read gives no calls (every first end -1,
 * nplain 0), as a function without calls.
 */
const struct call_steps *saving_call_steps(struct model *m, const struct model_function *fn);

/*
 * Every graph call of the recording as pid, tid, start_ns, end_ns, by
 * thread then start (cmp_thread_start), read in the same scan as the steps:
 * *calls, *n of them.  0, or -1 when out of memory.
 */
int saving_thread_calls(struct model *m, const int64_t (**calls)[4], size_t *n);

/*
 * The walk that reads the graph calls along the model load's scan of
 * function_calls (scan_table_walk()), so that they are not read again:
 * NULL when they are read already or cannot be.  After the scan,
 * saving_calls_walked() keeps what it read (scan_ok: the scan succeeded;
 * otherwise, or when the scan did not walk, they are read on first use).
 */
struct scan_walk;
const struct scan_walk *saving_calls_walk(struct model *m);
void saving_calls_walked(struct model *m, int scan_ok);

/*
 * The lower median recorded dispatch (end_ns - start_ns) of eager op type
 * op (NULL: of any op) among the first SAVING_DISPATCH_OPS kept ops in row
 * order; -1 when none, or no eager ops table.
 */
#define SAVING_DISPATCH_OPS 200000
int64_t saving_median_dispatch(struct model *m, const char *op);

/*
 * The same of the warm dispatches only (not an op type's first, which
 * creates its kernel): of type op when WARM_SAMPLES_MIN of them or more
 * were recorded, else of every warm op (more samples: a price that holds
 * on a loaded machine, issue 46); -1 when none was recorded (a short
 * program's few eager ops are all first ones).
 */
#define WARM_SAMPLES_MIN 8
int64_t saving_warm_dispatch(struct model *m, const char *op);

/*
 * What one op of type op costs its thread, as the collector timed it at
 * the process's first trace (op_prices, docs/schema.md; collector/op_price.c):
 * the lower median of the processes' prices (each the median batch's
 * thread CPU time per op), over the rows with OP_PRICE_SAMPLES_MIN ops
 * timed or more and a price in (0, OP_PRICE_MAX_NS]; -1 when none (an
 * older recording, a program that never traced, a hostile table).
 * *samples: the ops timed behind it.  The first OP_PRICE_ROWS rows count.
 * Thread CPU time, not wall clock: a preemption costs none of it, so a
 * loaded machine does not inflate it (issue 46).
 */
#define OP_PRICE_SAMPLES_MIN 50
#define OP_PRICE_MAX_NS 1000000000
#define OP_PRICE_ROWS 4096
int64_t saving_op_price(struct model *m, const char *op, int64_t *samples);

/*
 * The same for the first dispatch of op for a new kernel (a Cast of a new
 * dtype pair, which creates its kernel): the rows named "op:first", each
 * the median of OP_FIRST_SAMPLES_MIN or more first dispatches timed in
 * thread CPU; -1 when none (then the recorded first dispatches,
 * saving_cold_dispatch(), wall-clock time).
 */
#define OP_FIRST_SAMPLES_MIN 3
int64_t saving_first_price(struct model *m, const char *op, int64_t *samples);

/*
 * The price of one warm op of type op that an edit adds, and where it
 * comes from: the calibration at the process's first trace when the recording
 * has one (saving_op_price(): *samples the ops timed), else the recorded
 * warm dispatches (saving_warm_dispatch(): wall-clock spans, which a loaded
 * machine inflates: beside other work retrace_seed.py's one warm
 * _EagerConst was 46 ms against 10 us of thread CPU).  0 with
 * PRICE_NONE when neither.
 */
enum price_source { PRICE_NONE, PRICE_CALIBRATED, PRICE_RECORDED };
int64_t saving_added_price(struct model *m, const char *op, enum price_source *from, int64_t *samples);

/*
 * The lower median of each op type's first recorded dispatch among the
 * same ops, the very first op's (which also starts the eager context)
 * aside; -1 when none.
 */
int64_t saving_cold_dispatch(struct model *m);

/* Free what saving_call_steps() and the dispatch reads kept (NULL: nothing). */
void saving_reads_release(struct saving_reads *r);

#endif
