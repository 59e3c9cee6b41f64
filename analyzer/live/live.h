/*
 * live.h - a recording while it is being written, refreshed once a second
 * for `agprof top`: the traces of every function with the newest
 * retrace's cause, and a window (the last second) of graph calls, eager
 * dispatch, input waits and the user lines that cost the most.
 *
 * Owns: the bounded refresh.  The traces are few (one row per cache entry
 * of a tf.function): the model's session, functions and traces
 * (model_load_parts without events) are read again only when max(traces.id)
 * moved.  The window never scans the recording: graph calls and the
 * buckets seek by their start_ns indexes, eager ops by the id ranges of
 * eager_op_blocks (read once each, from the last block id seen on), so a
 * refresh costs the rows of the last second, not of the run.
 *
 * Reading while the launcher writes: the connection is a plain read-only
 * one (recording_open) on a WAL file; every refresh is one read
 * transaction, its statements finalized before it returns, so the caller
 * can (agprof top does) close the connection between refreshes: nothing
 * then holds the WAL, the launcher's checkpointer and its final close
 * (which folds the WAL back and removes it) run as if nobody read.  The
 * model keeps rec's address: reopen into the same struct recording.
 */
#ifndef AGPROF_LIVE_H
#define AGPROF_LIVE_H

#include "model.h"

#include <stddef.h>
#include <stdint.h>

struct recording;
struct live_cache; /* private: call sites and strings read so far */

/* One user line's cost in the window: eager dispatch, input waits and graph calls it made. */
struct live_line {
	struct source_loc loc;      /* file NULL: no Python frame; lib_file: the first library frame seen */
	const char *func;
	int64_t cost_ns;            /* eager_ns + input_ns + call_ns */
	int64_t eager_ops, eager_ns;
	int64_t input_waits, input_ns;
	int64_t calls, call_ns;
	const char *top_op;         /* the eager op type costing it most, or NULL */
	int64_t top_op_ns;
};

/*
 * [from_ns, to_ns): the last second.  Events kept as per-second buckets
 * (past run --max-events) count in it by the share of their bucket's
 * span that falls in it.
 */
struct live_window {
	int64_t from_ns, to_ns;
	int64_t calls, call_ns;         /* graph function calls started in it */
	int64_t eager_ops, eager_ns;    /* eager dispatch, iterator reads left out */
	int64_t input_waits, input_ns;  /* eager iterator reads (IteratorGetNext, ...) */
	int64_t traces;                 /* traces started in it */
	double eager_share;             /* eager_ns / (to_ns - from_ns), all threads */
	struct live_line *lines;        /* by cost_ns, largest first */
	size_t nlines, caplines;
};

struct live {
	struct recording *rec;          /* not owned */
	unsigned parts;                 /* model_load_parts' parts: 0 live, MODEL_ALL for a finished run */
	struct model m;                 /* valid once loaded (m.pool != NULL) */
	int64_t trace_mark;             /* max(traces.id) when m was loaded; -1 never */
	/* the newest retrace (follow-ups left out), NULL when none yet */
	const struct model_function *last_fn;
	const struct model_trace *last_retrace;
	int64_t calls_total, call_mark; /* graph call rows so far, counted from id call_mark on */
	int ended;                      /* the launcher wrote the run's end (meta end_ns) or cut it short */
	int64_t end_ns;                 /* after the last activity: the window ends here once ended */
	struct live_window win;
	int64_t block_mark, block_from; /* eager_op_blocks before id block_mark end before block_from */
	struct live_cache *cache;
	double cpu_s;                   /* CPU time of the last refresh (thread clock) */
};

/* Start following rec (open, read-only); parts as above.  0 or -1 (error said). */
int live_init(struct live *lv, struct recording *rec, unsigned parts);

/*
 * Read what was committed since the last refresh; the window is the second
 * before to_ns (CLOCK_MONOTONIC of the recording's host) less the 300 ms
 * the launcher may take to commit, or when to_ns is 0 the second before the
 * run's last activity (a finished run: see ended).  0 or -1 (error said).
 */
int live_refresh(struct live *lv, int64_t to_ns);

void live_release(struct live *lv);

#endif
