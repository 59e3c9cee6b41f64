/*
 * eager_keys.h - the eager_op_keys rows of a recording being written
 * (schema 6, docs/schema.md): what repeats from one kept eager op to the
 * next (thread, op, device, call site), stored once; each eager_op_rows
 * row names its key and holds its start after the keys' base_ns.
 *
 * Owns: an open-addressing map from the key's values to its row id, grown
 * by doubling (the launcher side: never in the workload's hot path), and
 * the prepared INSERT of a new key.  base_ns is the first key's first op's
 * start, the same for every key of the recording, so that rows of one key
 * or of another compare by their start column alone.
 */
#ifndef AGPROF_EAGER_KEYS_H
#define AGPROF_EAGER_KEYS_H

#include "eager_buckets.h"

#include <sqlite3.h>
#include <stdint.h>

struct eager_keys {
	struct eager_key *keys;  /* .second unused */
	int64_t *ids;            /* 0: free slot */
	uint32_t cap, n;
	int64_t base_ns;
	int has_base;
	sqlite3_stmt *ins;
};

/* Prepare the insert on db; 0 or -1 (out of memory, SQL error). */
int eager_keys_init(struct eager_keys *ks, sqlite3 *db);

/*
 * The row id of k's key, its row inserted when new with base_ns (set from
 * start_ns on the first call); 0 when SQLite refused it or out of memory
 * (the caller then drops the op and counts it lost).
 */
int64_t eager_keys_get(struct eager_keys *ks, const struct eager_key *k, int64_t start_ns);

void eager_keys_release(struct eager_keys *ks);

#endif
