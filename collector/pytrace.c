/*
 * pytrace.c - what a trace is about: the Python function, its definition
 * site, the tf.function object, the cache key and concrete inputs, and the
 * user line that triggered it.  Runs pytrace.py (embedded) in the workload's
 * interpreter when a FuncGraph is created; rare, so it may allocate, take the
 * GIL and call Python.  Records go to the side file.
 */
#include "collector.h"
#include "checked.h"
#include "util.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct _object PyObject;
extern const char agp_pytrace_py[];

struct agp_open_trace {
	struct agp_open_trace *outer; /* the trace open below it on its thread's stack, or NULL */
	void *graph;
	const void *root;        /* its root frame (_maybe_define_function): compared, never dereferenced */
	long long cache_id;      /* id() of its function_cache, 0 when none */
	uint64_t start_ns;
	uint64_t start_cpu;      /* the thread's CPU time at start_ns */
	uint64_t seq;
	uint64_t own_ns;         /* the collector's CPU time before start_ns (describe()) */
	uint64_t own_at_start;   /* the thread's py_own_ns at start_ns */
	struct agp_watch_counts counts_at_start; /* the thread's py_counts at start_ns */
	int watched;             /* its thread's profile function was on from start_ns (pywatch.c) */
	int32_t variables;
	struct agp_side rec;     /* the trace record, completed at the end */
	struct agp_side *inputs; /* one record per input */
	size_t ninputs;
	char *ops;               /* "name\ttype\tfile\tline\tfunction\tloop line\n" per op made in graph (agp_pytrace_op) */
	size_t ops_len, ops_cap;
};

static struct {
	atomic_int ready;  /* agp_py_once()'s state */
	int (*GILState_Ensure)(void);
	void (*GILState_Release)(int);
	PyObject *(*Eval_GetFrame)(void);
	PyObject *(*Frame_GetBack)(PyObject *);
	PyObject *(*Dict_New)(void);
	int (*Dict_SetItemString)(PyObject *, const char *, PyObject *);
	PyObject *(*Dict_GetItemString)(PyObject *, const char *);
	PyObject *(*Eval_GetBuiltins)(void);
	PyObject *(*Run_String)(const char *, int, PyObject *, PyObject *);
	PyObject *(*CallFunctionObjArgs)(PyObject *, ...);
	long (*Tuple_Size)(PyObject *);
	PyObject *(*Tuple_GetItem)(PyObject *, long);
	const char *(*Unicode_AsUTF8)(PyObject *);
	long long (*Long_AsLongLong)(PyObject *);
	PyObject *(*Long_FromLongLong)(long long);
	PyObject *(*Unicode_FromStringAndSize)(const char *, long);
	PyObject *(*Tuple_Pack)(long, ...);
	void (*Err_Clear)(void);
	void (*IncRef)(PyObject *);
	void (*DecRef)(PyObject *);
	PyObject *None;
	PyObject *describe;
	PyObject *failed;        /* pytrace.py failed(): an unwatched trace raised */
	PyObject *prices;        /* pytrace.py measure_prices(): the ops an edit adds, timed (op_price.c) */
} P;

#define RESOLVE(field, sym) \
	(P.field = (__typeof__(P.field))dlsym(RTLD_DEFAULT, sym))

/* pytrace.py run into a fresh namespace, its describe() and failed() kept.  GIL held. */
static int pytrace_load(void)
{
	PyObject *ns, *res;

	ns = P.Dict_New();
	if (!ns)
		return 0;
	P.Dict_SetItemString(ns, "__builtins__", P.Eval_GetBuiltins());
	res = P.Run_String(agp_pytrace_py, 257 /* Py_file_input */, ns, ns);
	if (!res) {
		P.Err_Clear();
		return 0;
	}
	P.DecRef(res);
	P.describe = P.Dict_GetItemString(ns, "describe");  /* ns keeps it alive */
	P.failed = P.Dict_GetItemString(ns, "failed");
	P.prices = P.Dict_GetItemString(ns, "measure_prices");
	if (!P.describe)
		return 0;
	agp_pywatch_init(P.Dict_GetItemString, ns);
	return 1;
}

/*
 * Once per process (agp_py_once): the Python API, then pytrace.py.  It
 * takes the GIL itself: its caller (agp_pytrace_begin) may run without it.
 */
