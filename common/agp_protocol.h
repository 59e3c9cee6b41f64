/*
 * agp_protocol.h - the launcher<->collector protocol: the environment the
 * launcher (`agprof run`) hands the injected collector, and the
 * shared-memory format the collector writes and the launcher drains into
 * the SQLite recording.
 *
 * Each process (and each exec'd image of it) owns two files in the session's
 * directory (AGPROF_SHM, under /dev/shm):
 *
 *   <pid>-<n>.ring   a header and one single-producer/single-consumer ring per
 *                    thread: the hot path (eager ops, graph-function calls,
 *                    black-box executions) writes fixed-size records here with
 *                    plain stores and one release store of the head; no lock,
 *                    no system call.
 *   <pid>-<n>.side   an append-only file for rare, variable-size records
 *                    (process facts, traces, FunctionDefs, GPU activity),
 *                    written with write(2) under a mutex.
 *
 * Both live in the page cache, so a workload killed with SIGKILL still leaves
 * every record it published; the launcher drains them after the fact.
 */
#ifndef AGPROF_PROTOCOL_H
#define AGPROF_PROTOCOL_H

#include <stdatomic.h>
#include <stdint.h>

/*
 * Environment variables of the protocol.  The launcher sets them for the
 * program; the collector reads them at start-up, hides them from the
 * workload and puts them back into the environment of every exec'd child.
 */
#define AGP_ENV_SHM "AGPROF_SHM"                     /* the session's buffer folder */
#define AGP_ENV_ORIG_PRELOAD "AGPROF_ORIG_LD_PRELOAD" /* LD_PRELOAD before the collector */
#define AGP_ENV_CUDA_INJECTION "AGPROF_CUDA_INJECTION" /* 1: CUDA_INJECTION64_PATH is ours */
#define AGP_ENV_USER_CODE "AGPROF_USER_CODE"         /* run --user-code, ':'-separated */
#define AGP_ENV_LIBRARY "AGPROF_LIBRARY"             /* run --library, ':'-separated */
#define AGP_ENV_NO_GOT_PATCH "AGPROF_NO_GOT_PATCH"   /* 1: no GOT patching */
#define AGP_ENV_COLLECTOR "AGPROF_COLLECTOR"         /* the launcher's collector override */
#define AGP_ENV_NO_KERNELS "AGPROF_NO_KERNELS"       /* 1: no kernel records (run --no-kernels) */
#define AGP_ENV_KERNELS "AGPROF_KERNELS"             /* "all": every kernel in detail (run --kernels=all) */
#define AGP_ENV_KBENCH "AGPROF_KBENCH"               /* bench/kernels.py only: "count" never samples, "nostore" times without records */
/* run --capture: "FUNCTION:FROM-TO" (calls of a traced function) or "api" (agprof.start/stop) */
#define AGP_ENV_CAPTURE "AGPROF_CAPTURE"
/* "1": the launcher's window starts closed (run --delay); a new header's AGP_CAPTURE_LAUNCHER bit */
#define AGP_ENV_CAPTURE_OFF "AGPROF_CAPTURE_OFF"
/* AGP_ENV_ORIG_PRELOAD's value when the program had no LD_PRELOAD at all */
#define AGP_PRELOAD_UNSET "\001unset"

/* "NAME=" of a literal variable name, and the length of a literal without its NUL. */
#define AGP_ENV_EQ(name) name "="
#define AGP_LITERAL_LEN(lit) (sizeof(lit) - 1)

#define AGP_SHM_MAGIC 0x33474e4952504741ULL /* "AGPRING3": slots given back (agp_thread_ring.state) */
#define AGP_RING_BYTES (4096u * 1024u)       /* a slot's address space, power of two */
/*
 * Used by the main thread (eager loops): 44 ms of events at 2 M/s, past the
 * 15 to 25 ms a launcher's poll takes when its writer restarts the WAL
 * (bench/ingest.c: with 2 MiB, 21 ms, a 24 ms poll dropped 52,000 events).
 * Past 8 M events at that rate drops remain either way (0.06 to 1.3% of
 * 16 M, against 0.3 to 1.1% with 2 MiB): the writer and its checkpointer
 * then share the one core the producer leaves.
 */
