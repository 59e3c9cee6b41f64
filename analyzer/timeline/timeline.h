/*
 * timeline.h - a recording as tracks of time slices, for `agprof view`.
 *
 * Owns: the track layout (one track per thread, grouped by process, one per
 * GPU stream), and per track one lane per kind of event; the per-lane
 * density summary built once at open; the queries that give what a lane
 * shows over a time range at a given width (level of detail: slices wider
 * than a column are drawn, smaller ones merge into density blocks); the
 * retrace marks; search by name; the details of one slice.
 *
 * This is the only SQL behind the TUI.  A recording of ten million events
 * is never loaded: each event table is scanned once (by rowid ranges, on
 * background threads, each with its own connection) into a fixed number of
 * time bins per lane, and events are fetched from SQLite only for a visible
 * range that holds few enough of them.  Events much longer than a bin are
 * kept in memory as slices so that the range queries can stay on the
 * start_ns indexes with a short look-back.
 *
 * Loading is progressive: timeline_open() returns once the tracks it can
 * see cheaply are known and the scan has started; timeline_poll(), called
 * by the one thread that reads the timeline, publishes the lanes found so
 * far, and the density fills in while the scan runs.  Exact queries (small
 * windows, stepping, search, details) are right from the start.
 *
 * Lifetime: everything reachable from a struct timeline is owned by it and
 * freed by timeline_release(); a struct tl_render owns its slices.
 */
#ifndef AGPROF_TIMELINE_H
#define AGPROF_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

#include "idmap.h"
#include "kinds.h"
#include "strpool.h"

struct recording;
struct sqlite3_stmt;

/* The lane kinds of the catalog (common/kinds.h: where each is described). */
enum tl_kind {
	TL_TRACE = AGP_LANE_TRACE,
	TL_CALL = AGP_LANE_CALL,
	TL_EAGER = AGP_LANE_EAGER,
	TL_BLACKBOX = AGP_LANE_BLACKBOX,
	TL_KERNEL = AGP_LANE_KERNEL,
	TL_COPY = AGP_LANE_COPY,
	TL_CPUK = AGP_LANE_CPUK,
	TL_NKINDS = AGP_NLANES
};

/* "tracing", "call", "eager", "py_function", "kernel", "copy", "cpu kernel". */
const char *tl_kind_name(enum tl_kind kind);
/* Short form for lane labels, at most 5 characters: "trace", "call", ... */
const char *tl_kind_short(enum tl_kind kind);

#define TL_SLICE_RETRACE 0x1 /* a trace after the first of its function */
#define TL_SLICE_FAILED  0x2 /* ok = 0 / status failed */

/* One event. */
struct tl_slice {
	int64_t id;        /* row id in the kind's table */
	int64_t start_ns, end_ns;
	int64_t name_id;   /* strings.id of what to show (TL_CPUK: graph_nodes.id), -1 for none */
	uint32_t lane;     /* index in timeline.lanes */
	uint8_t kind;      /* enum tl_kind */
	uint8_t flags;     /* TL_SLICE_* */
};

/*
 * One kind of events on one thread or stream.  The scan threads add to
 * count, busy, nevents and max_short_ns with atomic operations; read them
 * through tl_lane_events() and the render functions.
 */
struct tl_lane {
	enum tl_kind kind;
	int64_t pid, tid, device; /* the track's key */
	size_t track;          /* index in timeline.tracks */
	int64_t nevents;       /* all events, long ones included */
	int64_t max_short_ns;  /* longest event counted in the bins */
	uint32_t *count;       /* nbins: short events by start bin */
	uint64_t *busy;        /* nbins: time (ns) of short events within each bin */
	uint32_t *coarse_count; /* the same by TL_COARSE bins, for cheap redraws while the scan runs */
	uint64_t *coarse_busy;
	struct tl_slice *longs; /* events longer than TL_LONG_BINS bins (under the loader's lock) */
	size_t nlongs, alongs;
	int64_t agg_t0, agg_t1; /* [t0, t1): events kept only as aggregates (eager_op_buckets); 0, 0: none */
};

/* One thread (device < 0) or one GPU stream (tid is the stream). */
struct tl_track {
	int64_t pid, tid, device;
	char *role;        /* threads.role, or "gpu-stream" */
	char *name;        /* kernel thread name, NULL when unknown */
	char label[32];    /* "main 4242", "exec 4250", "GPU0 s7" */
	int64_t proc_start; /* for ordering processes */
	char *command;     /* the process's command line ("python train.py"), NULL when unknown */
	size_t lanes[TL_NKINDS]; /* its lanes, in kind order */
	size_t nlanes;
};

