/*
 * hooks_kernel.c - every CPU kernel execution (see docs/collector.md,
 * "Kernels").
 *
 * tensorflow::ThreadPoolDevice::Compute(OpKernel*, OpKernelContext*) and
 * ComputeAsync(AsyncOpKernel*, OpKernelContext*, std::function<void()>) are
 * exported by libtensorflow_framework.so.2, and the CPU device's vtable
 * reaches them through R_X86_64_64 *symbol* relocations: the preloaded
 * definitions here receive every kernel the executor (graph calls,
 * Session.run) and eager execution run on the CPU device (or got.c patches
 * the slot after a late start).
 *
 * Hot path (a cache hit): one thread-local lookup by OpKernel* (checked
 * against the kernel's class, kernel_stale), one count
 * added to the kernel's entry of the thread's agp_kernel_total table, and,
 * for a sampled call only (agp_kernel_detailed, collector.h), two clock
 * reads, the duration added to the entry and one 32-byte ring record.  The
 * counts stay exact; the launcher's writer, which costs about 2 us of CPU
 * per stored kernel, sees a small share of the kernels; and the clock, which
 * costs from 20 ns (vDSO, TSC) to over 150 ns (a VM that traps RDTSC) a
 * read against some 350 ns for a small kernel, is read for those only.  No lock, no
 * system call, no malloc.  A miss (a kernel's first run on this thread)
 * names the kernel through OpKernel::TraceString ("name:type"), which
 * allocates: kernels live as long as their graph, so misses are rare.
 */
#include "collector.h"

#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#define TRACE_STRING_SYM "_ZNK10tensorflow8OpKernel11TraceStringB5cxx11ERKNS_15OpKernelContextEb"

struct cxx_string {
	char *p;
	size_t len;
	union { char buf[16]; size_t cap; } u;
};

static struct {
	void (*compute)(void *, void *, void *);
	void (*compute_async)(void *, void *, void *, void *);
	void (*trace_string)(struct cxx_string *, const void *, const void *, bool);
	void (*cxx_delete)(void *);
	int resolved;          /* 0 not yet, 1 done */
	_Atomic int said;      /* the status side record was written */
	/*
	 * Offset in an OpKernel of the pointer to its name's text (learned on the
	 * first miss; -1 unknown): a cache hit compares it, so that a kernel
	 * freed and another allocated at the same address is named anew.
	 */
	_Atomic long name_off;
} K = { .name_off = -2 };

void agp_kernels_init(void)
{
	const char *off = getenv(AGP_ENV_NO_KERNELS);

	const char *mode = getenv(AGP_ENV_KERNELS);

	agp_proc.kernels_off = off && *off && strcmp(off, "0") != 0;
	agp_proc.kernels_all = mode && !strcmp(mode, "all");
	mode = getenv(AGP_ENV_KBENCH);
	agp_proc.kbench = !mode ? 0 : !strcmp(mode, "count") ? 1 : !strcmp(mode, "nostore") ? 2 : 0;
}

static void kernels_status(const char *status, const char *detail)
{
	struct agp_side s;
	int expected = 0;

	if (!atomic_compare_exchange_strong(&K.said, &expected, 1))
		return;
	agp_side_begin(&s, AGP_SIDE_KERNELS);
	agp_side_text(&s, AGP_F_STATUS, status);
	if (detail)
		agp_side_text(&s, AGP_F_DETAIL, detail);
	agp_side_end(&s);
}

/* Rare path (the first kernel): the real functions and the naming helpers. */
static void kernels_resolve(void)
{
	if (__atomic_load_n(&K.resolved, __ATOMIC_ACQUIRE))
		return;
	K.compute = (void (*)(void *, void *, void *))agp_tf_symbol(AGP_KERNEL_COMPUTE_NAME, (void *)AGP_KERNEL_COMPUTE);
	K.compute_async = (void (*)(void *, void *, void *, void *))agp_tf_symbol(AGP_KERNEL_COMPUTE_ASYNC_NAME,
										   (void *)AGP_KERNEL_COMPUTE_ASYNC);
	K.trace_string = agp_tf_symbol(TRACE_STRING_SYM, NULL);
	K.cxx_delete = dlsym(RTLD_DEFAULT, "_ZdlPv");
	__atomic_store_n(&K.resolved, 1, __ATOMIC_RELEASE);
	if (agp_proc.kernels_off)
		kernels_status("off", "agprof run --no-kernels (" AGP_ENV_NO_KERNELS ")");
	else if (!K.trace_string || !K.cxx_delete)
		kernels_status("unnamed", "tensorflow::OpKernel::TraceString was not found: kernels are recorded without names");
	else
		kernels_status("hooked", agp_proc.kernels_all ? "every kernel recorded one by one (--kernels=all)"
							      : "every kernel counted; sampled calls recorded one by one");
}