#define AGP_RING_MAIN_BYTES AGP_RING_BYTES
#define AGP_RING_EXECUTOR_BYTES (2048u * 1024u) /* TensorFlow's executor threads, with kernels recorded */
#define AGP_RING_OTHER_BYTES (256u * 1024u)  /* used by other threads (tf.data, ...) */
#define AGP_MAX_THREADS 256
/*
 * A thread's first event that finds every slot LIVE or ENDED, some ENDED
 * (drained and freed at the launcher's next poll, its pauses at most
 * RUN_WRITER_IDLE_MAX_US): the thread waits this long at most, once in its
 * life, for a freed slot, else records nothing (docs/collector.md, "Caps").
 */
#define AGP_SLOT_WAIT_NS 100000000ull
#define AGP_HEADER_BYTES 65536u              /* header region, page aligned */

/*
 * A ring slot belongs to one thread at a time and is given back when the
 * thread ends.  Its state word holds AGP_SLOT_* in the low AGP_SLOT_BITS
 * bits and, above them, how many times the slot was claimed (the owner's
 * number).  Hand-over:
 *
 *   UNUSED --(first owner: its index from nthreads)--> CLAIMING
 *   FREE   --(a new owner's compare-and-swap; claims + 1)--> CLAIMING
 *   CLAIMING --(tid, role, capacity set; release store)--> LIVE
 *   LIVE   --(the owner thread ends; release store)--> ENDED
 *   ENDED  --(the launcher drained it to its head and read its
 *             kernel totals; compare-and-swap)--> FREE
 *
 * Only the launcher frees a slot, so it sees every owner: it reads a slot
 * while it is LIVE or ENDED, and an owner's number other than the one it
 * drained last is a new thread (its tid, role and capacity read anew).
 * head and tail run on across owners: a new owner starts where the
 * last one was drained to (an empty ring), whatever its capacity.
 */
#define AGP_SLOT_BITS 3u
#define AGP_SLOT_MASK ((1u << AGP_SLOT_BITS) - 1u)
enum agp_slot_state {
	AGP_SLOT_UNUSED = 0,    /* never claimed */
	AGP_SLOT_CLAIMING = 1,  /* a thread is setting it up: not read yet */
	AGP_SLOT_LIVE = 2,      /* its thread records into it */
	AGP_SLOT_ENDED = 3,     /* its thread ended: drained, then freed, by the launcher */
	AGP_SLOT_FREE = 4,      /* drained: the next thread may claim it */
};
#define AGP_SLOT_WORD(claims, state) ((uint32_t)(claims) << AGP_SLOT_BITS | (uint32_t)(state))

struct agp_thread_ring {
	_Atomic uint64_t head;       /* bytes published by the producer */
	char pad0[56];
	_Atomic uint64_t tail;       /* bytes consumed by the launcher */
	char pad1[56];
	_Atomic uint64_t dropped;    /* records lost because the ring was full (all its owners) */
	_Atomic int32_t tid;         /* the owner's, set before the state says LIVE */
	int32_t role;                /* enum agp_thread_role, likewise */
	uint32_t capacity;           /* bytes of the slot in use, power of two; likewise */
	_Atomic uint32_t state;      /* AGP_SLOT_WORD(claims, enum agp_slot_state) */
	_Atomic uint64_t dropped_kernels; /* kernel records not written: the ring was a quarter full */
	uint32_t ktotals_used;       /* set before ENDED: the entries of its kernel totals table in use, from 0 */
	char pad3[28];
};

