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
 * Hot path (the kernel the thread expected, kernel_slot): one comparison of
 * the OpKernel* with the predicted cache slot's (and of the kernel's class,
 * kernel_stale), one count added to the kernel's entry of the thread's agp_kernel_total table, and,
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

/* AGPROF_KBENCH's value as an enum agp_kbench (bench/ only). */
static int kbench_mode(const char *mode)
{
	static const char *const names[] = { [AGP_KBENCH_COUNT] = "count", [AGP_KBENCH_NOSTORE] = "nostore",
					     [AGP_KBENCH_FLOOR] = "floor", [AGP_KBENCH_PASS] = "pass" };

	for (size_t i = 1; mode && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(mode, names[i]))
			return (int)i;
	return AGP_KBENCH_NONE;
}

void agp_kernels_init(void)
{
	const char *off = getenv(AGP_ENV_NO_KERNELS);

	const char *mode = getenv(AGP_ENV_KERNELS);

	agp_proc.kernels_off = off && *off && strcmp(off, "0") != 0;
	agp_proc.kernels_all = mode && !strcmp(mode, "all");
	agp_proc.kbench = kbench_mode(getenv(AGP_ENV_KBENCH));
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
 * TensorFlow's Compute then loads anyway for its virtual call of
 * OpKernel::Compute (kernel_slot prefetches it), where the name pointer
 * (fingerprint) sits on a line nothing else reads, a cache miss per kernel
 * that cost more than the rest of the hook.  Every execution checks the
 * class; the name only in sampled calls (kernel_slot).
 */
static inline uint32_t vtable_of(const void *kernel)
{
	return (uint32_t)*(const uintptr_t *)kernel;
}

/*
 * Give slot's totals entry to a new kernel: the totals of the one it held
 * go to the ring first (or, when it is full, into dropped_kernels).
 */
static void kernel_total_reset(struct agp_thread *t, uint32_t slot)
{
	struct agp_kernel_total *k;

	if (!t->ktotals)
		return;
	k = &t->ktotals[slot];
	if (k->count && agp_emit_kernel_agg(t, k) != 0)
		atomic_fetch_add_explicit(&t->ring->dropped_kernels, k->count, memory_order_relaxed);
	memset(k, 0, sizeof(*k));
}

/* Name slot's kernel (its "name:type" as two string ids, 0 when unknown), its totals started anew. */
static void kernel_name_slow(struct agp_thread *t, void *kernel, void *ctx, uint32_t slot)
{
	struct agp_kcache_name *n = &t->knames[slot];
	struct cxx_string s;
	const char *colon;

	kernel_total_reset(t, slot);
	*n = (struct agp_kcache_name){ 0 };
	t->kcache[slot].vtable = vtable_of(kernel);
	t->kcache[slot].collective = 0;
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
		n->name = agp_intern(t, s.p, nlen);
		n->type = agp_intern(t, colon + 1, s.len - nlen - 1);
		t->kcache[slot].collective = (uint16_t)agp_collective_kind(colon + 1, s.len - nlen - 1);
	}
	if (s.p != s.u.buf)
		K.cxx_delete(s.p);
	n->fingerprint = fingerprint(kernel);
	if (t->ktotals) {
		t->ktotals[slot].name = n->name;
		t->ktotals[slot].type = n->type;
	}
}

_Static_assert(sizeof(struct agp_kcache_slot) == 16, "four kernel cache slots a line");
_Static_assert(offsetof(struct agp_thread, free_kernels) + sizeof(uint64_t) <= 64, "the hooks' fields in one line");

/*
 * The cache's index: open addressing with linear probing over AGP_KINDEX
 * entries (slot + 1, 0 empty), at most half of them used, so that a probe
 * run stays short and always ends.
 */
static inline uint32_t kindex_home(uintptr_t kernel)
{
	_Static_assert(AGP_KINDEX == 1 << 14 && AGP_KINDEX >= 2 * AGP_KCACHE, "kernel index bits");
	return (uint32_t)((((uint64_t)kernel >> 4) * 0x9e3779b97f4a7c15ULL) >> (64 - 14));
}