/*
 * Where the kernel keeps a pointer to its name's text (OpKernel's
 * name_view_, or its NodeDef's name string): the first 8-byte word of the
 * object followed or preceded by the name's length whose target holds the
 * name.  Learned once per process, on a miss.
 */
static long learn_name_off(const void *kernel, const char *name, size_t len)
{
	uintptr_t words[64];
	char text[256];

	if (len == 0 || len > sizeof(text) || agp_safe_read(kernel, words, sizeof(words)) != 0)
		return -1;
	for (size_t i = 1; i + 1 < 64; i++) {
		if (words[i + 1] != len && words[i - 1] != len)
			continue;
		if (words[i] < 4096 || agp_safe_read((const void *)words[i], text, len) != 0 || memcmp(text, name, len))
			continue;
		return (long)(i * sizeof(uintptr_t));
	}
	return -1;
}

static uintptr_t fingerprint(const void *kernel)
{
	long off = atomic_load_explicit(&K.name_off, memory_order_relaxed);

	return off >= 0 ? *(const uintptr_t *)((const char *)kernel + off) : 0;
}

/*
 * The kernel's class, from its first word (the vtable pointer): the line
 * the executor's virtual Compute call loads anyway, where the name pointer
 * (fingerprint) sits on a line nothing else reads, a cache miss per kernel
 * that cost more than the rest of the hook.  Every execution checks the
 * class; the name only in sampled calls (kernel_names).
 */
static inline uint32_t vtable_of(const void *kernel)
{
	return (uint32_t)*(const uintptr_t *)kernel;
}

/* A collective op type's string id on this thread (the table is full: the oldest entry goes). */
static void remember_collective(struct agp_thread *t, uint32_t type, int kind)
{
	if (!kind || !type)
		return;
	for (uint32_t i = 0; i < t->ncoll_types && i < AGP_COLL_TYPES; i++)
		if (t->coll_types[i].type == type)
			return;
	t->coll_types[t->ncoll_types % AGP_COLL_TYPES] = (struct agp_coll_type){ type, (uint32_t)kind };
	t->ncoll_types++;
}

/* The collective kind of an async kernel's type, 0 for every other type. */
static inline int collective_of(const struct agp_thread *t, uint32_t type)
{
	for (uint32_t i = 0; i < t->ncoll_types && i < AGP_COLL_TYPES; i++)
		if (t->coll_types[i].type == type)
			return (int)t->coll_types[i].kind;
	return 0;
}

/*
 * Give slot's totals entry to a new kernel: the totals of the one it held
 * go to the ring first (or, when it is full, into dropped_kernels).
 */
static void kernel_total_reset(struct agp_thread *t, struct agp_kcache_slot *slot)
{
	struct agp_kernel_total *k;

	if (!t->ktotals)
		return;
	k = &t->ktotals[slot - t->kcache];
	if (k->count && agp_emit_kernel_agg(t, k) != 0)
		atomic_fetch_add_explicit(&t->ring->dropped_kernels, k->count, memory_order_relaxed);
	memset(k, 0, sizeof(*k));
}

/* The kernel's "name:type" as two string ids (0 when unknown). */
static void kernel_name_slow(struct agp_thread *t, void *kernel, void *ctx, struct agp_kcache_slot *slot)
{
	struct cxx_string s;
	const char *colon;

	kernel_total_reset(t, slot);
	slot->kernel = (uintptr_t)kernel;
	slot->name = slot->type = 0;
	slot->fingerprint = 0;
	if (!K.trace_string || !K.cxx_delete)
		return;
	t->in_hook = 1;
	K.trace_string(&s, kernel, ctx, false);
	t->in_hook = 0;
	colon = memchr(s.p, ':', s.len);
	if (colon) {
		size_t nlen = (size_t)(colon - s.p);

		if (atomic_load_explicit(&K.name_off, memory_order_relaxed) == -2)
			atomic_store(&K.name_off, learn_name_off(kernel, s.p, nlen));
		slot->name = agp_intern(t, s.p, nlen);
		slot->type = agp_intern(t, colon + 1, s.len - nlen - 1);
		remember_collective(t, slot->type, agp_collective_kind(colon + 1, s.len - nlen - 1));
	}
	if (s.p != s.u.buf)
		K.cxx_delete(s.p);
	slot->fingerprint = fingerprint(kernel);
	slot->vtable = vtable_of(kernel);
	if (t->ktotals) {
		t->ktotals[slot - t->kcache].name = slot->name;
		t->ktotals[slot - t->kcache].type = slot->type;
	}
}

/*
 * Open addressing, KCACHE_PROBES slots per kernel: a direct-mapped cache
 * would make two kernels of one graph that share a slot evict each other at
 * every call.  A kernel found nowhere takes the first empty slot of its
 * probe run, else the first slot.
 */
