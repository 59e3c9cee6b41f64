/*
 * sources.c - the built-in metric sources: the model seen as named tables
 * of rows with named fields, which is all a rule can read (docs/rules.md
 * lists the fields; keep the lists below and that page in step).
 */
#include "model_internal.h"
#include "pathdisp.h"
#include "duration.h"
#include "checked.h"
#include "strbuf.h"
#include "metric_fields.h"

#include <math.h>
#include <string.h>


static double share(const struct model *m, int64_t ns)
{
	return m->session.active_ns ? (double)ns / (double)m->session.active_ns : 0;
}

/* functions */

static const char *const function_fields[] = {
	"name: the Python function's name",
	"file, line: its def",
	"user_file, user_line: its def when in user code, else the call that first traced it",
	"traces, retraces: traces of the function, traces after the first",
	"calls_traced, retraced_calls: the same without the second trace TensorFlow makes of a call that created variables;",
	"  for TensorFlow's and Keras' own functions (a tf.function object per model), those of its busiest object",
	"calls, calls_failed: executions of its graphs",
	"trace_ns, retrace_ns, exec_ns: time tracing, tracing after the first trace, executing",
	"trace_share, exec_share: those times as a share of the run (0..1)",
	"jit_compile, jit_shapes: 1 when compiled with XLA; distinct signatures compiled",
	"has_input_signature, reduce_retracing: tf.function options (0/1)",
	"function_objects: distinct tf.function objects that traced it",
	"tf_data: 1 for a tf.data function (a Dataset transformation's function)",
	"library: 1 when a library owns it (its def is in an installed package, or a tf.data function), not user code",
	"line_traces: the most traces one user line made (follow-ups and nested traces not counted)",
	"framework: 1 when its def is TensorFlow's or Keras's own code",
	"retrace_share: retrace_ns as a share of the run (0..1)",
	"variables_created, traces_creating_variables: tf.Variables made while tracing; the most traces creating them"
	" among the tf.function objects first called from one line",
	"blackbox_nodes, blackbox_execs, blackbox_ns: py_function nodes in its graphs and their runs",
	"cause: the most frequent retrace cause (text; none when never retraced)",
	"cause_count: retraces with that cause (TensorFlow's second trace of a variable-creating call not counted)",
	"argument, before, after, detail: the first retrace with that cause",
	"rank_changed: 1 when that retrace's shapes have different ranks ([] -> [2])",
	"site_file, site_line: the user call that triggered that retrace",
	"recurring: 1 when its retraces go on as it is used (2 or more, the last in the second half of its span,"
	" its first trace to its last call): a longer run retraces more; 0: a one-time cost",
	"exports: the traces exports made (tf.saved_model.save, get_concrete_function) in words, else empty",
	"recurrence: that in words for the message (\"; they recur as it is used (the last at 87% ...)\"), else empty",
	"own_retraces: avoidable retraces (not follow-ups) that did not run inside another function's avoidable retrace",
	"inside: those that did, in words for the message (\"; its 7 retraces ran inside outer's, ...\"), else empty",
	"library_passes: 1 when that retrace is python-value and library code passed the argument (its line is"
	" library_file, library_line) that is a value of its own, or one the user's call does not pass (by name or position)",
	"library_file, library_line: with library_passes, the library's line that passed it (not a decorator helper"
	" that forwards *args), else empty and 0",
	"library_at: that line as shown (\"gpflow/models/svgp.py:87\"), else empty",
	"package: with library_passes, the library's package (\"gpflow\"), else empty",
	"passed_by: with library_passes, in words for the message (\"; gpflow/models/svgp.py:87 passes ...\"),"
	" else empty",
	"padding: for a shape retrace in a loop over a pipeline with padded_batch, that stage in words for the advice"
	" (\"; padded_batch at line 24 pads each batch to its own longest element: ...\"), else empty",
	NULL,
};

/* For a shape retrace t whose call is in a loop over a padded_batch pipeline: that stage, for the advice; else "". */
static const char *padding_text(const struct model *m, const struct model_trace *t)
{
	const struct model_dataset_op *d = t && t->why.cause == CAUSE_SHAPE && !t->callsite.library_only
		? model_padding_stage(m, t->callsite.file, t->callsite.line) : NULL;

	if (!d || !d->loc.file)
		return "";
	return model_strf((struct model *)m, "; padded_batch at %s:%d pads each batch to its own longest element:"
			  " give it padded_shapes (one length for every batch), or bucket the lengths"
			  " (tf.data.experimental.bucket_by_sequence_length) into a few shapes",
			  path_display(d->loc.file, m->session.cwd), d->loc.line);
}

/* f's avoidable retraces (not follow-ups); those inside another function's retrace in *inside, the first's function in *outer. */
static size_t own_retraces(const struct model_function *f, size_t *inside, const char **outer)
{
	size_t own = 0;

	*inside = 0;
	*outer = NULL;
	for (size_t k = 1; k < f->ntraces; k++) {
		const struct model_trace *t = &f->traces[k];

		if (t->why.followup)
			continue;
		if (!t->why.inside) {
			own++;
		} else if (!(*inside)++) {
			*outer = t->why.inside;
		}
	}
	return own;
}

/* "; its 7 retraces ran inside outer's retraces: ..." (the message's), else "". */
static const char *inside_text(const struct model *m, const struct model_function *f)
{
	size_t inside;
	const char *outer;

	own_retraces(f, &inside, &outer);
	if (!inside)
		return "";
	return model_strf((struct model *)m, "; %zu of its retraces ran inside retraces of %s, which a fix of %s removes"
			  " with them: their time is counted there, not here", inside, outer, outer);
}

/*
 * Where f's last retrace (not a follow-up) started, as a share of f's own
 * span (its first trace to its last call, 0..1): how far into its use the
 * retraces went on, whatever ran before or after it.  Its count in *n.
 */
static double last_retrace_at(const struct model_function *f, size_t *n)
{
	int64_t last = 0;

	*n = 0;
	for (size_t k = 1; k < f->ntraces; k++)
		if (!f->traces[k].why.followup) {
			(*n)++;
			last = f->traces[k].start_ns;
		}
	if (!*n || f->last_ns <= f->first_ns || last <= f->first_ns)
		return 0;
	return last >= f->last_ns ? 1.0 : (double)(last - f->first_ns) / (double)(f->last_ns - f->first_ns);
}

/*
 * Retraces that go on as the function is used: two or more, the last in
 * the second half of its span; where the last one was in *at.
 */
static int recurring(const struct model_function *f, double *at)
{
	size_t n;

	*at = last_retrace_at(f, &n);
	return n >= 2 && *at >= 0.5;
}

