/*
 * merge.h - `agprof merge`'s parts: the copy of one input into the merged
 * recording (merge_copy.c, driven by the catalog of kinds, common/kinds.c) and the clock
 * alignment of the ranks (merge_clock.c).  merge.c is the command.
 */
#ifndef AGPROF_MERGE_H
#define AGPROF_MERGE_H

#include <sqlite3.h>
#include <stdint.h>

/* What is known of one input before it is copied (pass 1). */
struct merge_input {
	const char *path;
	int version;            /* PRAGMA user_version */
	char task_type[64];     /* meta.tf_task_type, "" when absent */
	long task_index;        /* meta.tf_task_index, -1 when absent */
	char host[256];         /* meta.host */
	int rank;
	int64_t pid_shift;           /* added to its pids (merge_copy: they collided with an earlier input's) */
	int64_t clock_offset_ns;     /* added to every time of this input */
	int64_t clock_residual_ns;   /* median |misfit| of the matched events, -1 unknown */
	long clock_matches;          /* events matched with the reference rank */
	const char *clock_method;    /* "reference", "same-host", "collectives", "steps", "none" */
};

/*
 * Copy the input attached as schema "src" into db's main schema: ids
 * shifted past the rows already there, strings re-interned, pids moved
 * when they collide, times shifted by in->clock_offset_ns, processes
 * tagged with in->rank.  One transaction; 0, or after the error -2 when
 * writing failed (disk full, I/O error), -1 when the input cannot be copied.
 */
int merge_copy(sqlite3 *db, struct merge_input *in);

/* Why writing the merged recording failed (a -2 of merge_copy, a write of db.h's), or NULL. */
const char *merge_write_error(sqlite3 *db);

/* 0 when every table of the schema has an entry in the catalog of kinds; else -1 after naming it. */
int merge_check_table_list(sqlite3 *db);

/*
 * Step ends of the most-called Python function of the reference recording
 * (ref, opened read-only), to align the others against: fills the
 * reference's name (malloc'd in *step_name) and its first MERGE_CLOCK_MAX
 * call ends.  Returns the count (0: no calls, then no alignment).
 */
#define MERGE_CLOCK_MAX 4096
long merge_clock_reference(sqlite3 *ref, char **step_name, int64_t *ends);

/*
 * Estimate in's clock offset against the reference's ends (n of them) from
 * the same function's calls in db (in's recording, read-only): the n-th call
 * of a synchronous step ends at the same moment on every rank (its
 * all-reduce is a barrier), so the median of the differences is the
 * offset, the median distance to it the residual.  same_host: both clocks
 * are one CLOCK_MONOTONIC, the offset is 0 and only the residual is
 * measured.  Fills in's clock_* fields.
 */
void merge_clock_estimate(sqlite3 *db, const char *step_name, const int64_t *ref_ends, long n, int same_host,
			  struct merge_input *in);

/*
 * Clocks from collectives matched by their keys (merge_clock.c, method
 * "collectives"): merge_clock_keyed reads a recording's keyed collectives,
 * sorted by (group_key, instance_key, occurrence), at most MERGE_CLOCK_MAX
 * into out; merge_clock_estimate_keyed fits in's offset on those of the
 * reference (ref, nref) and returns how many matched (0: none, in left as
 * it was, the caller falls back to the steps).
 */
struct merge_keyed {
	int64_t group_key, instance_key, occurrence, end_ns;
};
long merge_clock_keyed(sqlite3 *db, struct merge_keyed *out);
long merge_clock_estimate_keyed(sqlite3 *db, const struct merge_keyed *ref, long nref, int same_host,
				struct merge_input *in);

#endif