struct agp_shm_header {
	uint64_t magic;
	uint32_t ring_bytes;
	uint32_t max_threads;
	int32_t pid;
	int32_t ppid;
	uint64_t start_ns;
	_Atomic uint32_t nthreads;          /* slots used so far (a slot given back stays counted) */
	_Atomic uint32_t live_threads;      /* threads that hold a slot now */
	_Atomic uint64_t dropped_no_slot;   /* events of threads that found no slot (all LIVE or ENDED) */
	_Atomic uint32_t finished;          /* set at clean process exit */
	/*
	 * The capture window (run --delay/--duration/--capture, SIGUSR2,
	 * agprof.start/stop): high-rate events are recorded while it is 0.
	 * Each bit is one owner's "closed"; the hot path reads it with one
	 * relaxed load.  The launcher writes AGP_CAPTURE_LAUNCHER into every
	 * header it maps, the collector the others (each change of those is
	 * also an AGP_SIDE_CAPTURE record, so the recording knows the windows).
	 */
	_Atomic uint32_t capture_off;
	/*
	 * What the launcher no longer stores one by one (AGP_DETAIL_* bits),
	 * so that the collector stops sampling it: read with one relaxed load
	 * on the path of a kernel of no call only.  The totals stay exact.
	 */
	_Atomic uint32_t detail_off;
	/* slots FREE now: the launcher adds one per slot it frees, a claim takes one (a hint; the state decides) */
	_Atomic uint32_t free_slots;
	/*
	 * CLOCK_MONOTONIC of the launcher's last poll of this header (0: not
	 * polled yet).  A thread that finds no slot while ended ones await the
	 * launcher waits for a freed one only while this is recent.
	 */
	_Atomic uint64_t launcher_poll_ns;
	char pad1[4096 - 72];
	struct agp_thread_ring threads[AGP_MAX_THREADS];
};

_Static_assert(sizeof(struct agp_thread_ring) == 192, "ring slot layout");

/* Bits of agp_shm_header.capture_off: who keeps the window closed. */
#define AGP_CAPTURE_LAUNCHER 1u  /* the launcher: --delay, --duration, SIGUSR2 */
#define AGP_CAPTURE_FUNCTION 2u  /* the collector: outside --capture FUNCTION:FROM-TO */
#define AGP_CAPTURE_API 4u       /* the collector: agprof.stop() (--capture api: until agprof.start()) */

/* Bits of agp_shm_header.detail_off, written by the launcher. */
#define AGP_DETAIL_FREE_KERNELS 1u  /* kernels of no call: counted only (past --max-events, or the kernel cap) */

/* What a thread was doing when it first recorded (from its native stack). */
enum agp_thread_role {
	AGP_ROLE_UNKNOWN = 0,
	AGP_ROLE_TF_DATA = 1,       /* running inside tensorflow::data */
	AGP_ROLE_TF_EXECUTOR = 2,   /* another TensorFlow thread pool */
};
_Static_assert(sizeof(struct agp_shm_header) <= AGP_HEADER_BYTES, "header fits");

/*
 * Kernel totals (collector/hooks_kernel.c): per thread, one table of
 * AGP_KTOTAL_SLOTS entries after all the rings, entry i counting the kernel
 * in slot i of the thread's kernel cache.  The thread counts every execution
 * of the kernel there, and adds the duration of those it timed (the sampled
 * calls' kernels: reading a clock twice per kernel would cost more than
 * a small kernel), with plain stores (it is the only writer); the
 * launcher reads the tables once, when the run ends, so the counts are
 * exact even for a process killed with SIGKILL.  An entry that the thread
 * gives to another kernel is first written to its ring as an
 * AGP_REC_KERNEL_AGG record.
 */
#define AGP_KTOTAL_SLOTS 8192u
struct agp_kernel_total {
	uint32_t name;        /* string ids, 0 = unused */
	uint32_t type;
	uint32_t call_seq;    /* low 32 bits of the seq of a call it ran under, 0 = none seen */
	uint32_t timed;       /* executions timed (saturated) */
	uint64_t count;       /* executions */
	uint64_t timed_ns;    /* summed duration of the timed ones */
};
_Static_assert(sizeof(struct agp_kernel_total) == 32, "kernel total layout");
#define AGP_KTOTAL_BYTES ((uint64_t)AGP_KTOTAL_SLOTS * sizeof(struct agp_kernel_total))
#define AGP_KTOTAL_OFFSET ((uint64_t)AGP_HEADER_BYTES + (uint64_t)AGP_RING_BYTES * AGP_MAX_THREADS)
#define AGP_SHM_FILE_BYTES (AGP_KTOTAL_OFFSET + AGP_KTOTAL_BYTES * AGP_MAX_THREADS)

