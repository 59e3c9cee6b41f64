/*
 * pymonitor.c - the trace watch on CPython 3.12 and 3.13 from PEP 669's
 * sys.monitoring, in the user's frames only (docs/collector.md, "The trace
 * watch on CPython 3.12 and later").
 *
 * There a profile function is sys.monitoring's legacy events over all the
 * interpreter's code: every frame of TensorFlow's tracing code runs
 * instrumented.  Instead, while traces are open, a tool of ours gets a
 * global PY_START: its callback gives each code object pywatch.c's verdict
 * (kept in co_extra) and either turns on the code's local CALL events (the
 * user's code, AutoGraph's conversions of it and converted_call: the
 * profile function's C calls and list.append returns) or returns DISABLE,
 * after which the code runs uninstrumented.  The traces' roots and
 * func_graph_from_py_func get local PY_RETURN; PY_UNWIND, which cannot be
 * local, is global and compared with the roots' code.  The callbacks are
 * C functions (METH_FASTCALL) that hand pywatch.c what its profile
 * function would have: pytrace.py sees the same events.  When the last
 * trace ends, every event is cleared, restart_events() undoes the
 * DISABLEs and the tool id is freed.  No tool id free (2, 3, 4): the
 * profile function, as before.
 *
 * GIL held throughout; the callbacks run with CPython's own events off.
 */
#include "collector.h"
#include "pymonitor.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef struct _object PyObject;

/* sys.monitoring.events */
enum { EV_PY_START = 1, EV_PY_RETURN = 4, EV_CALL = 16, EV_PY_UNWIND = 4096, EV_C_RETURN = 32768 };
enum { METH_FASTCALL_ = 0x80, MAX_ROOT_CODES = 8 };

struct methoddef {  /* CPython's PyMethodDef */
	const char *name;
	void *meth;
	int flags;
	const char *doc;
};

struct local {      /* a code object with local events of ours, and which */
	PyObject *code;
	long events;
};

static struct {
	int usable; /* agp_pymonitor_init() found this Python's functions */
	atomic_int ready;  /* agp_py_once()'s state of ready_setup() */
	int users;  /* threads with open traces (or calibrating) holding our tool */
	PyObject *(*Import)(const char *);
	PyObject *(*GetAttr)(PyObject *, const char *);
	PyObject *(*Call)(PyObject *, ...);
	PyObject *(*Long)(long);
	PyObject *(*Str)(const char *);
	PyObject *(*NewFunc)(struct methoddef *, PyObject *, PyObject *);
	PyObject *(*GetFrame)(void);
	PyObject *(*Frame_GetCode)(PyObject *);
	long (*RequestExtra)(void *);
	int (*GetExtra)(PyObject *, long, void **);
	int (*SetExtra)(PyObject *, long, void *);
	void (*Err_Clear)(void);
	void (*IncRef)(PyObject *);
	void (*DecRef)(PyObject *);
	PyObject *None, *list_type;
	PyObject *use, *free, *get_tool, *reg, *set, *set_local, *restart;  /* sys.monitoring's functions */
	PyObject *disable, *missing, *append;  /* sys.monitoring.DISABLE, MISSING; list.append's descriptor */
	PyObject *cb[5];
	PyObject *tool;   /* the tool id we hold, NULL none */
	long extra;       /* our co_extra slot: the code's verdict, -1 none */
	struct local *locals;
	size_t nlocals, alocals;
	PyObject *roots[MAX_ROOT_CODES];  /* the roots' code objects (references in locals) */
	int nroots;
} M;

#define RESOLVE(field, sym) (M.field = (__typeof__(M.field))dlsym(RTLD_DEFAULT, sym))

int agp_pymonitor_init(const char *opt)
{
	const char *v = agp_py_version();

	M.extra = -1;
	if ((opt && !strcmp(opt, "profile")) || !v || (strncmp(v, "3.12.", 5) && strncmp(v, "3.13.", 5)))
		return 0;
	if (!RESOLVE(Import, "PyImport_ImportModule") || !RESOLVE(GetAttr, "PyObject_GetAttrString") ||
	    !RESOLVE(Call, "PyObject_CallFunctionObjArgs") || !RESOLVE(Long, "PyLong_FromLong") ||
	    !RESOLVE(Str, "PyUnicode_FromString") ||
	    !RESOLVE(NewFunc, "PyCFunction_NewEx") || !RESOLVE(GetFrame, "PyEval_GetFrame") ||
	    !RESOLVE(Frame_GetCode, "PyFrame_GetCode") ||
	    !RESOLVE(RequestExtra, "PyUnstable_Eval_RequestCodeExtraIndex") ||
	    !RESOLVE(GetExtra, "PyUnstable_Code_GetExtra") || !RESOLVE(SetExtra, "PyUnstable_Code_SetExtra") ||
	    !RESOLVE(Err_Clear, "PyErr_Clear") || !RESOLVE(IncRef, "Py_IncRef") || !RESOLVE(DecRef, "Py_DecRef") ||
	    !(M.None = dlsym(RTLD_DEFAULT, "_Py_NoneStruct")) || !(M.list_type = dlsym(RTLD_DEFAULT, "PyList_Type")))
		return 0;
	M.usable = 1;
	return 1;
}

