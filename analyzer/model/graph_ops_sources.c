/*
 * graph_ops_sources.c - the graph ops model (graph_ops.h) as metric sources
 * for the rules (rules/graph-dispatch-bound.rule, rules/slow-op.rule and
 * user rules).  analyze() calls graph_ops_register() after model_load().
 *   graph_functions  one row per graph function whose calls ran kernels
 *   graph_op_types   one row per (graph function, op type)
 */
#include "graph_ops.h"
#include "code_facts.h"
#include "duration.h"
#include "metric_fields.h"
#include "model_internal.h"
#include "pathdisp.h"
#include "checked.h"

#include <ctype.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

/*
 * Kernels an XLA-compiled call still runs through the executor: its
 * arguments, results and the compiled cluster (_Arg, _Retval, _XlaRun, ...).
 */
#define JIT_KERNELS_PER_CALL 4

/* One model shared by both sources; the last release frees it. */
struct ops_shared {
	struct graph_ops_model g;
	int refs;
	struct type_row { const struct graph_fn_ops *fn; const struct graph_op_type *type; } *rows;
	size_t nrows;
};

static double ratio(double a, double b)
{
	return b > 0 ? a / b : 0;
}

static void shared_release(void *data)
{
	struct ops_shared *s = data;

	if (--s->refs == 0) {
		graph_ops_model_release(&s->g);
		free(s->rows);
		free(s);
	}
}

/*
 * What jit_compile=True would save: the executor's per-kernel overhead of
 * every kernel but the few a compiled call still runs.
 */
static double jit_saving(const struct graph_fn_ops *f)
{
	double per_kernel = ratio((double)f->overhead_ns, (double)f->kernels);
	double left = (double)f->calls * JIT_KERNELS_PER_CALL * per_kernel;

	return f->jit_compile || f->overhead_ns <= left ? 0 : (double)f->overhead_ns - left;
}

/* The user function whose graph f is (its traces and def), or NULL. */
static const struct model_function *owner_fn(const struct model *m, const struct graph_fn_ops *f)
{
	for (size_t i = 0; f->function_id && i < m->nfunctions; i++)
		if (m->functions[i].id == f->function_id)
			return &m->functions[i];
	return NULL;
}

/* Its calls in the recording, the first (instantiating) one included. */
static int64_t all_calls(const struct graph_fn_ops *f)
{
	return f->calls + (f->first_left_out ? 1 : 0);
}

/*
 * What graph mode paid before the work, measured here: the function's
 * tracing, and its first call's time beyond a warm call (graph
 * optimisation, kernel creation).  jit_compile=True pays that and XLA's
 * compilation on top, which a recording without it does not show: a lower
 * bound of the up-front cost.  With one call the instantiation cannot be
 * told from the work: tracing only.
 */
static int64_t setup_ns(const struct model *m, const struct graph_fn_ops *f)
{
	const struct model_function *fn = owner_fn(m, f);
	int64_t ns = fn ? fn->trace_ns : 0, warm = f->calls > 0 ? f->call_ns / f->calls : 0;

	if (f->first_left_out && f->first_call_ns > warm)
		ns = dur_add(ns, f->first_call_ns - warm);
	return ns;
}

/* jit_compile=True only when the recorded calls pay back at least the measured set-up: never for one call. */
static int jit_pays_back(const struct model *m, const struct graph_fn_ops *f)
{
	return all_calls(f) >= 2 && jit_saving(f) > (double)setup_ns(m, f);
}

/* A node's line is the user's, not a library's (TFP's, GPflow's) nor unknown. */
static int loc_is_users(struct source_loc loc)
{
	return loc.file && !path_is_installed(loc.file);
}

/* The line that made most nodes is the user's (a loop they can vectorize). */
static int top_line_is_users(const struct graph_fn_ops *f)
{
	return loc_is_users(f->top_line);
}

