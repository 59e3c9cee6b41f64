/*
 * idmap.h - a map from an id read from a file (any int64) to a dense index.
 *
 * Owns: the one way a reader finds "the row with id N" in memory.  Ids in a
 * recording are untrusted: a functions.id of 2^61 must cost one slot, not
 * 2^61 of them, so nothing is ever sized or indexed by an id.  Open
 * addressing with linear probing; memory grows with the number of entries
 * only.  With idmap_put the first value for an id wins (a duplicate id is
 * ignored); idmap_set replaces it.
 *
 * Most ids are rowids put in ascending order (1..N, a few gaps): those go
 * to a plain array indexed by id - base while they stay at least half
 * dense, so a lookup in a million rows is one read next to the last one,
 * not a cache miss in a hashed table (issue 40: a fifth of a million-trace
 * report).  The first id that does not fit (out of order, a wide gap)
 * freezes the array's range; it and every later id outside that range go
 * to the hashed table.
 */
#ifndef AGPROF_IDMAP_H
#define AGPROF_IDMAP_H

#include <stddef.h>
#include <stdint.h>

struct idmap_slot;

struct idmap {
	struct idmap_slot *slots;
	size_t cap, used;   /* cap: 0 or a power of two */
	size_t *dense;      /* value + 1 of id base + i (0: none), i < dlen */
	int64_t base;
	size_t dlen, dcap, dused;
};

#define IDMAP_INIT { NULL, 0, 0, NULL, 0, 0, 0, 0 }

/* Map id to value; 0, 1 when id was already there (kept), -1 when out of memory. */
int idmap_put(struct idmap *m, int64_t id, size_t value);
/* Map id to value, replacing an earlier value; 0, -1 when out of memory. */
int idmap_set(struct idmap *m, int64_t id, size_t value);
/* 1 and *value when id is present, else 0. */
int idmap_get(const struct idmap *m, int64_t id, size_t *value);
/* Start fetching the memory idmap_get(m, id) will read: several misses wait together. */
void idmap_prefetch(const struct idmap *m, int64_t id);
void idmap_release(struct idmap *m);

#endif
