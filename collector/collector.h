/*
 * collector.h - internals of the injected collector (libagprof-collector.so).
 *
 * Owns: the per-process shared-memory ring file and side file, the per-thread
 * state (ring slot, string and call-site caches, reentrancy guard), the
 * emission of records.  Hooks live in hooks_*.c; Python frame reading in
 * pyframe.c; trace-time Python introspection in pytrace.c.
 *
 * Rule for everything reachable from a hook: no lock, no system call and no
 * malloc on the hot path (eager ops, function calls); rare paths (first event
 * of a thread, a trace, a registration) may do all three.  On any internal
 * failure the collector turns itself off (agp_disable) and the workload runs on.
 */
#ifndef AGPROF_COLLECTOR_H
#define AGPROF_COLLECTOR_H

#include "agp_protocol.h"

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define AGP_HIDDEN __attribute__((visibility("hidden")))
#define AGP_EXPORT __attribute__((visibility("default")))

struct agp_strcache_slot {
	uint64_t hash;
	uint32_t id;
	uint32_t len;
	char text[48];          /* short strings compared by content */
};

struct agp_sitecache_slot {
	uintptr_t code;         /* innermost non-framework code object */
	uintptr_t ip;           /* instruction pointer within it */
	uintptr_t user_code;    /* first user frame out from it, 0 when it is user code */
	uintptr_t user_ip;
	uint32_t site;
	uint32_t pad;
};

/*
 * The frames of a call site's walk (pyframe.c): from the innermost frame
 * (code object, instruction) out to the user frame, depth frames further,
 * with a hash of every frame's (code object, instruction) on the way.  A
 * walk that meets the same frames again needs neither their code objects
 * nor the code cache: the interpreter's own frames only.
 */
struct agp_walkmemo_slot {
	uintptr_t code;
	uintptr_t ip;
	uint64_t path;          /* hash of frames 0..depth */
	uint32_t depth;
	uint32_t site;
};

/* What the trace watch did on a thread, counted (AGPROF_WATCH_PRICE=1 prints them per trace: pytrace.c). */
struct agp_watch_counts {
	uint64_t frames;        /* frames the frame hook ran (3.12+: PY_START events) */
	uint64_t events;        /* profile function calls (3.12+: CALL and C_RETURN events) */
	uint64_t toggles;       /* profile function turned on or off by the frame hook */
	uint64_t op_frames;     /* pyframe.c agp_py_op_line: frames walked for the ops' lines */
};

/* How a thread's traces are watched (pywatch.c, agp_thread.py_watch_mode). */
enum { AGP_WATCH_FRAME_HOOK = 1, AGP_WATCH_MONITOR, AGP_WATCH_PROFILE };

/* What a Python frame's file is (pyowner.c, agp_classify_path). */
enum agp_frame_kind {
	AGP_FRAME_USER = 0,      /* the user's code: where a finding points */
	AGP_FRAME_LIBRARY = 1,   /* site-packages, dist-packages, the standard library, --library */
	AGP_FRAME_FRAMEWORK = 2, /* TensorFlow, Keras, absl, frozen modules: skipped */
};

struct agp_codecache_slot {
	uintptr_t code;
	uintptr_t filename;     /* co_filename object, guards against address reuse */
	uint32_t file;          /* string ids */
	uint32_t func;
	uint32_t kind;          /* enum agp_frame_kind */
	uint32_t pad;
};

/*
 * The kernel cache (hooks_kernel.c), by OpKernel*: what the hot path reads
 * at every execution, four slots a cache line, apart from what only misses
 * and sampled calls read (agp_kcache_name, same index).
 */
struct agp_kcache_slot {
	uintptr_t kernel;
	uint32_t vtable;        /* low bits of the kernel's vtable pointer: checked at every execution */
	uint16_t next;          /* slot of the kernel that ran after it on this thread last time */
	uint16_t collective;    /* agp_collective_kind of its op type (ComputeAsync wraps their callback) */
};

struct agp_kcache_name {
	uintptr_t fingerprint;  /* the kernel's name text pointer: tells a reused address */
	uint32_t name;          /* string ids */
	uint32_t type;
};

