/*
 * eager_buckets.h - eager ops past the recording's budget, kept as exact
 * aggregates (eager_op_buckets, docs/schema.md) instead of one row each.
 *
 * Owns: a fixed-size open-addressing table of open buckets, one per
 * (pid, tid, op, device, call site, second of start_ns), and their rows.
 * Memory is allocated once (eager_buckets_init): adding an op never
 * allocates and never touches SQLite unless the table is half full, when
 * every open bucket is written out (a bucket may then have several rows for
 * one second; readers add them).  Buckets whose second ended are written at
 * each commit (eager_buckets_close), the rest at the finish.
 */
#ifndef AGPROF_EAGER_BUCKETS_H
#define AGPROF_EAGER_BUCKETS_H

#include <sqlite3.h>
#include <stdint.h>

/* log2 duration buckets: [0] 0-1 ns, [i] [2^(i-1), 2^i) ns, the last one open-ended */
#define EB_HIST 40

struct eager_key {
	int64_t pid, tid, op, device, site, second;
};

struct eager_bucket {
	struct eager_key k;
	int64_t count, total_ns, python_ns, slow, failed, first_ns, last_ns;
	uint32_t hist[EB_HIST];
	int used;
};

struct eager_buckets {
	struct eager_bucket *slots;
	uint32_t cap, n;
	sqlite3_stmt *ins;     /* INSERT INTO eager_op_buckets ... */
	int64_t ops;           /* ops added */
	int64_t rows;          /* rows written */
	int64_t stored;        /* ops in the rows written */
	int64_t refused;       /* rows SQLite refused (their ops are lost: said by the writer) */
};

/* Allocate the table and prepare the insert on db; 0 or -1 (out of memory, SQL error). */
int eager_buckets_init(struct eager_buckets *b, sqlite3 *db);

/* Add one op (end_ns before start_ns counts 0 ns); device and site 0 when unknown. */
void eager_buckets_add(struct eager_buckets *b, const struct eager_key *k, int64_t start_ns, int64_t end_ns,
		       int64_t python_ns, int slow, int failed);

/* Write the buckets whose second is before before_second (all: INT64_MAX). */
void eager_buckets_close(struct eager_buckets *b, int64_t before_second);

void eager_buckets_release(struct eager_buckets *b);

#endif