/* A retrace: the trace, and the function it belongs to. */
struct tl_mark {
	struct tl_slice slice;     /* slice.lane is set once the lane is published */
	int64_t pid, tid;
	int64_t function_id;
	int object_trace_no;
};

struct tl_loader; /* private: the scan threads */

/*
 * Rows of a small table (id, value), found by id through a map: ids come
 * from the file and never size or index memory.
 */
struct tl_idrows {
	int64_t *id;
	int64_t *value;    /* integer tables */
	const char **text; /* strings: the text, control characters replaced (in the pool) */
	size_t n;
	struct idmap at;   /* id -> row index */
};

struct timeline {
	struct recording *rec;     /* not owned */
	int64_t start_ns, end_ns;  /* span of the recording and of every event */
	int64_t bin_ns;
	uint32_t nbins;
	struct tl_track *tracks;   /* by process start, then python-main, executors, tf.data, others, GPU */
	size_t ntracks;
	struct tl_lane *lanes;     /* published lanes, in the order found; tracks list theirs */
	size_t nlanes;
	struct tl_mark *retraces;  /* by start */
	size_t nretraces;
	struct tl_idrows strings;   /* strings: id, text */
	struct tl_idrows functions; /* functions: id, name_id */
	struct tl_idrows graph_fns; /* graph_functions: id, function_id (-1 unknown) */
	struct tl_idrows nodes;     /* graph_nodes: id, name (a CPU kernel's name_id is its node_id) */
	struct tl_idrows node_types; /* graph_nodes: id, op_type */
	struct strpool pool;        /* the strings' text */
	struct sqlite3_stmt *range[TL_NKINDS];
	struct sqlite3_stmt *step[2][TL_NKINDS];
	struct tl_loader *loader;
	double open_seconds;       /* how long timeline_open took */
	double load_seconds;       /* from timeline_open to the end of the scan, once done */
	int threads_used;
};

/* Lanes hold events longer than this many bins as slices, not in the bins. */
#define TL_LONG_BINS 16
/* Bins per coarse bin (a power of two). */
#define TL_COARSE 64

/*
 * Open the timeline of rec: span, retraces, and start the scan that finds
 * the lanes and fills their density bins (nbins, 0 for the default).
 * Prints one "error: ..." line and returns -1 on failure.
 */
int timeline_open(struct timeline *tl, struct recording *rec, uint32_t nbins);
/* Stops the scan if it still runs. */
void timeline_release(struct timeline *tl);

#define TL_POLL_CHANGED 1 /* new lanes or new density since the last poll */
#define TL_POLL_LOADING 2 /* the scan still runs */

/*
 * Publish what the scan found since the last call: new lanes and tracks
 * (tracks are sorted again; lane indices stay valid).  Returns TL_POLL_*
 * bits; *progress (may be NULL) gets the scanned share, 0..1.  A scan
 * error is printed once and ends the loading.
 */
int timeline_poll(struct timeline *tl, double *progress);
/* Wait for the scan to finish, then poll; returns -1 if the scan failed. */
int timeline_wait(struct timeline *tl);
/* Events of a lane counted so far. */
int64_t tl_lane_events(const struct tl_lane *l);

/* Text of strings.id, or NULL. */
const char *timeline_string(const struct timeline *tl, int64_t id);
/* The name to show for a slice: its string, else the kind's name. */
const char *timeline_slice_name(const struct timeline *tl, const struct tl_slice *s);

/*
 * A visible window: [t0, t1) mapped on cols columns.  Column c covers
 * [tl_col_start(c), tl_col_start(c + 1)).
 */
struct tl_window {
	int64_t t0, t1;
	int cols;
};

/* Column holding time t (floor), may be < 0 or >= cols when t is outside. */
int64_t tl_col_of(const struct tl_window *w, int64_t t);
/* First time that falls in column col. */
int64_t tl_col_start(const struct tl_window *w, int64_t col);
/*
 * Columns [*c0, *c1] that the slice [start, end) covers, clipped to the
 * window; returns 0 when it is outside.  A slice covers at least one column.
 */
int tl_cols_of(const struct tl_window *w, int64_t start, int64_t end, int *c0, int *c1);

/* What one column of a lane shows. */
enum tl_cell_type { TL_CELL_EMPTY = 0, TL_CELL_SLICE, TL_CELL_DENSITY };