#define AGP_STRCACHE 1024
#define AGP_KCACHE AGP_KTOTAL_SLOTS /* power of two: more than the nodes of a large graph */
#define AGP_KINDEX (2 * AGP_KCACHE) /* the kernel cache's hash index: at most half full */
#define AGP_SITECACHE 4096
#define AGP_CODECACHE 1024
#define AGP_WALKMEMO 256        /* power of two: 2-way sets */
#define AGP_WALKMEMO_DEPTH 24   /* deeper user frames are walked in full each time */
#define AGP_TRACE_STACK 16
#define AGP_CALL_COUNTS 64      /* power of two */

struct agp_open_trace;

/* A graph function's calls on a thread, for kernel sampling (agp_call_detailed). */
struct agp_call_count {
	uint32_t name, calls;   /* string id; its calls so far, up to AGP_KDETAIL_FIRST */
	uint64_t next_ns;       /* its next call starting from then is sampled */
	uint64_t pace_ns;       /* the duration its gap is counted in (agp_call_sampled), 0: none yet */
};

/* Per-thread state, allocated on the thread's first event (mmap). */
struct agp_thread {
	/* first line: all the kernel hooks read of it at every execution */
	uint32_t generation;    /* process generation it belongs to (fork resets) */
	int32_t tid;
	struct agp_thread_ring *ring;
	int in_hook;            /* reentrancy guard */
	int eager_depth;        /* inside a primitive TFE_Execute or a Session step */
	uint64_t call_seq;      /* seq of the graph-function call this thread is in, 0 = none; | AGP_CALL_DETAIL */
	/* hooks_kernel.c: kcache[i]'s totals (in the ring file), NULL: every kernel in detail */
	struct agp_kernel_total *ktotals;
	int ktotals_tried;
	uint32_t kprev;         /* slot of the thread's previous kernel */
	uint32_t kpred;         /* slot of the kernel expected next (kcache[kprev].next) */
	uint32_t kused;         /* slots taken so far (kernel_slot_new) */
	uint64_t free_kernels;  /* kernels of no call seen so far (agp_kernel_detailed) */
	uint64_t kdetail_call;  /* the sampled call whose kernels kdetail_n counts (agp_kernel_detailed) */
	uint32_t kdetail_n;     /* its kernels detailed on this thread so far, up to AGP_KDETAIL_CALL_MAX */
	char *data;             /* ring data area */
	uint64_t ring_bytes;    /* its capacity (ring->capacity) */
	int fastpath_depth;     /* inside TFE_Py_FastPathExecute_C */
	const char *fastpath_op; /* the op it was asked to run */
	uint64_t last_dispatch_end; /* end of this thread's previous TFE_Execute */
	struct agp_open_trace *trace_top; /* pytrace.c: the innermost open trace, linked to the outer ones */
	const void *last_iterator;  /* iterator handle of this thread's previous read (AGP_SIDE_DATASET) */
	/* pywatch.c: root frames (PyObject *) of the watched traces, innermost last */
	void *py_roots[AGP_TRACE_STACK];
	int py_nroots;
	int py_unwinding;       /* pywatch.c: the trace function is set (an exception unwinds) */
	uint64_t py_own_ns;     /* pytrace.c, pywatch.c: thread CPU time in the collector's Python work for traces so far */
	int py_calibrating;     /* pywatch.c: its calibration loop runs on this thread (other threads may run meanwhile) */
	int py_profiling;       /* pywatch.c: the profile function is set now (the frame hook turns it on and off) */
	int py_inside;          /* pywatch.c: the watch's own Python runs (the frame hook stands aside) */
	struct agp_watch_counts py_counts; /* pywatch.c, pymonitor.c, pyframe.c: what the watch did on this thread */
	int py_watch_mode;      /* pywatch.c: how its traces were watched last (AGP_WATCH_*), 0: never */
	struct agp_opfile_slot *op_files; /* pyframe.c agp_py_op_line: files' kinds by code object, made on first use */
	/*
	 * Cache-line aligned, and so are the tables after it (their sizes are
	 * multiples of 64): at offset 360, every 64-byte string slot spanned
	 * two lines and every other 32-byte code or kernel slot did.
	 */
	struct agp_strcache_slot strcache[AGP_STRCACHE] __attribute__((aligned(64)));
	struct agp_sitecache_slot sitecache[AGP_SITECACHE];
	struct agp_codecache_slot codecache[AGP_CODECACHE];
	struct agp_walkmemo_slot walkmemo[AGP_WALKMEMO];
	struct agp_kcache_slot kcache[AGP_KCACHE];
	struct agp_kcache_name knames[AGP_KCACHE];
	uint16_t kindex[AGP_KINDEX]; /* slot + 1 by the kernel's hash, 0 empty (hooks_kernel.c) */
	struct agp_call_count call_counts[AGP_CALL_COUNTS]; /* per function name id (agp_call_detailed) */
};