static int pytrace_setup(void)
{
	int gil, ok;

	if (!agp_py_available())
		return 0;
	if (!RESOLVE(GILState_Ensure, "PyGILState_Ensure") || !RESOLVE(GILState_Release, "PyGILState_Release") ||
	    !RESOLVE(Eval_GetFrame, "PyEval_GetFrame") || !RESOLVE(Frame_GetBack, "PyFrame_GetBack") ||
	    !RESOLVE(Dict_New, "PyDict_New") ||
	    !RESOLVE(Dict_SetItemString, "PyDict_SetItemString") ||
	    !RESOLVE(Dict_GetItemString, "PyDict_GetItemString") ||
	    !RESOLVE(Eval_GetBuiltins, "PyEval_GetBuiltins") || !RESOLVE(Run_String, "PyRun_String") ||
	    !RESOLVE(CallFunctionObjArgs, "PyObject_CallFunctionObjArgs") ||
	    !RESOLVE(Tuple_Size, "PyTuple_Size") || !RESOLVE(Tuple_GetItem, "PyTuple_GetItem") ||
	    !RESOLVE(Unicode_AsUTF8, "PyUnicode_AsUTF8") || !RESOLVE(Long_AsLongLong, "PyLong_AsLongLong") ||
	    !RESOLVE(Long_FromLongLong, "PyLong_FromLongLong") ||
	    !RESOLVE(Unicode_FromStringAndSize, "PyUnicode_FromStringAndSize") || !RESOLVE(Tuple_Pack, "PyTuple_Pack") ||
	    !RESOLVE(Err_Clear, "PyErr_Clear") || !RESOLVE(DecRef, "Py_DecRef") ||
	    !RESOLVE(IncRef, "Py_IncRef") || !(P.None = dlsym(RTLD_DEFAULT, "_Py_NoneStruct")))
		return 0;
	gil = P.GILState_Ensure();
	ok = pytrace_load();
	P.GILState_Release(gil);
	return ok;
}

static int pytrace_ready(void)
{
	return agp_py_once(&P.ready, pytrace_setup);
}

static const char *text_at(PyObject *tuple, long i)
{
	PyObject *o = P.Tuple_GetItem(tuple, i);
	const char *s;

	if (!o || o == P.None)
		return NULL;
	s = P.Unicode_AsUTF8(o);
	if (!s)
		P.Err_Clear();
	return s;
}

static long long int_at(PyObject *tuple, long i)
{
	PyObject *o = P.Tuple_GetItem(tuple, i);
	long long v;

	if (!o || o == P.None)
		return 0;
	v = P.Long_AsLongLong(o);
	if (v == -1)
		P.Err_Clear();
	return v;
}

static void collect_inputs(struct agp_open_trace *ot, PyObject *inputs)
{
	long n = P.Tuple_Size(inputs);

	if (n <= 0)
		return;
	ot->inputs = calloc((size_t)n, sizeof(*ot->inputs));
	if (!ot->inputs)
		return;
	for (long i = 0; i < n; i++) {
		PyObject *in = P.Tuple_GetItem(inputs, i);
		struct agp_side *s = &ot->inputs[ot->ninputs++];

		agp_side_begin(s, AGP_SIDE_TRACE_INPUT);
		agp_side_int(s, AGP_F_POSITION, i);
		agp_side_text(s, AGP_F_NAME, text_at(in, 0));
		agp_side_text(s, AGP_F_KIND, text_at(in, 1));
		agp_side_text(s, AGP_F_DTYPE, text_at(in, 2));
		agp_side_text(s, AGP_F_SHAPE, text_at(in, 3));
		agp_side_text(s, AGP_F_VALUE, text_at(in, 4));
	}
}

/* One more library frame out for AGP_F_LIB_OUTER ("file\tline\tfunc\n"); one that does not fit is left out. */
static void add_outer_frame(char *buf, size_t cap, size_t *len, const char *file, long line, const char *func)
{
	int n;

	if (!func || strpbrk(file, "\t\n") || strpbrk(func, "\t\n"))
		return;
	n = snprintf(buf + *len, cap - *len, "%s\t%ld\t%s\n", file, line, func);
	if (n > 0 && (size_t)n < cap - *len)
		*len += (size_t)n;
	else
		buf[*len] = '\0';
}