/*
 * Vectorizing helps when the user's top line is a Python loop's body that
 * a trace unrolled (it ran more than once).  One call that builds many ops
 * through a library (GPflow's optimizer.minimize: the whole gradient, a
 * Keras fit: its layers) is no loop to vectorize: where the code facts
 * know the file, the line must be inside a loop (for, while, a
 * comprehension) of the user's.
 */
static int top_line_is_users_loop(const struct model *m, const struct graph_fn_ops *f)
{
	const char *file = f->top_line.file;

	return top_line_is_users(f) && f->top_line_repeats > 1 &&
	       (!code_facts_known(m, file) || code_fact_around(m, "loop", file, f->top_line.line));
}

/* What the recording lacks for the estimate, said in the finding; "" when nothing. */
static const char *estimate_note(const struct model *m, const struct graph_fn_ops *f)
{
	const struct graph_ops_model *g = graph_ops_model(m);

	if (g && (g->dropped_kernels > 0 || g->kernels_refused > 0))
		return model_strf((struct model *)m, " (%lld kernels were not recorded one by one: too many a second or past"
				  " --max-events; the overhead is estimated from those recorded)",
				  (long long)(g->dropped_kernels + g->kernels_refused));
	if (f->sampled_calls && f->sampled_calls < f->calls)
		return model_strf((struct model *)m, " (kernels recorded one by one in %lld of the %lld calls; the"
				  " others' busy time is scaled from them)", (long long)f->sampled_calls,
				  (long long)f->calls);
	return "";
}

static const char *dispatch_advice(const struct model *m, const struct graph_fn_ops *f)
{
	char save[DURATION_MAX], setup[DURATION_MAX];
	const char *vectorize = "vectorize the Python loop at the line shown, whose unrolled body made most of the"
				" ops (loop with tf.range, or operate on whole tensors)";

	duration_format(save, sizeof(save), (int64_t)jit_saving(f));
	duration_format(setup, sizeof(setup), setup_ns(m, f));
	/* an experiment, no claimed saving (saving: experiment): XLA was 1.8x slower on an actor-critic's update */
	if (jit_pays_back(m, f))
		return model_strf((struct model *)m, "Try compiling it with @tf.function(jit_compile=True): XLA fuses the"
				  " small ops into a few kernels, which may remove much of the %s of executor overhead over"
				  " these %lld calls, or may be slower: it compiles first (on top of the %s of tracing and"
				  " first-call set-up measured here) and its CPU kernels for small shapes can be slower;"
				  " only an experiment on this program tells%s%s.", save, (long long)all_calls(f), setup,
				  top_line_is_users_loop(m, f) ? "; or " : "", top_line_is_users_loop(m, f) ? vectorize : "");
	return model_strf((struct model *)m, "%c%s. Not jit_compile=True: %s", toupper((unsigned char)vectorize[0]),
			  vectorize + 1, all_calls(f) < 2
				  ? "the function ran once, and an XLA compile is paid before that one call"
				  : model_strf((struct model *)m, "its %lld calls' overhead (%s) does not pay back even the"
					       " %s of tracing and first-call set-up measured here, and XLA compiles on"
					       " top of that", (long long)all_calls(f), save, setup));
}

/* jit (compile it), vectorize (the user's unrolled loop), or none (nothing to advise: no finding). */
static const char *remedy(const struct model *m, const struct graph_fn_ops *f)
{
	return jit_pays_back(m, f) ? "jit" : top_line_is_users_loop(m, f) ? "vectorize" : "none";
}

const char *graph_fn_remedy(const struct model *m, const struct graph_fn_ops *f)
{
	return remedy(m, f);
}