/* Global state of this process image. */
struct agp_process {
	int enabled;            /* 0 once turned off */
	uint32_t generation;
	int pid;
	struct agp_shm_header *shm;
	int shm_fd;             /* the ring file, kept to reserve ring pages */
	int side_fd;
	/* Which files those fds were: a workload may close and reuse fd numbers. */
	uint64_t shm_dev, shm_ino, side_dev, side_ino;
	_Atomic uint32_t next_string_id;
	_Atomic uint32_t next_site_id;
	_Atomic uint64_t next_seq;
	_Atomic uint64_t next_trace_seq;
	/* graph-function calls in flight, and the latest one's seq (hooks_kernel.c) */
	_Atomic uint32_t active_calls;
	_Atomic uint64_t last_call_seq;
	int kernels_off;        /* AGPROF_NO_KERNELS */
	int kernels_all;        /* AGPROF_KERNELS=all: every kernel in detail */
	int kbench;             /* AGPROF_KBENCH (enum agp_kbench, bench/kernels.py) */
};

/* AGPROF_KBENCH, bench/ only: the split of what the kernel hooks cost. */
enum agp_kbench {
	AGP_KBENCH_NONE = 0,
	AGP_KBENCH_COUNT = 1,   /* "count": every kernel counted, no call sampled */
	AGP_KBENCH_NOSTORE = 2, /* "nostore": sampled calls timed, their records not written */
	AGP_KBENCH_FLOOR = 3,   /* "floor": the hook calls straight through (its call alone) */
	AGP_KBENCH_PASS = 4,    /* "pass": straight through after the thread's state */
};

extern struct agp_process agp_proc AGP_HIDDEN;

static inline uint64_t agp_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);  /* vDSO: no system call */
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Kernel sampling (docs/collector.md, "Kernels"): every kernel execution is
 * counted in its thread's totals; one by one (an AGP_REC_KERNEL record) only
 * the kernels of sampled calls: per thread and graph function, its first
 * AGP_KDETAIL_FIRST calls, then the first call that starts at least
 * AGP_KDETAIL_GAP times the function's pace after the last sampled call's
 * end, the pace being the last sampled call's duration but at most twice
 * the pace before it (one slow call, a collection or a checkpoint, must not
 * stop the sampling for 256 times as long; a function that grows slower
 * reaches its new pace in a few samples): a budget of time (a sampled call
 * costs a few times an unsampled one, its clock reads and the launcher's
 * rows), so that whatever the rate of calls
 * and kernels at most about 1/AGP_KDETAIL_GAP of a function's time is spent
 * in sampled calls and its kernels stored are a like share.  The decision
 * is the call's, taken when it starts, so that every kernel of a call, on
 * every thread, is recorded or none is: it travels as AGP_CALL_DETAIL, a bit
 * of the call seq that kernels_enter (hooks_tf.c) stores in
 * agp_thread.call_seq and agp_process.last_call_seq (kernel records carry
 * the low 32 bits only).  Kernels of no call (eager ops, Session.run,
 * tf.data) are detailed in bursts: the first AGP_KDETAIL_FREE of a thread,
 * then AGP_KDETAIL_BURST in every AGP_KDETAIL_BURST * AGP_KDETAIL_EVERY.
 * A sampled call is detailed for its first AGP_KDETAIL_CALL_MAX kernels on
 * each thread: one that runs more (an MCMC sampler's while loop: 5 M
 * kernels in one call) is cut there, its last record flagged
 * AGP_KERNEL_CUT, and the launcher keeps none of its rows (all or none
 * still); its kernels stay counted, the cut ones untimed.
 */
