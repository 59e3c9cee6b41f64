/*
 * pywatch.c - Python side effects and trace failures seen while a trace
 * runs (docs/collector.md, "Pitfalls inside traced code").
 *
 * When a trace starts (agp_pytrace_begin), the tracing thread gets a C-level
 * profile function (PyEval_SetProfile, per thread), and a trace function
 * (PyEval_SetTrace) while an exception unwinds.  They compare each event with a handful of pointers (builtins.print,
 * time and random functions, list.append, TensorFlow's func_graph_from_py_func
 * and AutoGraph's _fall_back_unconverted) and only call into Python
 * (pytrace.py on_event) on a match.  When the trace's root frame
 * (_maybe_define_function) returns, its events are written as side records
 * (AGP_SIDE_TRACE_EVENT) and the hooks are removed: outside traces nothing
 * of this runs.  A thread that already has a profile or trace function (a
 * debugger, coverage, cProfile) is left alone: its traces are not watched.
 * On CPython 3.12 and 3.13, pymonitor.c gets the same events from
 * sys.monitoring in the user's frames, and hands them to the functions here.
 *
 * Everything here runs with the GIL held, inside a trace: it may allocate
 * and call Python.
 */
#include "collector.h"
#include "pymonitor.h"
#include "util.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef struct _object PyObject;
typedef int (*py_tracefunc)(PyObject *, PyObject *, int, PyObject *);

/*
 * How much the watch slows a trace beyond its own calls (which are timed):
 * CPython running every frame through the frame hook, or sys.monitoring's
 * callbacks, and the profile function in the user's frames.  A share of the
 * trace's CPU less those calls, measured by bench/watch_price.py (traces
 * of one process watched and not, alternately; docs/collector.md, "Its own
 * time"): on a Python loop, a Keras model, an
 * AutoGraph loop and a GPflow loss, 0.1% to 4.3% on 3.10, 1.9% to 5.4% on
 * 3.11 (its ops' lines read in C, AutoGraph's frames too), -0.9% to 2.6% on
 * 3.12 and 3.13: the spread is mostly the measure's.  3.11's is set between
 * those and what the real Keras and GPflow workloads' recorded tracing
 * fits (bench/real_overhead.py).  Calibrating it in each process on
 * one small trace gave 2.4% to 9% from one process to the next on 3.11, and
 * 4.6% to 12.5% on 3.12 (where it also priced sys.monitoring's set-up,
 * which a trace's calls already hold).
 */
enum { FRAME_HOOK_PPM_310 = 22000, FRAME_HOOK_PPM_311 = 38000, MONITOR_PPM = 16000 };

enum { PYTRACE_CALL = 0, PYTRACE_EXCEPTION = 1, PYTRACE_RETURN = 3, PYTRACE_C_CALL = 4, PYTRACE_C_RETURN = 6 };
enum { MAX_CFUNCS = 32, MAX_CODES = 16 };

static struct {
	int state;  /* 0 usable, -1 not (turned off, or a part missing) */
	atomic_int ready;  /* agp_py_once()'s state of watch_setup() */
	void (*SetProfile)(py_tracefunc, PyObject *);
	void (*SetTrace)(py_tracefunc, PyObject *);
	PyObject *(*Frame_GetCode)(PyObject *);
	PyObject *(*Call)(PyObject *, ...);
	PyObject *(*Long_FromULL)(unsigned long long);
	long (*Tuple_Size)(PyObject *);
	PyObject *(*Tuple_GetItem)(PyObject *, long);
	const char *(*Unicode_AsUTF8)(PyObject *);
	long long (*Long_AsLongLong)(PyObject *);
	void (*Err_Clear)(void);
	void (*IncRef)(PyObject *);
	void (*DecRef)(PyObject *);
	PyObject *None, *True, *False;
	PyObject *on_event, *watch, *end, *setup, *hooks_free, *saves; /* pytrace.py, kept alive by its namespace */
	PyObject *calibrate;        /* pytrace.py; NULL: the watch's cost not priced */
	int none_unwinds;           /* 3.12: an exception's return event comes with None (unwinding()) */
	int (*Frame_GetLasti)(PyObject *);
	PyObject *(*Code_GetCode)(PyObject *);
	char *(*Bytes_AsString)(PyObject *);
	long (*Bytes_Size)(PyObject *);
	int calibrated;
	uint32_t cost_ppm;          /* share of a watched stretch's time the profile function costs, ppm (calibrate()) */
	int monitor;                /* sys.monitoring can watch (3.12, 3.13: pymonitor.c) */
	uint32_t hook_ppm;          /* the frame hook's share (FRAME_HOOK_PPM_*), 0: no frame hook */
	PyObject *watched;          /* setup()'s tuple, kept alive */
	PyObject *fgraph_code;      /* func_graph_from_py_func.__code__ */
	PyObject *cfuncs[MAX_CFUNCS];
	int ncfuncs;
	PyObject *codes[MAX_CODES];
	int ncodes;
	void *cfunc_type;           /* builtin_function_or_method */
	void *append_ml;            /* list.append's PyMethodDef */
	/* the frame hook (CPython 3.10 and 3.11; eval NULL elsewhere: the profile function stays on) */
	PyObject *(*eval)(void *, void *, int);  /* _PyEval_EvalFrameDefault */
	void *(*Interp_Get)(void);
	void *(*GetEvalFrame)(void *);
	void (*SetEvalFrame)(void *, void *);
	long (*RequestExtra)(void *);
	int (*GetExtra)(PyObject *, long, void **);
	int (*SetExtra)(PyObject *, long, void *);
	PyObject *(*GetAttr)(PyObject *, const char *);
	long extra;                 /* our co_extra slot: a code object's verdict (enum verdict), -1 none */
	int func_slot;              /* the function in the frame the eval function gets (3.11: f_func), -1 none */
	PyObject *origin;           /* pytrace.py generated_origin */
	PyObject *exec_origin;      /* pytrace.py exec_origin */
	int hooked;                 /* threads whose open traces want the frame hook */
} W;

