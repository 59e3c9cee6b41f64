/*
 * timeline_internal.h - shared by the files of the timeline data layer
 * (timeline.c, timeline_lanes.c, timeline_lod.c, timeline_search.c,
 * timeline_details.c); not for the viewer, which uses timeline.h.
 */
#ifndef AGPROF_TIMELINE_INTERNAL_H
#define AGPROF_TIMELINE_INTERNAL_H

#include "timeline.h"
#include "scan.h" /* SCAN_MAX_THREADS */

#include <pthread.h>
#include <sqlite3.h>

#define DEFAULT_NBINS (1u << 18)
#define SCAN_CHUNK_ROWS (1 << 18)
#define MAX_TABLE_CHUNKS 4096 /* rowid chunks of one table, however far apart its ids */
#define SCAN_NICE 5  /* added to the scan threads' nice value (Linux: per thread) */


#define MAX_LANES 4096

struct lane_key {
	int64_t pid, tid, device;
	int kind;
};

struct scan_task {
	const struct agp_kind *table;
	int64_t lo, hi;
};

struct tl_loader {
	pthread_mutex_t lock;   /* lane creation, longs, next, failure */
	pthread_t threads[SCAN_MAX_THREADS];
	int started[SCAN_MAX_THREADS];
	int nthreads;
	struct scan_task *tasks;
	size_t ntasks, next;
	size_t nlanes;          /* lanes created by the scan; tl->nlanes is what poll published */
	int64_t rows_total;
	int64_t rows_done;      /* atomic */
	int running;            /* atomic: scan threads not finished */
	int stop;               /* atomic: timeline_release() asks the threads to stop */
	uint64_t generation;    /* atomic: bumped by each finished task */
	uint64_t seen;          /* generation at the last poll */
	int failed, reported, joined;
	int prefix;             /* the bins hold running sums: the scan is over */
	char err[256];
	double t_start;
};

/* The catalog's description of a lane kind (kind < TL_NKINDS): its queries, names and details; see timeline.c. */
const struct agp_lane *tl_lane_def(enum tl_kind kind);

/* A row of a lane kind's slice query as a slice (lane not set). */
void tl_row_to_slice(const struct timeline *tl, sqlite3_stmt *st, enum tl_kind kind, struct tl_slice *s);
/* Slices by start, longer first, then id. */
int tl_slice_cmp(const void *a, const void *b);
int tl_is_retrace(const struct timeline *tl, int64_t trace_id);
/* Set s's lane and its retrace flag. */
void tl_finish_slice(const struct timeline *tl, struct tl_slice *s, size_t lane);
/* Bind a lane's filter (?1 pid, ?2 tid, ?6 device) to st. */
void tl_bind_lane(sqlite3_stmt *st, const struct tl_lane *l);
/* 1 while the scan threads run. */
int tl_loading(const struct timeline *tl);
/* The published lane of an event in *lane: 1, or 0 when none. */
int tl_lane_of(const struct timeline *tl, enum tl_kind kind, int64_t pid, int64_t tid, int64_t device, uint32_t *lane);
/*
 * Events of a lane starting in [t0 - look back, t1) that reach into
 * [t0, t1), at most limit (limit + 1 read: too many); -1 on error.
 */
ptrdiff_t tl_fetch_range(struct timeline *tl, size_t lane, int64_t t0, int64_t t1, size_t limit, struct tl_render *r);
/* The lane's long slices that overlap [t0, t1), into r.  0 or -1. */
int tl_push_longs(struct timeline *tl, const struct tl_lane *l, int64_t t0, int64_t t1, struct tl_render *r);
int64_t tl_bin_of(const struct timeline *tl, int64_t t);

/* The scan (timeline_lanes.c), started and stopped by timeline_open/release. */
int tl_find_span(struct timeline *tl);
int tl_make_tasks(struct timeline *tl, struct tl_loader *ld);
void *tl_scan_thread(void *arg);

#endif