#define AGP_CALL_DETAIL (1ull << 63)
#define AGP_KDETAIL_FIRST 5u
#define AGP_KDETAIL_GAP 256u
#define AGP_KDETAIL_EVERY 64u   /* power of two: the bursts of kernels of no call */
#define AGP_KDETAIL_FREE 4096u
#define AGP_KDETAIL_BURST 1024u /* power of two */
#define AGP_KDETAIL_CALL_MAX 65536u

/* The thread's sampling state of graph function name_id (a colliding function takes the entry over, from its first call). */
static inline struct agp_call_count *agp_call_count_of(struct agp_thread *t, uint32_t name_id)
{
	struct agp_call_count *c = &t->call_counts[(name_id * 0x9e3779b1u) >> 26];

	_Static_assert(AGP_CALL_COUNTS == 1 << 6, "call counter index bits");
	if (c->name != name_id)
		*c = (struct agp_call_count){ .name = name_id };
	return c;
}

/* Whether the call of graph function name_id that starts at now is sampled (AGP_CALL_DETAIL or 0). */
static inline uint64_t agp_call_detailed(struct agp_thread *t, uint32_t name_id, uint64_t now)
{
	struct agp_call_count *c;

	if (agp_proc.kernels_off || agp_proc.kernels_all || agp_proc.kbench == AGP_KBENCH_COUNT)
		return agp_proc.kernels_all && !agp_proc.kernels_off ? AGP_CALL_DETAIL : 0;
	c = agp_call_count_of(t, name_id);
	if (c->calls < AGP_KDETAIL_FIRST) {
		c->calls++;
		return AGP_CALL_DETAIL;
	}
	return now >= c->next_ns ? AGP_CALL_DETAIL : 0;
}

/* A sampled call of name_id ran from start to end: the next one waits AGP_KDETAIL_GAP times the pace. */
static inline void agp_call_sampled(struct agp_thread *t, uint32_t name_id, uint64_t start, uint64_t end)
{
	struct agp_call_count *c = agp_call_count_of(t, name_id);
	uint64_t dur = end > start ? end - start : 1;

	if (c->pace_ns && c->pace_ns <= UINT64_MAX / 4 && dur > 2 * c->pace_ns)
		dur = 2 * c->pace_ns;
	c->pace_ns = dur;
	c->next_ns = dur < UINT64_MAX / AGP_KDETAIL_GAP / 2 ? end + dur * AGP_KDETAIL_GAP : UINT64_MAX;
}

/*
 * A kernel of sampled call on this thread: 1 detailed, AGP_KERNEL_CUT the
 * last one detailed (the call's detail is cut there), 0 past it.
 */
static inline int agp_kernel_call_room(struct agp_thread *t, uint64_t call)
{
	if (t->kdetail_call != call) {
		t->kdetail_call = call;
		t->kdetail_n = 0;
	}
	if (t->kdetail_n >= AGP_KDETAIL_CALL_MAX)
		return 0;
	return ++t->kdetail_n == AGP_KDETAIL_CALL_MAX ? (int)AGP_KERNEL_CUT : 1;
}

/*
 * Whether a kernel run under call (a call seq with its AGP_CALL_DETAIL bit,
 * 0 = none) is recorded in detail: nonzero (AGP_KERNEL_CUT: the last of
 * its call, agp_kernel_call_room) or 0.
 */
