/*
 * op_price.c - what one eager op of a type costs its thread, timed once at
 * the program's exit (pytrace.py price_ops(), an atexit handler), for the
 * savings that price what an edit adds (analyzer/advice/saving.c).
 *
 * A recorded dispatch is wall-clock time: beside a CPU hog a preemption
 * that lands inside a 30 us op makes it 10 to 30 ms, and a short program
 * records one or two warm dispatches of a type (issue 46).  The handler
 * times a few hundred ops per type with the thread's CPU clock, in batches,
 * with this thread's hooks standing aside (its ops are not the program's),
 * and sends each type's median batch here: one side record, stored in
 * op_prices (docs/schema.md).  Off the hot path: Python calls it through
 * ctypes, once per type, after the program's own code has finished.
 */
#include "collector.h"

#include <unistd.h>

/* This thread holds in_hook for the price loop (agprof_price_quiet()). */
static __thread int quiet;

/*
 * on != 0: this thread's hooks stand aside (its ops, kernels and graphs go
 * unrecorded) until called with 0.  0, or 1 when the thread is not being
 * recorded, or its hooks are busy (a call from inside one).
 */
AGP_EXPORT int agprof_price_quiet(int on);
AGP_EXPORT int agprof_price_quiet(int on)
{
	struct agp_thread *t = agp_thread_get();

	if (!agp_proc.enabled || !t)
		return 1;
	if (on) {
		if (t->in_hook)
			return 1;
		t->in_hook = 1;
		quiet = 1;
	} else if (quiet) {
		t->in_hook = 0;
		quiet = 0;
	}
	return 0;
}

/*
 * One op type's price: samples ops timed, the median batch's thread CPU
 * and wall-clock time per op (ns).  0, or 1 when not recorded (this
 * process is not being recorded, or the values make no price).
 */
AGP_EXPORT int agprof_op_price(const char *op, long long samples, long long cpu_ns, long long wall_ns);
AGP_EXPORT int agprof_op_price(const char *op, long long samples, long long cpu_ns, long long wall_ns)
{
	struct agp_thread *t = agp_thread_get();
	struct agp_side s;

	if (!agp_proc.enabled || agp_proc.pid != getpid() || !t || !op || !op[0] || samples <= 0 || cpu_ns < 0 ||
	    wall_ns < 0)
		return 1;
	agp_side_begin(&s, AGP_SIDE_OP_PRICE);
	agp_side_text(&s, AGP_F_NAME, op);
	agp_side_int(&s, AGP_F_TID, t->tid);
	agp_side_int(&s, AGP_F_COUNT, samples);
	agp_side_int(&s, AGP_F_CPU_NS, cpu_ns);
	agp_side_int(&s, AGP_F_WALL_NS, wall_ns);
	agp_side_end(&s);
	return 0;
}