static PyObject *ret(PyObject *o)
{
	M.IncRef(o);
	return o;
}

/* A thread whose traces are watched now (its own Python, pytrace.py's, is not: py_inside). */
static struct agp_thread *watching(void)
{
	struct agp_thread *t = agp_tls;  /* a thread without one has no traces open */

	if (!t || t->generation != agp_proc.generation || t->py_inside || (!t->py_nroots && !t->py_calibrating))
		return NULL;
	return t;
}

/* Call fn(a, b, c) (NULL ends the arguments); whether it went without an exception. */
static int call3(PyObject *fn, PyObject *a, PyObject *b, PyObject *c)
{
	PyObject *r = M.Call(fn, a, b, c, NULL);

	if (!r) {
		M.Err_Clear();
		return 0;
	}
	M.DecRef(r);
	return 1;
}

/* Turn on events (more) of a code object's local events; its reference is kept until stop(). */
static void local_add(PyObject *code, long events)
{
	struct local *l = NULL;
	PyObject *n;

	for (size_t i = 0; i < M.nlocals && !l; i++)
		if (M.locals[i].code == code)
			l = &M.locals[i];
	if (l && (l->events | events) == l->events)
		return;
	if (!l) {
		if (M.nlocals == M.alocals) {
			size_t a = M.alocals ? 2 * M.alocals : 256;
			struct local *p = realloc(M.locals, a * sizeof(*p));

			if (!p)
				return;
			M.locals = p;
			M.alocals = a;
		}
		l = &M.locals[M.nlocals++];
		l->code = code;
		l->events = 0;
		M.IncRef(code);
	}
	if (!(n = M.Long(l->events | events))) {
		M.Err_Clear();
		return;
	}
	if (call3(M.set_local, M.tool, code, n))
		l->events |= events;
	M.DecRef(n);
}

/*
 * A code object's verdict: from co_extra, or worked out by pywatch.c the
 * first time (AutoGraph's generated code from the function the frame runs:
 * the interpreter frame's f_funcobj, third on 3.12 and 3.13, behind the
 * frame object's f_frame, its fourth word; pyframe.c's iframe_of).
 */
static int verdict(struct agp_thread *t, PyObject *code)
{
	void *v = NULL;
	PyObject *frame;

	if (M.extra >= 0 && M.GetExtra(code, M.extra, &v) < 0) {
		M.Err_Clear();
		v = NULL;
	}
	if (v)
		return (int)(uintptr_t)v;
	frame = M.GetFrame();
	v = (void *)(uintptr_t)agp_pywatch_verdict(t, code, frame ? ((void **)frame)[3] : NULL);
	if (M.extra >= 0 && M.SetExtra(code, M.extra, v) < 0)
		M.Err_Clear();
	return (int)(uintptr_t)v;
}

/*
 * PY_START(code, offset), global: the verdict.  The watched Python
 * functions (random's, AutoGraph's fallback) keep it, their call is the
 * event; every other code is DISABLEd here until the last trace ends.
 */
static PyObject *on_start(PyObject *self, PyObject *const *args, long nargs)
{
	struct agp_thread *t = agp_tls;
	PyObject *code;
	int v;

	(void)self;
	if (nargs < 1 || !M.tool)
		return ret(M.disable);
	if (t && t->generation != agp_proc.generation)
		t = NULL;
	if (t)
		t->py_counts.frames++;
	if (t && t->py_inside)
		return ret(M.None);  /* pytrace.py's own Python: undecided */
	code = args[0];
	if (agp_pywatch_code(code) == 1) {
		local_add(code, EV_CALL);
		if ((t = watching()))
			agp_pywatch_event(t, 0, M.GetFrame(), NULL);
		return ret(M.None);
	}
	v = verdict(t, code);
	if (v == AGP_VERDICT_ON || v == AGP_VERDICT_INHERIT)
		local_add(code, EV_CALL);  /* converted_call's: pytrace.py looks past it for the user's caller */
	return ret(M.disable);
}