static inline int agp_kernel_detailed(struct agp_thread *t, uint64_t call)
{
	uint64_t n;

	if (!t->ktotals || agp_proc.kernels_all)
		return 1;
	if (call)
		return (call & AGP_CALL_DETAIL) ? agp_kernel_call_room(t, call) : 0;
	if (atomic_load_explicit(&agp_proc.shm->detail_off, memory_order_relaxed) & AGP_DETAIL_FREE_KERNELS)
		return 0;  /* the launcher would refuse it: not timed, not sent */
	n = t->free_kernels++;
	return n < AGP_KDETAIL_FREE || ((n / AGP_KDETAIL_BURST) & (AGP_KDETAIL_EVERY - 1)) == 0;
}

/*
 * The thread's state (collector.c); agp_thread_new makes it on the thread's
 * first event, and a pthread key's destructor gives its ring slot back
 * when the thread ends (docs/collector.md, "Buffers").
 */
extern __thread struct agp_thread *agp_tls AGP_HIDDEN __attribute__((tls_model("initial-exec")));
struct agp_thread *agp_thread_new(void) AGP_HIDDEN;

/*
 * Current thread's state, creating it on first use; NULL when disabled.
 * Inline: the kernel hooks ask it for every kernel, and a call costs more
 * than the two loads of the common case.
 */
static inline struct agp_thread *agp_thread_get(void)
{
	struct agp_thread *t = agp_tls;

	if (__builtin_expect(t != NULL && t->generation == agp_proc.generation, 1))
		return agp_proc.enabled ? t : NULL;
	return agp_thread_new();
}

/* Turn the collector off for good, with one line on stderr saying why. */
void agp_disable(const char *why) AGP_HIDDEN;

/* Intern text in the thread's ring; returns its id (0 on failure). */
uint32_t agp_intern(struct agp_thread *t, const char *text, size_t len) AGP_HIDDEN;

/*
 * Intern an op name and tell (*flags, AGP_OP_*) whether it names a
 * registered graph function, and the --capture one (is_function is asked
 * once per cached name).
 */
uint32_t agp_intern_op(struct agp_thread *t, const char *name, int (*is_function)(const char *),
		       int *flags) AGP_HIDDEN;

/*
 * Define a call site in the thread's ring; returns its id.  parent is the
 * site of the next frame out toward user code (0 = none), flags
 * AGP_SITE_LIBRARY for a library frame.
 */
uint32_t agp_site_define(struct agp_thread *t, uint32_t file, uint32_t func, uint32_t line, uint32_t parent,
			 uint32_t flags) AGP_HIDDEN;

/*
 * The capture window (capture.c): whether high-rate events are recorded now.
 * The one gate of the hot path: a relaxed load of the word the launcher and
 * capture.c write (agp_shm_header.capture_off); agp_event_reserve asks it.
 */
static inline int agp_capture_open(void)
{
	return atomic_load_explicit(&agp_proc.shm->capture_off, memory_order_relaxed) == 0;
}

/* capture.c: read AGPROF_CAPTURE / AGPROF_CAPTURE_OFF once at start. */
void agp_capture_read_env(void) AGP_HIDDEN;
/* capture.c: a forked child starts with its parent's window (before its buffers are released). */
void agp_capture_fork(void) AGP_HIDDEN;
/* capture.c: set a new process image's header (after open_process_files). */
void agp_capture_start(void) AGP_HIDDEN;
/* capture.c: whether an op name is a call of the --capture function. */
int agp_capture_match(const char *name) AGP_HIDDEN;
/* capture.c: around a call of the --capture function: begin returns its number, end takes it. */
uint64_t agp_capture_call_begin(void) AGP_HIDDEN;
void agp_capture_call_end(uint64_t n) AGP_HIDDEN;

/* agp_intern_op's *flags */
#define AGP_OP_FUNCTION 1   /* a registered graph function: a call */
#define AGP_OP_CAPTURE 2    /* a call of the --capture function */
#define AGP_OP_COLLECTIVE 4 /* a collective op (hooks_collective.c) */
#define AGP_OP_DATASET 8    /* a tf.data dataset or iterator op (hooks_tf.c, AGP_SIDE_DATASET) */
#define AGP_OP_READ 16      /* an iterator read (IteratorGetNext, ...) */