struct tl_cell {
	uint8_t type;
	uint8_t shade;   /* density: 1..4, the busy share of the column in quarters (rounded up) */
	uint8_t head;    /* slice: first visible column of the slice */
	uint8_t wide;    /* slice: the slice spans two columns or more */
	uint32_t count;  /* events merged into this column */
	int32_t slice;   /* slice: index in tl_render.slices */
};

/* What a lane shows in a window; reuse one across calls to keep its memory. */
struct tl_render {
	struct tl_cell *cells;    /* window.cols */
	struct tl_slice *slices;  /* the slices drawn as slices (and the merged ones when exact) */
	size_t nslices, alloc, cells_alloc;
	int exact;                /* 1: from the events; 0: from the density bins */
	int64_t events;           /* events in the window (estimate when !exact) */
};

/*
 * Level-of-detail merge, the pure part of timeline_lane_render(): slices
 * that span two columns or more are drawn as slices (a later one overwrites
 * an earlier one), slices within one column add to that column's density;
 * a column holding one small slice and nothing else shows that slice.
 * cells must hold w->cols entries.
 */
void tl_lod_merge(const struct tl_window *w, const struct tl_slice *slices, size_t n, struct tl_cell *cells);

/*
 * Sum of fine[b0..b1), reading coarse[k] (the sum of fine[k * TL_COARSE ..
 * (k + 1) * TL_COARSE)) for the whole coarse bins inside the range; coarse
 * may be NULL.  Loads are atomic: the scan may be adding.
 */
uint64_t tl_sum_bins32(const uint32_t *fine, const uint32_t *coarse, int64_t b0, int64_t b1);
uint64_t tl_sum_bins64(const uint64_t *fine, const uint64_t *coarse, int64_t b0, int64_t b1);

/* Density shade (1..4) of busy ns within a column of width ns; 0 when busy is 0. */
int tl_shade(uint64_t busy, int64_t width);

/*
 * Fill r with what lane shows in w: exact (events fetched from the
 * recording and merged) when the window holds at most max_events of them
 * (0: the default), otherwise density from the bins with the long events on
 * top.  0 or -1 after printing an error.
 */
int timeline_lane_render(struct timeline *tl, size_t lane, const struct tl_window *w, size_t max_events,
			 struct tl_render *r);
void tl_render_release(struct tl_render *r);

/*
 * The slice of lane next to time t: dir > 0 the first starting after t,
 * dir < 0 the last starting before t, dir == 0 the one containing t (else
 * the nearest within slop ns).  Returns 1 when found, 0 when none, -1 on error.
 */
int timeline_lane_step(struct timeline *tl, size_t lane, int64_t t, int dir, int64_t slop, struct tl_slice *out);

/* Look up the event id of kind; 1 found, 0 none, -1 error. */
int timeline_find(struct timeline *tl, enum tl_kind kind, int64_t id, struct tl_slice *out);

/* Bit mask of kinds: 1u << TL_TRACE | ... */
#define TL_ALL_KINDS ((1u << TL_NKINDS) - 1)

/*
 * Events whose name contains needle (case-insensitively), of the kinds in
 * mask, in time order, at most max of them.  *out is malloc'd (free it).
 * Returns the number found or -1.
 */
ptrdiff_t timeline_search(struct timeline *tl, const char *needle, unsigned mask, size_t max, struct tl_slice **out);

/* One line of the details of a slice: "label", "value". */
struct tl_detail {
	char label[16];
	char *value;
};

/*
 * Details of a slice as label/value lines (kind, name, start, duration,
 * thread, source line, and per kind: signature and trace number, graph
 * function, device, bytes ...).  *out is malloc'd; free with
 * tl_details_free().  Returns the number of lines or -1.
 */
ptrdiff_t timeline_details(struct timeline *tl, const struct tl_slice *s, struct tl_detail **out);
void tl_details_free(struct tl_detail *d, size_t n);

/*
 * The same collective on another rank (timeline_collective.c): for a
 * selected eager op or CPU kernel of a merged recording that is a
 * collective, its description and its peer, the same collective (same
 * group/instance keys and occurrence, or kind and occurrence without keys)
 * on the next rank that ran it.  Returns 1 with c->peer set, 0 when s is
 * no collective or has no peer slice (c->is_collective says which), -1 on
 * error.
 */
struct tl_collective {
	int is_collective;
	char text[160];           /* "CollectiveReduceV2, group 1 instance 102 #1, 2 ranks" */
	int64_t rank, peer_rank;
	int64_t span_ns, peer_span_ns;  /* collective_execs spans: a graph one's is dispatch to done */
	struct tl_slice peer;
};
int timeline_collective_peer(struct timeline *tl, const struct tl_slice *s, struct tl_collective *c);

#endif