/* Ring records: 8-byte aligned, size in 8-byte words in the header. */
enum agp_rec_type {
	AGP_REC_WRAP = 1,     /* skip to the start of the ring */
	AGP_REC_STRING = 2,   /* arg = string id; NUL-terminated text follows */
	AGP_REC_SITE = 3,     /* arg = site id; struct agp_rec_site */
	AGP_REC_EAGER = 4,    /* arg = op string id; struct agp_rec_span */
	AGP_REC_CALL = 5,     /* arg = function name string id; struct agp_rec_span */
	AGP_REC_BLACKBOX = 6, /* arg = node name string id; struct agp_rec_span (aux = op type) */
	AGP_REC_SESSION = 7,  /* arg = enum agp_session_kind; struct agp_rec_session */
	AGP_REC_KERNEL = 8,   /* arg = node name string id; struct agp_rec_kernel */
	AGP_REC_KERNEL_AGG = 9, /* arg = node name string id; struct agp_rec_kernel_agg */
};

struct agp_rec_hdr {
	uint16_t type;
	uint16_t words;       /* total record size / 8, header included */
	uint32_t arg;
};

struct agp_rec_site {
	struct agp_rec_hdr h;
	uint32_t file;        /* string ids */
	uint32_t func;
	uint32_t line;
	uint32_t parent;      /* site id of the next frame out toward user code, 0 = none */
	uint32_t flags;       /* AGP_SITE_LIBRARY */
	uint32_t pad;
};

/* The frame is library code (site-packages, the standard library, --library). */
#define AGP_SITE_LIBRARY 1u
/* Frames kept per call site: innermost library frames, then the user frame. */
#define AGP_SITE_CHAIN_MAX 6

#define AGP_SPAN_SLOW_PATH 1u   /* eager op dispatched outside the C fast path */
#define AGP_SPAN_FAILED 2u      /* TF returned an error status */
#define AGP_SPAN_KERNEL_DETAIL 4u /* a call whose kernels are recorded one by one (AGP_REC_KERNEL) */

/* A longer pause between two dispatches is not part of an eager loop. */
#define AGP_PYTHON_GAP_MAX_NS 1000000u

struct agp_rec_span {
	struct agp_rec_hdr h;
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t aux;         /* device string id (eager), op type id (black box) */
	uint32_t site;        /* site id, 0 = unknown */
	uint32_t flags;
	uint32_t aux2;        /* eager op: Python time since the thread's previous
	                         dispatch (ns, 0 past AGP_PYTHON_GAP_MAX_NS);
	                         black box: its py_func registry token's string id */
	uint64_t seq;         /* per-process event number (GPU external correlation id) */
};

/* How a TF1 Session step was run (the C API entry point the hook saw). */
enum agp_session_kind {
	AGP_SESSION_RUN = 1,       /* TF_SessionRun: Session.run, make_callable */
	AGP_SESSION_PARTIAL = 2,   /* TF_SessionPRun: Session.partial_run */
	AGP_SESSION_CALLABLE = 3,  /* TF_SessionRunCallable: Session._make_callable_from_options */
};

/* One Session step (graph mode): its counts as the C API received them. */
struct agp_rec_session {
	struct agp_rec_hdr h;
	uint64_t start_ns;
	uint64_t end_ns;
	uint32_t site;        /* site id, 0 = unknown */
	uint32_t flags;       /* AGP_SPAN_FAILED */
	uint32_t feeds;       /* tensors fed */
	uint32_t fetches;     /* tensors fetched */
	uint32_t targets;     /* operations run for their effect only */
	uint32_t pad;
};

/* A kernel ran through ThreadPoolDevice::ComputeAsync: dur_ns is its dispatch only. */
#define AGP_KERNEL_ASYNC 1u
/*
 * The last kernel of its call detailed on its thread (AGP_KDETAIL_CALL_MAX,
 * collector.h): the launcher stores none of the call's kernels one by one.
 */
#define AGP_KERNEL_CUT 2u
/*
 * Kernel records are written only while the ring is less than this share
 * full (1/AGP_KERNEL_ROOM_DIV), so that they never crowd out the eager ops
 * and calls of the same thread; the others are counted in dropped_kernels.
 */
