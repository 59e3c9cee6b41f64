/*
 * kinds.h - the catalog of recorded kinds: every table of common/schema.sql
 * described once (its columns' roles, the lanes and details agprof view
 * draws from it, its events in the Chrome trace), for the readers and
 * writers that treat tables alike: merge (writer/merge_copy.c), the view's
 * data (analyzer/timeline/), the exports (analyzer/export/) and the format
 * check (analyzer/model/recording.c).  tests/unit/check_kinds.py checks it
 * against schema.sql.  The collector's and the run writer's per-kind code
 * (the hot path) stays hand-written.
 */
#ifndef AGPROF_KINDS_H
#define AGPROF_KINDS_H

#include <stddef.h>

/* The lanes of agprof view, in the order a track shows them (timeline.h's enum tl_kind). */
enum agp_lane_kind {
	AGP_LANE_TRACE,    /* traces: time spent tracing a tf.function */
	AGP_LANE_CALL,     /* function_calls: graph function executions */
	AGP_LANE_EAGER,    /* eager_ops: ops dispatched eagerly */
	AGP_LANE_BLACKBOX, /* blackbox_execs: tf.py_function / numpy_function bodies */
	AGP_LANE_KERNEL,   /* gpu_activity kind 'kernel' */
	AGP_LANE_COPY,     /* gpu_activity kinds 'memcpy' and 'memset' ('sync' rows are not drawn) */
	AGP_LANE_CPUK,     /* kernels (schema 4): CPU kernel executions, on the executor threads */
	AGP_NLANES
};

/*
 * One lane kind drawn from a table's rows.  slice returns the columns of
 * every event query (analyzer/timeline/timeline.c says which); filter
 * selects one lane's rows (?1 pid, ?2 tid, ?6 device); search is the column
 * matched against the ids of matching names; details is one row's details
 * (?1 its id), its columns labelled by labels.
 */
struct agp_lane {
	const char *long_name;  /* "tracing"; NULL: no lane */
	const char *short_name; /* at most 5 characters: "trace" */
	int kind;               /* enum agp_lane_kind */
	const char *slice, *filter, *search;
	const char *details;
	const char *labels[12];
	short color8;           /* its colour on 8-colour terminals: curses' COLOR_* (1 red ... 6 cyan) */
	short color256;         /* and on 256-colour ones */
};

/* How a table's rows become Chrome trace events (analyzer/export/chrome.c). */
enum agp_chrome_how {
	AGP_CHROME_NONE,
	AGP_CHROME_SLICE,   /* an "X" event per row */
	AGP_CHROME_GPU,     /* the same, on a GPU stream's track (tid: the stream), streams named first */
	AGP_CHROME_COUNTER, /* per-second counters: pid, tid, name, second, count */
};

struct agp_chrome {
	int how;            /* enum agp_chrome_how */
	const char *cat;    /* the events' category */
	/*
	 * SLICE and GPU: pid, tid (GPU: stream), start_ns, end_ns, name, then
	 * the args' columns in the order of args.
	 */
	const char *sql;
	/*
	 * "key:type ..." with type s (text, "" when NULL), i (int), l (64-bit
	 * int), L (64-bit int, left out when NULL), n (1 when not 0, else left
	 * out), loc (two columns, file and line, as "file:line"; left out when
	 * the file is NULL).  COUNTER: the counter's name, before ", tid N".
	 */
	const char *args;
};

#define AGP_KIND_EVENT 0x1          /* rows are events with a pid and times */
#define AGP_KIND_REQUIRED 0x2       /* a file without the table is not a recording */
#define AGP_KIND_MERGED_ELSEWHERE 0x4 /* merge.c fills it itself (meta, strings, ranks) */
#define AGP_KIND_OR_IGNORE 0x8      /* merge: rows that repeat across inputs keep the first */
#define AGP_KIND_AGGREGATE 0x10     /* rows are buckets: count and total_ns of many events */
#define AGP_KIND_NO_START_INDEX 0x20 /* no index on start_ns: min/max by the first and last ids */
#define AGP_KIND_STORAGE 0x40        /* rows readers see through another kind's view (eager_ops): not exported alone */

struct agp_kind {
	const char *table;
	/*
	 * "column:role ..." for the columns that are not plain data:
	 *   id       this table's INTEGER PRIMARY KEY (merge shifts it past the merged rows)
	 *   TABLE    a reference to TABLE's id (shifted as TABLE's ids are)
	 *   strings  a reference to strings(id) (merge re-interns it)
	 *   pid      a process id (moved when it collides with an earlier input's)
	 *   tid      a thread id
	 *   time     a CLOCK_MONOTONIC time (plus the input's clock offset)
	 *   rank     the input's rank (merge writes it; not read from an input)
	 *   @COLUMN  an id of the table that COLUMN names (gpu_external_ids.event_id)
	 */
	const char *columns;
	unsigned flags;        /* AGP_KIND_* */
	int since;             /* the schema version that added it */
	/*
	 * Schema 6 and later: the table is the reader's TEMP view over this
	 * table (db_define_eager_view()); in older files it is a table.
	 */
	const char *view_over;
	/* agprof view: the density scan (id, pid, tid, start_ns, end_ns, then per kind; ?1, ?2 an id range) */
	const char *scan;
	int scan_lane;         /* the lane of its rows (enum agp_lane_kind) */
	struct agp_lane lanes[2];
	struct agp_chrome chrome;
};

extern const struct agp_kind agp_kinds[];
extern const size_t agp_nkinds;
#define AGP_MAX_KINDS 64 /* at least agp_nkinds (kinds.c checks) */

/* The catalog's entry of table, or NULL. */
const struct agp_kind *agp_kind_find(const char *table, size_t len);
/* The lane kind's description (kind < AGP_NLANES), or NULL. */
const struct agp_lane *agp_lane_find(int kind);
/* The entry whose table the lane kind is drawn from, or NULL. */
const struct agp_kind *agp_lane_table(int kind);
/* The role of column col of k (a pointer into k->columns, *len bytes), or NULL when it has none. */
const char *agp_kind_role(const struct agp_kind *k, const char *col, size_t *len);

#endif
