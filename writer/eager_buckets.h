/*
 * eager_buckets.h - high-rate events past the recording's budget, kept as
 * exact aggregates instead of one row each: eager ops (eager_op_buckets),
 * graph calls (function_call_buckets) and black-box runs (blackbox_buckets,
 * schema 7; docs/schema.md).  One implementation for the three tables: the
 * key is three ids and the second, the INSERT given to eager_buckets_init_as
 * says which of the thirteen values (below) are its table's columns.
 *
 * Owns: a fixed-size open-addressing table of open buckets, one per
 * (pid, tid, op, device, call site, second of start_ns), and their rows.
 * Memory is allocated once (eager_buckets_init): adding an event never
 * allocates and never touches SQLite unless the table is half full, when
 * every open bucket is written out (a bucket may then have several rows for
 * one second; readers add them).  At each commit every bucket that changed
 * is written (eager_buckets_sync): an open one's row is replaced by id
 * (INSERT OR REPLACE), so a commit holds every event added before it and a
 * SIGKILL loses at most one commit interval; buckets whose second ended are
 * then dropped from memory (eager_buckets_close).
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
	int64_t row;           /* its row's id once written, else 0 */
	int64_t written;       /* count in that row */
	int used;
};

struct eager_buckets {
	struct eager_bucket *slots;
	uint32_t cap, n;
	sqlite3_stmt *ins;     /* INSERT OR REPLACE INTO eager_op_buckets ... */
	int64_t ops;           /* ops added */
	int64_t rows;          /* rows written */
	int64_t stored;        /* ops in the rows written */
	int64_t refused;       /* rows SQLite refused (their ops are lost: said by the writer) */
};

/* Allocate the table and prepare the insert on db; 0 or -1 (out of memory, SQL error). */
int eager_buckets_init(struct eager_buckets *b, sqlite3 *db);

/*
 * The same for another bucket table: insert is an INSERT OR REPLACE whose
 * parameters are numbered ?1 pid, ?2 tid, ?3 first start, ?4 last end,
 * ?5 op, ?6 device, ?7 site (NULL when 0), ?8 count, ?9 total_ns,
 * ?10 python_ns, ?11 slow, ?12 failed, ?13 histogram, ?14 id (NULL: new
 * row); a table uses those it has.
 */
int eager_buckets_init_as(struct eager_buckets *b, sqlite3 *db, const char *insert);

/* Add one op (end_ns before start_ns counts 0 ns); device and site 0 when unknown. */
void eager_buckets_add(struct eager_buckets *b, const struct eager_key *k, int64_t start_ns, int64_t end_ns,
		       int64_t python_ns, int slow, int failed);

/* Write the buckets whose second is before before_second (all: INT64_MAX) and drop them. */
void eager_buckets_close(struct eager_buckets *b, int64_t before_second);

/* Write (insert or replace) every open bucket that changed since it was last written. */
void eager_buckets_sync(struct eager_buckets *b);

void eager_buckets_release(struct eager_buckets *b);

#endif