/*
 * What the frame hook does with the profile function while a code object's
 * frame runs: on (the user's code, AutoGraph's generated code, the watched
 * functions and the traces' root), off (libraries, TensorFlow), or as its
 * caller had it (AutoGraph's converted_call and builtins: the user's when the
 * user's converted code calls them).
 */
enum verdict { V_UNKNOWN = 0, V_OFF, V_ON, V_INHERIT };
/* The code object in the frame the eval function gets: PyFrameObject's f_code (3.10), _PyInterpreterFrame's (3.11). */
enum { FRAME_CODE_SLOT = 4 };

#define RESOLVE(field, sym) (W.field = (__typeof__(W.field))dlsym(RTLD_DEFAULT, sym))

/*
 * The frame hook's functions, on the CPython versions whose frame layout it
 * knows (3.10, 3.11) and whose profile function is per thread and cheap to
 * set; AGPROF_TRACE_WATCH=profile keeps the profile function on throughout.
 */
static void frame_hook_init(const char *opt)
{
	const char *v = agp_py_version();

	W.extra = -1;
	W.func_slot = v && !strncmp(v, "3.11.", 5) ? 0 : -1;
	if ((opt && !strcmp(opt, "profile")) || !v || (strncmp(v, "3.10.", 5) && strncmp(v, "3.11.", 5)))
		return;
	if (!RESOLVE(Interp_Get, "PyInterpreterState_Get") ||
	    !RESOLVE(GetEvalFrame, "_PyInterpreterState_GetEvalFrameFunc") ||
	    !RESOLVE(SetEvalFrame, "_PyInterpreterState_SetEvalFrameFunc") ||
	    !RESOLVE(RequestExtra, "_PyEval_RequestCodeExtraIndex") || !RESOLVE(GetExtra, "_PyCode_GetExtra") ||
	    !RESOLVE(SetExtra, "_PyCode_SetExtra") || !RESOLVE(GetAttr, "PyObject_GetAttrString"))
		return;
	if (RESOLVE(eval, "_PyEval_EvalFrameDefault"))
		W.hook_ppm = W.func_slot == 0 ? FRAME_HOOK_PPM_311 : FRAME_HOOK_PPM_310;
}