/* recurring in words, for the message: "; they went on as it was used (...)", or "". */
static const char *recurrence_text(const struct model *m, const struct model_function *f)
{
	double at;

	if (!recurring(f, &at))
		return "";
	return model_strf((struct model *)m, "; they went on as it was used (the last at %.0f%% of its span, its first"
			  " trace to its last call): a longer run may retrace more", 100.0 * at);
}

/* Rank of shape text "[32,10]" ("[]": 0), -1 when not one. */
static int shape_rank(const char *s)
{
	int r = 0;

	if (!s || s[0] != '[')
		return -1;
	if (s[1] == ']')
		return 0;
	for (r = 1; *s; s++)
		r += *s == ',';
	return r;
}

/* First retrace of f whose cause is its main cause (a follow-up, an export's trace, is none). */
static const struct model_trace *main_retrace(const struct model_function *f)
{
	for (size_t k = 1; k < f->ntraces; k++)
		if (f->traces[k].why.cause == f->main_cause && !f->traces[k].why.followup)
			return &f->traces[k];
	for (size_t k = 1; k < f->ntraces; k++)
		if (f->traces[k].why.cause == f->main_cause)
			return &f->traces[k];
	return NULL;
}

/* "; 4 of them by tf.saved_model.save() at line 28, not by calls of yours", or "". */
static const char *exports_text(const struct model *m, const struct model_function *f)
{
	const struct model_trace *first = NULL;
	size_t n = 0, elsewhere = 0;

	for (size_t k = 0; k < f->ntraces; k++)
		if (f->traces[k].why.export_call) {
			n++;
			first = first ? first : &f->traces[k];
			elsewhere += f->traces[k].callsite.line != first->callsite.line;
		}
	if (!n)
		return "";
	return model_strf((struct model *)m, "; %zu of those traces were made by %s() at line %d%s, not by calls of yours:"
			  " listed apart, no part of the cost", n, first->why.export_call, first->callsite.line,
			  elsewhere ? " and other exports" : "");
}

/* The python-value retrace t that a library's line passed, else NULL. */
static const struct model_trace *library_passed(const struct model_trace *t)
{
	return t && t->why.cause == CAUSE_PYTHON_VALUE && t->why.library_passes ? t : NULL;
}

/* The library line that passed t's argument (its frame beside the user's, or the chain's own). */
static struct source_loc passer_loc(const struct model_trace *t)
{
	struct source_loc at = { NULL, 0, NULL, 0, 0 };

	at.file = t->callsite.library_only ? t->callsite.file : t->callsite.lib_file;
	at.line = t->callsite.library_only ? t->callsite.line : t->callsite.lib_line;
	return at;
}

/* The package of an installed file ("gpflow" of ".../site-packages/gpflow/models/svgp.py"), else its file's stem. */
static const char *package_of(const struct model *m, const char *file)
{
	const char *shown = file ? path_display(file, NULL) : "", *slash = strchr(shown, '/');
	const char *base = strrchr(shown, '/') ? strrchr(shown, '/') + 1 : shown;

	if (path_is_installed(file) && slash)
		return model_strf((struct model *)m, "%.*s", (int)(slash - shown), shown);
	return model_strf((struct model *)m, "%.*s", (int)strcspn(base, "."), base);
}

/* "; minilib/losses.py:33 passes weight as a Python value (False) on one call and a tensor on another, ...", or "". */
static const char *passed_by_text(const struct model *m, const struct model_trace *t)
{
	struct source_loc at;
	const char *b, *a, *how;

	if (!t)
		return "";
	at = passer_loc(t);
	b = t->why.before ? t->why.before : "?";
	a = t->why.after ? t->why.after : "?";
	if (b[0] == '<')
		how = model_strf((struct model *)m, "as a Python value (%s) on one call and a tensor on another", a);
	else if (a[0] == '<')
		how = model_strf((struct model *)m, "as a Python value (%s) on one call and a tensor on another", b);
	else
		how = model_strf((struct model *)m, "as a Python value that changes (%s -> %s)", b, a);
	return model_strf((struct model *)m, "; the library does it: %s:%d passes %s %s%s", path_display(at.file,
			  m->session.cwd), at.line, t->why.argument ? t->why.argument : "an argument", how,
			  t->callsite.library_only ? "" : ", under your call, which does not pass it");
}

/*
 * The calls that traced f (follow-ups apart); per tf.function object for
 * a function TensorFlow or Keras wraps anew for each model the user makes
 * (f->per_object): three models retracing once each are three healthy
 * functions, not one traced six times.
 */
static size_t calls_traced(const struct model_function *f)
{
	if (f->per_object)
		return f->object_calls_traced;
	return f->ntraces > f->followups ? f->ntraces - f->followups : 0;
}

static size_t functions_count(const struct model *m, void *data)
{
	(void)data;
	return m->nfunctions;
}

static int functions_get(const struct model *m, void *data, size_t row, const char *field, struct metric_value *out)
{
	const struct model_function *f = &m->functions[row];
	const struct model_trace *t = main_retrace(f);

	(void)data;
	TEXT("name", f->name);
	TEXT("file", f->def.file);
	NUM("line", f->def.line);
	TEXT("user_file", model_function_user_loc(f).file);
	NUM("user_line", model_function_user_loc(f).line);
	NUM("traces", f->ntraces);
	NUM("retraces", f->retraces);
	NUM("calls_traced", calls_traced(f));
	NUM("retraced_calls", calls_traced(f) ? calls_traced(f) - 1 : 0);
	NUM("calls", f->calls);
	NUM("calls_failed", f->calls_failed);
	NUM("trace_ns", f->trace_ns);
	NUM("retrace_ns", f->retrace_ns);
	NUM("exec_ns", f->exec_ns);
	NUM("trace_share", share(m, f->trace_ns));
	NUM("exec_share", share(m, f->exec_ns));
	NUM("jit_compile", f->jit_compile);
	NUM("jit_shapes", f->jit_shapes);
	NUM("has_input_signature", f->has_input_signature);
	NUM("reduce_retracing", f->reduce_retracing);
	NUM("function_objects", f->function_objects);
	NUM("tf_data", f->tf_data);
	NUM("library", f->library);
	NUM("line_traces", f->line_traces);
	NUM("framework", f->def.file && path_is_framework(f->def.file));
	NUM("retrace_share", share(m, f->retrace_ns));
	NUM("variables_created", f->variables_created);
	NUM("traces_creating_variables", f->traces_creating_variables);
	NUM("blackbox_nodes", f->blackbox_nodes);
	NUM("blackbox_execs", f->blackbox_execs);
	NUM("blackbox_ns", f->blackbox_ns);
	TEXT("cause", f->main_cause ? retrace_cause_name(f->main_cause) : "none");
	NUM("cause_count", f->cause_counts[f->main_cause]);
	TEXT("argument", t ? t->why.argument : NULL);
	TEXT("before", t ? t->why.before : NULL);
	TEXT("after", t ? t->why.after : NULL);
	TEXT("detail", t ? t->why.detail : NULL);
	NUM("rank_changed", t && t->why.cause == CAUSE_SHAPE && shape_rank(t->why.before) >= 0 &&
				    shape_rank(t->why.after) >= 0 && shape_rank(t->why.before) != shape_rank(t->why.after));
	TEXT("site_file", t ? t->callsite.file : NULL);
	NUM("site_line", t ? t->callsite.line : 0);
	NUM("recurring", recurring(f, &(double){ 0 }));
	TEXT("recurrence", recurrence_text(m, f));
	TEXT("exports", exports_text(m, f));
	NUM("own_retraces", own_retraces(f, &(size_t){ 0 }, &(const char *){ NULL }));
	TEXT("inside", inside_text(m, f));
	NUM("library_passes", library_passed(t) != NULL);
	TEXT("library_file", library_passed(t) ? passer_loc(t).file : "");
	NUM("library_line", library_passed(t) ? passer_loc(t).line : 0);
	TEXT("library_at", library_passed(t) ? model_strf((struct model *)m, "%s:%d", path_display(passer_loc(t).file,
			m->session.cwd), passer_loc(t).line) : "");
	TEXT("package", library_passed(t) ? package_of(m, passer_loc(t).file) : "");
	TEXT("passed_by", passed_by_text(m, library_passed(t)));
	TEXT("padding", padding_text(m, t));
	return -1;
}

