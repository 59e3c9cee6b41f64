/*
 * model_internal.h - shared between the analyzer's own files (model.c,
 * explain.c, sources.c, rules.c); not for printers or the TUI.
 */
#ifndef AGPROF_MODEL_INTERNAL_H
#define AGPROF_MODEL_INTERNAL_H

#include "model.h"
#include "checked.h" /* ARRAY_GROW */

#include <stdarg.h>
#include <stdlib.h>

/* Copy a string of len bytes into the pool. */
const char *model_strndup(struct model *m, const char *s, size_t len);
/* printf into the pool. */
const char *model_strf(struct model *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *model_vstrf(struct model *m, const char *fmt, va_list ap);

/* A graph function as the analyzer needs it (function_def not loaded). */
struct graph_fn {
	int64_t id;
	const char *name;
	const char *role;
	int64_t trace_id;    /* 0 when NULL */
	int64_t function_id; /* 0 when NULL */
	int64_t parent_id;   /* 0 when NULL */
	int jit_compile;
	int64_t node_count;
};

/*
 * Explain every trace after the first of every function (fills
 * model_trace.why and the per-function cause counts).  Reads
 * graph_constants for python-value.  0 or -1.
 */
struct const_table;
/* ct: the graph constants the load started reading (trace_index.h), or NULL to read them here. */
int model_explain_retraces(struct model *m, const struct graph_fn *gfs, size_t ngfs, struct const_table *ct);

/* The black box that node blackbox_nodes.id counts under (retraces folded), or NULL. */
struct model_blackbox *model_blackbox_of_node(struct model *m, int64_t id);

/* How analyzer/model/input.c reads the loader's strings and call sites. */
struct model_lookup {
	void *ctx;
	const char *(*str)(void *ctx, int64_t id);            /* strings.id -> text, NULL if none */
	struct source_loc (*site)(void *ctx, int64_t id, const char **func); /* callsites.id */
};

/*
 * Threads, input waits and tf.data pipelines (analyzer/model/input.c): one scan
 * of eager_ops split into dispatch, iterator reads and ops run inside black
 * boxes (charged to m->blackboxes, so after they are loaded); m->sites and
 * m->ops hold the dispatch alone; fills m->threads, m->datasets,
 * m->graph_readers.  *rows, *first_ns, *last_ns: all eager ops.  0 or -1.
 */
int model_load_input(struct model *m, const struct model_lookup *lk, int64_t *rows, int64_t *first_ns,
		     int64_t *last_ns);
/* Whether eager op type op reads an iterator (IteratorGetNext, ...): time waiting for input. */
int model_is_input_wait(const char *op);
/*
 * One standard error of a thread's share of [a, b) in eager ops (input
 * waits when waits, else the others), from the spread of that share over
 * 20 equal blocks of the time (eager ops: of the time less the thread's
 * waits for a CPU, the ops at their steady cost, as the share reads them):
 * the blocks' standard deviation over sqrt(20).  What the rules read as
 * FIELD_se (docs/rules.md, "Borderline").  0 when it cannot be read.
 */
double model_share_se(const struct model *m, int64_t pid, int64_t tid, int64_t a, int64_t b, int waits);
/* The span of thread t's active time: the main thread's, the active session; another's, its first to last event. */
void model_thread_span(const struct model *m, const struct model_thread *t, int64_t *a, int64_t *b);
/* Whether op makes a dataset the user writes (*name: "map", ...; *parallel: runs its function in parallel). */
int model_dataset_kind(const char *op, const char **name, int *parallel);
/* Whether dataset op op makes a dataset from tensors (from_tensor_slices, range, ...): nothing upstream. */
int model_dataset_is_source(const char *op);

/*
 * An eager-op group's key half, hi << 32 | lo (input.c's k1 pid | tid, k2
 * op | site), in unsigned arithmetic: a hostile pid or op id wraps instead
 * of overflowing.
 */
static inline int64_t model_group_key(int64_t hi, int64_t lo)
{
	return (int64_t)(((uint64_t)hi << 32) + (uint64_t)lo);
}

/*
 * tf.data pipelines from dataset_ops (schema 8, analyzer/model/pipelines.c):
 * pipelines_load() fills m->datasets, one per dataset made, with its line
 * from the eager-op groups g (k1 pid << 32 | tid, k2 op << 32 | site) and
 * the stage it reads (upstream); 0, 1 when the recording has none (older
 * schemas: m->datasets is left empty), -1 on error.
 * pipelines_read_end(): the last stage (index in m->datasets) of the
 * pipeline that thread tid's reads from first_ns to last_ns read, -1 when
 * unknown.
 */
struct pipelines;
struct scan_group;
int pipelines_load(struct model *m, const struct model_lookup *lk, const struct scan_group *g, size_t ng,
		   struct pipelines **out);
long pipelines_read_end(const struct pipelines *p, int64_t pid, int64_t tid, int64_t first_ns, int64_t last_ns);
/* The time of the first reads of iterators among those reads: each starts its pipeline (threads, functions). */
int64_t pipelines_startup_ns(const struct pipelines *p, int64_t pid, int64_t tid, int64_t first_ns, int64_t last_ns);
void pipelines_release(struct pipelines *p);

/* After the session's active time and the functions are known: per-thread shares, made_by.  0 or -1. */
int model_input_finish(struct model *m);
/*
 * The padded_batch of the pipeline that the loop around file:line reads
 * (code facts: the loop; its iterator read at the loop's lines), or NULL:
 * the stage that pads each batch to its own longest element, so that a
 * function called with those batches sees a new shape per length.
 */
const struct model_dataset_op *model_padding_stage(const struct model *m, const char *file, int line);

/*
 * "train.py:12 (4000 ops, 35.2 ms); ..." for the first five of sites; a line
 * without a file reads "<no Python frame>".  In the model's pool.
 */
const char *model_format_sites(struct model *m, const struct model_eager_site *sites, size_t n);

/* qsort order of eager sites: most ops first; equal counts in source order. */
int model_cmp_sites(const void *a, const void *b);
/* Fold sites that resolve to one user line into one row; returns the new count. */
size_t model_merge_sites_by_user_line(struct model_eager_site *sites, size_t nsites);

/* analyzer/model/windows.c: read capture_windows into m->windows (after session.capture is known).  0 or -1. */
struct sqlite3;
int model_load_windows(struct model *m, struct sqlite3 *db);

/* Register the built-in metric sources.  0 or -1. */
int model_register_builtin_sources(struct model *m);
/* The user's calls into a library that traces its own functions: source library_calls (calls.c). */
int calls_register(struct model *m);
/*
 * 1 when loc is a user line calling a library again on the same compiled
 * model (library_calls: models >= 1, calls > models): its eager ops are
 * the library's set-up, library-call's subject, not a loop to put in a
 * tf.function.
 */
int calls_repeated_at(const struct model *m, const struct source_loc *loc);

#endif