/* Where kernel's entry is in the index, else the empty entry that ends its probe run. */
static uint32_t kindex_find(const struct agp_thread *t, uintptr_t kernel)
{
	uint32_t p = kindex_home(kernel);

	while (t->kindex[p] && t->kcache[t->kindex[p] - 1].kernel != kernel)
		p = (p + 1) & (AGP_KINDEX - 1);
	return p;
}

/*
 * Take kernel's entry out of the index: the entries after it in its probe
 * run move back into the gap when their home allows (no tombstones, so that
 * a long-running program's index never fills up with them).
 */
static void kindex_remove(struct agp_thread *t, uintptr_t kernel)
{
	uint32_t gap = kindex_find(t, kernel), p = gap;

	if (!t->kindex[gap])
		return;
	for (;;) {
		uint32_t home;

		p = (p + 1) & (AGP_KINDEX - 1);
		if (!t->kindex[p])
			break;
		home = kindex_home(t->kcache[t->kindex[p] - 1].kernel);
		/* the entry at p may fill the gap unless its home lies cyclically in (gap, p] */
		if (((p - home) & (AGP_KINDEX - 1)) >= ((p - gap) & (AGP_KINDEX - 1))) {
			t->kindex[gap] = t->kindex[p];
			gap = p;
		}
	}
	t->kindex[gap] = 0;
}

/*
 * A kernel the cache lacks takes the next unused slot, so that a graph's
 * kernels, which first run in their order, get consecutive slots: the hot
 * path then reads its slots and totals as two streams, where hashed slots
 * were two random lines per kernel.  Once all are used, a slot chosen by
 * the kernel's hash is evicted (not the oldest: a graph larger than the
 * cache, run in a cycle, would miss at every kernel).
 */
static uint32_t kernel_slot_new(struct agp_thread *t, void *kernel, void *ctx)
{
	uint32_t slot = t->kused < AGP_KCACHE ? t->kused++ : kindex_home((uintptr_t)kernel) & (AGP_KCACHE - 1);
	struct agp_kcache_slot *s = &t->kcache[slot];

	if (s->kernel)
		kindex_remove(t, s->kernel);
	s->kernel = (uintptr_t)kernel;
	s->next = (uint16_t)((slot + 1) & (AGP_KCACHE - 1));  /* first guess: the order of first runs */
	t->kindex[kindex_find(t, (uintptr_t)kernel)] = (uint16_t)(slot + 1);
	kernel_name_slow(t, kernel, ctx, slot);
	return slot;
}

/*
 * A kernel freed and another allocated at its address is named anew: at
 * once when its class differs, else at its first sampled execution (until
 * then its executions count as the old node's, which no longer runs).
 */
static inline int kernel_stale(const struct agp_thread *t, uint32_t slot, const void *kernel, int detail)
{
	return t->kcache[slot].vtable != vtable_of(kernel) ||
	       (detail && t->knames[slot].fingerprint != fingerprint(kernel));
}

/* The cache slot of a kernel that is not the one predicted (the index, else a new slot); the prediction learns it. */
static __attribute__((noinline)) uint32_t kernel_find_slow(struct agp_thread *t, void *kernel, void *ctx)
{
	uint32_t p = kindex_find(t, (uintptr_t)kernel);
	uint32_t slot = t->kindex[p] ? t->kindex[p] - 1u : kernel_slot_new(t, kernel, ctx);

	t->kcache[t->kprev].next = (uint16_t)slot;
	return slot;
}

/*
 * A graph runs its kernels in the same order at every call: each slot
 * remembers the slot that came next last time, the kernel the hot path
 * expects (t->kpred), checked with one comparison before any hashing.
 * Its object's first line (the vtable, which kernel_stale and then
 * TensorFlow's Compute read: a cache miss that was most of the hook's
 * cost) and its totals are fetched while this kernel runs; its slot is
 * the next one in memory (kernel_slot_new), usually on the same line or the
 * hardware's stream.  A prefetch never faults.
 */
