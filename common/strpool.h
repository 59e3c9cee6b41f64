/*
 * strpool.h - interned strings that live until the pool is released.
 *
 * Owns: the one string store of the analyzer (the model's, the GPU model's
 * and the timeline's strings).  A string is copied once into large blocks
 * (no malloc per string) and interned: the same bytes give back the same
 * pointer, so a name repeated on a million rows costs its bytes once.
 * Strings come from recordings (untrusted): lengths are overflow-checked
 * and the pool holds at most `limit` bytes (0: no limit), after which it
 * returns NULL as it does when memory is short.
 */
#ifndef AGPROF_STRPOOL_H
#define AGPROF_STRPOOL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "idmap.h"

struct strpool_block;
struct strpool_entry;

#define STRPOOL_RECENT 256

struct strpool {
	struct strpool_block *blocks;    /* newest first */
	struct strpool_entry *entries;   /* every string once */
	size_t used, cap;
	struct idmap by_hash;            /* hash of the text -> first entry with that hash */
	size_t bytes;                    /* bytes of text held (NULs included) */
	size_t limit;                    /* most bytes held, 0: no limit */
	/*
	 * A string interned lately, by a few bits of its hash (entry index + 1,
	 * 0: none): the names, kinds and shapes repeated row after row are found
	 * here, not by a probe of by_hash, whose table a million strings put
	 * out of the cache.
	 */
	size_t recent[STRPOOL_RECENT];
};

#define STRPOOL_INIT { NULL, NULL, 0, 0, IDMAP_INIT, 0, 0, { 0 } }

/*
 * The pooled copy of len bytes at s (need not be NUL-terminated; the copy
 * is): NULL when s is NULL, memory is short or the limit is reached.
 */
const char *strpool_intern(struct strpool *p, const char *s, size_t len);
/*
 * A copy of len bytes at s in the pool, not interned: for text that is new
 * almost every time (a trace's signature, a retrace's detail), which would
 * only grow the intern table.  NULL as strpool_intern.
 */
const char *strpool_copy(struct strpool *p, const char *s, size_t len);
/* strpool_intern of a NUL-terminated string. */
const char *strpool_str(struct strpool *p, const char *s);
/* printf into the pool; NULL on error. */
const char *strpool_printf(struct strpool *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
const char *strpool_vprintf(struct strpool *p, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/*
 * Move from's strings into into: they live (and are freed) with into's,
 * not interned there (copies, as strpool_copy's); from is empty after.
 */
void strpool_adopt(struct strpool *into, struct strpool *from);
/* Free every string of the pool; p is empty (STRPOOL_INIT, limit kept) after. */
void strpool_release(struct strpool *p);

#endif