static void functions_anchor(const struct model *m, void *data, size_t row, struct metric_anchor *a)
{
	const struct model_function *f = &m->functions[row];
	const struct model_trace *t = main_retrace(f);

	(void)data;
	a->function = f->name;
	a->fn = f;
	a->cause = f->main_cause;
	/* The call that triggered the retrace is where the fix usually goes. */
	a->loc = t && t->callsite.file ? t->callsite : model_function_user_loc(f);
	a->cost_ns = f->retrace_ns;
	a->start_ns = f->first_ns;
	a->end_ns = f->last_ns;
	if (f->ntraces > 1) {
		a->start_ns = f->traces[1].start_ns;
		a->end_ns = f->traces[f->ntraces - 1].end_ns;
	}
}

/* retraces: one row per trace after the first */

static const char *const retrace_fields[] = {
	"function: the Python function's name",
	"traces: traces of that function",
	"trace_no: 2 for the first retrace, ...",
	"followup: 1 for the second trace of a call that created variables (inherent)",
	"cause, argument, before, after, detail: the explanation",
	"const_name, const_before, const_after: the graph constant that changed (python-value)",
	"file, line: the user call that triggered the trace",
	"trace_ns: time spent in this trace",
	"jit_compile: 1 when the function is compiled with XLA",
	NULL,
};

static int retrace_at(const struct model *m, size_t row, const struct model_function **fp,
		      const struct model_trace **tp)
{
	for (size_t i = 0; i < m->nfunctions; i++) {
		const struct model_function *f = &m->functions[i];

		if (row < f->retraces) {
			*fp = f;
			*tp = &f->traces[row + 1];
			return 0;
		}
		row -= f->retraces;
	}
	return -1;
}

static size_t retraces_count(const struct model *m, void *data)
{
	size_t n = 0;

	(void)data;
	for (size_t i = 0; i < m->nfunctions; i++)
		n += m->functions[i].retraces;
	return n;
}

static int retraces_get(const struct model *m, void *data, size_t row, const char *field, struct metric_value *out)
{
	const struct model_function *f;
	const struct model_trace *t;

	(void)data;
	if (retrace_at(m, row, &f, &t))
		return -1;
	TEXT("function", f->name);
	NUM("traces", f->ntraces);
	NUM("trace_no", t - f->traces + 1);
	NUM("followup", t->why.followup);
	TEXT("cause", retrace_cause_name(t->why.cause));
	TEXT("argument", t->why.argument);
	TEXT("before", t->why.before);
	TEXT("after", t->why.after);
	TEXT("detail", t->why.detail);
	TEXT("const_name", t->why.const_name);
	TEXT("const_before", t->why.const_before);
	TEXT("const_after", t->why.const_after);
	TEXT("file", t->callsite.file);
	NUM("line", t->callsite.line);
	NUM("trace_ns", t->end_ns - t->start_ns);
	NUM("jit_compile", t->jit_compile);
	return -1;
}

static void retraces_anchor(const struct model *m, void *data, size_t row, struct metric_anchor *a)
{
	const struct model_function *f;
	const struct model_trace *t;

	(void)data;
	if (retrace_at(m, row, &f, &t))
		return;
	a->function = f->name;
	a->fn = f;
	a->cause = t->why.cause;
	a->loc = t->callsite.file ? t->callsite : model_function_user_loc(f);
	a->cost_ns = t->end_ns - t->start_ns;
	a->start_ns = t->start_ns;
	a->end_ns = t->end_ns;
}

/* eager_sites */

static const char *const site_fields[] = {
	"file, line, func: the user source line and the function it is in",
	"count: eager ops it dispatched",
	"total_ns, share: their dispatch time, and its share of the run",
	"top_op: the op type it dispatched most",
	NULL,
};

static size_t sites_count(const struct model *m, void *data)
{
	(void)data;
	return m->nsites;
}

static int sites_get(const struct model *m, void *data, size_t row, const char *field, struct metric_value *out)
{
	const struct model_eager_site *s = &m->sites[row];

	(void)data;
	TEXT("file", s->loc.file);
	NUM("line", s->loc.line);
	TEXT("func", s->func);
	NUM("count", s->count);
	NUM("total_ns", s->total_ns);
	NUM("share", share(m, s->total_ns));
	TEXT("top_op", s->top_op);
	return -1;
}

static void sites_anchor(const struct model *m, void *data, size_t row, struct metric_anchor *a)
{
	const struct model_eager_site *s = &m->sites[row];

	(void)data;
	a->function = s->func;
	a->loc = s->loc;
	a->cost_ns = s->total_ns;
	a->start_ns = s->first_ns;
	a->end_ns = s->last_ns;
}

/* eager_ops */

static const char *const op_fields[] = {
	"op: the op type (MatMul, ...)",
	"count, total_ns, share: dispatches, their time, its share of the run",
	"slow_path: dispatches through the Python fallback path",
	"failed: dispatches that returned an error",
	NULL,
};