#define AGP_KERNEL_ROOM_DIV 4u
/* Longest duration a kernel record holds (ns); longer kernels saturate to it. */
#define AGP_KERNEL_DUR_MAX 0xffffffffu

/*
 * One CPU kernel execution (collector/hooks_kernel.c): 32 bytes, the
 * highest-rate record.  call_seq is the low 32 bits of the seq of the
 * graph-function call it ran under (agp_rec_span.seq of that AGP_REC_CALL
 * record; 0 = none or unknown).
 */
struct agp_rec_kernel {
	struct agp_rec_hdr h;
	uint64_t start_ns;
	uint32_t dur_ns;      /* saturates at AGP_KERNEL_DUR_MAX */
	uint32_t type;        /* op type string id */
	uint32_t call_seq;
	uint32_t flags;       /* AGP_KERNEL_ASYNC, AGP_KERNEL_CUT */
};
_Static_assert(sizeof(struct agp_rec_kernel) == 32, "kernel record layout");

/*
 * A kernel's totals up to the moment its thread gave its agp_kernel_total
 * entry to another kernel (the entry is then zeroed): the launcher adds it
 * to what the tables hold at the end.
 */
struct agp_rec_kernel_agg {
	struct agp_rec_hdr h;
	uint32_t type;        /* op type string id */
	uint32_t call_seq;
	uint32_t timed;
	uint32_t pad;
	uint64_t count;
	uint64_t timed_ns;
};
_Static_assert(sizeof(struct agp_rec_kernel_agg) == 40, "kernel aggregate record layout");

/*
 * Side-file records: struct agp_side_hdr then `len` bytes of fields, each
 * field a struct agp_field followed by its value padded to 8 bytes.
 * Integer fields are int64 little endian; text fields are bytes (not
 * NUL-terminated); blob fields are raw bytes.
 */
enum agp_side_type {
	AGP_SIDE_PROCESS = 1,   /* process facts, once per image */
	AGP_SIDE_TF_STATUS = 2, /* TensorFlow hooked / mismatch */
	AGP_SIDE_TRACE = 3,     /* one finished (or failed) trace */
	AGP_SIDE_FUNCDEF = 4,   /* a function registered in the eager context */
	AGP_SIDE_EXIT = 5,      /* the process is exiting with a status */
	AGP_SIDE_GPU_STATUS = 6,
	AGP_SIDE_GPU_ACTIVITY = 7,
	AGP_SIDE_GPU_API = 8,
	AGP_SIDE_TRACE_INPUT = 9, /* one input of the trace that precedes it */
	AGP_SIDE_TRACE_EVENT = 10, /* a pitfall seen while tracing (collector/pywatch.c) */
	AGP_SIDE_KERNELS = 11,  /* kernel hook status, or a trace's node source lines (AGP_F_NODE_LINES) */
	AGP_SIDE_CAPTURE = 12,    /* the collector's capture bits changed: AGP_F_CAPTURE_OFF at AGP_F_START */
	AGP_SIDE_COLLECTIVE = 13, /* one collective op execution and its keys (collector/hooks_collective.c) */
	AGP_SIDE_DATASET = 14,    /* a tf.data dataset or iterator op run eagerly, with its handles (hooks_tf.c) */
	AGP_SIDE_NOTE = 15,       /* AGP_F_DETAIL: what the collector knows is missing, for meta.incomplete */
	AGP_SIDE_OP_PRICE = 16,   /* an op type's thread CPU price, measured at the first trace (collector/op_price.c) */
};

struct agp_side_hdr {
	uint32_t type;
	uint32_t len;
};

struct agp_field {
	uint16_t tag;
	uint16_t pad;
	uint32_t len;
};

