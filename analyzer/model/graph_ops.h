/*
 * graph_ops.h - inside graph calls: the CPU kernels each graph function ran
 * (recording tables kernels and graph_nodes, schema v4), aggregated per
 * graph function, per node and per op type.  Loaded by
 * graph_ops_register(), which also registers the metric sources
 * graph_functions and graph_op_types (docs/rules.md); the printers read it
 * through graph_ops_model().
 *
 * Executor overhead of a call: its wall time minus the time at least one
 * of its kernels was running (the union of its kernels' spans over every
 * thread).  That union is the critical path's kernel time when kernels do
 * not overlap, and a lower bound on the kernel time of the critical path
 * when they do, so the overhead is an upper bound of the critical path's
 * non-kernel time: scheduling, the executor's per-op bookkeeping, argument
 * and result passing, waits.  docs/report-json.md (graph_ops) says the same.
 *
 * Owns its arrays; strings live in the model's pool.  A recording before
 * schema v4, or made with --no-kernels, loads as empty (kernels == 0).
 */
#ifndef AGPROF_GRAPH_OPS_H
#define AGPROF_GRAPH_OPS_H

#include "model.h"

#include <stddef.h>
#include <stdint.h>

/* One node of a graph function (or a kernel with no node there), with its runs. */
struct graph_op {
	const char *name;           /* node name, "mul_12" */
	const char *op_type;        /* "Mul" */
	const char *graph_function; /* "__inference_step_42", NULL: eager / Session.run */
	const char *function;       /* the user function, or NULL */
	struct source_loc loc;      /* the user line that created the node; file NULL when unknown */
	int64_t count, total_ns;
	int64_t steady_ns;          /* count x its median timed run (graph_fn_steady()), 0 until read */
};

/* Kernel time of one op type (within a function, or overall). */
struct graph_op_type {
	const char *op_type;
	int64_t count, total_ns;
	int64_t steady_ns;          /* its ops' steady_ns, summed (graph_fn_steady()) */
	struct source_loc loc;      /* the line whose nodes of this type took most of its time */
};

/* One graph function's calls that ran kernels. */
struct graph_fn_ops {
	int64_t id;                 /* graph_functions.id */
	const char *graph_function;
	const char *function;       /* user function, or NULL */
	int64_t function_id;        /* functions.id of that function, 0 when none */
	int jit_compile;
	int64_t calls, call_ns;     /* calls with kernels, their wall time */
	int64_t sampled_calls;      /* of those, the calls recorded one by one (schema v5; 0: all of them) */
	int64_t sampled_from_cut;   /* of those, calls whose detail the collector cut: estimated from totals */
	int64_t kernels, kernel_ns; /* kernel runs and their summed time */
	int64_t busy_ns;            /* per call, time some kernel ran (union), summed; v5: from the sampled calls */
	int64_t overhead_ns;        /* call_ns - busy_ns */
	/* each call's overhead share (wall - busy) / wall, over the calls summed: their sum and sum of squares */
	double share_sum, share_sq;
	int64_t share_n;
	int64_t first_ns, last_ns;
	/*
	 * The first call also instantiates the function (graph optimisation,
	 * kernel creation, lazy initialisation inside kernels): when there are
	 * others, it is left out of every sum of the function (calls,
	 * kernels, ops, types) and its wall time is here.
	 */
	int64_t first_call_ns;
	int first_left_out;
	struct graph_op *ops;       /* by total_ns, largest first */
	size_t nops;
	struct graph_op_type *types; /* by total_ns, largest first */
	size_t ntypes;
	int64_t op_kernel_ns;       /* kernel time of ops and types (the same calls as kernel_ns) */
	struct source_loc top_line; /* the user line that created most of its nodes */
	int64_t top_line_nodes, nodes;
	int64_t top_line_repeats;   /* most times a trace ran that line's body (a Python loop unrolled: > 1) */
	int64_t op_steady_ns;       /* its ops' steady_ns, summed (graph_fn_steady()) */
	int steady_read;            /* 0: not yet, 1: read, -1: could not be read */
};

struct graph_ops_model {
	const char *status;         /* processes.kernel_status of the main process, or NULL */
	const char *detail;
	int64_t kernels, kernel_ns; /* every kernel, eager and Session.run included */
	int64_t call_kernels;       /* those under a graph-function call */
	int64_t dropped_kernels;    /* kernels not recorded (too many a second: processes.dropped_kernels) */
	int64_t kernels_refused;    /* kernels past --max-events: counted, not recorded one by one (meta) */
	int sampled;                /* counts from kernel_totals, detail of sampled calls (schema v5) */
	struct graph_fn_ops *fns;   /* by overhead_ns + kernel_ns, largest first */
	size_t nfns;
	struct graph_op *ops;       /* overall, by total_ns, largest first */
	size_t nops;
	struct graph_op_type *types; /* overall */
	size_t ntypes;
};

/* Load m->rec's kernels into g (strings in m's pool); 0 or -1 (g is then empty). */
int graph_ops_model_load(struct graph_ops_model *g, struct model *m);
void graph_ops_model_release(struct graph_ops_model *g);

/*
 * Fill the steady_ns of f's ops and types and f->op_steady_ns: each node's
 * runs at the median of its timed runs (not their mean); read once, on
 * demand.  0, or -1 (then the steady times are the mean-based ones).
 */
int graph_fn_steady(const struct model *m, struct graph_fn_ops *f);

/*
 * The executor overhead of the graph calls that start in [from, to), by the
 * same rule as the model's (each graph function's first call left out when
 * it has others; since schema v5 the sampled calls): *call_ns their wall
 * time, *busy_ns the time some kernel of theirs ran.  0 or -1 after an
 * error line.
 */
int graph_ops_busy_in(const struct model *m, int64_t from, int64_t to, int64_t *call_ns, int64_t *busy_ns);

/* Load m->rec's kernels into a graph ops model and register its sources.  0 or -1. */
int graph_ops_register(struct model *m);
/* The model those sources read, or NULL when not registered. */
const struct graph_ops_model *graph_ops_model(const struct model *m);
/* What the graph_functions source's remedy field says of f: "jit", "vectorize" or "none". */
const char *graph_fn_remedy(const struct model *m, const struct graph_fn_ops *f);

#endif