static size_t ops_count(const struct model *m, void *data)
{
	(void)data;
	return m->nops;
}

static int ops_get(const struct model *m, void *data, size_t row, const char *field, struct metric_value *out)
{
	const struct model_eager_op *o = &m->ops[row];

	(void)data;
	TEXT("op", o->op);
	NUM("count", o->count);
	NUM("total_ns", o->total_ns);
	NUM("share", share(m, o->total_ns));
	NUM("slow_path", o->slow_path);
	NUM("failed", o->failed);
	return -1;
}

static void ops_anchor(const struct model *m, void *data, size_t row, struct metric_anchor *a)
{
	(void)data;
	a->cost_ns = m->ops[row].total_ns;
}

/* blackboxes */

static const char *const blackbox_fields[] = {
	"node, op_type, token: the graph node (EagerPyFunc, PyFunc, PyFuncStateless)",
	"function: the user function whose graph holds it; file, line: the user line that created the node",
	"  (its def when the recording has no such line; tf.data: the line of the transformation that made it)",
	"graph_function: the TensorFlow function holding the node",
	"in_tf_data: 1 when the graph is a tf.data function",
	"execs, total_ns, share: executions, their time, its share of the run",
	"eager_ops, eager_ns: eager ops its Python body dispatched (counted here, not as eager dispatch)",
	"thread: the thread that ran it most (main, tf.data, other)",
	"made_by: the tf.data transformation that made it, e.g. map(augment) (text)",
	NULL,
};

static size_t blackboxes_count(const struct model *m, void *data)
{
	(void)data;
	return m->nblackboxes;
}

static int blackboxes_get(const struct model *m, void *data, size_t row, const char *field, struct metric_value *out)
{
	const struct model_blackbox *b = &m->blackboxes[row];

	(void)data;
	TEXT("node", b->node_name);
	TEXT("op_type", b->op_type);
	TEXT("token", b->token);
	TEXT("function", b->function ? b->function : b->in_tf_data ? "tf.data" : NULL);
	TEXT("file", b->loc.file);
	NUM("line", b->loc.line);
	TEXT("graph_function", b->graph_function);
	NUM("in_tf_data", b->in_tf_data);
	NUM("execs", b->execs);
	NUM("total_ns", b->total_ns);
	NUM("share", share(m, b->total_ns));
	NUM("eager_ops", b->eager_ops);
	NUM("eager_ns", b->eager_ns);
	TEXT("thread", b->thread);
	TEXT("made_by", b->made_by ? b->made_by : b->function);
	return -1;
}

static void blackboxes_anchor(const struct model *m, void *data, size_t row, struct metric_anchor *a)
{
	const struct model_blackbox *b = &m->blackboxes[row];

	(void)data;
	a->function = b->function;
	a->loc = b->loc;
	a->cost_ns = b->total_ns;
	a->start_ns = b->first_ns;
	a->end_ns = b->last_ns;
	a->thread = b->thread;
}


/* threads: one row per thread that recorded events; shares of its own time */

static const char *const thread_fields[] = {
	"thread: main, tf.data or other; pid, tid, name",
	"active_ns: the thread's time (main thread: the active run; others: first to last event)",
	"cpu_wait_ns: of active_ns, its waits for a CPU (a machine loaded by other work)",
	"eager_ops, eager_ns, eager_share: its eager dispatch (iterator reads and ops inside black boxes left out)",
	"  at its steady cost (no wait for a CPU), and its share of the thread's time less cpu_wait_ns;",
	"  eager_wall_ns: the same ops as recorded (wall clock); eager_share_se: one standard error of the share",
	"  (its spread over 20 blocks of the time)",
	"input_waits, input_ns: its eager iterator reads (not the Python before each)",
	"blackbox_execs, blackbox_ns, blackbox_eager_ops: black-box runs on it, eager ops inside them",
	"top_sites: its five busiest eager lines (text); top_site: the first, as 'line N (func)' or '<no Python frame>'",
	"top_site_file, top_site_line, top_site_func, top_site_count, top_op: the first of them",
	"top_site_library_call: 1 when that line calls a library again on the same compiled model (Keras' predict in"
	" a loop): its eager ops are the library's set-up (library_calls)",
	NULL,
};

static size_t threads_count(const struct model *m, void *data)
{
	(void)data;
	return m->nthreads;
}

/* "line 35 (augment_py)", or the no-frame text with the thread. */
static const char *top_site_text(const struct model *m, const struct model_thread *t)
{
	if (!t->top_count)
		return NULL;
	if (!t->top_loc.file)
		return model_strf((struct model *)m, "%s ops on the %s thread", MODEL_NO_FRAME, t->role);
	return model_strf((struct model *)m, "line %d (%s)", t->top_loc.line, t->top_func ? t->top_func : "?");
}

static int threads_get(const struct model *m, void *data, size_t row, const char *field, struct metric_value *out)
{
	const struct model_thread *t = &m->threads[row];

	(void)data;
	TEXT("thread", t->role);
	NUM("pid", t->pid);
	NUM("tid", t->tid);
	TEXT("name", t->name);
	NUM("active_ns", t->active_ns);
	NUM("cpu_wait_ns", t->cpu_wait_ns);
	NUM("eager_ops", t->eager_ops);
	NUM("eager_ns", t->eager_ns);
	NUM("eager_wall_ns", t->eager_wall_ns);
	NUM("eager_share", t->eager_share);
	if (!strcmp(field, "eager_share_se")) {
		int64_t a, b;

		model_thread_span(m, t, &a, &b);
		NUM("eager_share_se", model_share_se(m, t->pid, t->tid, a, b, 0));
	}
	NUM("input_waits", t->input_waits);
	NUM("input_ns", t->input_ns);
	NUM("blackbox_execs", t->blackbox_execs);
	NUM("blackbox_ns", t->blackbox_ns);
	NUM("blackbox_eager_ops", t->blackbox_eager_ops);
	TEXT("top_sites", t->top_sites);
	TEXT("top_site", top_site_text(m, t));
	TEXT("top_site_file", t->top_loc.file);
	NUM("top_site_line", t->top_loc.line);
	TEXT("top_site_func", t->top_func);
	NUM("top_site_count", t->top_count);
	TEXT("top_op", t->top_op);
	NUM("top_site_library_call", calls_repeated_at(m, &t->top_loc));
	return -1;
}

static void threads_anchor(const struct model *m, void *data, size_t row, struct metric_anchor *a)
{
	const struct model_thread *t = &m->threads[row];

	(void)data;
	a->function = t->top_func;
	a->loc = t->top_loc;
	a->cost_ns = t->eager_ns;
	a->start_ns = t->top_first_ns;
	a->end_ns = t->top_last_ns;
	a->thread = t->role;
}