/*
 * The trace's call site: the first user frame (AGP_F_SITE_*) and, when
 * library code lies between it and TensorFlow, the innermost library frame
 * (AGP_F_LIB_*) and the library frames out from it (AGP_F_LIB_OUTER).
 * frames: (file, line, function) tuples, innermost first.
 */
static void add_site(struct agp_side *rec, PyObject *frames)
{
	long n = frames && frames != P.None ? P.Tuple_Size(frames) : 0;
	int nlib = 0;
	char outer[2048] = "";
	size_t olen = 0;

	if (n < 0) {
		P.Err_Clear();
		return;
	}
	for (long i = 0; i < n; i++) {
		PyObject *fr = P.Tuple_GetItem(frames, i);
		const char *file = fr ? text_at(fr, 0) : NULL;
		int kind = file ? agp_classify_path(file, strlen(file)) : AGP_FRAME_FRAMEWORK;

		if (kind == AGP_FRAME_USER) {
			agp_side_text(rec, AGP_F_SITE_FILE, file);
			agp_side_int(rec, AGP_F_SITE_LINE, int_at(fr, 1));
			agp_side_text(rec, AGP_F_SITE_FUNC, text_at(fr, 2));
			break;
		}
		if (kind != AGP_FRAME_LIBRARY || nlib++ >= AGP_SITE_CHAIN_MAX - 1)
			continue;
		if (nlib == 1) {
			agp_side_text(rec, AGP_F_LIB_FILE, file);
			agp_side_int(rec, AGP_F_LIB_LINE, int_at(fr, 1));
			agp_side_text(rec, AGP_F_LIB_FUNC, text_at(fr, 2));
		} else {
			add_outer_frame(outer, sizeof(outer), &olen, file, int_at(fr, 1), text_at(fr, 2));
		}
	}
	if (olen)
		agp_side_text(rec, AGP_F_LIB_OUTER, outer);
}

static void trace_end(struct agp_open_trace *ot, int32_t tid, const char *tf_name, const char *status);

/* Whether frame is the current frame or one of its callers.  GIL held. */
static int on_stack(PyObject *frame, const void *root)
{
	PyObject *f = frame, *back;
	int found = 0;

	if (f)
		P.IncRef(f);
	while (f && !found) {
		found = (const void *)f == root;
		back = P.Frame_GetBack(f);  /* a new reference, NULL at the bottom */
		P.DecRef(f);
		f = back;
	}
	if (f)
		P.DecRef(f);
	return found;
}

/*
 * A failed trace added nothing to its cache: pytrace.py failed() learns its
 * cache's id, so that the object's next trace keeps its serial (the watch's
 * end() tells it too).  Where a trace closes the GIL may not be held
 * (TF_GraphToFunction's wrapper releases it): the ids wait here, per
 * thread, for the thread's next agp_pytrace_begin.
 */
enum { FAILED_PENDING = 8 };
static __thread long long failed_pending[FAILED_PENDING] __attribute__((tls_model("initial-exec")));
static __thread int failed_npending __attribute__((tls_model("initial-exec")));

static void close_trace(struct agp_thread *t, struct agp_open_trace *ot, const char *tf_name, const char *status)
{
	int i = 0;

	if (ot->cache_id && !strcmp(status, "failed")) {
		while (i < failed_npending && failed_pending[i] != ot->cache_id)
			i++;
		if (i == failed_npending && i < FAILED_PENDING)
			failed_pending[failed_npending++] = ot->cache_id;
	}
	trace_end(ot, t->tid, tf_name, status);
}

/* Hand the pending failed caches to pytrace.py.  GIL held. */
static void tell_failed(void)
{
	for (int i = 0; i < failed_npending; i++) {
		PyObject *n = P.Long_FromLongLong(failed_pending[i]), *r = NULL;

		if (n && P.failed)
			r = P.CallFunctionObjArgs(P.failed, n, NULL);
		if (r)
			P.DecRef(r);
		else
			P.Err_Clear();
		if (n)
			P.DecRef(n);
	}
	failed_npending = 0;
}

/*
 * Close the open traces of t whose root frame is no longer on the stack:
 * an exception left them while no profile function watched the thread
 * (pywatch.c closes them as it happens).  Their end is not known any
 * better than now.  An open trace's root is still running, so its address
 * is no other frame's; a stale root whose address a new frame took only
 * keeps that trace open until a later check.  GIL held.
 */