/* CALL(code, offset, callable, arg0), local: a watched C function is called. */
static PyObject *on_call(PyObject *self, PyObject *const *args, long nargs)
{
	struct agp_thread *t;

	(void)self;
	if (nargs >= 3 && (t = watching()) && (t->py_counts.events++, agp_pywatch_cfunc(args[2])))
		agp_pywatch_event(t, 4, M.GetFrame(), args[2]);
	return ret(M.None);
}

/*
 * C_RETURN(code, offset, callable, arg0), with CALL: list.append returned.
 * `lst.append(x)` calls the method descriptor with the list as arg0 (the
 * profile function's events make a bound method of it); `f = lst.append;
 * f(x)` calls the bound method.
 */
static PyObject *on_c_return(PyObject *self, PyObject *const *args, long nargs)
{
	struct agp_thread *t;
	PyObject *lst;

	(void)self;
	if (nargs < 4 || !(t = watching()))
		return ret(M.None);
	t->py_counts.events++;
	lst = args[2] == M.append ? (args[3] != M.missing ? args[3] : NULL) : agp_pywatch_bound_append(args[2]);
	if (lst)
		agp_pywatch_event(t, 6, M.GetFrame(), lst);
	return ret(M.None);
}

static int is_root(struct agp_thread *t, PyObject *frame)
{
	return t->py_nroots && frame == t->py_roots[t->py_nroots - 1];
}

/* PY_RETURN(code, offset, value), local to the roots' code and func_graph_from_py_func's. */
static PyObject *on_return(PyObject *self, PyObject *const *args, long nargs)
{
	struct agp_thread *t;
	PyObject *frame;

	(void)self;
	if (nargs < 3 || !(t = watching()) || !(frame = M.GetFrame()))
		return ret(M.None);
	if (is_root(t, frame))
		agp_pywatch_root_end(t, frame, 0);
	else if (agp_pywatch_code(args[0]) == 2)
		agp_pywatch_event(t, 3, frame, args[2]);
	return ret(M.None);
}

/*
 * PY_UNWIND(code, offset, exception), global: only the roots' code is
 * looked at.  The exception reaching the root is what the trace function
 * told before; then the trace is closed as failed.
 */
static PyObject *on_unwind(PyObject *self, PyObject *const *args, long nargs)
{
	struct agp_thread *t;
	PyObject *frame;
	int i, root;

	(void)self;
	if (nargs < 3 || !(t = watching()))
		return ret(M.None);
	for (i = 0; i < M.nroots && M.roots[i] != args[0]; i++)
		;
	if (i == M.nroots || !(frame = M.GetFrame()))
		return ret(M.None);
	root = is_root(t, frame);
	if (root)
		agp_pywatch_event(t, 1, frame, args[2]);
	if (t->trace_top)
		agp_pytrace_raised(t, frame);
	if (root)
		agp_pywatch_root_end(t, frame, 1);
	return ret(M.None);
}

static struct methoddef defs[5] = {
	{ "agprof_py_start", (void *)on_start, METH_FASTCALL_, NULL },
	{ "agprof_py_return", (void *)on_return, METH_FASTCALL_, NULL },
	{ "agprof_call", (void *)on_call, METH_FASTCALL_, NULL },
	{ "agprof_py_unwind", (void *)on_unwind, METH_FASTCALL_, NULL },
	{ "agprof_c_return", (void *)on_c_return, METH_FASTCALL_, NULL },
};
static const long def_events[5] = { EV_PY_START, EV_PY_RETURN, EV_CALL, EV_PY_UNWIND, EV_C_RETURN };

/* sys.monitoring's functions and our callbacks, the first time a trace is watched. */
static int ready_setup(void)
{
	static const char *const fns[] = { "use_tool_id", "free_tool_id", "get_tool", "register_callback",
					   "set_events", "set_local_events", "restart_events" };
	PyObject **slots[] = { &M.use, &M.free, &M.get_tool, &M.reg, &M.set, &M.set_local, &M.restart };
	PyObject *sys, *mon;

	sys = M.Import("sys");
	mon = sys ? M.GetAttr(sys, "monitoring") : NULL;
	if (sys)
		M.DecRef(sys);
	if (!mon) {
		M.Err_Clear();
		return 0;
	}
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++)
		*slots[i] = M.GetAttr(mon, fns[i]);
	M.disable = M.GetAttr(mon, "DISABLE");
	M.missing = M.GetAttr(mon, "MISSING");
	M.DecRef(mon);
	M.append = M.GetAttr(M.list_type, "append");
	for (int i = 0; i < 5; i++)
		M.cb[i] = M.NewFunc(&defs[i], NULL, NULL);
	if (!M.use || !M.free || !M.get_tool || !M.reg || !M.set || !M.set_local || !M.restart || !M.disable ||
	    !M.missing || !M.append || !M.cb[0] || !M.cb[1] || !M.cb[2] || !M.cb[3] || !M.cb[4]) {
		M.Err_Clear();
		return 0;
	}
	M.extra = M.RequestExtra(NULL);
	return 1;
}