/* input: one row per thread that read a tf.data iterator eagerly */

static const char *const input_fields[] = {
	"one row per loop: a thread's reads of one pipeline (schema 8), else all of a thread's reads",
	"thread: the thread reading (main, tf.data, other)",
	"waits, wait_ns: its iterator reads (IteratorGetNext) and their time (not the Python before each)",
	"steady_wait_ns: wait_ns less each iterator's first read, which starts its pipeline (schema 8; else wait_ns)",
	"loop_ns: from its first read to the end of its last; wait_share: wait_ns / loop_ns; wait_share_se: one",
	"  standard error of it (its spread over 20 blocks of the loop)",
	"verdict: TensorFlow's input-pipeline analyzer's words for wait_share: highly input-bound (20% or more),",
	"  moderately input-bound (5% or more), not input-bound (text)",
	"file, line, func: the line reading the iterator most (the loop)",
	"dataset_file, dataset_line: the user line that built the transformation to fix first",
	"  (a black box, a sequential map, a generator; else the pipeline's last)",
	"pipeline: the transformations built before the first read, with their lines (text)",
	"serial_maps, parallel_maps, prefetch, cache, generators: counts in that pipeline",
	"blackbox_execs, blackbox_ns: py_function runs inside its functions",
	"slow_stage, slow_line, slow_elements, slow_ns_per_element: the stage whose Python (a generator's next(),",
	"  a py_function) took longest per element, with its runs and time per run (schema 8; else empty)",
	"advice: what to change, chosen from the pipeline (text)",
	"graph_readers: graph functions that read an iterator inside the graph (text, all threads)",
	NULL,
};

#define INPUT_OPS_MAX ((size_t)32)
struct input_row {
	const struct model_thread *t;
	int64_t waits, wait_ns, first_ns, last_ns; /* its reads: the thread's, or one loop's (schema 8) */
	int64_t startup_ns;                        /* of wait_ns, its iterators' first reads (schema 8) */
	struct source_loc loc;
	const char *func;
	const struct model_dataset_op *ops[INPUT_OPS_MAX], *fix; /* the pipeline's stages, source first; the stage to fix */
	size_t n;
	int serial_maps, parallel_maps, prefetch, cache, generators, map_before_batch;
	int64_t blackbox_execs, blackbox_ns;
	const struct model_dataset_op *slow; /* the stage with the longest measured time per element, or NULL */
	const char *pipeline, *advice;
};

struct input_rows {
	struct input_row *v;
	size_t n;
	const char *graph_readers;
};

static size_t input_count(const struct model *m, void *data)
{
	(void)m;
	return data ? ((struct input_rows *)data)->n : 0;
}

static const char *ds_line(struct model *m, const struct model_dataset_op *d)
{
	return d->loc.file ? model_strf(m, "line %d", d->loc.line) : MODEL_NO_FRAME;
}

static const char *ds_name(struct model *m, const struct model_dataset_op *d)
{
	if (d->function && strcmp(d->transformation, "from_generator"))
		return model_strf(m, "%s(%s)", d->transformation, d->function);
	return d->transformation;
}

/* Describe the pipeline and say what to change, from what the recording shows. */
/*
 * The pipeline's chain ("map at x.py:3, parallel -> batch at ...") into p,
 * and its facts into r; *last and *batch: its last op and its first batch.
 */
static void input_pipeline_facts(struct model *m, struct input_row *r, struct strbuf *p,
				 const struct model_dataset_op **last, const struct model_dataset_op **batch)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct model_dataset_op *d = r->ops[i];
		int is_map = !strcmp(d->transformation, "map");

		strbuf_addf(p, "%s%s at %s%s", i ? " -> " : "", ds_name(m, d), ds_line(m, d),
			    is_map ? (d->parallel ? ", parallel" : ", sequential") : "");
		r->serial_maps += is_map && !d->parallel;
		r->parallel_maps += is_map && d->parallel;
		r->prefetch |= !strcmp(d->transformation, "prefetch");
		r->cache |= !strcmp(d->transformation, "cache");
		r->generators += !strcmp(d->transformation, "from_generator");
		r->blackbox_execs += d->blackbox_execs;
		r->blackbox_ns = dur_add(r->blackbox_ns, d->blackbox_ns);
		if (!strcmp(d->transformation, "batch") && !*batch)
			*batch = d;
		r->map_before_batch |= is_map && !*batch;
		if (!r->fix && (d->blackbox_execs || (is_map && !d->parallel) ||
				!strcmp(d->transformation, "from_generator")))
			r->fix = d;
		/* the slowest per element of the stages whose Python runs were timed */
		if (d->blackbox_execs && (!r->slow || d->blackbox_ns / d->blackbox_execs >
						       r->slow->blackbox_ns / r->slow->blackbox_execs))
			r->slow = d;
		*last = d;
	}
	if (r->slow)
		r->fix = r->slow;
	if (!r->fix)
		r->fix = *last;
}

/* The slow stage and its time per element, first: what the loop waits for. */
static void input_slow_advice(struct model *m, const struct input_row *r, struct strbuf *a)
{
	const struct model_dataset_op *d = r->slow;
	char per[DURATION_MAX], took[DURATION_MAX];

	if (!d)
		return;
	strbuf_addf(a, "the slow stage is %s at %s: %s per element (%lld elements, %s)", ds_name(m, d), ds_line(m, d),
		    duration_format(per, sizeof(per), d->blackbox_ns / d->blackbox_execs), (long long)d->blackbox_execs,
		    duration_format(took, sizeof(took), d->blackbox_ns));
	if (!strcmp(d->transformation, "from_generator"))
		strbuf_addstr(a, "; a generator runs serially, one element at a time under the GIL, so neither prefetch "
			      "nor parallel calls make it faster: make its next() cheaper, build the data as tensors "
			      "once (from_tensor_slices) or read files (TFRecordDataset)");
	else
		strbuf_addstr(a, "; its Python black box holds the GIL, so parallel calls overlap only its waits outside "
			      "Python (files, network): rewrite its body with TensorFlow ops so that tf.data can run it "
			      "in parallel, or move the py_function out of the pipeline");
}

/*
 * Whether advice on stage d would not help: the slow stage takes as long
 * per element as the loop waits per read (it is what the loop waits for),
 * or d's measured Python is under a tenth of the slow stage's.
 */
static int quick_next_to_slow(const struct input_row *r, const struct model_dataset_op *d)
{
	int64_t slow = r->slow ? r->slow->blackbox_ns / r->slow->blackbox_execs : 0;

	if (!r->slow || d == r->slow)
		return 0;
	if (r->waits && slow >= r->wait_ns / r->waits)
		return 1;
	return d->blackbox_execs && d->blackbox_ns / d->blackbox_execs < slow / 10;
}

