/*
 * run_writer.h - the launcher's side of the collector's shared memory: drains
 * every process's rings and side file (common/agp_protocol.h) into the SQLite
 * recording (docs/schema.md).
 */
#ifndef AGPROF_RUN_WRITER_H
#define AGPROF_RUN_WRITER_H

#include <stdint.h>
#include <stddef.h>

struct run_writer;

struct run_session {
	char **argv;           /* the program and its arguments */
	const char *cwd;
	uint64_t start_ns, end_ns, start_wall_ns;
	int main_pid;
	int exit_status;       /* as a shell reports it */
	int exit_signal;
	const char *attached;   /* agprof __attach: what a late start misses (meta.attached), or NULL */
	const struct tf_config *tf; /* TF_CONFIG's task and cluster (meta.tf_*), or NULL */
};

/* Rows stored (committed) in the recording, and what is known to be missing. */
struct run_totals {
	uint64_t events, traces, calls, eager_ops, blackbox, gpu, dropped;
	uint64_t session_runs;  /* TF1 Session steps */
	uint64_t kernels;       /* CPU kernel executions */
	uint64_t dropped_kernels; /* kernels not recorded: their buffer was a quarter full */
	uint64_t eager_aggregated; /* eager ops past the budget, stored as eager_op_buckets counts */
	uint64_t calls_aggregated, blackbox_aggregated; /* graph calls, black-box runs in their buckets (v7) */
	const char *aggregate_why; /* "max-events", "max-size", "rate" (the writer fell behind), or NULL */
	int processes;
	int damaged;           /* buffers found damaged or unread (see note) */
	int capture_used;      /* capture windows were asked for (run --delay, --capture, ...) */
	int64_t capture_windows, capture_calls; /* windows stored; --capture function calls seen */
	char note[512];        /* why events are missing (meta.incomplete), or "" */
	const char *error;     /* why writing failed (static text), or NULL */
};

/* Create the recording at path (must not exist); NULL with err filled on failure. */
struct run_writer *run_writer_create(const char *path, const char *shm_dir, char *err, size_t errlen);

/*
 * The recording's budget (run --max-events, --max-size): once max_events
 * high-rate rows (eager ops, graph calls, black-box runs, Session steps) are
 * stored, or the file reaches max_bytes (checked at each commit), eager ops,
 * graph calls and black-box runs are kept as exact per-second aggregates
 * (eager_op_buckets, function_call_buckets, blackbox_buckets) instead of rows;
 * so they are too, with a bound, once the writer falls behind the workload
 * (docs/collector.md).  0: no bound.  The writer starts with max_events
 * RUN_DEFAULT_MAX_EVENTS.
 */
struct run_budget {
	uint64_t max_events, max_bytes;
};
#define RUN_DEFAULT_MAX_EVENTS 1000000u
void run_writer_budget(struct run_writer *w, const struct run_budget *b);

/*
 * Drain what the collector published so far; commits every so often.  Every
 * index and length read from shared memory is bounded: one call reads at most
 * a ring's capacity per thread, a damaged ring or a shrunk file ends that
 * buffer's reading with a note (meta.incomplete), never the launcher.
 * Returns -1 once writing the recording has failed (sticky: later calls do
 * nothing; run_writer_error says why).
 */
int run_writer_poll(struct run_writer *w);

/*
 * How long the launcher may wait before its next run_writer_poll, in
 * microseconds: 0 when the last poll found a ring a quarter full or more
 * (the writer is behind: a fixed 5 ms pause after a long drain let a 2 M
 * events/s producer fill the main thread's ring); RUN_WRITER_QUIET_US when
 * it found every ring empty; else the time the fullest ring, at the rate it
 * filled since the previous poll, takes to fill a sixteenth of itself, at
 * most twice the last pause (a rate that just started looks slower than it
 * is), between RUN_WRITER_IDLE_US and RUN_WRITER_IDLE_MAX_US.  Each
 * wake-up costs: at 70,000 events/s (an eager loop) the writer took 0.68
 * us per event polling every 5 ms, 0.53 every 20 ms and 0.45 every 50 ms
 * (bench/ingest; some 35 us per wake-up on a VM), and at 2 M events/s the
 * pause stays 5 ms.  A ring overflows only if its rate grows 16-fold
 * between two polls, or, after a quiet poll, past 4.3 M events/s (the
 * main ring; 2.1 M an executor's, 270,000 another thread's).
 */
#define RUN_WRITER_IDLE_US 5000u
#define RUN_WRITER_QUIET_US 20000u
#define RUN_WRITER_IDLE_MAX_US 50000u
unsigned run_writer_idle_us(const struct run_writer *w);

/*
 * The launcher's side of the capture window (AGP_CAPTURE_LAUNCHER in every
 * process's header): closed or open from ns on, why (for capture_windows.why);
 * desc, the first time, says what the run asked for (meta.capture).
 */
void run_writer_capture(struct run_writer *w, int closed, uint64_t ns, const char *why, const char *desc);

/* Why writing failed (e.g. "database or disk is full"), or NULL. */
const char *run_writer_error(struct run_writer *w);

/*
 * Stop draining as soon as possible (async-signal-safe: for a second
 * SIGINT/SIGTERM); run_writer_finish then ends the recording with what it
 * has, noted in meta.incomplete.
 */
void run_writer_stop(void);

/*
 * Tests only (ThreadSanitizer): drain the ring file whose header is at map
 * (this process's collector mapping) through map itself, not a second mapping.
 */
void run_writer_borrow_mapping(void *map);

/*
 * Final drain, session facts, links between tables; closes the file.  Returns
 * -1 when the recording could not be completed; the file then keeps what was
 * committed and *totals counts only that.
 */
int run_writer_finish(struct run_writer *w, const struct run_session *s, struct run_totals *totals);

#endif