static inline __attribute__((always_inline)) uint32_t kernel_slot(struct agp_thread *t, void *kernel, void *ctx,
								  int detail)
{
	uint32_t slot = t->kpred;

	if (__builtin_expect(t->kcache[slot].kernel != (uintptr_t)kernel, 0))
		slot = kernel_find_slow(t, kernel, ctx);
	if (__builtin_expect(kernel_stale(t, slot, kernel, detail), 0))
		kernel_name_slow(t, kernel, ctx, slot);
	t->kprev = slot;
	t->kpred = t->kcache[slot].next & (AGP_KCACHE - 1);
	__builtin_prefetch((const void *)t->kcache[t->kpred].kernel);
	if (t->ktotals)
		__builtin_prefetch(&t->ktotals[t->kpred], 1);
	return slot;
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
	int detail;             /* agp_kernel_detailed */
};

static inline void kernel_begin(struct kernel_span *k)
{
	k->start_ns = k->detail ? agp_now_ns() : 0;
}

/*
 * One kernel execution: into its totals, and one by one when its call is
 * sampled (both only while the capture window is open).
 */
static inline void kernel_end(struct agp_thread *t, uint32_t slot, const struct kernel_span *k, uint64_t call,
			      uint32_t flags)
{
	uint64_t end = k->detail ? agp_now_ns() : 0;
	struct agp_kernel_total *e = t->ktotals ? &t->ktotals[slot] : NULL;

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
	if (k->detail && agp_proc.kbench != AGP_KBENCH_NOSTORE)
		agp_emit_kernel(t, t->knames[slot].name, t->knames[slot].type, k->start_ns, end, (uint32_t)call,
				flags | (k->detail == (int)AGP_KERNEL_CUT ? AGP_KERNEL_CUT : 0));
}

/* The thread's state for a kernel the hooks record; NULL: call TensorFlow's function straight through. */
static inline struct agp_thread *kernel_thread(const void *kernel)
{
	struct agp_thread *t;

	if (__builtin_expect(!__atomic_load_n(&K.resolved, __ATOMIC_ACQUIRE), 0))
		kernels_resolve();
	if (agp_proc.kernels_off)
		return NULL;
	if (__builtin_expect(agp_proc.kbench >= AGP_KBENCH_FLOOR, 0)) {  /* bench/ only: what the steps below cost */
		if (agp_proc.kbench == AGP_KBENCH_PASS)
			(void)agp_thread_get();
		return NULL;
	}
	t = agp_thread_get();
	if (!t || t->in_hook || !kernel)
		return NULL;
	kernel_totals_ready(t);
	return t;
}

AGP_EXPORT void AGP_KERNEL_COMPUTE(void *device, void *kernel, void *ctx)
{
	struct agp_thread *t = kernel_thread(kernel);
	struct kernel_span span;
	uint32_t slot;
	uint64_t call;

	if (!t) {
		K.compute(device, kernel, ctx);
		return;
	}
	call = kernel_call(t);
	span.detail = agp_kernel_detailed(t, call);
	slot = kernel_slot(t, kernel, ctx, span.detail);
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
static void collective_compute_async(struct agp_thread *t, uint32_t slot, void *device, void *kernel, void *ctx,
				     void *done, uint64_t call, struct kernel_span *span)
{
	_Alignas(16) unsigned char storage[32];
	void *use;

	t->in_hook = 1;
	use = agp_collective_wrap(t, t->kcache[slot].collective, ctx, done, storage);
	t->in_hook = 0;
	kernel_begin(span);
	K.compute_async(device, kernel, ctx, use);
	kernel_end(t, slot, span, call, AGP_KERNEL_ASYNC);  /* counted, and one by one in sampled calls, like any kernel */
	if (use != done)
		agp_collective_unwrap(storage);
}

AGP_EXPORT void AGP_KERNEL_COMPUTE_ASYNC(void *device, void *kernel, void *ctx, void *done)
{
	struct agp_thread *t = kernel_thread(kernel);
	struct kernel_span span;
	uint32_t slot;
	uint64_t call;

	if (!t) {
		K.compute_async(device, kernel, ctx, done);
		return;
	}
	call = kernel_call(t);
	span.detail = agp_kernel_detailed(t, call);
	slot = kernel_slot(t, kernel, ctx, span.detail);
	if (__builtin_expect(t->kcache[slot].collective != 0, 0)) {
		collective_compute_async(t, slot, device, kernel, ctx, done, call, &span);
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
