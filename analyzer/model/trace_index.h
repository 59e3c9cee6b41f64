/*
 * trace_index.h - what explaining a retrace looks up, indexed once so that
 * explaining n traces costs about n lookups, not n² comparisons (a loop that
 * retraces every step records one trace per step: 60,000 traces took 24 s
 * when each was compared with every earlier one).
 *
 * Owns: a trace's graph functions (by trace id), a graph function's scalar
 * constants (graph_constants read in one pass, on first use), and per
 * tf.function the nearest earlier trace: the fewest differing arguments,
 * the latest on ties, among the traces of the same tf.function object when
 * there are any — the trace the call was expected to hit.
 */
#ifndef AGPROF_TRACE_INDEX_H
#define AGPROF_TRACE_INDEX_H

#include "idmap.h"
#include "strpool.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

struct model;
struct model_function;
struct model_trace;
struct graph_fn;

struct graph_constant {
	const char *node, *value;
};

/*
 * Every graph function's scalar constants.  Reading them (four million
 * rows for a million traces) needs nothing of the model, so the load starts
 * it on a thread of its own with its own connection and string pool
 * (const_table_start), and the explanation waits for it at its first use:
 * on two cores the read costs no wall time.  The worker's strings join the
 * model's pool then (copies, like strpool_copy's: compared by content).
 */
struct const_table {
	struct graph_constant *consts;  /* grouped by graph function, rowid order within */
	size_t nconsts;
	struct idmap groups;            /* graph_functions.id -> index into spans */
	struct { size_t first, n; } *spans;
	size_t nspans;
	struct strpool pool;            /* the worker's strings until const_table_wait */
	const char *path;               /* the worker's: the recording to open */
	pthread_t thread;
	int state;                      /* 0 unread, 1 worker running, 2 read, -1 failed */
	char err[256];                  /* the worker's error, printed by const_table_wait */
};

/* Start reading path's graph_constants on a thread (read on first use when it cannot start). */
void const_table_start(struct const_table *c, const char *path);
/* The worker's table, its strings moved into m's pool.  0, or -1 (error printed). */
int const_table_wait(struct const_table *c, struct model *m);
void const_table_release(struct const_table *c);

struct graph_index {
	struct model *m;
	const struct graph_fn *gfs;
	size_t ngfs;
	size_t *by_trace;               /* indexes into gfs, sorted by trace_id */
	struct idmap traces;            /* trace_id -> its first place in by_trace */
	struct const_table *ct;         /* the load's (started early), or own: read on first use */
	struct const_table own;
};

/* 0, or -1 (out of memory; nothing to release).  ct: the constants the load started reading, or NULL. */
int graph_index_init(struct graph_index *x, struct model *m, const struct graph_fn *gfs, size_t ngfs,
		     struct const_table *ct);
void graph_index_release(struct graph_index *x);
/* The graph functions built by a trace: *idx points at n indexes into gfs. */
size_t graph_index_of_trace(const struct graph_index *x, int64_t trace_id, const size_t **idx);
/* The scalar constants of graph function gf_id, in rowid order.  0, or -1 (error printed). */
int graph_index_constants(struct graph_index *x, int64_t gf_id, const struct graph_constant **out, size_t *n);

/*
 * The distance explain.c defines between two traces: the number of
 * arguments that differ (1000 and more when the argument lists differ in
 * number or names; 1 when only TensorFlow's signature text differs).  The
 * finder's keys hash exactly what this compares, and every candidate it
 * returns is checked with it.
 */
typedef size_t (*trace_distance_fn)(const struct model_trace *a, const struct model_trace *b);

struct trace_finder {
	const struct model_function *f;
	trace_distance_fn distance;
	struct idmap keys;        /* key hash -> latest trace index with that key */
	struct idmap objects;     /* function_object -> a trace of it: seen among earlier traces */
	int per_object;           /* keys are also kept per object (a second object was seen) */
	size_t most_inputs;       /* the longest argument list added */
	size_t scan_limit;        /* most traces compared one by one for one nearest (hostile recordings) */
	size_t *open;             /* traces whose span may still hold a later one's start (start order) */
	size_t nopen, open_cap;
	uint64_t *kh;             /* the parts of trace kh_of's keys (trace_index.c's key_parts) */
	size_t kh_of;
};

/* 0, or -1 out of memory (trace_finder_release still applies). */
int trace_finder_init(struct trace_finder *tf, const struct model_function *f, trace_distance_fn distance);
void trace_finder_release(struct trace_finder *tf);
/*
 * The nearest earlier trace to f->traces[k], all traces before k having
 * been added; *object_seen: an earlier trace came from k's tf.function
 * object.  Returns its index (k - 1 when no candidate is closer).
 */
size_t trace_finder_nearest(struct trace_finder *tf, size_t k, int *object_seen);
/*
 * The latest earlier trace of the same tf.function object and thread whose
 * span holds f->traces[k]'s (the function traced again inside its own
 * trace), or SIZE_MAX.  Traces come in start order, so only those still
 * open at k's start are looked at.
 */
size_t trace_finder_enclosing(struct trace_finder *tf, size_t k);
/* Add f->traces[k] (after trace_finder_nearest for k).  0, or -1 out of memory. */
int trace_finder_add(struct trace_finder *tf, size_t k);

#endif