/* Dense compute ops, expected to dominate a model's kernel time. */
static int is_compute_op(const char *t)
{
	static const char *const prefixes[] = { "MatMul", "BatchMatMul", "_FusedMatMul", "Conv", "_FusedConv",
						"DepthwiseConv", "Einsum", "_MklMatMul", "_MklConv", "_MklFused",
						"_MklNativeConv", "_MklNativeFused", "_MklBatchMatMul", "_MklEinsum",
						"_XlaRun", NULL };

	/* an XLA-compiled function runs as one kernel named after it */
	if (!strncmp(t, "__inference_", 12) || !strncmp(t, "__forward_", 10) || !strncmp(t, "__backward_", 11))
		return 1;
	for (int i = 0; prefixes[i]; i++)
		if (!strncmp(t, prefixes[i], strlen(prefixes[i])))
			return 1;
	return 0;
}

/*
 * The arithmetic a function is written to do: elementwise math, a layer's
 * bias and activation, variable reads and updates (an optimizer's, a soft
 * target update's Mul).  When one of them takes most of a function's kernel
 * time, that is the function's own work, not an op to move out of it.
 */
static int is_own_work_op(const char *t)
{
	static const char *const names[] = { "Mul", "AddV2", "Add", "Sub", "RealDiv", "Div", "Maximum", "Minimum",
					     "Neg", "Square", "SquaredDifference", "AddN", "BiasAdd", "Relu", "Relu6",
					     "Elu", "Selu", "Tanh", "Sigmoid", "Softplus", "Exp", "Log", "Sqrt", "Rsqrt",
					     "ReadVariableOp", "AssignVariableOp", "AssignAddVariableOp",
					     "AssignSubVariableOp", NULL };

	for (int i = 0; names[i]; i++)
		if (!strcmp(t, names[i]))
			return 1;
	return !strncmp(t, "ResourceApply", 13) || !strncmp(t, "_MklFusedMul", 12);
}

/*
 * Iterator reads inside a graph (Keras' train function's IteratorGetNext):
 * their kernel time is the wait for the input pipeline, input-bound's
 * subject, not an op to make cheaper.
 */
static int is_input_op(const char *t)
{
	return !strncmp(t, "IteratorGetNext", 15) || !strncmp(t, "MultiDeviceIteratorGetNext", 26) ||
	       !strcmp(t, "OptionalGetValue");
}

/*
 * One standard error of overhead_share: the calls are its repetitions, so
 * the sample standard deviation of their own overhead shares over
 * sqrt(calls); 0 with fewer than 2 calls (no spread to read).
 */
static double overhead_share_se(const struct graph_fn_ops *f)
{
	double n = (double)f->share_n, mean, var;

	if (f->share_n < 2)
		return 0;
	mean = f->share_sum / n;
	var = (f->share_sq - n * mean * mean) / (n - 1);
	return var > 0 ? sqrt(var / n) : 0;
}

/* ---- graph_functions --------------------------------------------------- */

static const char *const fn_fields[] = {
	"graph_function, function: the TensorFlow function and the user function owning it (text)",
	"calls, call_ns: its calls that ran kernels, their wall time",
	"kernels, kernel_ns, kernels_per_call, mean_kernel_ns: kernel runs and their time",
	"busy_ns: per call, the time some kernel ran (union over threads), summed",
	"overhead_ns, overhead_share: call_ns - busy_ns (the executor's own time), its share of call_ns",
	"overhead_share_se: one standard error of overhead_share, the calls' own shares' standard deviation over"
	"  sqrt(calls) (the calls recorded one by one; 0 under 2 calls)",
	"overhead_per_kernel_ns: overhead_ns / kernels",
	"jit_compile: 1 when compiled with XLA",
	"jit_saving_ns: overhead jit_compile=True would remove (all but 4 kernels' worth per call)",
	"nodes, top_line_nodes, top_line_share: its graph's nodes, those the top line created, their share",
	"top_type, top_type_share: the op type with most kernel time (text), its share of kernel_ns",
	"all_calls: its calls, the first included; setup_ns: its tracing and first call beyond a warm one (measured)",
	"jit_pays_back: 1 when all_calls >= 2 and jit_saving_ns > setup_ns (XLA's compile comes on top)",
	"remedy: jit, vectorize (the top line is a loop of the user's that a trace unrolled) or none (text); advice: it in words (text)",
	"estimate_note: what the recording lacks for the estimate (kernels not recorded), else empty (text)",
	NULL,
};

