/*
 * scan.h - aggregate a large event table in one pass.
 *
 * Owns: the chunked, multi-threaded scan of an event table (eager_ops,
 * function_calls, blackbox_execs) into a small hash table keyed by two
 * integer columns.  SQLite's GROUP BY sorts its input, which costs seconds on
 * ten million rows; one sequential scan per rowid range, hashed in C, costs a
 * fraction of that and keeps memory proportional to the number of groups.
 */
#ifndef AGPROF_SCAN_H
#define AGPROF_SCAN_H

#include <stddef.h>
#include <stdint.h>

struct sqlite3;
struct sqlite3_value;

/*
 * The one thread-count knob of the analyzer's scans (scan_table and the
 * viewer's timeline scan): AGPROF_SCAN_THREADS, else the online CPUs,
 * in [1, SCAN_MAX_THREADS].  More threads than that only contend on the file.
 */
#define SCAN_MAX_THREADS 8
int scan_threads(void);

/* One group: all rows with the same (k1, k2). NULL keys read as 0 (ids start at 1). */
struct scan_group {
	int64_t k1, k2;
	int64_t count;
	int64_t total_ns;   /* sum of end_ns - start_ns; an eager op's from its Python's start */
	int64_t python_ns;  /* of total_ns, the eager ops' python_ns (the Python before each dispatch) */
	int64_t flagged;    /* rows whose flag column is non-zero */
	int64_t failed;     /* rows whose ok column is zero */
	int64_t first_ns;   /* min start_ns */
	int64_t last_ns;    /* max end_ns */
	/*
	 * Eager ops only, the rows (a bucket's ops are not timed one by one):
	 * kept, how many; brief and brief_ns, those whose dispatch was under
	 * AGP_PYTHON_GAP_MAX_NS and their dispatch summed; gaps and gap_ns,
	 * those with a python_ns (> 0: the Python before it was under that
	 * bound) and it summed.  What scan_group_steady_ns() reads.
	 */
	int64_t kept, brief, brief_ns, gaps, gap_ns;
};

/*
 * The steady cost of an eager group: its dispatch and the Python before
 * each op as they run with no wait for a CPU.  A wait lands in a dispatch
 * or in the Python between two ops as a time slice of another process
 * (milliseconds), which the collector's python_ns bound (1 ms) already
 * drops from the Python: when most of the group's rows are under the
 * bound, each part is their mean times the group's ops; otherwise (its
 * ops are long by nature) what was recorded, its dispatch less wait_share
 * of it (the thread's share of its time waiting for a CPU while the group
 * ran, 0 when unknown).  Issue 46: beside 3 CPU hogs the recorded
 * dispatch of a Keras call's ops was 4-8 times their steady cost, and its
 * Python lost the gaps a time slice fell into.
 */
int64_t scan_group_steady_ns(const struct scan_group *g, double wait_share);

struct scan_result {
	struct scan_group *groups; /* unordered */
	size_t ngroups;
	int64_t rows;
	int64_t total_ns;
	int64_t first_ns, last_ns; /* 0 when no rows */
};

/*
 * Scan table in the recording at path.  k1, k2, flag and ok are column
 * expressions (flag and ok may be "0" / "1" when the table has none); table
 * must have id, start_ns and end_ns.  Returns 0, or -1 after printing an
 * error.  Uses scan_threads() connections.
 */
int scan_table(const char *path, const char *table, const char *k1, const char *k2,
	       const char *flag, const char *ok, struct scan_result *out);

/*
 * A walk riding along scan_table_walk()'s scan, so that a second reader of
 * every row needs no second pass (eager_runs.c, saving_reads.c):
 * parts(ctx, nparts), called once before any row, gives the states of the
 * scan's parts (rowid ranges in order), an array of nparts items of
 * part_size bytes (NULL when out of memory);
 * each of the part's rows goes, in id order, to eager_row() for schema 6's
 * eager_op_rows (the eager ops' compact scan: SCAN_WALK_EAGER_ROWS): its
 * key, start (after the key's base) and dur as stored; or, for any other
 * table (SCAN_WALK_TABLE), to row() as the scan's aggregate arguments: k1,
 * k2, cost start, end_ns, flag, ok, python, then the walk's own columns (SQL, NULL:
 * none).  The walker sums its parts after the scan.  When the scan does not
 * read what the walk is for (kind), parts() is never called.
 */
enum scan_walk_kind { SCAN_WALK_EAGER_ROWS, SCAN_WALK_TABLE };

struct scan_walk {
	enum scan_walk_kind kind;
	const char *columns;
	void *ctx;
	void *(*parts)(void *ctx, int nparts);
	size_t part_size;
	void (*row)(void *part, struct sqlite3_value **argv);
	void (*eager_row)(void *part, int64_t key, int64_t start, int64_t dur);
};

/* scan_table() with walk (NULL: none) riding along. */
int scan_table_walk(const char *path, const char *table, const char *k1, const char *k2, const char *flag,
		    const char *ok, const struct scan_walk *walk, struct scan_result *out);
void scan_result_release(struct scan_result *r);

/*
 * The rowid range [*lo, *hi] of table on db (hi < lo when it is empty),
 * the one way both the report's scans and the viewer's split a table into
 * chunks.  0, or -1 after an error line.
 */
int scan_id_range(struct sqlite3 *db, const char *table, int64_t *lo, int64_t *hi);

/*
 * Schema 6 (eager_op_rows has no index): into buf, " AND ID BETWEEN ... AND
 * ...": the id range of the eager_op_blocks of thread (pid, tid) (every
 * thread's when pid is NULL) that can hold an op starting in [from, to).
 * Every argument is an SQL expression;
 * w is the widest block's max_start_ns - min_start_ns (scan_eager_block_span()),
 * which turns the blocks sought into one range of their index.
 */
void scan_eager_block_ids(char *buf, size_t len, const char *id, const char *pid, const char *tid, const char *from,
			  const char *to, const char *w);

/* The widest span of the blocks of db (0 when none: then no block matches anything). */
int64_t scan_eager_block_span(struct sqlite3 *db);

/*
 * Every graph call as a subquery for FROM: (id, pid, tid, start_ns, end_ns,
 * graph_function_id, name_id, n, ns): function_calls' rows (n = 1, ns their
 * duration) and, schema 7, function_call_buckets' rows (n calls, ns their
 * summed time; id NULL).  Readers that count or sum calls read this, so
 * that the calls past the recording's budget count too.
 */
const char *scan_all_calls(struct sqlite3 *db);

#endif
