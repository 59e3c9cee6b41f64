/*
 * checked.h - arithmetic and allocation that cannot overflow, for values
 * read from a recording, a ring or a workload (all untrusted).
 *
 * Owns: the checked array allocations every reader uses (a count read from
 * a file never reaches malloc() unchecked) and the saturating int64
 * arithmetic used on timestamps and durations (an extreme value clamps to
 * INT64_MIN/INT64_MAX instead of wrapping into a nonsense percentage).
 */
#ifndef AGPROF_CHECKED_H
#define AGPROF_CHECKED_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * Ask for 2 MB pages in a big block not yet touched (transparent huge
 * pages are often "madvise" only): an analysis of a million traces
 * touches gigabytes of fresh tables and arrays, and a fault per 4 KB page
 * was a tenth of its time.  The whole pages of the block are advised, not
 * only its 2 MB-aligned middle: a block malloc maps on its own stays one
 * mapping, which realloc can still move without a copy (mremap).  Blocks
 * under 8 MB are left alone.
 */
static inline void alloc_advise_huge(void *p, size_t bytes)
{
#ifdef MADV_HUGEPAGE
	long sz = bytes >= ((size_t)8 << 20) ? sysconf(_SC_PAGESIZE) : -1;
	uintptr_t page = sz > 0 ? (uintptr_t)sz : 1;
	uintptr_t a = (uintptr_t)p & ~(page - 1), e = ((uintptr_t)p + bytes + page - 1) & ~(page - 1);

	if (sz > 0 && e > a)
		madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
	(void)p;
	(void)bytes;
#endif
}

/* malloc(n * size), NULL when the product overflows or memory is short. */
static inline void *alloc_array(size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	return malloc(bytes ? bytes : 1);
}

/* calloc(n, size) that also takes n == 0 (returns a valid, empty block). */
static inline void *alloc_zeroed(size_t n, size_t size)
{
	size_t bytes;

	void *p;

	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	p = calloc(bytes ? n : 1, bytes ? size : 1);
	if (p)
		alloc_advise_huge(p, bytes);  /* a big calloc is fresh pages, not touched yet */
	return p;
}

/* realloc(p, n * size); NULL (p untouched) on overflow or when memory is short. */
static inline void *realloc_array(void *p, size_t n, size_t size)
{
	size_t bytes;

	if (__builtin_mul_overflow(n, size, &bytes))
		return NULL;
	return realloc(p, bytes ? bytes : 1);
}

/*
 * Make *arr (capacity *cap elements of elem bytes) hold at least need
 * elements: the capacity doubles (16 at first) so that appending n items
 * costs O(n), and the new slots are zeroed.  0, or -1 with *arr and *cap
 * untouched when the size overflows or memory is short.  The one way an
 * array grows in agprof: use ARRAY_GROW to append.
 */
static inline int grow_array(void **arr, size_t *cap, size_t need, size_t elem)
{
	size_t ncap = *cap ? *cap : 16;
	void *p;

	if (need <= *cap)
		return 0;
	while (ncap < need)
		if (__builtin_mul_overflow(ncap, 2, &ncap))
			return -1;
	p = realloc_array(*arr, ncap, elem);
	if (!p)
		return -1;
	alloc_advise_huge(p, ncap * elem);
	__builtin_memset((char *)p + *cap * elem, 0, (ncap - *cap) * elem);
	*arr = p;
	*cap = ncap;
	return 0;
}

/* Room for element a[n] of array a with capacity cap (size_t lvalues): 0 or -1. */
#define ARRAY_GROW(a, n, cap) \
	((size_t)(n) < (cap) ? 0 : grow_array((void **)&(a), &(cap), (size_t)(n) + 1, sizeof(*(a))))

/* a + b, a - b, a * b clamped to [INT64_MIN, INT64_MAX]. */
static inline int64_t sat_add64(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t sat_sub64(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t sat_mul64(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_mul_overflow(a, b, &r))
		return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
	return r;
}

/*
 * The largest timestamp a reader accepts (2^62 ns, 146 years): timestamps
 * are clamped to [0, TS_MAX_NS] where they are read, so that the sum or
 * difference of two of them, or a timestamp plus a duration, never
 * overflows int64.
 */
#define TS_MAX_NS ((int64_t)1 << 62)

static inline int64_t ts_clamp(int64_t t)
{
	return t < 0 ? 0 : t > TS_MAX_NS ? TS_MAX_NS : t;
}

/*
 * A sum of durations, kept in [0, TS_MAX_NS] like a timestamp: two such
 * totals can still be added (a function's tracing plus its execution)
 * without overflow.
 */
static inline int64_t dur_add(int64_t a, int64_t b)
{
	return ts_clamp(sat_add64(a, b));
}

/* A duration end - start: 0 when end is before start, clamped when huge. */
static inline int64_t span_ns(int64_t start, int64_t end)
{
	return end > start ? sat_sub64(end, start) : 0;
}

#endif