static void close_unwound(struct agp_thread *t, PyObject *frame)
{
	while (t->trace_top && !on_stack(frame, t->trace_top->root)) {
		struct agp_open_trace *ot = t->trace_top;

		t->trace_top = ot->outer;
		close_trace(t, ot, NULL, "failed");
	}
}

/*
 * The process's first trace, at its start (no trace open on the thread):
 * time the ops an edit adds (pytrace.py measure_prices()) and send their
 * prices (op_price.c).  The thread holds in_hook (the TF_NewGraph hook), so
 * its hooks stand aside for those ops.  Their time is on py_own_ns, this
 * trace's collector time, as the watch's calibration is (pywatch.c): a run
 * without agprof does not pay it.  Tried again at a later trace when
 * TensorFlow runs no eager op here yet.  GIL held.
 */
static void prices_at_first_trace(struct agp_thread *t)
{
	uint64_t t0;
	PyObject *r;
	long n;

	if (!P.prices || t->trace_top || !agp_op_prices_due())
		return;
	t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	r = P.CallFunctionObjArgs(P.prices, NULL);
	if (!r) {
		P.Err_Clear();
		agp_op_prices_done();  /* it raised: not again */
	} else if (r != P.None) {
		n = P.Tuple_Size(r);
		for (long i = 0; i < n; i++) {
			PyObject *row = P.Tuple_GetItem(r, i);

			if (row && P.Tuple_Size(row) == 4)
				agp_op_price_send(t, text_at(row, 0), int_at(row, 1), int_at(row, 2), int_at(row, 3));
		}
		P.Err_Clear();
		agp_op_prices_done();
	}
	if (r)
		P.DecRef(r);
	t->py_own_ns += clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
}

/* Called from the TF_NewGraph hook before the graph exists; NULL if not a trace. */
struct agp_open_trace *agp_pytrace_begin(struct agp_thread *t)
{
	struct agp_open_trace *ot = NULL;
	PyObject *frame, *desc;
	uint64_t t0;
	int gil;

	if (!pytrace_ready())
		return NULL;
	t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	gil = P.GILState_Ensure();
	agp_py_discover_layout();
	frame = P.Eval_GetFrame();
	if (t && t->trace_top)
		close_unwound(t, frame);
	if (failed_npending)
		tell_failed();
	desc = frame ? P.CallFunctionObjArgs(P.describe, frame, NULL) : NULL;
	if (!desc) {
		P.Err_Clear();
	} else if (desc == P.None) {
		agp_pywatch_saves(frame);
	} else if (desc != P.None && P.Tuple_Size(desc) == 13 && (ot = calloc(1, sizeof(*ot)))) {
		ot->start_ns = agp_now_ns();
		ot->start_cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
		ot->own_ns = ot->start_cpu - t0;
		ot->own_at_start = t ? t->py_own_ns : 0;
		if (t)
			ot->counts_at_start = t->py_counts;
		if (t)
			prices_at_first_trace(t);
		ot->seq = atomic_fetch_add(&agp_proc.next_trace_seq, 1);
		ot->root = P.Tuple_GetItem(desc, 7);
		ot->cache_id = int_at(desc, 8);
		agp_side_begin(&ot->rec, AGP_SIDE_TRACE);
		agp_side_int(&ot->rec, AGP_F_TRACE_SEQ, (int64_t)ot->seq);
		agp_side_text(&ot->rec, AGP_F_NAME, text_at(desc, 0));
		agp_side_text(&ot->rec, AGP_F_FILE, text_at(desc, 1));
		agp_side_int(&ot->rec, AGP_F_LINE, int_at(desc, 2));
		agp_side_int(&ot->rec, AGP_F_OBJECT, int_at(desc, 3));
		agp_side_int(&ot->rec, AGP_F_OBJTRACE, int_at(desc, 4));
		agp_side_text(&ot->rec, AGP_F_SIGNATURE, text_at(desc, 5));
		add_site(&ot->rec, P.Tuple_GetItem(desc, 6));
		agp_side_int(&ot->rec, AGP_F_JIT, int_at(desc, 9));
		agp_side_int(&ot->rec, AGP_F_REDUCE, int_at(desc, 10));
		agp_side_int(&ot->rec, AGP_F_HAS_SIG, int_at(desc, 11));
		collect_inputs(ot, P.Tuple_GetItem(desc, 12));
		if (t)
			ot->watched = agp_pywatch_begin(t, ot->seq);
	}
	if (desc)
		P.DecRef(desc);
	P.GILState_Release(gil);
	return ot;
}

