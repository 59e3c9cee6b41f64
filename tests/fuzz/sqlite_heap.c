/*
 * sqlite_heap.c - SQLite's memory from a plain size-class pool, outside
 * ASan's allocator and libFuzzer's malloc hooks.
 *
 * fuzz.sh compiles this file without sanitizers or coverage and links it
 * into the recording harnesses (FUZZ_SQLITE_HEAP): a recording's analysis
 * makes hundreds of thousands of SQLite allocations, and under ASan each
 * one paid the hooks, the quarantine and a stack capture (a third of an
 * input's time in perf).  Our code's own allocations stay on ASan's heap.
 * LeakSanitizer no longer sees SQLite's blocks, so fuzz_sqlite_live()
 * counts them: the harness checks that an input leaves none behind (a
 * statement not finalized, a connection not closed).
 */
#include "sqlite_heap.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define MIN_SHIFT 4
#define MAX_SHIFT 20 /* pool blocks up to 1 MiB; bigger ones are mapped alone */
#define ARENA_SIZE (8u << 20)
#define HDR 8 /* usable size << 8 | class (0: mapped alone) */

static int lock; /* a spin lock: ASan intercepts pthread_mutex_lock() */
static void *free_list[MAX_SHIFT + 1];
static char *arena, *arena_end;
static long live;

static void take(void)
{
	while (__atomic_exchange_n(&lock, 1, __ATOMIC_ACQUIRE))
		;
}

static void drop(void)
{
	__atomic_store_n(&lock, 0, __ATOMIC_RELEASE);
}

static int class_of(size_t n)
{
	int c = 64 - __builtin_clzll((unsigned long long)(n + HDR - 1));

	return c < MIN_SHIFT ? MIN_SHIFT : c;
}

static void *carve(size_t block)
{
	if (!arena || (size_t)(arena_end - arena) < block) {
		void *a = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (a == MAP_FAILED)
			return NULL;
		arena = a, arena_end = arena + ARENA_SIZE; /* the old arena's tail is dropped */
	}
	arena += block;
	return arena - block;
}

static void *heap_malloc(int n)
{
	size_t size = n > 0 ? (size_t)n : 1;
	uint64_t *h;

	if (size > ((size_t)1 << MAX_SHIFT) - HDR) {
		size = (size + 4095) & ~(size_t)4095;
		h = mmap(NULL, size + HDR, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (h == MAP_FAILED)
			return NULL;
		*h = (uint64_t)size << 8;
	} else {
		int c = class_of(size);

		take();
		if ((h = free_list[c]))
			free_list[c] = *(void **)(h + 1);
		else
			h = carve((size_t)1 << c);
		drop();
		if (!h)
			return NULL;
		*h = ((((uint64_t)1 << c) - HDR) << 8) | (uint64_t)c;
	}
	__atomic_add_fetch(&live, 1, __ATOMIC_RELAXED);
	return h + 1;
}

static void heap_free(void *p)
{
	uint64_t *h = (uint64_t *)p - 1;
	int c;

	if (!p)
		return;
	c = (int)(*h & 0xff);
	__atomic_sub_fetch(&live, 1, __ATOMIC_RELAXED);
	if (!c) {
		munmap(h, (size_t)(*h >> 8) + HDR);
		return;
	}
	take();
	*(void **)p = free_list[c];
	free_list[c] = h;
	drop();
}

static int heap_size(void *p)
{
	return p ? (int)(((uint64_t *)p)[-1] >> 8) : 0;
}

static void *heap_realloc(void *p, int n)
{
	void *q;

	if (n <= heap_size(p))
		return p;
	if (!(q = heap_malloc(n)))
		return NULL;
	memcpy(q, p, (size_t)heap_size(p));
	heap_free(p);
	return q;
}

static int heap_roundup(int n)
{
	if ((size_t)n > ((size_t)1 << MAX_SHIFT) - HDR)
		return (n + 4095) & ~4095;
	return (int)(((size_t)1 << class_of((size_t)n)) - HDR);
}

static int heap_init(void *unused)
{
	(void)unused;
	return SQLITE_OK;
}

static void heap_shutdown(void *unused)
{
	(void)unused;
}

int fuzz_sqlite_heap(void)
{
	static const sqlite3_mem_methods methods = {
		heap_malloc, heap_free, heap_realloc, heap_size, heap_roundup, heap_init, heap_shutdown, NULL,
	};

	if (sqlite3_config(SQLITE_CONFIG_MALLOC, &methods) != SQLITE_OK)
		return -1;
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0); /* no global mutex around every allocation */
	return 0;
}

long fuzz_sqlite_live(void)
{
	return __atomic_load_n(&live, __ATOMIC_RELAXED);
}