/* Append a span record (eager op, call, black box). */
void agp_emit_span(struct agp_thread *t, uint16_t type, uint32_t arg, uint64_t start, uint64_t end,
		   uint32_t aux, uint32_t site, uint32_t flags, uint32_t aux2, uint64_t seq) AGP_HIDDEN;

/* Append a Session step record (AGP_REC_SESSION). */
void agp_emit_session(struct agp_thread *t, uint32_t kind, uint64_t start, uint64_t end, uint32_t site,
		      uint32_t flags, uint32_t feeds, uint32_t fetches, uint32_t targets) AGP_HIDDEN;

/* Side records: build with agp_side_begin / agp_side_*, then agp_side_end. */
struct agp_side {
	char *buf;
	size_t len, cap;
	int failed;
};
void agp_side_begin(struct agp_side *s, uint32_t type) AGP_HIDDEN;
void agp_side_int(struct agp_side *s, uint16_t tag, int64_t v) AGP_HIDDEN;
void agp_side_text(struct agp_side *s, uint16_t tag, const char *text) AGP_HIDDEN;
void agp_side_bytes(struct agp_side *s, uint16_t tag, const void *data, size_t len) AGP_HIDDEN;
/* Writes the record (one write(2) under a mutex) and frees the buffer. */
void agp_side_end(struct agp_side *s) AGP_HIDDEN;

/* Read n bytes at p without trusting that they are mapped; 0 when read. */
int agp_safe_read(const void *p, void *out, size_t n) AGP_HIDDEN;

/*
 * hooks_collective.c: collective ops.  agp_collective_kind: 0 when type is
 * not a collective's op type, else its kind (asked once per kernel or op
 * name).  Graph kernels: agp_collective_wrap returns the done callback to
 * give ComputeAsync (storage, 32 bytes on the caller's stack, holds it),
 * agp_collective_unwrap destroys it after the call.  Eager ops: the keys
 * before TFE_Execute, the record after it.
 */
struct agp_collective_keys {
	int kind, have;
	int64_t group_size, group_key, instance_key;
	const char *status;     /* why the keys were not read (have = 0) */
};
int agp_collective_kind(const char *type, size_t len) AGP_HIDDEN;
void *agp_collective_wrap(struct agp_thread *t, int kind, const void *ctx, void *done, void *storage) AGP_HIDDEN;
void agp_collective_unwrap(void *storage) AGP_HIDDEN;
void agp_collective_eager_keys(void *op, int kind, struct agp_collective_keys *k) AGP_HIDDEN;
void agp_collective_eager_done(const struct agp_thread *t, const struct agp_collective_keys *k, uint64_t start,
			       uint64_t end) AGP_HIDDEN;

/* Start recording into the session directory dir (the constructor's work). */
int agp_start(const char *dir) AGP_HIDDEN;

/* hooks_tf.c */
void agp_tf_init(void) AGP_HIDDEN;
/* hooks_tf.c: sym's definition in the loaded object that provides it, other than self. */
void *agp_tf_symbol(const char *sym, void *self) AGP_HIDDEN;
/* hooks_kernel.c: read AGPROF_NO_KERNELS (at start); say at exit whether kernels were seen. */
void agp_kernels_init(void) AGP_HIDDEN;
void agp_kernels_exit_check(void) AGP_HIDDEN;
/*
 * hooks_kernel.c: whether got.c should give hook's slot TensorFlow's own
 * function back (a kernel hook under --no-kernels).
 */
int agp_kernel_hook_unwanted(const void *hook) AGP_HIDDEN;
/*
 * hooks_kernel.c: tensorflow::ThreadPoolDevice::Compute(OpKernel*, OpKernelContext*)
 * and ComputeAsync(AsyncOpKernel*, OpKernelContext*, std::function<void()>),
 * by their mangled names (hooks_tf.c's GOT table lists them).
 */