static int ready(void)
{
	return agp_py_once(&M.ready, ready_setup);
}

/* A tool id of ours: the profiler's (2) or an unassigned one, never one in use (a debugger's, coverage's). */
static int tool_take(void)
{
	static const long ids[] = { 2, 3, 4 };
	PyObject *name = M.Str("agprof");

	for (size_t i = 0; name && i < sizeof(ids) / sizeof(ids[0]) && !M.tool; i++) {
		PyObject *id = M.Long(ids[i]), *owner = id ? M.Call(M.get_tool, id, NULL) : NULL;

		if (owner == M.None && call3(M.use, id, name, NULL))
			M.tool = id;
		else if (id)
			M.DecRef(id);
		if (owner)
			M.DecRef(owner);
		else
			M.Err_Clear();
	}
	if (name)
		M.DecRef(name);
	else
		M.Err_Clear();
	return M.tool != NULL;
}

/* Our callbacks for each event (fn: the callbacks, or None to take them away). */
static int callbacks(int on)
{
	int ok = 1;

	for (int i = 0; i < 5; i++) {
		PyObject *ev = M.Long(def_events[i]);

		ok &= ev && call3(M.reg, M.tool, ev, on ? M.cb[i] : M.None);
		if (ev)
			M.DecRef(ev);
	}
	return ok;
}

static int events_set(long events)
{
	PyObject *ev = M.Long(events);
	int ok = ev && call3(M.set, M.tool, ev, NULL);

	if (ev)
		M.DecRef(ev);
	else
		M.Err_Clear();
	return ok;
}

/*
 * After the last trace: no event of ours left, local or global, the
 * DISABLEd PY_STARTs restarted (restart_events(), which restarts every
 * tool's: another tool's callbacks see again what they had disabled), the
 * tool id freed.
 */
static void stop(void)
{
	PyObject *zero = M.Long(0);

	for (size_t i = 0; i < M.nlocals; i++) {
		if (zero)
			call3(M.set_local, M.tool, M.locals[i].code, zero);
		M.DecRef(M.locals[i].code);
	}
	M.nlocals = 0;
	M.nroots = 0;
	if (zero)
		M.DecRef(zero);
	else
		M.Err_Clear();
	events_set(0);
	callbacks(0);
	call3(M.restart, NULL, NULL, NULL);
	call3(M.free, M.tool, NULL, NULL);
	M.DecRef(M.tool);
	M.tool = NULL;
}

void agp_pymonitor_root(PyObject *frame)
{
	PyObject *code;
	int i;

	if (!M.tool || !frame || !(code = M.Frame_GetCode(frame)))
		return;
	local_add(code, EV_PY_RETURN);
	for (i = 0; i < M.nroots && M.roots[i] != code; i++)
		;
	if (i == M.nroots && i < MAX_ROOT_CODES)
		M.roots[M.nroots++] = code;  /* locals holds its reference */
	M.DecRef(code);
}

/* The first thread's first trace: the tool, its callbacks, PY_START and PY_UNWIND everywhere. */
static int start(struct agp_thread *t)
{
	PyObject *fgraph = agp_pywatch_fgraph();

	if (!ready() || !tool_take())
		return 0;
	if (!callbacks(1) || !events_set(EV_PY_START | EV_PY_UNWIND)) {
		stop();
		return 0;
	}
	if (fgraph)
		local_add(fgraph, EV_PY_RETURN);
	for (int i = 0; i < t->py_nroots; i++)
		agp_pymonitor_root(t->py_roots[i]);
	return 1;
}

int agp_pymonitor_set(struct agp_thread *t, int on)
{
	if (!M.usable || !t)
		return 0;
	if (on && M.users) {
		for (int i = 0; i < t->py_nroots; i++)
			agp_pymonitor_root(t->py_roots[i]);
		M.users++;
		return 1;
	}
	if (on && !start(t))
		return 0;
	if (on) {
		M.users = 1;
		return 1;
	}
	if (!M.users || t->py_profiling)
		return 0;  /* the profile function was set (no tool id free) */
	if (--M.users == 0)
		stop();
	return 1;
}