/* Borrow the functions pytrace.py defines; called once its namespace exists. */
void agp_pywatch_init(PyObject *(*get)(PyObject *, const char *), PyObject *ns)
{
	const char *opt = getenv("AGPROF_TRACE_WATCH");

	W.state = -1;
	if (opt && !strcmp(opt, "0"))
		return;  /* the user turned it off: traces are recorded, not watched */
	if (!RESOLVE(SetProfile, "PyEval_SetProfile") || !RESOLVE(SetTrace, "PyEval_SetTrace") ||
	    !RESOLVE(Frame_GetCode, "PyFrame_GetCode") || !RESOLVE(Call, "PyObject_CallFunctionObjArgs") ||
	    !RESOLVE(Long_FromULL, "PyLong_FromUnsignedLongLong") || !RESOLVE(Tuple_Size, "PyTuple_Size") ||
	    !RESOLVE(Tuple_GetItem, "PyTuple_GetItem") || !RESOLVE(Unicode_AsUTF8, "PyUnicode_AsUTF8") ||
	    !RESOLVE(Long_AsLongLong, "PyLong_AsLongLong") || !RESOLVE(Err_Clear, "PyErr_Clear") ||
	    !RESOLVE(IncRef, "Py_IncRef") || !RESOLVE(DecRef, "Py_DecRef") ||
	    !(W.None = dlsym(RTLD_DEFAULT, "_Py_NoneStruct")) || !(W.True = dlsym(RTLD_DEFAULT, "_Py_TrueStruct")) ||
	    !(W.False = dlsym(RTLD_DEFAULT, "_Py_FalseStruct")))
		return;
	W.on_event = get(ns, "on_event");
	W.watch = get(ns, "watch");
	W.end = get(ns, "end");
	W.setup = get(ns, "setup");
	W.hooks_free = get(ns, "hooks_free");
	W.saves = get(ns, "saves");
	W.calibrate = get(ns, "calibrate");
	W.origin = get(ns, "generated_origin");
	W.exec_origin = get(ns, "exec_origin");
	W.none_unwinds = agp_py_version() && !strncmp(agp_py_version(), "3.12.", 5) &&
			 RESOLVE(Frame_GetLasti, "PyFrame_GetLasti") && RESOLVE(Code_GetCode, "PyCode_GetCode") &&
			 RESOLVE(Bytes_AsString, "PyBytes_AsString") && RESOLVE(Bytes_Size, "PyBytes_Size");
	if (W.on_event && W.watch && W.end && W.setup && W.hooks_free && W.saves)
		W.state = 0;
	frame_hook_init(getenv("AGPROF_TRACE_WATCH"));
	/* 3.12, 3.13: sys.monitoring instead (pymonitor.c); their interpreter frames have f_funcobj third */
	if (W.state == 0 && agp_pymonitor_init(opt) && RESOLVE(GetAttr, "PyObject_GetAttrString")) {
		W.func_slot = 2;
		W.monitor = 1;
	}
}

/* Python objects are a refcount then a type pointer (CPython's PyObject). */
static void *type_of(PyObject *o)
{
	return ((void **)o)[1];
}

static void verdict_set(PyObject *code, enum verdict v)
{
	if (W.eval && code && W.SetExtra(code, W.extra, (void *)(uintptr_t)v) < 0)
		W.Err_Clear();
}

/* Fill the watched pointers from setup(); TensorFlow is imported by now. */
static int watch_setup(void)
{
	PyObject *w, *cf, *codes, *append;

	w = W.Call(W.setup, NULL);
	if (!w) {
		W.Err_Clear();
		return 0;
	}
	if (w == W.None || W.Tuple_Size(w) != 4) {
		W.DecRef(w);
		return 0;
	}
	W.watched = w;
	W.fgraph_code = W.Tuple_GetItem(w, 0);
	cf = W.Tuple_GetItem(w, 1);
	codes = W.Tuple_GetItem(w, 2);
	append = W.Tuple_GetItem(w, 3);
	for (long i = 0, n = W.Tuple_Size(cf); i < n && W.ncfuncs < MAX_CFUNCS; i++)
		W.cfuncs[W.ncfuncs++] = W.Tuple_GetItem(cf, i);
	for (long i = 0, n = W.Tuple_Size(codes); i < n && W.ncodes < MAX_CODES; i++)
		W.codes[W.ncodes++] = W.Tuple_GetItem(codes, i);
	/* A builtin method: PyObject header, then m_ml (its PyMethodDef). */
	W.cfunc_type = type_of(append);
	W.append_ml = ((void **)append)[2];
	if (W.eval && (W.extra = W.RequestExtra(NULL)) < 0)
		W.eval = NULL;
	verdict_set(W.fgraph_code, V_ON);
	for (int i = 0; i < W.ncodes; i++)
		verdict_set(W.codes[i], V_ON);
	return 1;
}

static int watch_ready(void)
{
	return W.state == 0 && agp_py_once(&W.ready, watch_setup);
}

/*
 * The thread's CPU time: the watch's calls into Python are priced in CPU,
 * which a loaded machine does not stretch as it does their wall time
 * (pytrace.c trace_end puts the sum on the trace's wall).  A system call
 * here (0.44 us), per watch event and trace, never per op.
 */