#define AGP_KERNEL_COMPUTE _ZN10tensorflow16ThreadPoolDevice7ComputeEPNS_8OpKernelEPNS_15OpKernelContextE
#define AGP_KERNEL_COMPUTE_NAME "_ZN10tensorflow16ThreadPoolDevice7ComputeEPNS_8OpKernelEPNS_15OpKernelContextE"
#define AGP_KERNEL_COMPUTE_ASYNC \
	_ZN10tensorflow16ThreadPoolDevice12ComputeAsyncEPNS_13AsyncOpKernelEPNS_15OpKernelContextESt8functionIFvvEE
#define AGP_KERNEL_COMPUTE_ASYNC_NAME \
	"_ZN10tensorflow16ThreadPoolDevice12ComputeAsyncEPNS_13AsyncOpKernelEPNS_15OpKernelContextESt8functionIFvvEE"
void AGP_KERNEL_COMPUTE(void *device, void *kernel, void *ctx) AGP_EXPORT;
void AGP_KERNEL_COMPUTE_ASYNC(void *device, void *kernel, void *ctx, void *done) AGP_EXPORT;
/* The thread's agp_kernel_total table (ring file), NULL when it cannot be reserved. */
struct agp_kernel_total *agp_kernel_totals_map(struct agp_thread *t) AGP_HIDDEN;
/* Write a kernel's totals to the ring (AGP_REC_KERNEL_AGG) before its entry is reused; 0, or -1 when the ring is full. */
int agp_emit_kernel_agg(struct agp_thread *t, const struct agp_kernel_total *k) AGP_HIDDEN;
/* Append a kernel record (AGP_REC_KERNEL). */
void agp_emit_kernel(struct agp_thread *t, uint32_t name, uint32_t type, uint64_t start, uint64_t end,
		     uint32_t call_seq, uint32_t flags) AGP_HIDDEN;
/* pyframe.c: user call site of the current thread (0 = unknown). */
uint32_t agp_py_callsite(struct agp_thread *t) AGP_HIDDEN;
/*
 * pyowner.c: read the user-code / library overrides (AGPROF_USER_CODE,
 * AGPROF_LIBRARY: ':'-separated path prefixes), the working directory and
 * PYTHONPATH; called once at start.
 */
void agp_py_read_overrides(void) AGP_HIDDEN;
/*
 * pyowner.c: find the library roots beyond site-packages (PYTHONPATH
 * checkouts, editable installs, projects inside the user's tree) from
 * sys.argv[0] (script, may be NULL) and sys.path[0..n); once, the GIL held,
 * before the first frame is classified.
 */
void agp_py_owner_init(const char *script, const char *const *sys_path, int n) AGP_HIDDEN;
/* pyowner.c: classify a source file path (enum agp_frame_kind); reads tables only. */
int agp_classify_path(const char *path, size_t len) AGP_HIDDEN;
/* pyowner.c: whether path[0..len) contains needle. */
int agp_path_contains(const char *path, size_t len, const char *needle) AGP_HIDDEN;
/* pyframe.c: resolve libpython symbols if Python is in the process. */
int agp_py_available(void) AGP_HIDDEN;
/* pyframe.c: learn the interpreter's frame layout; needs the GIL. */
void agp_py_discover_layout(void) AGP_HIDDEN;
int agp_py_layout_tried(void) AGP_HIDDEN;
int agp_py_gil_held(void) AGP_HIDDEN;
/* str item i of a tuple, as UTF-8 (borrowed), or NULL; needs the GIL. */
struct _object;
const char *agp_py_tuple_str(struct _object *tuple, long i) AGP_HIDDEN;
/* pyframe.c: the interpreter's version, "3.11.7", or NULL. */
const char *agp_py_version(void) AGP_HIDDEN;
/*
 * pyonce.c: run setup() once per process (state starts at 0), the other
 * threads waiting with the GIL released while it runs; whether it succeeded.
 */
int agp_py_once(atomic_int *state, int (*setup)(void)) AGP_HIDDEN;

/*
 * pytrace.c: a trace seen from TF_NewGraph (begin, NULL when the graph is
 * no trace; open puts it on its thread's stack of open traces) to the
 * conversion of its graph into a function or the return of its root frame
 * (_maybe_define_function) by an exception, which write it and free it;
 * hooks_tf.c and pywatch.c drive it.
 */