static size_t fn_count(const struct model *m, void *data)
{
	(void)m;
	return ((struct ops_shared *)data)->g.nfns;
}

static int fn_get(const struct model *m, void *data, size_t row, const char *field, struct metric_value *out)
{
	const struct graph_fn_ops *f = &((struct ops_shared *)data)->g.fns[row];

	(void)m;
	TEXT("graph_function", f->graph_function);
	TEXT("function", f->function ? f->function : f->graph_function);
	NUM("calls", f->calls);
	NUM("call_ns", f->call_ns);
	NUM("kernels", f->kernels);
	NUM("kernel_ns", f->kernel_ns);
	NUM("kernels_per_call", ratio((double)f->kernels, (double)f->calls));
	NUM("mean_kernel_ns", ratio((double)f->kernel_ns, (double)f->kernels));
	NUM("busy_ns", f->busy_ns);
	NUM("overhead_ns", f->overhead_ns);
	NUM("overhead_share", ratio((double)f->overhead_ns, (double)f->call_ns));
	NUM("overhead_share_se", overhead_share_se(f));
	NUM("overhead_per_kernel_ns", ratio((double)f->overhead_ns, (double)f->kernels));
	NUM("jit_compile", f->jit_compile);
	NUM("jit_saving_ns", jit_saving(f));
	NUM("nodes", f->nodes);
	NUM("top_line_nodes", f->top_line_nodes);
	NUM("top_line_share", ratio((double)f->top_line_nodes, (double)f->nodes));
	TEXT("top_type", f->ntypes ? f->types[0].op_type : NULL);
	NUM("top_type_share", f->ntypes ? ratio((double)f->types[0].total_ns, (double)f->kernel_ns) : 0);
	NUM("all_calls", all_calls(f));
	NUM("setup_ns", setup_ns(m, f));
	NUM("jit_pays_back", jit_pays_back(m, f));
	TEXT("remedy", remedy(m, f));
	TEXT("advice", dispatch_advice(m, f));
	TEXT("estimate_note", estimate_note(m, f));
	return -1;
}

/*
 * Anchor a at loc, a node's line; a library's line (TFP's, GPflow's) is not
 * the user's: their function fn, with that line beside it.
 */
static void anchor_loc(struct metric_anchor *a, const struct model_function *fn, struct source_loc loc)
{
	a->loc = loc;
	if (fn && !loc_is_users(loc)) {
		a->loc = model_function_user_loc(fn);
		a->loc.lib_file = loc.file, a->loc.lib_line = loc.line;
	}
}

static void fn_anchor(const struct model *m, void *data, size_t row, struct metric_anchor *a)
{
	const struct graph_fn_ops *f = &((struct ops_shared *)data)->g.fns[row];
	const struct model_function *fn = owner_fn(m, f);

	a->function = f->function ? f->function : f->graph_function;
	anchor_loc(a, fn, f->top_line);
	a->cost_ns = (int64_t)jit_saving(f);
	a->start_ns = f->first_ns;
	a->end_ns = f->last_ns;
}

/* ---- graph_op_types ---------------------------------------------------- */

static const char *const type_fields[] = {
	"graph_function, function, op_type: the function and the op type (text)",
	"count, total_ns, mean_ns, per_call: its kernel runs, their time, runs per call (the first call left out)",
	"share: of the function's kernel time",
	"calls, fn_kernel_ns: the function's calls (the first left out) and their kernel time",
	"compute_op: 1 for dense compute ops (MatMul, Conv*, Einsum) and compiled functions (XLA), expected to dominate",
	"input_op: 1 for iterator reads (IteratorGetNext...): their time is the wait for the input pipeline",
	"own_work_op: 1 for the arithmetic a function is written to do (elementwise math, bias and activations,"
	" variable reads and updates): the function's own work",
	"steady_ns, steady_share: total_ns and share with each node's runs at the median of its timed runs"
	" (a few runs descheduled on a loaded machine do not count)",
	NULL,
};

