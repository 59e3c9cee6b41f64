/*
 * eager_blocks.h - the eager_op_blocks rows of a recording being written
 * (schema 6, docs/schema.md): eager_op_rows has no index, so a reader
 * finds one thread's ops in a time window through these blocks: per
 * thread, an id range and the least and greatest start of its ops there.
 *
 * Owns: the threads with ops since the last close (their start bounds), and
 * the prepared statements.  A close writes one row per such thread, all
 * with the same id range: the rows inserted since the previous close.  The
 * writer closes after each eager batch once EAGER_BLOCK_ROWS rows are open,
 * and before every commit, so every committed row is in a committed block
 * (a killed run leaves none outside).  Memory is fixed; no allocation.
 */
#ifndef AGPROF_EAGER_BLOCKS_H
#define AGPROF_EAGER_BLOCKS_H

#include <sqlite3.h>
#include <stdint.h>

#define EAGER_BLOCK_ROWS 1024
#define EAGER_BLOCK_THREADS 64  /* more threads in one block: it is closed early */

struct eager_block_thread {
	int64_t pid, tid, min_start, max_start;
};

struct eager_blocks {
	struct eager_block_thread open[EAGER_BLOCK_THREADS];
	int nopen, last;          /* last: the entry of the previous op (ops come in runs per thread) */
	int64_t rows;             /* ops added since the last close */
	int64_t first_id;         /* the first id after the last close */
	sqlite3_stmt *ins, *max_id;
};

/* Prepare the statements on db; 0 or -1. */
int eager_blocks_init(struct eager_blocks *b, sqlite3 *db);

/* One op of (pid, tid) starting at start_ns, inserted (or batched) after the last close. */
void eager_blocks_add(struct eager_blocks *b, int64_t pid, int64_t tid, int64_t start_ns);

/* 1 when the open block is full (the caller closes it once its rows are inserted). */
int eager_blocks_full(const struct eager_blocks *b);

/* Write the open blocks, up to the greatest id of eager_op_rows now: call with every added op inserted. */
void eager_blocks_close(struct eager_blocks *b);

void eager_blocks_release(struct eager_blocks *b);

#endif
