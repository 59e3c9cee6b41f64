/*
 * pymonitor.h - the trace watch's events from sys.monitoring on CPython
 * 3.12 and 3.13 (pymonitor.c), and what it borrows of pywatch.c's watch.
 */
#ifndef AGP_PYMONITOR_H
#define AGP_PYMONITOR_H

struct _object;
struct agp_thread;

/* pywatch.c: a code object's verdict (AGP_VERDICT_*), 1 off, 2 on, 3 as its caller (AutoGraph's converted_call). */
enum { AGP_VERDICT_OFF = 1, AGP_VERDICT_ON = 2, AGP_VERDICT_INHERIT = 3 };
int agp_pywatch_verdict(struct agp_thread *t, struct _object *code, void *iframe) AGP_HIDDEN;
/* 1: a watched Python function's code, 2: func_graph_from_py_func's, 0: neither */
int agp_pywatch_code(struct _object *code) AGP_HIDDEN;
struct _object *agp_pywatch_fgraph(void) AGP_HIDDEN;  /* func_graph_from_py_func's code, borrowed */
int agp_pywatch_cfunc(const struct _object *callable) AGP_HIDDEN;
/* the list a bound list.append (a builtin method) adds to, or NULL */
struct _object *agp_pywatch_bound_append(struct _object *callable) AGP_HIDDEN;
/* what the profile function would have seen (PyTrace_* numbers) */
void agp_pywatch_event(struct agp_thread *t, int what, struct _object *frame, struct _object *arg) AGP_HIDDEN;
void agp_pywatch_root_end(struct agp_thread *t, struct _object *frame, int failed) AGP_HIDDEN;

/* pymonitor.c: whether it serves this Python (3.12, 3.13; not AGPROF_TRACE_WATCH=profile) */
int agp_pymonitor_init(const char *opt) AGP_HIDDEN;
/* take the events for one more thread with open traces (on) or one fewer; 0: not in use, set the profile function */
int agp_pymonitor_set(struct agp_thread *t, int on) AGP_HIDDEN;
/* a trace's root frame: its return and unwinding are events */
void agp_pymonitor_root(struct _object *frame) AGP_HIDDEN;

#endif
