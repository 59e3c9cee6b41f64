/*
 * run_writer_int.h - what the writer's files share (run_writer.c drains the
 * rings, run_side.c the side records, run_finish.c ends the recording).
 * Not for other users: they see run_writer.h.
 */
#ifndef AGPROF_RUN_WRITER_INT_H
#define AGPROF_RUN_WRITER_INT_H

#include "run_writer.h"
#include "capture_log.h"
#include "checkpointer.h"
#include "cpu_wait.h"
#include "eager_blocks.h"
#include "eager_buckets.h"
#include "eager_keys.h"
#include "agp_protocol.h"
#include "db.h"
#include "idmap.h"
#include "strbuf.h"

#include <signal.h>
#include <stdint.h>

/*
 * An aggregated call's seq (low 32 bits) and the function_calls row that
 * stands for it: its function's first call.  A kernel total names the last
 * call its kernel ran under (agp_protocol.h), nearly always one of the
 * latest: direct-mapped by seq, the latest AGG_CALLS are kept.
 */
#define AGG_CALLS 4096u
struct agg_call {
	uint32_t seq;
	int64_t row;
};

/* Cut calls a stream remembers, to refuse their kernels from other threads (kernel_call_cut). */
#define KERNEL_CUTS 8

/*
 * The processes (ring files) one recording holds: a stream costs about
 * 70 KiB and a descriptor; a workload that forks more gets the first ones
 * recorded, the others counted (meta.incomplete), and runs on.
 */
#define WRITER_MAX_STREAMS 1024

struct stream {
	char name[64];
	int pid;
	struct agp_shm_header *shm;
	uint64_t tails[AGP_MAX_THREADS];   /* run on across a slot's owners (agp_protocol.h) */
	uint32_t claims[AGP_MAX_THREADS];  /* the owner drained last per slot (its state word's claims) */
	int thread_seen[AGP_MAX_THREADS];  /* that owner's threads row is written */
	int side_fd;
	char *side_buf;
	size_t side_len, side_cap;
	struct idmap strings, sites;   /* the workload's ids -> rows (local_id_get) */
	struct idmap kernel_nodes;     /* (name id << 32 | type id) -> graph_nodes row */
	int gpu_on;
	int damaged;                       /* ring file unreadable: no more draining */
	uint8_t ring_damaged[AGP_MAX_THREADS];
	int side_damaged;
	int borrowed;                      /* the producer's own mapping (run_writer_borrow_mapping) */
	struct idmap fn_rows;              /* graph function name row -> its first function_calls row */
	struct agg_call agg_calls[AGG_CALLS]; /* the latest aggregated calls, by seq (aggregate_call) */
	uint32_t kernel_seq_seen;          /* the latest call seq whose kernels were stored one by one */
	uint32_t kernel_seq_cap;           /* past the kernel budget: calls after this seq are counted only */
	int kernel_capped;
	uint32_t kernel_cut[KERNEL_CUTS];  /* the latest calls whose detail the collector cut (AGP_KERNEL_CUT) */
	unsigned nkernel_cut;
};

/*
 * The high-rate rows (eager ops, kernels) are buffered and inserted
 * BATCH_ROWS per statement: one step's fixed cost (cursors opened and
 * closed, the statement's halt, the rowid's seek) is then shared by them
 * (bench/ingest.c).  A row is its values; bit c of nulls: column c+1 is NULL.
 * Flushed when full, before every commit and at the finish, so a commit
 * holds every row read before it, as with one row per statement.
 */
#define BATCH_ROWS 32
#define BATCH_COLS 10
struct batch {
	sqlite3_stmt *one, *many;        /* INSERT of one row, of BATCH_ROWS rows */
	int cols, n;
	uint64_t *count;                 /* the table's total in w->totals */
	int64_t v[BATCH_ROWS][BATCH_COLS];
	uint32_t nulls[BATCH_ROWS];
};

#define RING_FILL_ONE 65536u  /* a full ring, in run_writer.fullest's unit */
#define RING_BEHIND (RING_FILL_ONE / 4)  /* a ring this full: the writer is behind (run_writer_idle_us) */