static uint64_t own_clock(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

/* Add the CPU time since t0 to t's collector time in traces (the trace records carry it, pytrace.c). */
static void own_time(struct agp_thread *t, uint64_t t0)
{
	t->py_own_ns += own_clock() - t0;
}

static void call_event(struct agp_thread *t, int what, PyObject *frame, PyObject *arg)
{
	uint64_t t0;
	PyObject *n, *r;

	if (t->py_calibrating)
		return;  /* the calibration loop calls nothing watched; never into Python then */
	t0 = own_clock();
	n = W.Long_FromULL((unsigned long long)what);
	if (!n) {
		W.Err_Clear();
		return;
	}
	t->py_inside++;
	r = W.Call(W.on_event, n, frame, arg ? arg : W.None, NULL);
	t->py_inside--;
	if (r)
		W.DecRef(r);
	else
		W.Err_Clear();
	W.DecRef(n);
	own_time(t, t0);
}

/* 1: a watched Python function's code, 2: func_graph_from_py_func's */
int agp_pywatch_code(PyObject *code)
{
	int hit = code == W.fgraph_code ? 2 : 0;

	for (int i = 0; !hit && i < W.ncodes; i++)
		hit = W.codes[i] == code;
	return hit;
}

static int watched_code(PyObject *frame)
{
	PyObject *code = W.Frame_GetCode(frame);
	int hit;

	if (!code)
		return 0;
	hit = agp_pywatch_code(code);
	W.DecRef(code);
	return hit;
}

static void write_events(PyObject *events);
static void hooks_set(int on);

static int ends_with(const char *s, size_t n, const char *tail)
{
	size_t m = strlen(tail);

	return n >= m && !memcmp(s + n - m, tail, m);
}

static enum verdict user_or_not(const char *s, size_t n)
{
	return agp_classify_path(s, n) == AGP_FRAME_USER ? V_ON : V_OFF;
}

/*
 * The verdict of code whose file is no source (AutoGraph's generated files,
 * "<string>") from the function the frame runs (3.11's _PyInterpreterFrame
 * f_func, 3.12's f_funcobj): origin (pytrace.py) names the file it stands
 * for, or None: then it follows its caller (a namedtuple's __new__,
 * AutoGraph's factories); on where the function cannot be read (3.10's
 * frames name none).
 */
static enum verdict origin_verdict(struct agp_thread *t, void *frame, PyObject *origin)
{
	PyObject *fn = W.func_slot >= 0 ? ((PyObject **)frame)[W.func_slot] : NULL, *file;
	const char *s;
	enum verdict v = V_INHERIT;

	if (!fn || !origin)
		return V_ON;
	if (t)
		t->py_inside++;
	file = W.Call(origin, fn, NULL);
	if (t)
		t->py_inside--;
	if (!file) {
		W.Err_Clear();
		return V_ON;
	}
	if (file != W.None && (s = W.Unicode_AsUTF8(file)))
		v = user_or_not(s, strlen(s));
	else if (file != W.None)
		W.Err_Clear();
	W.DecRef(file);
	return v;
}

/* A code object's verdict from its file, the first time the frame hook sees it. */
static enum verdict verdict_new(struct agp_thread *t, PyObject *code, void *frame)
{
	PyObject *file = W.GetAttr(code, "co_filename");
	const char *s = file ? W.Unicode_AsUTF8(file) : NULL;
	enum verdict v = V_ON;  /* unreadable: watched, as without the hook */
	size_t n;

	if (s) {
		n = strlen(s);
		if (ends_with(s, n, "/tensorflow/python/autograph/impl/api.py") ||
		    ends_with(s, n, "/tensorflow/python/autograph/operators/py_builtins.py"))
			v = V_INHERIT;  /* pytrace.py _AG_CALLERS */
		else if (strstr(s, "/__autograph_generated_file"))
			v = origin_verdict(t, frame, W.origin);  /* user code converted: on; a library's: off */
		else if (!strcmp(s, "<string>"))
			v = origin_verdict(t, frame, W.exec_origin);
		else
			v = user_or_not(s, n);
	} else {
		W.Err_Clear();
	}
	if (file)
		W.DecRef(file);
	return v;
}

/*
 * Whether the profile function should run in the frame; cached in its code
 * object (co_extra).  A frame that starts by having an exception thrown in
 * (a generator's throw()) has it pending: nothing may call Python then, and
 * an unknown code is watched.
 */
static enum verdict verdict_of(struct agp_thread *t, void *frame, int throwflag)
{
	PyObject *code = ((PyObject **)frame)[FRAME_CODE_SLOT];
	void *v = NULL;

	if (W.GetExtra(code, W.extra, &v) < 0) {
		W.Err_Clear();  /* only on a bad index, never with an exception pending: it checks before it fails */
		return V_ON;
	}
	if (!v && throwflag)
		return V_ON;
	if (!v) {
		v = (void *)(uintptr_t)verdict_new(t, code, frame);
		verdict_set(code, (enum verdict)(uintptr_t)v);
	}
	return (enum verdict)(uintptr_t)v;
}

/* The root frame of the innermost watched trace returned. */
static void root_end(struct agp_thread *t, PyObject *frame, int failed)
{
	uint64_t t0 = own_clock();
	PyObject *r;

	t->py_inside++;
	r = W.Call(W.end, frame, failed ? W.True : W.False, NULL);
	t->py_inside--;
	if (r) {
		write_events(r);
		W.DecRef(r);
	} else {
		W.Err_Clear();
	}
	W.DecRef(t->py_roots[--t->py_nroots]);
	if (!t->py_nroots)
		hooks_set(0);
	own_time(t, t0);
}

static int on_trace(PyObject *obj, PyObject *frame, int what, PyObject *arg);

enum { OP312_RETURN_VALUE = 83, OP312_RETURN_CONST = 121 };

/*
 * Whether a frame whose return event came with arg is left by an exception.
 * That is arg NULL, except on CPython 3.12.0 and 3.12.1, which give None
 * (CPython gh-110892): there, a frame that returns stands on a return
 * instruction (co_code: neither specialized nor instrumented), one that
 * unwinds on the instruction that raised.  Only None returns pay for it.
 */
static int unwinding(PyObject *frame, PyObject *arg)
{
	PyObject *code, *bytes;
	int lasti, op = -1;

	if (!arg)
		return 1;
	if (arg != W.None || !W.none_unwinds || !(code = W.Frame_GetCode(frame)))
		return 0;
	lasti = W.Frame_GetLasti(frame);
	if ((bytes = W.Code_GetCode(code))) {
		const char *s = W.Bytes_AsString(bytes);

		if (s && lasti >= 0 && lasti < W.Bytes_Size(bytes))
			op = (unsigned char)s[lasti];
		W.DecRef(bytes);
	}
	if (op < 0)
		W.Err_Clear();
	W.DecRef(code);
	return op >= 0 && op != OP312_RETURN_VALUE && op != OP312_RETURN_CONST;
}

static int on_profile(PyObject *obj, PyObject *frame, int what, PyObject *arg)
{
	struct agp_thread *t = agp_thread_get();
	int unwound;

	(void)obj;
	/* calibrating: every filter below runs as in a trace (its cost is the event's), nothing matches */
	if (!t || (!t->py_nroots && !t->py_calibrating)) {
		W.SetProfile(NULL, NULL);
		if (t)
			t->py_profiling = 0;
		return 0;
	}
	t->py_counts.events++;
	switch (what) {
	case PYTRACE_CALL:
		if (watched_code(frame) == 1)
			call_event(t, PYTRACE_CALL, frame, NULL);
		break;
	case PYTRACE_RETURN:
		unwound = unwinding(frame, arg);
		if (unwound && t->trace_top)
			agp_pytrace_raised(t, frame);  /* before root_end: the trace ends as the exception leaves it */
		if (t->py_nroots && frame == t->py_roots[t->py_nroots - 1]) {
			root_end(t, frame, unwound);
			break;
		}
		/*
		 * The trace function (which makes CPython compute line numbers
		 * on every instruction) only while an exception unwinds: from
		 * a frame leaving by an exception to the next normal return.
		 */
		if (unwound != t->py_unwinding) {
			t->py_unwinding = unwound;
			W.SetTrace(unwound ? on_trace : NULL, NULL);
		}
		if (!unwound && watched_code(frame) == 2) {
			/* the graph, with the op lines read as its ops were made (pytrace.c) */
			PyObject *ops = arg ? agp_pytrace_graph_arg(t, arg) : NULL;

			call_event(t, PYTRACE_RETURN, frame, ops ? ops : arg);
			if (ops)
				W.DecRef(ops);
		}
		break;
	case PYTRACE_C_CALL:
		for (int i = 0; i < W.ncfuncs; i++)
			if (arg == W.cfuncs[i]) {
				call_event(t, PYTRACE_C_CALL, frame, arg);
				break;
			}
		break;
	case PYTRACE_C_RETURN:
		/* list.append: the appended value is the list's last item now. */
		if (arg && type_of(arg) == W.cfunc_type && ((void **)arg)[2] == W.append_ml && ((void **)arg)[3])
			call_event(t, PYTRACE_C_RETURN, frame, ((PyObject **)arg)[3]);
		break;
	}
	return 0;
}

/* Only exceptions reaching the root frame: the trace is failing. */
static int on_trace(PyObject *obj, PyObject *frame, int what, PyObject *arg)
{
	struct agp_thread *t;

	(void)obj;
	if (what != PYTRACE_EXCEPTION)
		return 0;
	t = agp_thread_get();
	if (t && t->py_nroots && frame == t->py_roots[t->py_nroots - 1])
		call_event(t, PYTRACE_EXCEPTION, frame, arg);
	return 0;
}

static void profile_set(struct agp_thread *t, int on)
{
	t->py_counts.toggles++;
	W.SetProfile(on ? on_profile : NULL, NULL);
	t->py_profiling = on;
}

/* The trace function from a frame left by an exception to the next normal return. */
static void unwinding_set(struct agp_thread *t, int on)
{
	t->py_unwinding = on;
	W.SetTrace(on ? on_trace : NULL, NULL);
}

/*
 * The PEP 523 frame evaluator while traces are open: every Python frame
 * starts here.  On the threads with open traces it sets the profile
 * function for the frame as the code's verdict says, runs the frame with
 * CPython's own evaluator and puts the caller's setting back.  Where no
 * profile or trace function is set CPython runs its fast path: TensorFlow's
 * tracing code, most of a trace, is not slowed (docs/collector.md).  A
 * frame left by an exception sets the trace function as on_profile() does
 * for the frames it sees, so that the root frame still sees the exception.
 */
static PyObject *eval_hook(void *ts, void *frame, int throwflag)
{
	struct agp_thread *t = agp_tls;  /* not agp_thread_get(): a thread without one has no traces open */
	PyObject *r;
	int prev, want;

	if (!t || t->generation != agp_proc.generation || t->py_inside || (!t->py_nroots && !t->py_calibrating))
		return W.eval(ts, frame, throwflag);
	t->py_counts.frames++;
	prev = t->py_profiling;
	want = verdict_of(t, frame, throwflag);
	want = want == V_INHERIT ? prev : want == V_ON;
	if (want != prev)
		profile_set(t, want);
	r = W.eval(ts, frame, throwflag);
	if (!t->py_nroots && !t->py_calibrating)
		return r;  /* the last root returned inside: hooks_set(0) put everything back */
	if (t->py_profiling != prev)
		profile_set(t, prev);
	if ((r == NULL) != t->py_unwinding && t->py_nroots)
		unwinding_set(t, !r);
	return r;
}

/* Install the frame hook for one more thread with open traces (on), or one fewer; whether it is installed now. */
static int frame_hook(int on)
{
	void *interp;

	if (!W.eval || !(interp = W.Interp_Get()))
		return 0;
	if (on && W.hooked++ == 0 && W.GetEvalFrame(interp) == (void *)W.eval)
		W.SetEvalFrame(interp, (void *)eval_hook);  /* not over another evaluator (a debugger's, a JIT's) */
	if (!on && W.hooked > 0 && --W.hooked == 0 && W.GetEvalFrame(interp) == (void *)eval_hook)
		W.SetEvalFrame(interp, (void *)W.eval);
	return W.GetEvalFrame(interp) == (void *)eval_hook;
}

/* The hooks while traces are open: the frame hook, the profile function; the trace function only ever set by them. */
static void hooks_set(int on)
{
	struct agp_thread *t = agp_thread_get();
	int hooked;

	if (agp_pymonitor_set(t, on)) {
		if (on && t)
			t->py_watch_mode = AGP_WATCH_MONITOR;
		return;  /* sys.monitoring in the user's frames (3.12, 3.13) */
	}
	W.SetProfile(on ? on_profile : NULL, NULL);
	if (!on && (!t || t->py_unwinding))
		W.SetTrace(NULL, NULL);
	if (t) {
		t->py_unwinding = 0;
		t->py_profiling = on;
	}
	hooked = frame_hook(on);
	if (on && t)
		t->py_watch_mode = hooked ? AGP_WATCH_FRAME_HOOK : AGP_WATCH_PROFILE;
}

static const char *text_at(PyObject *tuple, long i)
{
	PyObject *o = W.Tuple_GetItem(tuple, i);
	const char *s;

	if (!o || o == W.None)
		return NULL;
	s = W.Unicode_AsUTF8(o);
	if (!s)
		W.Err_Clear();
	return s;
}

static long long int_at(PyObject *tuple, long i)
{
	PyObject *o = W.Tuple_GetItem(tuple, i);
	long long v;

	if (!o || o == W.None)
		return 0;
	v = W.Long_AsLongLong(o);
	if (v == -1)
		W.Err_Clear();
	return v;
}

/*
 * (seq, kind, name, file, line, count, detail, repeats, loop line,
 * function, function file, function line) tuples from pytrace.py end().
 * A side effect outside the user's code (a library printing while traced)
 * is not the user's: only node-creating lines keep library files.
 */
static void write_events(PyObject *events)
{
	long n = W.Tuple_Size(events);

	for (long i = 0; i < n; i++) {
		PyObject *ev = W.Tuple_GetItem(events, i);
		const char *kind, *file;
		struct agp_side s;

		if (!ev || W.Tuple_Size(ev) != 12) {
			W.Err_Clear();
			continue;
		}
		kind = text_at(ev, 1);
		file = text_at(ev, 3);
		if (!kind)
			continue;
		if (!strcmp(kind, "node-sources")) {
			/* each node's creation line, for the kernels of the graph (hooks_kernel.c) */
			agp_side_begin(&s, AGP_SIDE_KERNELS);
			agp_side_int(&s, AGP_F_TRACE_SEQ, int_at(ev, 0));
			agp_side_text(&s, AGP_F_NODE_LINES, text_at(ev, 6));
			agp_side_end(&s);
			continue;
		}
		if (strcmp(kind, "node-line") && strcmp(kind, "nodes") && strcmp(kind, "exception") &&
		    strcmp(kind, "autograph-fallback") && (!file || agp_classify_path(file, strlen(file)) != AGP_FRAME_USER))
			continue;
		agp_side_begin(&s, AGP_SIDE_TRACE_EVENT);
		agp_side_int(&s, AGP_F_TRACE_SEQ, int_at(ev, 0));
		agp_side_text(&s, AGP_F_KIND, kind);
		agp_side_text(&s, AGP_F_NAME, text_at(ev, 2));
		agp_side_text(&s, AGP_F_FILE, file);
		agp_side_int(&s, AGP_F_LINE, int_at(ev, 4));
		agp_side_int(&s, AGP_F_COUNT, int_at(ev, 5));
		agp_side_text(&s, AGP_F_DETAIL, text_at(ev, 6));
		agp_side_int(&s, AGP_F_REPEATS, int_at(ev, 7));
		agp_side_int(&s, AGP_F_LOOP_LINE, int_at(ev, 8));
		agp_side_text(&s, AGP_F_FUNC, text_at(ev, 9));
		agp_side_text(&s, AGP_F_FUNC_FILE, text_at(ev, 10));
		agp_side_int(&s, AGP_F_FUNC_LINE, int_at(ev, 11));
		agp_side_end(&s);
	}
}

enum { CALIBRATE_TRACES = 1, CALIBRATE_ROUNDS = 7 };

/*
 * CPU nanoseconds of the thread in one pytrace.py calibrate() run, with our
 * profile function or without; 0 on failure.  CPU, not wall: on a loaded
 * machine a run that loses its CPU for a time slice (10 ms and more, against
 * runs of 2 to 4 ms) made the wall share anything from 0.06 to 0.9 from one
 * process to the next (bench/real_overhead.py, keras: traces' collector_ns
 * 89% of their span in one run, 25% in the next).
 */
static uint64_t calibrate_run(struct agp_thread *t, PyObject *n, int profiled)
{
	uint64_t t0;
	PyObject *r;

	if (profiled) {
		t->py_calibrating = 1;
		hooks_set(1);
	}
	t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	r = W.Call(W.calibrate, n, NULL);
	t0 = clock_ns(CLOCK_THREAD_CPUTIME_ID) - t0;
	if (profiled) {
		hooks_set(0);
		t->py_calibrating = 0;
	}
	if (!r) {
		W.Err_Clear();
		return 0;
	}
	W.DecRef(r);
	return t0;
}

/*
 * What the profile function over whole traces (no frame hook, no
 * sys.monitoring) costs the traced code, which no clock inside the hook
 * sees (CPython calling it, building frame objects, running the code
 * without its specialized instructions): a share of the watched time.
 * Not a price per event: a tight loop of calls put it at 50 to 60 ns, while
 * alternate traces of one function, watched and not, showed 250 to 280 ns
 * per event, the slower instructions weighing more than the events in
 * TensorFlow's own code (docs/collector.md).  Once per process, before the
 * first watched trace: pytrace.py calibrate(), a small function traced the
 * way tf.function traces it, timed with our profile function and without,
 * side by side, CALIBRATE_ROUNDS times after a warm-up run; the share is
 * the median of (profiled - plain) / profiled.  Its time (15 traces of 2
 * to 4 ms, about 40 ms) is on py_own_ns, the first trace's collector time.
 */
static void calibrate(struct agp_thread *t)
{
	PyObject *n;
	int64_t share[CALIBRATE_ROUNDS];
	int rounds = 0;

	W.calibrated = 1;
	if (!W.calibrate || !(n = W.Long_FromULL(CALIBRATE_TRACES)))
		return;
	/* a first run warms the code up; then pairs side by side, the order alternating */
	if (calibrate_run(t, n, 0)) {
		for (; rounds < CALIBRATE_ROUNDS; rounds++) {
			uint64_t first = calibrate_run(t, n, rounds & 1), second = calibrate_run(t, n, !(rounds & 1));
			uint64_t plain = rounds & 1 ? second : first, profiled = rounds & 1 ? first : second;

			if (!plain || !profiled)
				break;
			share[rounds] = ((int64_t)profiled - (int64_t)plain) * 1000000 / (int64_t)profiled;
		}
	}
	W.DecRef(n);
	if (rounds == CALIBRATE_ROUNDS) {
		int64_t mid = nth_int64(share, (size_t)rounds, (size_t)rounds / 2);

		W.cost_ppm = mid > 0 ? (uint32_t)mid : 0;
	}
}

/*
 * The share of a watched trace's time (its CPU less the watch's own calls)
 * by which the watch slows the traced code, ppm; pytrace.c prices each trace
 * with it.  By the way t's traces are watched: the frame hook's and
 * sys.monitoring's shares measured beforehand (FRAME_HOOK_PPM_310 ...), the
 * profile function's over whole traces calibrated in the process (0 until
 * then).
 */
uint32_t agp_pywatch_cost_ppm(const struct agp_thread *t)
{
	switch (t->py_watch_mode) {
	case AGP_WATCH_FRAME_HOOK:
		return W.hook_ppm;
	case AGP_WATCH_MONITOR:
		return MONITOR_PPM;
	case AGP_WATCH_PROFILE:
		return W.cost_ppm;
	}
	return 0;
}

/*
 * The frame hook runs the profile function in every frame of the root's
 * code (TensorFlow's _maybe_define_function): a trace that starts inside
 * another, where the hook had turned it off, sees its root return.
 */
static void root_watched(PyObject *root)
{
	PyObject *code = W.eval ? W.Frame_GetCode(root) : NULL;

	agp_pymonitor_root(root);
	if (code) {
		verdict_set(code, V_ON);
		W.DecRef(code);
	}
}

/* Start watching trace seq (agp_pywatch_begin). */
static void watch_begin(struct agp_thread *t, uint64_t seq)
{
	PyObject *n, *root, *ok;

	if (!watch_ready() || t->py_nroots >= AGP_TRACE_STACK)
		return;
	if (!t->py_nroots) {
		ok = W.Call(W.hooks_free, NULL);
		if (ok != W.True) {
			if (ok)
				W.DecRef(ok);
			else
				W.Err_Clear();
			return;
		}
		W.DecRef(ok);
		if (!W.calibrated && ((!W.eval && !W.monitor) || t->py_watch_mode == AGP_WATCH_PROFILE))
			calibrate(t);  /* the profile function over whole traces: no share measured beforehand */
	}
	n = W.Long_FromULL(seq);
	t->py_inside++;
	root = n ? W.Call(W.watch, n, NULL) : NULL;
	t->py_inside--;
	if (n)
		W.DecRef(n);
	if (!root) {
		W.Err_Clear();
		return;
	}
	if (root == W.None || (t->py_nroots && t->py_roots[t->py_nroots - 1] == root)) {
		W.DecRef(root);  /* a second trace under the same root: already watched */
		return;
	}
	t->py_roots[t->py_nroots++] = root;  /* keeps the frame, and its address, alive */
	root_watched(root);
	if (t->py_nroots == 1)
		hooks_set(1);
}

/*
 * Watch the trace numbered seq that pytrace.py describe() just described,
 * on the trace's collector time; whether the thread's traces are watched
 * now (hooks on).  Called from agp_pytrace_begin with the GIL held.
 */
int agp_pywatch_begin(struct agp_thread *t, uint64_t seq)
{
	static int alternate = -1;  /* AGPROF_WATCH_ALTERNATE=1 (bench/watch_price.py): odd traces not watched */
	uint64_t t0 = own_clock();

	if (alternate < 0)
		alternate = getenv("AGPROF_WATCH_ALTERNATE") != NULL;
	if (alternate && !t->py_nroots && (seq & 1))
		return 0;
	watch_begin(t, seq);
	own_time(t, t0);
	return t->py_nroots > 0;
}

/*
 * A graph that is not a trace was created: when tf.saved_model.save makes
 * it, write what the save exports without a serving signature.  GIL held.
 */
void agp_pywatch_saves(PyObject *frame)
{
	struct agp_thread *t = agp_thread_get();
	PyObject *r;

	if (!W.saves || !frame || !t)
		return;
	t->py_inside++;
	r = W.Call(W.saves, frame, NULL);
	t->py_inside--;
	if (!r) {
		W.Err_Clear();
		return;
	}
	write_events(r);
	W.DecRef(r);
}

/* For pymonitor.c: what its callbacks need of the watch. */
_Static_assert((int)V_OFF == AGP_VERDICT_OFF && (int)V_ON == AGP_VERDICT_ON && (int)V_INHERIT == AGP_VERDICT_INHERIT,
	       "pymonitor.h's verdicts are pywatch.c's");

int agp_pywatch_verdict(struct agp_thread *t, PyObject *code, void *iframe)
{
	return (int)verdict_new(t, code, iframe);
}

PyObject *agp_pywatch_fgraph(void)
{
	return W.fgraph_code;
}

int agp_pywatch_cfunc(const PyObject *callable)
{
	for (int i = 0; i < W.ncfuncs; i++)
		if (callable == W.cfuncs[i])
			return 1;
	return 0;
}

PyObject *agp_pywatch_bound_append(PyObject *callable)
{
	if (type_of(callable) == W.cfunc_type && ((void **)callable)[2] == W.append_ml)
		return ((PyObject **)callable)[3];
	return NULL;
}

void agp_pywatch_event(struct agp_thread *t, int what, PyObject *frame, PyObject *arg)
{
	if (frame)
		call_event(t, what, frame, arg);
}

void agp_pywatch_root_end(struct agp_thread *t, PyObject *frame, int failed)
{
	root_end(t, frame, failed);
}