#define KCACHE_PROBES 8

/*
 * A graph runs its kernels in the same order at every call: each slot
 * remembers the slot that came next last time, whose cache and totals
 * lines are fetched while this kernel runs (on a small kernel the lookup's
 * cache misses were most of the hot path), and so does the first line of
 * the next kernel's object (its vtable: kernel_stale and the executor's
 * virtual Compute call read it) and the slot after it, the next slot
 * having been fetched one kernel earlier.  A prefetch never faults.
 */
static inline struct agp_kcache_slot *kernel_prefetch_next(struct agp_thread *t, struct agp_kcache_slot *slot)
{
	uint32_t i = (uint32_t)(slot - t->kcache), n = slot->next & (AGP_KCACHE - 1);
	const struct agp_kcache_slot *next = &t->kcache[n];

	struct agp_kcache_slot *prev = &t->kcache[t->kprev & (AGP_KCACHE - 1)];

	if (prev->next != i)  /* the same order every call: the cache's lines stay clean */
		prev->next = i;
	t->kprev = i;
	__builtin_prefetch((const void *)next->kernel);
	__builtin_prefetch(&t->kcache[next->next & (AGP_KCACHE - 1)]);
	if (t->ktotals)
		__builtin_prefetch(&t->ktotals[n], 1);
	return slot;
}

/*
 * A kernel freed and another allocated at its address is named anew: at
 * once when its class differs, else at its first sampled execution (until
 * then its executions count as the old node's, which no longer runs).
 */
static inline int kernel_stale(const struct agp_kcache_slot *slot, const void *kernel, int detail)
{
	return slot->vtable != vtable_of(kernel) || (detail && slot->fingerprint != fingerprint(kernel));
}

static inline struct agp_kcache_slot *kernel_names(struct agp_thread *t, void *kernel, void *ctx, int detail)
{
	uint64_t h = ((uint64_t)(uintptr_t)kernel >> 4) * 0x9e3779b97f4a7c15ULL;
	size_t first = (size_t)(h >> (64 - 13)), i;
	struct agp_kcache_slot *slot, *empty = NULL;

	_Static_assert(AGP_KCACHE == 1 << 13, "kernel cache index bits");
	for (i = 0; i < KCACHE_PROBES; i++) {
		slot = &t->kcache[(first + i) & (AGP_KCACHE - 1)];
		if (slot->kernel == (uintptr_t)kernel) {
			if (__builtin_expect(kernel_stale(slot, kernel, detail), 0))
				kernel_name_slow(t, kernel, ctx, slot);
			return kernel_prefetch_next(t, slot);
		}
		if (!slot->kernel) {
			empty = slot;
			break;
		}
	}
	slot = empty ? empty : &t->kcache[first];
	kernel_name_slow(t, kernel, ctx, slot);
	return kernel_prefetch_next(t, slot);
}

/*
 * The graph-function call a kernel runs under, its seq with the
 * AGP_CALL_DETAIL bit (records keep the low 32 bits): this thread's own call (kernels the executor runs inline on the
 * caller), else, on another thread, the one call in flight in the process
 * (0 when none or several are: the analyzer then leaves it unlinked).  A
 * primitive eager op's kernel and tf.data's kernels belong to no call.
 */
static inline uint64_t kernel_call(const struct agp_thread *t)
{
	if (t->call_seq)
		return t->call_seq;
	if (t->eager_depth || t->ring->role == AGP_ROLE_TF_DATA ||
	    atomic_load_explicit(&agp_proc.active_calls, memory_order_acquire) != 1)
		return 0;
	return atomic_load_explicit(&agp_proc.last_call_seq, memory_order_relaxed);
}

/*
 * The thread's totals table, mapped before its first kernel is looked up
 * or sampled: agp_kernel_detailed details every kernel of a thread
 * without one.
 */
static inline void kernel_totals_ready(struct agp_thread *t)
{
	if (__builtin_expect(!t->ktotals_tried, 0)) {
		t->ktotals_tried = 1;
		t->ktotals = agp_kernel_totals_map(t);
	}
}

/* One execution: timed when its call is sampled. */
struct kernel_span {
	uint64_t start_ns;
	int detail;
};

static inline void kernel_begin(struct kernel_span *k)
{
	k->start_ns = k->detail ? agp_now_ns() : 0;
}

/*
 * One kernel execution: into its totals, and one by one when its call is
 * sampled (both only while the capture window is open).
 */