/* Put ot, whose FuncGraph is graph, on top of t's open traces. */
void agp_pytrace_open(struct agp_thread *t, struct agp_open_trace *ot, void *graph)
{
	ot->graph = graph;
	ot->outer = t->trace_top;
	t->trace_top = ot;
}

/*
 * The graph of an open trace became a function (or died unconverted):
 * close that trace with status, and as failed any trace still open above
 * it, which an exception left unseen.
 */
void agp_pytrace_close_graph(struct agp_thread *t, const void *graph, const char *tf_name, const char *status)
{
	struct agp_open_trace *ot;

	for (ot = t->trace_top; ot && ot->graph != graph; ot = ot->outer)
		;
	if (!ot)
		return;
	while (t->trace_top != ot) {
		struct agp_open_trace *above = t->trace_top;

		t->trace_top = above->outer;
		close_trace(t, above, NULL, "failed");
	}
	t->trace_top = ot->outer;
	close_trace(t, ot, tf_name, status);
}

/*
 * frame left by an exception while the profile function watched the
 * thread (pywatch.c): the open traces it is the root of failed, now.  (A
 * trace whose graph became a function was closed then.)  Nested traces of one function (a tf.function calling
 * itself while traced) each have their own root: an exception unwinding
 * them closes each at its own frame's exit, innermost first.
 */
void agp_pytrace_raised(struct agp_thread *t, const void *frame)
{
	while (t->trace_top && t->trace_top->root == frame) {
		struct agp_open_trace *ot = t->trace_top;

		t->trace_top = ot->outer;
		close_trace(t, ot, NULL, "failed");
	}
}

enum { OPS_MAX = 64 << 20 };  /* a graph's op lines past this are read by pytrace.py */

/*
 * An op named name, of type op_type, is being made in graph (TF_NewOperation,
 * the GIL not held): when it is the innermost watched trace's own graph,
 * keep the op's user line (pyframe.c agp_py_op_line) for pytrace.py's node
 * lines.
 */
void agp_pytrace_op(struct agp_thread *t, const void *graph, const char *op_type, const char *name)
{
	struct agp_open_trace *ot = t->trace_top;
	char loc[2048];
	size_t need, len, tlen;
	int n;

	if (!ot || !ot->watched || ot->graph != graph || !name || !op_type || strpbrk(name, "\t\n") ||
	    strpbrk(op_type, "\t\n") || (n = agp_py_op_line(t, loc, sizeof(loc))) < 0)
		return;
	if (!n)
		n = (int)strlen(strcpy(loc, "\t0\t\t0"));  /* no user frame: an empty file */
	len = strlen(name);
	tlen = strlen(op_type);
	need = ot->ops_len + len + tlen + (size_t)n + 3;
	if (need > OPS_MAX || grow_array((void **)&ot->ops, &ot->ops_cap, need, 1))
		return;  /* OPS_MAX a power of two: the capacity stays within it */
	memcpy(ot->ops + ot->ops_len, name, len);
	ot->ops[ot->ops_len + len] = '\t';
	memcpy(ot->ops + ot->ops_len + len + 1, op_type, tlen);
	ot->ops[ot->ops_len + len + 1 + tlen] = '\t';
	memcpy(ot->ops + ot->ops_len + len + tlen + 2, loc, (size_t)n);
	ot->ops[need - 1] = '\n';
	ot->ops_len = need;
}

/*
 * (graph, seq, op lines) for pytrace.py on_event() when a FuncGraph is made
 * (pywatch.c): the op lines of the innermost open trace, whose number tells
 * pytrace.py whether the graph is that trace's; a new reference or NULL.
 */