struct agp_open_trace;
struct agp_open_trace *agp_pytrace_begin(struct agp_thread *t) AGP_HIDDEN;
void agp_pytrace_open(struct agp_thread *t, struct agp_open_trace *ot, void *graph) AGP_HIDDEN;
void agp_pytrace_close_graph(struct agp_thread *t, const void *graph, const char *tf_name,
			     const char *status) AGP_HIDDEN;
void agp_pytrace_raised(struct agp_thread *t, const void *frame) AGP_HIDDEN;
uint64_t agp_pytrace_seq(const struct agp_open_trace *ot) AGP_HIDDEN;
void agp_pytrace_count_variable(struct agp_open_trace *ot) AGP_HIDDEN;
void agp_pytrace_op(struct agp_thread *t, const void *graph, const char *op_type, const char *name) AGP_HIDDEN;
struct _object *agp_pytrace_graph_arg(struct agp_thread *t, struct _object *graph) AGP_HIDDEN;
/* pyframe.c: the user line of the op being made on this thread (agp_pytrace_op). */
int agp_py_op_line(struct agp_thread *t, char *buf, size_t cap) AGP_HIDDEN;

/*
 * op_price.c: the prices of the ops an edit adds, sent once per process
 * (due: not yet sent by this image or the one it was forked from; reset:
 * a new attach), one side record per op type (pytrace.c times them).
 */
int agp_op_prices_due(void) AGP_HIDDEN;
void agp_op_prices_done(void) AGP_HIDDEN;
void agp_op_prices_reset(void) AGP_HIDDEN;
int agp_op_price_send(const struct agp_thread *t, const char *op, int64_t samples, int64_t cpu_ns,
		      int64_t wall_ns) AGP_HIDDEN;

/* pywatch.c: what the traced code does while a trace runs (docs/collector.md, "Pitfalls inside traced code"). */
void agp_pywatch_init(struct _object *(*get)(struct _object *, const char *), struct _object *ns) AGP_HIDDEN;
int agp_pywatch_begin(struct agp_thread *t, uint64_t seq) AGP_HIDDEN;
void agp_pywatch_saves(struct _object *frame) AGP_HIDDEN;
uint32_t agp_pywatch_cost_ppm(const struct agp_thread *t) AGP_HIDDEN;

/* got.c: the GOT slots of TensorFlow's objects that import a hooked symbol, rewritten to reach the hook. */
struct got_hook {
	const char *name;
	void *hook;
	const char *records;  /* what it records, for the note when its slot cannot be patched */
};
extern const struct got_hook agp_got_hooks[] AGP_HIDDEN;  /* hooks_tf.c: every hook, by symbol name */
void agp_got_scan(void) AGP_HIDDEN;       /* patch the objects loaded since the last scan */
int agp_got_patched(void) AGP_HIDDEN;     /* slots patched so far */
int agp_got_bound(void) AGP_HIDDEN;       /* slots that reach a hook (0: TensorFlow's calls are not seen) */
int agp_got_unpatched(char *buf, size_t size) AGP_HIDDEN;  /* 1 and a line in buf: hooks a slot of which is not patched */
void *agp_real_dlopen(const char *file, int mode) AGP_HIDDEN;

/* hooks_tf.c: a late start (agprof_attach); at exit, whether any hook ran. */
void agp_tf_attach(void) AGP_HIDDEN;
void agp_tf_exit_check(void) AGP_HIDDEN;

/* hooks_proc.c: fork/exec hooks; collector.c: the process's end record. */
void agp_proc_hooks_init(void) AGP_HIDDEN;
void agp_exit_record(int status) AGP_HIDDEN;
/* collector.c: the launcher's variables as the constructor found them, handed to children (hooks_proc.c). */
extern char agp_env_preload[] AGP_HIDDEN;  /* the collector's own path, first in LD_PRELOAD */
extern char agp_env_shm[] AGP_HIDDEN;
extern char agp_env_cuda[] AGP_HIDDEN;

#endif