static inline void kernel_end(struct agp_thread *t, const struct agp_kcache_slot *slot, const struct kernel_span *k,
			      uint64_t call, uint32_t flags)
{
	uint64_t end = k->detail ? agp_now_ns() : 0;
	struct agp_kernel_total *e = t->ktotals ? &t->ktotals[slot - t->kcache] : NULL;

	if (!agp_capture_open())
		return;
	if (e) {
		e->count++;
		if ((uint32_t)call)
			e->call_seq = (uint32_t)call;
		if (k->detail && e->timed != UINT32_MAX) {
			e->timed++;
			e->timed_ns += end > k->start_ns ? end - k->start_ns : 0;
		}
	}
	if (k->detail && agp_proc.kbench != 2)
		agp_emit_kernel(t, slot->name, slot->type, k->start_ns, end, (uint32_t)call, flags);
}

AGP_EXPORT void AGP_KERNEL_COMPUTE(void *device, void *kernel, void *ctx)
{
	struct agp_thread *t;
	struct agp_kcache_slot *slot;
	struct kernel_span span;
	uint64_t call;

	if (__builtin_expect(!__atomic_load_n(&K.resolved, __ATOMIC_ACQUIRE), 0))
		kernels_resolve();
	t = agp_proc.kernels_off ? NULL : agp_thread_get();
	if (!t || t->in_hook || !kernel) {
		K.compute(device, kernel, ctx);
		return;
	}
	kernel_totals_ready(t);
	call = kernel_call(t);
	span.detail = agp_kernel_detailed(t, call);
	slot = kernel_names(t, kernel, ctx, span.detail);
	kernel_begin(&span);
	K.compute(device, kernel, ctx);
	kernel_end(t, slot, &span, call, 0);
}

/*
 * An asynchronous kernel (recv, collectives, function calls) returns once it
 * has started its work; its done callback runs later, elsewhere.  Only the
 * dispatch is measured (flag AGP_KERNEL_ASYNC): wrapping the callback would
 * mean allocating a std::function per execution.  done is the by-value
 * std::function, passed (Itanium C++ ABI) as a pointer to the caller's copy.
 * Collectives alone have their callback wrapped (hooks_collective.c), for
 * their keys and completion time.
 */
/* A collective's dispatch, its done callback wrapped (the caller's done is left empty). */
static void collective_compute_async(struct agp_thread *t, const struct agp_kcache_slot *slot, int kind,
				     void *device, void *kernel, void *ctx, void *done, uint64_t call,
				     struct kernel_span *span)
{
	_Alignas(16) unsigned char storage[32];
	void *use;

	t->in_hook = 1;
	use = agp_collective_wrap(t, kind, ctx, done, storage);
	t->in_hook = 0;
	kernel_begin(span);
	K.compute_async(device, kernel, ctx, use);
	kernel_end(t, slot, span, call, AGP_KERNEL_ASYNC);  /* counted, and one by one in sampled calls, like any kernel */
	if (use != done)
		agp_collective_unwrap(storage);
}

AGP_EXPORT void AGP_KERNEL_COMPUTE_ASYNC(void *device, void *kernel, void *ctx, void *done)
{
	struct agp_thread *t;
	struct agp_kcache_slot *slot;
	struct kernel_span span;
	uint64_t call;
	int kind;

	if (__builtin_expect(!__atomic_load_n(&K.resolved, __ATOMIC_ACQUIRE), 0))
		kernels_resolve();
	t = agp_proc.kernels_off ? NULL : agp_thread_get();
	if (!t || t->in_hook || !kernel) {
		K.compute_async(device, kernel, ctx, done);
		return;
	}
	kernel_totals_ready(t);
	call = kernel_call(t);
	span.detail = agp_kernel_detailed(t, call);
	slot = kernel_names(t, kernel, ctx, span.detail);
	if (__builtin_expect((kind = collective_of(t, slot->type)) != 0, 0)) {
		collective_compute_async(t, slot, kind, device, kernel, ctx, done, call, &span);
		return;
	}
	kernel_begin(&span);
	K.compute_async(device, kernel, ctx, done);
	kernel_end(t, slot, &span, call, AGP_KERNEL_ASYNC);
}

int agp_kernel_hook_unwanted(const void *hook)
{
	return agp_proc.kernels_off && (hook == (const void *)AGP_KERNEL_COMPUTE || hook == (const void *)AGP_KERNEL_COMPUTE_ASYNC);
}

static int find_framework(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	return info->dlpi_name && strstr(info->dlpi_name, "libtensorflow_framework") != NULL;
}

/* At exit: TensorFlow loaded but no kernel reached the hooks. */
void agp_kernels_exit_check(void)
{
	if (atomic_load(&K.said) || !dl_iterate_phdr(find_framework, NULL))
		return;
	if (agp_proc.kernels_off)
		kernels_status("off", "agprof run --no-kernels (" AGP_ENV_NO_KERNELS ")");
	else
		kernels_status("not-reached",
			       "no kernel ran through tensorflow::ThreadPoolDevice::Compute (none ran on the CPU, or its vtable slot does not reach agprof)");
}