/* Advice on each op of the pipeline that runs Python or one element at a time. */
static void input_op_advice(struct model *m, const struct input_row *r, struct strbuf *a)
{
	for (size_t i = 0; i < r->n; i++) {
		const struct model_dataset_op *d = r->ops[i];

		if (d == r->slow || quick_next_to_slow(r, d))
			continue;
		if (d->blackbox_execs && strcmp(d->transformation, "from_generator")) {
			char took[DURATION_MAX];

			strbuf_addf(a, "%sthe Python black box in %s at %s ran %lld times (%s), one element at a "
				    "time under the GIL: rewrite its body with TensorFlow ops so that tf.data can run "
				    "it in parallel, or move the py_function out of the pipeline",
				    a->len ? "; " : "", ds_name(m, d), ds_line(m, d), (long long)d->blackbox_execs,
				    duration_format(took, sizeof(took), d->blackbox_ns));
		} else if (!strcmp(d->transformation, "from_generator"))
			strbuf_addf(a, "%sfrom_generator at %s calls Python for every element: build the data as "
				    "tensors once (from_tensor_slices) or read files (TFRecordDataset)",
				    a->len ? "; " : "", ds_line(m, d));
		/* A black box holds the GIL: parallel calls of it do not help. */
		else if (!strcmp(d->transformation, "map") && !d->parallel)
			strbuf_addf(a, "%spass num_parallel_calls=tf.data.AUTOTUNE to %s at %s", a->len ? "; " : "",
				    ds_name(m, d), ds_line(m, d));
	}
}

/* Advice on the pipeline as a whole: prefetch, cache, batch before map. */
static void input_pipeline_advice(struct model *m, const struct input_row *r, struct strbuf *a,
				  const struct model_dataset_op *last, const struct model_dataset_op *batch)
{
	int prefetched = r->prefetch;

	for (size_t i = 0; i < r->n; i++)
		prefetched |= r->ops[i]->prefetched;
	if (!prefetched && last)
		strbuf_addf(a, "%send the pipeline with .prefetch(tf.data.AUTOTUNE) (after %s at %s) so that "
			    "batches are made while the step runs", a->len ? "; " : "", ds_name(m, last), ds_line(m, last));
	if (!a->len && last) {
		strbuf_addf(a, "the pipeline is parallel and %s, and still slower than the step: ",
			    r->prefetch ? "prefetched" : "TensorFlow prefetches at its end (inject_prefetch)");
		if (!r->cache)
			strbuf_addstr(a, "add .cache() after the expensive transformation if the data fits in memory");
		if (r->map_before_batch)
			strbuf_addf(a, "%sbatch before map so that the map function runs once per batch (vectorized)",
				    r->cache ? "" : ", or ");
		if (r->cache && !r->map_before_batch)
			strbuf_addstr(a, "make its functions cheaper or its elements smaller");
	} else if (r->map_before_batch && batch)
		strbuf_addf(a, "; consider .batch() before .map() so that the function runs once per batch");
	if (!last)
		strbuf_addstr(a, "the dataset was built before recording started: check that its map calls use "
			      "num_parallel_calls=tf.data.AUTOTUNE and that it ends with .prefetch(tf.data.AUTOTUNE)");
}

static void input_describe(struct model *m, struct input_row *r)
{
	struct strbuf p = STRBUF_INIT, a = STRBUF_INIT;
	const struct model_dataset_op *last = NULL, *batch = NULL;

	input_pipeline_facts(m, r, &p, &last, &batch);
	input_slow_advice(m, r, &a);
	input_op_advice(m, r, &a);
	input_pipeline_advice(m, r, &a, last, batch);
	if (a.buf && a.buf[0] >= 'a' && a.buf[0] <= 'z')
		a.buf[0] = (char)(a.buf[0] - 'a' + 'A');
	r->pipeline = model_strdup(m, p.buf ? p.buf : "");
	r->advice = model_strdup(m, a.buf ? a.buf : "");
	strbuf_release(&p);
	strbuf_release(&a);
}

/*
 * Whether dataset d was built at the line whose call reads inside a graph
 * (model.fit: Keras's data adapter builds its pipelines there, before the
 * user's own), and so is that reader's pipeline rather than thread t's.
 */
static int built_for_graph_reader(const struct model *m, const struct model_dataset_op *d,
				  const struct model_thread *t)
{
	if (!d->loc.file || (t->input_loc.file && t->input_loc.line == d->loc.line &&
			     !strcmp(t->input_loc.file, d->loc.file)))
		return 0;
	for (size_t i = 0; i < m->ngraph_readers; i++) {
		const struct source_loc *s = &m->graph_readers[i].site;

		if (s->file && s->line == d->loc.line && !strcmp(s->file, d->loc.file))
			return 1;
	}
	return 0;
}

/* Thread t's reads as one row, its pipeline the datasets of its process built before its first read. */
static void input_row_of_thread(struct model *m, const struct model_thread *t, struct input_row *r)
{
	size_t lo = 0, hi;

	r->t = t;
	r->waits = t->input_waits;
	r->wait_ns = t->input_ns;
	r->first_ns = t->input_first_ns;
	r->last_ns = t->input_last_ns;
	r->loc = t->input_loc;
	r->func = t->input_func;
	while (lo < m->ndatasets && (m->datasets[lo].pid != t->pid || built_for_graph_reader(m, &m->datasets[lo], t)))
		lo++;
	for (hi = lo; hi < m->ndatasets && m->datasets[hi].pid == t->pid &&
		      m->datasets[hi].start_ns < t->input_first_ns && r->n < INPUT_OPS_MAX; hi++)
		r->ops[r->n++] = &m->datasets[hi];
}

/*
 * One loop's reads as one row (schema 8), its pipeline the stages its
 * iterator was made over, source first; from_generator's seed (the
 * from_tensors TensorFlow builds at the same line) is not a stage.
 */
static void input_row_of_loop(struct model *m, const struct model_input_loop *l, struct input_row *r)
{
	size_t n = 0;

	r->t = l->thread;
	r->waits = l->waits;
	r->wait_ns = l->wait_ns;
	r->startup_ns = l->startup_ns < l->wait_ns ? l->startup_ns : l->wait_ns;
	r->first_ns = l->first_ns;
	r->last_ns = l->last_ns;
	r->loc = l->loc;
	r->func = l->func;
	for (long i = l->last; i >= 0 && n < INPUT_OPS_MAX; i = m->datasets[i].upstream) {
		const struct model_dataset_op *d = &m->datasets[i];

		if (n && !strcmp(d->transformation, "from_tensors") &&
		    !strcmp(r->ops[n - 1]->transformation, "from_generator"))
			continue;
		r->ops[n++] = d;
	}
	for (size_t i = 0; i < n / 2; i++) {
		const struct model_dataset_op *x = r->ops[i];

		r->ops[i] = r->ops[n - 1 - i];
		r->ops[n - 1 - i] = x;
	}
	r->n = n;
}

