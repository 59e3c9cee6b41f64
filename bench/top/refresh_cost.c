/*
 * refresh_cost.c - the CPU of one `agprof top` refresh on a big recording.
 *
 * usage: top-refresh RECORDING [REFRESHES]
 *
 * Does what agprof top does each second (cmd/agprof/top.c): open the
 * recording, live_refresh, close it; the window moves forward by one
 * second per refresh, from 2 x REFRESHES + 1 seconds before the end of the run, as on a live run.
 * Prints the first refresh (it reads every eager_op_blocks row and loads
 * the trace model) and the mean and largest of the others, CPU time of the
 * process; then the same with the trace model read again at each refresh,
 * as on a run that retraces every second.
 */
#include "live.h"
#include "recording.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double cpu_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 20;
	struct recording rec;
	struct live lv;
	int64_t t;

	if (argc < 2 || n < 2)
		return fprintf(stderr, "usage: top-refresh RECORDING [REFRESHES >= 2]\n"), 2;
	if (recording_open(&rec, argv[1]) || live_init(&lv, &rec, 0) || live_refresh(&lv, 0))
		return 1;
	/* the middle of the run; + 300 ms: live_refresh's commit lag */
	t = lv.end_ns - (int64_t)(2 * n + 1) * 1000000000;
	if (t < lv.m.session.start_ns)
		t = lv.m.session.start_ns;
	t += 300000000;
	recording_close(&rec);
	live_release(&lv);
	if (live_init(&lv, &rec, 0))
		return 1;
	for (int reload = 0; reload < 2; reload++) {
		double first = 0, sum = 0, most = 0;

		for (int i = 0; i < n; i++, t += 1000000000) {
			double c = cpu_seconds();

			if (reload)
				lv.trace_mark = -1;  /* as when a trace was added since the last refresh */
			if (recording_open(&rec, argv[1]) || live_refresh(&lv, t))
				return 1;
			recording_close(&rec);
			c = cpu_seconds() - c;
			if (!i)
				first = c;
			else
				sum += c, most = c > most ? c : most;
		}
		printf("%s: first refresh %.2f ms CPU; then %.2f ms mean, %.2f ms most (%d refreshes); last window: "
		       "%lld graph calls, %lld eager ops, %zu lines\n",
		       reload ? "traces reloaded each time" : "no new trace", first * 1e3, sum / (n - 1) * 1e3,
		       most * 1e3, n, (long long)lv.win.calls, (long long)lv.win.eager_ops, lv.win.nlines);
	}
	live_release(&lv);
	return 0;
}