static size_t type_count(const struct model *m, void *data)
{
	(void)m;
	return ((struct ops_shared *)data)->nrows;
}

/* The steady times of r's function, read on first use (only the rules' candidates ask). */
static void read_steady(const struct model *m, struct ops_shared *s, const struct type_row *r)
{
	graph_fn_steady(m, &s->g.fns[r->fn - s->g.fns]);
}

static int type_get(const struct model *m, void *data, size_t row, const char *field, struct metric_value *out)
{
	const struct type_row *r = &((struct ops_shared *)data)->rows[row];

	if (!strncmp(field, "steady_", 7))
		read_steady(m, data, r);
	TEXT("graph_function", r->fn->graph_function);
	TEXT("function", r->fn->function ? r->fn->function : r->fn->graph_function);
	TEXT("op_type", r->type->op_type);
	NUM("count", r->type->count);
	NUM("total_ns", r->type->total_ns);
	NUM("mean_ns", ratio((double)r->type->total_ns, (double)r->type->count));
	NUM("per_call", ratio((double)r->type->count, (double)r->fn->calls));
	NUM("share", ratio((double)r->type->total_ns, (double)r->fn->op_kernel_ns));
	NUM("calls", r->fn->calls);
	NUM("fn_kernel_ns", r->fn->op_kernel_ns);
	NUM("compute_op", is_compute_op(r->type->op_type));
	NUM("input_op", is_input_op(r->type->op_type));
	NUM("own_work_op", is_own_work_op(r->type->op_type));
	NUM("steady_ns", r->type->steady_ns);
	NUM("steady_share", ratio((double)r->type->steady_ns, (double)r->fn->op_steady_ns));
	return -1;
}

static void type_anchor(const struct model *m, void *data, size_t row, struct metric_anchor *a)
{
	const struct type_row *r = &((struct ops_shared *)data)->rows[row];

	a->function = r->fn->function ? r->fn->function : r->fn->graph_function;
	anchor_loc(a, owner_fn(m, r->fn), r->type->loc);
	a->cost_ns = r->type->total_ns;
	a->start_ns = r->fn->first_ns;
	a->end_ns = r->fn->last_ns;
}

static int build_type_rows(struct ops_shared *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->g.nfns; i++)
		n += s->g.fns[i].ntypes;
	if (n && !(s->rows = calloc(n, sizeof(*s->rows))))
		return -1;
	for (size_t i = 0; i < s->g.nfns; i++)
		for (size_t t = 0; t < s->g.fns[i].ntypes; t++)
			s->rows[s->nrows++] = (struct type_row){ &s->g.fns[i], &s->g.fns[i].types[t] };
	return 0;
}

const struct graph_ops_model *graph_ops_model(const struct model *m)
{
	const struct metric_source *src = model_find_source(m, "graph_functions");

	return src && src->release == shared_release ? &((struct ops_shared *)src->data)->g : NULL;
}

int graph_ops_register(struct model *m)
{
	const struct metric_source sources[] = {
		{ "graph_functions", fn_fields, fn_count, fn_get, fn_anchor, shared_release, NULL },
		{ "graph_op_types", type_fields, type_count, type_get, type_anchor, shared_release, NULL },
	};
	struct ops_shared *s = calloc(1, sizeof(*s));

	if (!s || !m->rec || graph_ops_model_load(&s->g, m)) {
		free(s);
		return -1;
	}
	if (build_type_rows(s)) {
		s->refs = 1;
		shared_release(s);
		return -1;
	}
	for (size_t i = 0; i < sizeof(sources) / sizeof(sources[0]); i++) {
		struct metric_source src = sources[i];

		src.data = s;
		s->refs++;
		if (model_add_source(m, &src)) {
			shared_release(s);
			return -1;
		}
	}
	return 0;
}