/* Field tags (one namespace for all side records). */
enum agp_tag {
	AGP_F_PID = 1, AGP_F_PPID, AGP_F_TID, AGP_F_START, AGP_F_END, AGP_F_ARGV,
	AGP_F_PYVER, AGP_F_TFVER, AGP_F_STATUS, AGP_F_DETAIL,
	AGP_F_NAME = 20, AGP_F_FILE, AGP_F_LINE, AGP_F_TFNAME, AGP_F_SIGNATURE,
	AGP_F_SITE_FILE, AGP_F_SITE_LINE, AGP_F_SITE_FUNC, AGP_F_OBJECT, AGP_F_OBJTRACE,
	AGP_F_JIT, AGP_F_REDUCE, AGP_F_HAS_SIG, AGP_F_VARS, AGP_F_TRACE_SEQ,
	AGP_F_PARENT_TRACE, AGP_F_BLOB, AGP_F_POSITION, AGP_F_KIND, AGP_F_DTYPE,
	AGP_F_SHAPE, AGP_F_VALUE, AGP_F_CREATED,
	AGP_F_LIB_FILE = 50, AGP_F_LIB_LINE, AGP_F_LIB_FUNC, /* trace: innermost library frame */
	/*
	 * trace: the library frames out from that one toward the user frame, at
	 * most AGP_SITE_CHAIN_MAX - 2, innermost first, as "file\tline\tfunc\n"
	 * entries (the line that passed an argument, past a decorator helper)
	 */
	AGP_F_LIB_OUTER,
	AGP_F_GPU_KIND = 60, AGP_F_DEVICE, AGP_F_CONTEXT, AGP_F_STREAM, AGP_F_CORR,
	AGP_F_GRID_X, AGP_F_GRID_Y, AGP_F_GRID_Z, AGP_F_BLOCK_X, AGP_F_BLOCK_Y,
	AGP_F_BLOCK_Z, AGP_F_BYTES, AGP_F_COPY_KIND, AGP_F_API, AGP_F_EXTERNAL,
	AGP_F_EXIT_STATUS = 80, AGP_F_CWD,
	/* trace event: occurrences (node count for node lines), the traced function */
	AGP_F_COUNT = 90, AGP_F_FUNC, AGP_F_FUNC_FILE, AGP_F_FUNC_LINE, AGP_F_REPEATS, AGP_F_LOOP_LINE,
	/*
	 * kernels (side type 11): AGP_F_STATUS/AGP_F_DETAIL of the hook, or with
	 * AGP_F_TRACE_SEQ the node lines of that trace's graph: a text of
	 * "name\tfile\tline\n" entries
	 */
	AGP_F_NODE_LINES = 100,
	/* capture: the collector's bits of capture_off after the change, why, capture-function calls so far */
	AGP_F_CAPTURE_OFF = 110, AGP_F_CAPTURE_WHY, AGP_F_CAPTURE_CALLS,
	/*
	 * collective (side type 13, with AGP_F_NAME the op type, AGP_F_TID,
	 * AGP_F_START, AGP_F_END): 1 a graph kernel (END: its done callback) or 0
	 * an eager op; the keys, or why they were not read
	 */
	AGP_F_COLL_GRAPH = 120, AGP_F_COLL_GROUP_SIZE, AGP_F_COLL_GROUP_KEY, AGP_F_COLL_INSTANCE_KEY,
	AGP_F_COLL_KEY_STATUS,
	/*
	 * trace: the collector's own time in it (ns): describing it, just before
	 * AGP_F_START, its watch's calls into Python until AGP_F_END and the
	 * slowdown of the watched code, at its calibrated share (pywatch.c)
	 */
	AGP_F_COLLECTOR_NS = 170,
	/*
	 * dataset (side type 14, with AGP_F_NAME the op, AGP_F_TID, AGP_F_START,
	 * AGP_F_END): the addresses of its first two input handles and of its
	 * first output, which tell a dataset from the next and an iterator's
	 * dataset (0: none)
	 */
	AGP_F_DS_IN = 180, AGP_F_DS_IN2, AGP_F_DS_OUT,
	/*
	 * op price (side type 16, with AGP_F_NAME the op type, AGP_F_TID,
	 * AGP_F_COUNT the ops timed): the median of its batches' thread CPU
	 * time per op, and of their wall-clock time per op (ns)
	 */
	AGP_F_CPU_NS = 190, AGP_F_WALL_NS,
};

#endif /* AGPROF_PROTOCOL_H */
