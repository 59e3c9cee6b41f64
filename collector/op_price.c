/*
 * op_price.c - what one eager op of a type costs its thread, timed once per
 * process at its first trace (pytrace.c prices_at_first_trace(), running
 * pytrace.py measure_prices()), for the savings that price what an edit
 * adds (analyzer/advice/saving.c).
 *
 * A recorded dispatch is wall-clock time: beside a CPU hog a preemption
 * that lands inside a 30 us op makes it 10 to 30 ms, and a short program
 * records one or two warm dispatches of a type (issue 46).  pytrace.py
 * times a few hundred ops per type with the thread's CPU clock, in batches,
 * and a Cast's first dispatch for a few new dtype pairs; each type's median
 * goes here: one side record, stored in op_prices (docs/schema.md).  At the
 * first trace, not at exit: a program that ends in os._exit(), is killed by
 * a signal or is recorded attached gets its prices too.  Off the hot path:
 * once per process, inside the TF_NewGraph hook (its thread's hooks stand
 * aside: those ops are not the program's).
 */
#include "collector.h"

#include <unistd.h>

/*
 * Whether the prices were sent: from this process image, or from the
 * process it was forked from (whose rows are in the same recording: a
 * fork's child does not pay for them again).  A new attach starts over.
 */
static int prices_sent;

int agp_op_prices_due(void)
{
	return agp_proc.enabled && !prices_sent;
}

void agp_op_prices_done(void)
{
	prices_sent = 1;
}

void agp_op_prices_reset(void)
{
	prices_sent = 0;
}

/*
 * One op type's price: samples ops timed, the median's thread CPU and
 * wall-clock time per op (ns).  0, or 1 when not recorded (this process is
 * not being recorded, or the values make no price).
 */
int agp_op_price_send(const struct agp_thread *t, const char *op, int64_t samples, int64_t cpu_ns, int64_t wall_ns)
{
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