static struct input_rows *input_rows_build(struct model *m)
{
	struct input_rows *rows = calloc(1, sizeof(*rows));
	size_t cap = m->ninput_loops ? m->ninput_loops : m->nthreads;
	struct strbuf gr = STRBUF_INIT;

	if (!rows || !(rows->v = calloc(cap ? cap : 1, sizeof(*rows->v)))) {
		free(rows);
		return NULL;
	}
	for (size_t i = 0; i < m->ninput_loops; i++)
		input_row_of_loop(m, &m->input_loops[i], &rows->v[rows->n++]);
	for (size_t i = 0; !m->ninput_loops && i < m->nthreads; i++)
		if (m->threads[i].input_waits)
			input_row_of_thread(m, &m->threads[i], &rows->v[rows->n++]);
	for (size_t i = 0; i < rows->n; i++)
		input_describe(m, &rows->v[i]);
	for (size_t i = 0; i < m->ngraph_readers; i++)
		strbuf_addf(&gr, "%s%s (%lld calls)", i ? "; " : "",
			    m->graph_readers[i].function ? m->graph_readers[i].function : m->graph_readers[i].graph_function,
			    (long long)m->graph_readers[i].calls);
	rows->graph_readers = model_strdup(m, gr.buf ? gr.buf : "");
	strbuf_release(&gr);
	return rows;
}

static void input_rows_release(void *data)
{
	struct input_rows *rows = data;

	if (rows)
		free(rows->v);
	free(rows);
}

static int input_get(const struct model *m, void *data, size_t row, const char *field, struct metric_value *out)
{
	const struct input_row *r = &((struct input_rows *)data)->v[row];
	int64_t loop = r->last_ns - r->first_ns;
	double share_of_loop = loop > 0 ? (double)r->wait_ns / (double)loop : 0;
	const struct model_dataset_op *slow = r->slow;

	(void)m;
	TEXT("thread", r->t->role);
	NUM("waits", r->waits);
	NUM("wait_ns", r->wait_ns);
	NUM("steady_wait_ns", r->wait_ns - r->startup_ns);
	NUM("loop_ns", loop);
	NUM("wait_share", share_of_loop);
	NUM("wait_share_se", model_share_se(m, r->t->pid, r->t->tid, r->first_ns, r->last_ns, 1));
	TEXT("verdict", share_of_loop >= 0.20 ? "highly input-bound"
			: share_of_loop >= 0.05 ? "moderately input-bound" : "not input-bound");
	TEXT("file", r->loc.file);
	NUM("line", r->loc.line);
	TEXT("func", r->func);
	TEXT("dataset_file", r->fix ? r->fix->loc.file : NULL);
	NUM("dataset_line", r->fix ? r->fix->loc.line : 0);
	TEXT("pipeline", r->n ? r->pipeline : "not recorded (built before TensorFlow's hooks)");
	NUM("serial_maps", r->serial_maps);
	NUM("parallel_maps", r->parallel_maps);
	NUM("prefetch", r->prefetch);
	NUM("cache", r->cache);
	NUM("generators", r->generators);
	NUM("blackbox_execs", r->blackbox_execs);
	NUM("blackbox_ns", r->blackbox_ns);
	TEXT("slow_stage", slow ? slow->transformation : NULL);
	NUM("slow_line", slow ? slow->loc.line : 0);
	NUM("slow_elements", slow ? slow->blackbox_execs : 0);
	NUM("slow_ns_per_element", slow && slow->blackbox_execs ? slow->blackbox_ns / slow->blackbox_execs : 0);
	TEXT("advice", r->advice);
	TEXT("graph_readers", ((struct input_rows *)data)->graph_readers);
	return -1;
}

static void input_anchor(const struct model *m, void *data, size_t row, struct metric_anchor *a)
{
	const struct input_row *r = &((struct input_rows *)data)->v[row];

	(void)m;
	a->function = r->fix && r->fix->loc.file ? r->fix->func : r->func;
	a->loc = r->fix && r->fix->loc.file ? r->fix->loc : r->loc;
	a->cost_ns = r->wait_ns;
	a->start_ns = r->first_ns;
	a->end_ns = r->last_ns;
	a->thread = r->t->role;
}

/* session: one row */

static const char *const session_fields[] = {
	"wall_ns: duration of the run; active_ns: from the first TensorFlow event to the end (shares are of it)",
	"eager_ops, eager_ns, eager_share: eager dispatches, their time (recorded), the eager threads' steady share",
	"trace_ns, trace_share, traces, retraces: tracing",
	"retrace_ns, retrace_share: tracing after each user function's first trace (avoidable tracing; a library's own functions left out)",
	"retrace_share_se: one standard error of retrace_share (the retraces' times' spread)",
	"function_calls, function_call_ns: graph function executions",
	"blackbox_execs, blackbox_ns: py_function executions",
	"input_waits, input_ns: eager reads of a tf.data iterator (not in eager_ops)",
	"blackbox_eager_ops, blackbox_eager_ns: eager ops run inside py_function bodies (not in eager_ops)",
	"functions: traced user functions",
	"dropped_events, exit_status, tf_status",
	"top_sites: the five source lines dispatching most eager ops, with counts and time (text)",
	"top_site_file, top_site_line, top_site_func, top_site_count: the first of them",
	"top_trace_function, top_trace_file, top_trace_line, top_trace_ns, top_retrace_ns: the function that spent most",
	"  time retracing (else tracing), where to find it (model_function_user_loc), its tracing and retracing time",
	"top_trace_see_also: \" (see its retracing finding)\" when a retracing finding names that function, else empty",
	"  (it reads the findings of the rules evaluated before: built-in rules run in file-name order)",
	"session_runs, session_run_ns: TF1 Session steps (Session.run, partial_run, callables)",
	"trace_recorded_ns: tracing inside the capture windows (trace_ns without windows; shares are of it)",
	"share_base: what the shares are of: \"the run\", or with capture windows \"the recorded time\" (text)",
	NULL,
};

static size_t session_count(const struct model *m, void *data)
{
	(void)m;
	(void)data;
	return 1;
}