struct run_writer {
	sqlite3 *db;
	char *shm_dir;
	struct string_table st;
	struct stream **streams;
	size_t nstreams;
	size_t streams_refused;        /* ring files past WRITER_MAX_STREAMS, not read (meta.incomplete) */
	uint64_t last_commit_ns, last_scan_ns;
	uint32_t fullest;              /* the fullest ring the last poll found, in 1/RING_FILL_ONE of it */
	uint32_t fullest_before;       /* the poll before it's (falling_behind) */
	int polling;                   /* run_writer_poll drains: the workload still writes */
	unsigned slots_freed;          /* ended threads' slots the last poll gave back (pace: poll again soon) */
	unsigned idle_us;              /* the pause after a poll that is not behind (run_writer_idle_us) */
	uint64_t last_poll_ns;
	struct checkpointer *ckpt;     /* the WAL's checkpoints, off the writer's thread; NULL: SQLite's own */
	int wal_frames;                /* the WAL's frames after the latest commit (wal_committed) */
	struct run_totals totals;      /* rows written, committed or not */
	struct run_totals committed;   /* rows of the last successful commit */
	struct strbuf notes;           /* why the recording lacks events (meta.incomplete) */
	char *rec;                     /* one ring record, copied out of shared memory */
	sqlite3_stmt *ins_eager, *ins_call, *ins_bb, *ins_site, *get_site, *ins_thread,
		*ins_process, *upd_process_tf, *upd_process_exit, *upd_process_gpu, *ins_function,
		*get_function, *ins_trace, *ins_input, *ins_gf, *ins_ginput, *ins_gconst,
		*ins_bbnode, *ins_gpu, *ins_api, *ins_ext, *ins_link_ref, *ins_link_trace,
		*ins_link_name, *ins_trace_seq, *get_trace_seq, *ins_trace_event;
	sqlite3_stmt *ins_session, *ins_kernel, *ins_knode, *ins_gnode, *ins_node_src,
		*upd_process_kernels, *ins_collective, *ins_ktotal, *ins_dataset, *ins_kernel_cut;
	sqlite3_stmt *ins_op_price;  /* NULL: the recording has no op_prices table */
	struct capture_log capture;    /* the capture windows' changes (capture_log.h) */
	char *capture_desc;            /* what opened and closed them (meta.capture) */
	int capture_note_said;         /* the bound on changes was reached (said once) */
	struct batch eager, kernel;    /* rows not inserted yet (struct batch) */
	uint64_t lost_rows;            /* rows SQLite refused (not a write failure): said once */
	char *lost_why;                /* the first refusal's message */
	struct run_budget budget;      /* --max-events, --max-size (run_writer_budget) */
	struct eager_buckets buckets;  /* eager ops past the budget (eager_buckets.h) */
	struct eager_buckets call_buckets, bb_buckets; /* graph calls, black-box runs past it */
	int aggregate_meta_said;       /* meta.aggregate_* written during the run (crash safety) */
	struct eager_keys keys;        /* eager_op_keys of the kept eager ops (eager_keys.h) */
	struct eager_blocks blocks;    /* their eager_op_blocks (eager_blocks.h) */
	int aggregating;               /* the budget is spent: eager ops, calls, black boxes go to buckets */
	uint64_t kernels_refused;      /* kernel rows past the budget (kernel_detail_refused) or of cut calls */
	uint64_t kernel_cut_calls;     /* calls whose detail the collector cut (kernel_call_cut) */
	uint64_t kernels_capped_ns;    /* when the first process's kernel budget ran out (writer's clock) */
	int64_t aggregate_from_ns;     /* the first aggregated op's start (meta.aggregate_from_ns) */
	const char *aggregate_why;     /* which bound was reached (meta.aggregate_reason) */
	struct cpu_wait cpu;           /* the threads' run-queue wait, sampled (cpu_wait.h) */
	char python_exe[4096];         /* the first process that reported Python: its interpreter (parse_source.h) */
};

/* Set by run_writer_stop (a signal handler): drain no further. */
extern volatile sig_atomic_t run_writer_stopping;

/* Say (once per cause) why the recording lacks events; kept in meta.incomplete. */
void writer_note(struct run_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/*
 * Step one insert or update of the writer.  Errors are sticky and said once:
 * a write failure (disk full) ends writing, as db.h describes, and is
 * reported by the launcher (exit 3); any other refusal loses that row only,
 * is counted, said once on stderr and noted in meta.incomplete.  0 or -1.
 */
int writer_step(struct run_writer *w, sqlite3_stmt *st);

/* The strings row of text, 0 for NULL. */
int64_t writer_intern(struct run_writer *w, const char *text);
int64_t writer_callsite_id(struct run_writer *w, int64_t file, int64_t line, int64_t func, int64_t parent,
			   int library);

/* run_writer.c: the rings, as a poll reads them; used again by the finish. */
void writer_scan_streams(struct run_writer *w);
void writer_drain_stream(struct run_writer *w, struct stream *s);
void writer_flush_batches(struct run_writer *w);
/* At the end: the kernel totals of the threads that still hold a slot (an ended one's went when it was freed). */
void writer_read_kernel_totals(struct run_writer *w, struct stream *s);
void writer_count_aggregated(struct run_writer *w);

/* run_side.c: a stream's side records read so far, stored. */
void run_side_drain(struct run_writer *w, struct stream *s);

/* run_finish.c: close the database and free w (also after a failed create); 0 or -1. */
int writer_release(struct run_writer *w);

#endif