PyObject *agp_pytrace_graph_arg(struct agp_thread *t, PyObject *graph)
{
	struct agp_open_trace *ot = t->trace_top;
	PyObject *seq, *text, *r = NULL;

	if (!ot || !ot->ops_len)  /* an open trace: pytrace.py and P are ready */
		return NULL;
	seq = P.Long_FromLongLong((long long)ot->seq);
	text = P.Unicode_FromStringAndSize(ot->ops, (long)ot->ops_len);
	if (seq && text)
		r = P.Tuple_Pack(3, graph, seq, text);
	if (!r)
		P.Err_Clear();
	if (seq)
		P.DecRef(seq);
	if (text)
		P.DecRef(text);
	return r;
}

uint64_t agp_pytrace_seq(const struct agp_open_trace *ot)
{
	return ot->seq;
}

void agp_pytrace_count_variable(struct agp_open_trace *ot)
{
	ot->variables++;
}

/*
 * AGPROF_WATCH_PRICE=1 (bench/watch_price.py): the parts of the trace's
 * collector time and what the watch did in it, on stderr.
 */
static void price_report(const struct agp_open_trace *ot, const struct agp_thread *t, uint64_t cpu, uint64_t calls,
			 uint64_t slowdown)
{
	static int on = -1;
	const struct agp_watch_counts *now = &t->py_counts, *then = &ot->counts_at_start;

	if (on < 0)
		on = getenv("AGPROF_WATCH_PRICE") != NULL;
	if (on)
		fprintf(stderr, "agprof: watch-price seq %llu watched %d cpu %llu calls %llu slowdown %llu frames %llu"
			" events %llu toggles %llu op_frames %llu ppm %u\n", (unsigned long long)ot->seq, ot->watched,
			(unsigned long long)cpu, (unsigned long long)calls, (unsigned long long)slowdown,
			(unsigned long long)(now->frames - then->frames), (unsigned long long)(now->events - then->events),
			(unsigned long long)(now->toggles - then->toggles),
			(unsigned long long)(now->op_frames - then->op_frames), agp_pywatch_cost_ppm(t));
}

/*
 * Write the trace (and its inputs) and free it.  Its collector time: the
 * describing before its start, what the watch (pywatch.c) spent in Python
 * since, and the slowdown its hooks put on the traced code, at the share
 * of the rest of the trace's time agp_pywatch_cost_ppm() gives.  A run
 * without agprof does not pay it: the analyzer takes it off the trace's
 * step when it prices a retrace (docs/collector.md).  All three in the
 * thread's CPU time, then stretched as the trace's wall stretched its CPU
 * time: on a loaded machine the wall of the watch's calls was anything
 * from their CPU time to many times it (docs/collector.md).
 */
static void trace_end(struct agp_open_trace *ot, int32_t tid, const char *tf_name, const char *status)
{
	struct agp_thread *t = agp_thread_get();
	uint64_t end = agp_now_ns(), span = end - ot->start_ns, calls = 0, slowdown = 0;
	uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID) - ot->start_cpu;

	if (t && t->py_own_ns >= ot->own_at_start)
		calls = t->py_own_ns - ot->own_at_start;
	if (ot->watched && t && cpu > calls)
		slowdown = (cpu - calls) / 1000 * agp_pywatch_cost_ppm(t) / 1000;
	ot->own_ns += calls + slowdown;
	if (t)
		price_report(ot, t, cpu, calls, slowdown);
	if (cpu && span > cpu)
		ot->own_ns = (uint64_t)((double)ot->own_ns * (double)span / (double)cpu);
	agp_side_int(&ot->rec, AGP_F_COLLECTOR_NS, (int64_t)ot->own_ns);
	agp_side_int(&ot->rec, AGP_F_TID, tid);
	agp_side_int(&ot->rec, AGP_F_START, (int64_t)ot->start_ns);
	agp_side_int(&ot->rec, AGP_F_END, (int64_t)end);
	agp_side_int(&ot->rec, AGP_F_VARS, ot->variables);
	agp_side_text(&ot->rec, AGP_F_TFNAME, tf_name);
	agp_side_text(&ot->rec, AGP_F_STATUS, status);
	agp_side_end(&ot->rec);
	for (size_t i = 0; i < ot->ninputs; i++) {
		agp_side_int(&ot->inputs[i], AGP_F_TRACE_SEQ, (int64_t)ot->seq);
		agp_side_end(&ot->inputs[i]);
	}
	free(ot->inputs);
	free(ot->ops);
	free(ot);
}