/* A library's retraces are not the user's avoidable tracing (model_trace_union_ns). */
static int64_t avoidable_ns(const struct model_function *f)
{
	return f->library ? 0 : f->retrace_ns;
}

static const struct model_function *top_tracer(const struct model *m)
{
	const struct model_function *best = NULL;

	/* The function whose avoidable tracing cost most, else whose tracing did. */
	for (size_t i = 0; i < m->nfunctions; i++) {
		const struct model_function *f = &m->functions[i];

		if (!best || avoidable_ns(f) > avoidable_ns(best) ||
		    (avoidable_ns(f) == avoidable_ns(best) && f->trace_ns > best->trace_ns))
			best = f;
	}
	return best;
}

/* Point from one finding to another only when that other exists. */
static const char *retracing_see_also(const struct model *m, const struct model_function *f)
{
	for (size_t i = 0; f && i < m->nfindings; i++)
		if (!strcmp(m->findings[i].rule, "retracing") && m->findings[i].function &&
		    !strcmp(m->findings[i].function, f->name))
			return " (see its retracing finding)";
	return "";
}

/* What the session's shares are of: the run, or with capture windows their time (traces are recorded outside too). */
static const char *share_base(const struct model *m)
{
	char d[DURATION_MAX];
	const struct model_session *s = &m->session;

	if (!s->capture)
		return "the run";
	if (s->trace_recorded_ns >= s->trace_ns)
		return "the recorded time";
	return model_strf((struct model *)m, "the recorded time, %s of the tracing outside it",
			  duration_format(d, sizeof(d), s->trace_ns - s->trace_recorded_ns));
}

/*
 * One standard error of retrace_share from the spread of the retraces'
 * times: n retraces whose times spread by sd sum to within sqrt(n) * sd.
 */
static double retrace_share_se(const struct model *m)
{
	double n = 0, sum = 0, sq = 0;

	for (size_t i = 0; i < m->nfunctions; i++)
		for (size_t k = 1; k < m->functions[i].ntraces; k++) {
			const struct model_trace *t = &m->functions[i].traces[k];
			double d = t->end_ns > t->start_ns ? (double)(t->end_ns - t->start_ns) : 0;

			if (t->why.followup)
				continue;
			n++;
			sum += d;
			sq += d * d;
		}
	if (n < 2 || m->session.active_ns <= 0)
		return 0;
	return sqrt(n * fmax(sq - sum * sum / n, 0) / (n - 1)) / (double)m->session.active_ns;
}

static int session_get(const struct model *m, void *data, size_t row, const char *field, struct metric_value *out)
{
	const struct model_session *s = &m->session;
	const struct model_eager_site *top = m->nsites ? &m->sites[0] : NULL;
	const struct model_function *tt = top_tracer(m);
	const char *top_sites = data;
	size_t retraces = 0;

	(void)row;
	for (size_t i = 0; i < m->nfunctions; i++)
		retraces += m->functions[i].retraces;
	NUM("wall_ns", s->wall_ns);
	NUM("active_ns", s->active_ns);
	NUM("eager_ops", s->eager_ops);
	NUM("eager_ns", s->eager_ns);
	NUM("eager_share", s->eager_share);
	NUM("trace_ns", s->trace_ns);
	NUM("trace_share", s->trace_share);
	NUM("retrace_ns", s->retrace_ns);
	NUM("retrace_share", s->retrace_share);
	NUM("retrace_share_se", retrace_share_se(m));
	NUM("traces", s->traces);
	NUM("retraces", retraces);
	NUM("function_calls", s->function_calls);
	NUM("function_call_ns", s->function_call_ns);
	NUM("blackbox_execs", s->blackbox_execs);
	NUM("blackbox_ns", s->blackbox_ns);
	NUM("input_waits", s->input_waits);
	NUM("input_ns", s->input_ns);
	NUM("blackbox_eager_ops", s->blackbox_eager_ops);
	NUM("blackbox_eager_ns", s->blackbox_eager_ns);
	NUM("functions", m->nfunctions);
	NUM("dropped_events", s->dropped_events);
	NUM("exit_status", s->exit_status);
	TEXT("tf_status", s->tf_status);
	TEXT("top_sites", top_sites);
	TEXT("top_site_file", top ? top->loc.file : NULL);
	NUM("top_site_line", top ? top->loc.line : 0);
	TEXT("top_site_func", top ? top->func : NULL);
	NUM("top_site_count", top ? top->count : 0);
	TEXT("top_trace_function", tt ? tt->name : NULL);
	TEXT("top_trace_file", tt ? model_function_user_loc(tt).file : NULL);
	NUM("top_trace_line", tt ? model_function_user_loc(tt).line : 0);
	NUM("top_trace_ns", tt ? tt->trace_ns : 0);
	NUM("top_retrace_ns", tt ? avoidable_ns(tt) : 0);
	TEXT("top_trace_see_also", retracing_see_also(m, tt));
	NUM("session_runs", s->session_runs);
	NUM("session_run_ns", s->session_run_ns);
	NUM("trace_recorded_ns", s->trace_recorded_ns);
	TEXT("share_base", share_base(m));
	return -1;
}

static void session_anchor(const struct model *m, void *data, size_t row, struct metric_anchor *a)
{
	(void)data;
	(void)row;
	a->start_ns = m->session.start_ns;
	a->end_ns = m->session.end_ns;
}

/* "train.py:12 (4000 ops, 35.2 ms); ..." for the five busiest lines. */
static const char *format_top_sites(struct model *m)
{
	return model_format_sites(m, m->sites, m->nsites);
}

int model_register_builtin_sources(struct model *m)
{
	const struct metric_source builtin[] = {
		{ "functions", function_fields, functions_count, functions_get, functions_anchor, NULL, NULL },
		{ "retraces", retrace_fields, retraces_count, retraces_get, retraces_anchor, NULL, NULL },
		{ "eager_sites", site_fields, sites_count, sites_get, sites_anchor, NULL, NULL },
		{ "eager_ops", op_fields, ops_count, ops_get, ops_anchor, NULL, NULL },
		{ "blackboxes", blackbox_fields, blackboxes_count, blackboxes_get, blackboxes_anchor, NULL, NULL },
		{ "threads", thread_fields, threads_count, threads_get, threads_anchor, NULL, NULL },
		{ "input", input_fields, input_count, input_get, input_anchor, input_rows_release,
		  input_rows_build(m) },
		{ "session", session_fields, session_count, session_get, session_anchor, NULL,
		  (void *)format_top_sites(m) },
	};

	for (size_t i = 0; i < sizeof(builtin) / sizeof(builtin[0]); i++)
		if (model_add_source(m, &builtin[i]))
			return -1;
	return 0;
}
