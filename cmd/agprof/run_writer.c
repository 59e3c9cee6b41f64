/*
 * run_writer.c - drains the collector's shared memory into the recording.
 * See run_writer.h, common/agp_protocol.h (the input) and docs/schema.md (the
 * output).  Ids in the rings are per process; this file maps them to rows.
 */
#include "run_writer.h"
#include "capture_log.h"
#include "checkpointer.h"
#include "eager_buckets.h"
#include "eager_blocks.h"
#include "eager_keys.h"
#include "agp_protocol.h"
#include "srcfile.h"
#include "db.h"
#include "functiondef.h"
#include "idmap.h"
#include "strbuf.h"
#include "tfconfig.h"
#include "util.h"
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Longest side record accepted: FunctionDefs are the big ones (a few MiB). */
#define SIDE_RECORD_MAX (256u << 20)
/* At most this much of a side file is read per poll (a child may still write). */
#define SIDE_READ_PER_POLL (64u << 20)
/* Largest ring record: 65535 words; a span is the largest fixed layout. */
#define RING_RECORD_MAX (65535u * 8u)

/*
 * An aggregated call's seq (low 32 bits) and the function_calls row that
 * stands for it: its function's first call.  A kernel total names the last
 * call its kernel ran under (agp_protocol.h), nearly always one of the
 * latest: direct-mapped by seq, the latest AGG_CALLS are kept.
 */
#define AGG_CALLS 4096u
struct agg_call {
	uint32_t seq;
	int64_t row;
};

struct stream {
	char name[64];
	int pid;
	struct agp_shm_header *shm;
	uint64_t tails[AGP_MAX_THREADS];
	int thread_seen[AGP_MAX_THREADS];
	int side_fd;
	char *side_buf;
	size_t side_len, side_cap;
	struct idmap strings, sites;   /* the workload's ids -> rows (local_id_get) */
	struct idmap kernel_nodes;     /* (name id << 32 | type id) -> graph_nodes row */
	int gpu_on;
	int damaged;                       /* ring file unreadable: no more draining */
	uint8_t ring_damaged[AGP_MAX_THREADS];
	int side_damaged;
	int borrowed;                      /* the producer's own mapping (run_writer_borrow_mapping) */
	struct idmap fn_rows;              /* graph function name row -> its first function_calls row */
	struct agg_call agg_calls[AGG_CALLS]; /* the latest aggregated calls, by seq (aggregate_call) */
	uint32_t kernel_seq_seen;          /* the latest call seq whose kernels were stored one by one */
	uint32_t kernel_seq_cap;           /* past the kernel budget: calls after this seq are counted only */
	int kernel_capped;
};

/*
 * The high-rate rows (eager ops, kernels) are buffered and inserted
 * BATCH_ROWS per statement: one step's fixed cost (cursors opened and
 * closed, the statement's halt, the rowid's seek) is then shared by them
 * (bench/ingest.c).  A row is its values; bit c of nulls: column c+1 is NULL.
 * Flushed when full, before every commit and at the finish, so a commit
 * holds every row read before it, as with one row per statement.
 */
#define BATCH_ROWS 32
#define BATCH_COLS 10
struct batch {
	sqlite3_stmt *one, *many;        /* INSERT of one row, of BATCH_ROWS rows */
	int cols, n;
	uint64_t *count;                 /* the table's total in w->totals */
	int64_t v[BATCH_ROWS][BATCH_COLS];
	uint32_t nulls[BATCH_ROWS];
};

struct run_writer {
	sqlite3 *db;
	char *shm_dir;
	struct string_table st;
	struct stream **streams;
	size_t nstreams;
	uint64_t last_commit_ns, last_scan_ns;
	int behind;                    /* the last poll found a ring a quarter full (run_writer_idle_us) */
	struct checkpointer *ckpt;     /* the WAL's checkpoints, off the writer's thread; NULL: SQLite's own */
	int wal_frames;                /* the WAL's frames after the latest commit (wal_committed) */
	struct run_totals totals;      /* rows written, committed or not */
	struct run_totals committed;   /* rows of the last successful commit */
	struct strbuf notes;           /* why the recording lacks events (meta.incomplete) */
	char *rec;                     /* one ring record, copied out of shared memory */
	sqlite3_stmt *ins_eager, *ins_call, *ins_bb, *ins_site, *get_site, *ins_thread,
		*ins_process, *upd_process_tf, *upd_process_exit, *upd_process_gpu, *ins_function,
		*get_function, *ins_trace, *ins_input, *ins_gf, *ins_ginput, *ins_gconst,
		*ins_bbnode, *ins_gpu, *ins_api, *ins_ext, *ins_link_ref, *ins_link_trace,
		*ins_link_name, *ins_trace_seq, *get_trace_seq, *ins_trace_event;
	sqlite3_stmt *ins_session, *ins_kernel, *ins_knode, *ins_gnode, *ins_call_seq, *ins_node_src,
		*upd_process_kernels, *ins_collective, *ins_ktotal;
	struct capture_log capture;    /* the capture windows' changes (capture_log.h) */
	char *capture_desc;            /* what opened and closed them (meta.capture) */
	int capture_note_said;         /* the bound on changes was reached (said once) */
	struct batch eager, kernel;    /* rows not inserted yet (struct batch) */
	uint64_t lost_rows;            /* rows SQLite refused (not a write failure): said once */
	char *lost_why;                /* the first refusal's message */
	struct run_budget budget;      /* --max-events, --max-size (run_writer_budget) */
	struct eager_buckets buckets;  /* eager ops past the budget (eager_buckets.h) */
	struct eager_buckets call_buckets, bb_buckets; /* graph calls, black-box runs past it */
	int aggregate_meta_said;       /* meta.aggregate_* written during the run (crash safety) */
	struct eager_keys keys;        /* eager_op_keys of the kept eager ops (eager_keys.h) */
	struct eager_blocks blocks;    /* their eager_op_blocks (eager_blocks.h) */
	int aggregating;               /* the budget is spent: eager ops, calls, black boxes go to buckets */
	uint64_t kernels_refused;      /* kernel rows past the budget (kernel_detail_refused) */
	uint64_t kernels_capped_ns;    /* when the first process's kernel budget ran out (writer's clock) */
	int64_t aggregate_from_ns;     /* the first aggregated op's start (meta.aggregate_from_ns) */
	const char *aggregate_why;     /* which bound was reached (meta.aggregate_reason) */
};

/* The bucket tables of graph calls and black-box runs (eager_buckets_init_as's parameters). */
#define CALL_BUCKETS_SQL \
	"INSERT OR REPLACE INTO function_call_buckets(id, pid, tid, start_ns, end_ns, name_id, callsite_id," \
	" count, total_ns, failed, histogram) VALUES (?14,?1,?2,?3,?4,?5,?7,?8,?9,?12,?13)"
#define BB_BUCKETS_SQL \
	"INSERT OR REPLACE INTO blackbox_buckets(id, pid, tid, start_ns, end_ns, node_id, op_type_id, token," \
	" count, total_ns, failed, histogram)" \
	" VALUES (?14,?1,?2,?3,?4,?5,?6,(SELECT text FROM strings WHERE id = ?7),?8,?9,?12,?13)"

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * Per-process ids (strings, sites) to rows.  The ids come from the workload's
 * memory, so they key common/idmap's hash table: memory grows with the
 * records actually seen, never with the value of an id.  Id 0 means
 * "unknown"; a workload may define an id twice: the last wins.
 */
static void local_id_set(struct idmap *m, uint32_t local, int64_t id)
{
	if (local)
		idmap_set(m, local, id > 0 ? (size_t)id : 0);
}

static int64_t local_id_get(const struct idmap *m, uint32_t local)
{
	size_t v;

	return local && idmap_get(m, local, &v) ? (int64_t)v : 0;
}

/*
 * Shared memory is the workload's: it may scribble on it or shrink the file
 * under our mapping (a read past the end of the file is SIGBUS).  Every read
 * of a mapping goes through shm_copy / shm_load, which catch that SIGBUS;
 * all decoding works on the copy, bounded by the copy's size.  The jump
 * never crosses SQLite or malloc: only these small readers are armed.
 */
static sigjmp_buf shm_fault_jmp;
static volatile sig_atomic_t shm_fault_armed;

static void on_shm_fault(int sig, siginfo_t *si, void *uctx)
{
	(void)si, (void)uctx;
	if (shm_fault_armed) {
		shm_fault_armed = 0;
		siglongjmp(shm_fault_jmp, 1);
	}
	signal(sig, SIG_DFL);  /* not ours: the faulting access repeats and kills us as before */
}

static void shm_fault_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_shm_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;  /* NODEFER: no mask to restore after the jump */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

/* Copy n bytes out of a mapping; -1 when the file under it is gone. */
static int shm_copy(void *dst, const void *src, size_t n)
{
	if (sigsetjmp(shm_fault_jmp, 0))
		return -1;
	shm_fault_armed = 1;
	memcpy(dst, src, n);
	shm_fault_armed = 0;
	return 0;
}

/*
 * An acquire load of one 4- or 8-byte word of a mapping, guarded like
 * shm_copy: 0 and *out, or -1 when the file under it is gone.  One reader
 * for the 64-bit counters, the 32-bit thread count and the signed tids.
 */
static int shm_load(void *p, void *out, size_t size)
{
	uint64_t v64 = 0;
	uint32_t v32 = 0;

	if (sigsetjmp(shm_fault_jmp, 0))
		return -1;
	shm_fault_armed = 1;
	if (size == sizeof(v64))
		v64 = atomic_load_explicit((_Atomic uint64_t *)p, memory_order_acquire);
	else
		v32 = atomic_load_explicit((_Atomic uint32_t *)p, memory_order_acquire);
	shm_fault_armed = 0;
	if (size == sizeof(v64))
		memcpy(out, &v64, sizeof(v64));
	else
		memcpy(out, &v32, sizeof(v32));
	return 0;
}
#define SHM_LOAD(p, out) shm_load((void *)(p), (out), sizeof(*(out)))

static int shm_store64(_Atomic uint64_t *p, uint64_t v)
{
	if (sigsetjmp(shm_fault_jmp, 0))
		return -1;
	shm_fault_armed = 1;
	atomic_store_explicit(p, v, memory_order_release);
	shm_fault_armed = 0;
	return 0;
}

/* Set or clear bits of a mapped header's word, guarded like shm_store64. */
static int shm_bits32(_Atomic uint32_t *p, uint32_t set, uint32_t clear)
{
	if (sigsetjmp(shm_fault_jmp, 0))
		return -1;
	shm_fault_armed = 1;
	if (set)
		atomic_fetch_or_explicit(p, set, memory_order_relaxed);
	if (clear)
		atomic_fetch_and_explicit(p, ~clear, memory_order_relaxed);
	shm_fault_armed = 0;
	return 0;
}

static volatile sig_atomic_t writer_stop;

/*
 * ThreadSanitizer tracks addresses, not pages: a race between the collector
 * writing through its mapping and the writer reading through another one is
 * invisible to it.  tests/unit/tsan-ring.c hands the writer the collector's
 * own mapping instead.
 */
static struct agp_shm_header *borrowed_map;

void run_writer_borrow_mapping(void *map)
{
	borrowed_map = map;
}

void run_writer_stop(void)
{
	writer_stop = 1;
}

/* Say (once per cause) why the recording lacks events; kept in meta.incomplete. */
static void add_note(struct run_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add_note(struct run_writer *w, const char *fmt, ...)
{
	va_list ap;

	if (w->notes.len > 2000)
		return;  /* enough to say the file is damaged */
	if (w->notes.len)
		strbuf_addstr(&w->notes, "; ");
	va_start(ap, fmt);
	strbuf_vaddf(&w->notes, fmt, ap);
	va_end(ap);
	w->totals.damaged++;
}

static void stream_damaged(struct run_writer *w, struct stream *s, const char *why)
{
	if (!s->damaged)
		add_note(w, "process %d: %s (its later events are missing)", s->pid, why);
	s->damaged = 1;
}

/*
 * Step one insert or update of the writer.  Errors are sticky and said once:
 * a write failure (disk full) ends writing, as db.h describes, and is
 * reported by the launcher (exit 3); any other refusal loses that row only,
 * is counted, said once on stderr and noted in meta.incomplete.
 */
static int step(struct run_writer *w, sqlite3_stmt *st)
{
	int rc = db_step_quiet(w->db, st);

	if (rc && !db_write_failure(w->db) && !w->lost_rows++) {
		w->lost_why = strdup(sqlite3_errmsg(w->db));
		error("cannot store a record: %s in '%.200s'", w->lost_why ? w->lost_why : "?", sqlite3_sql(st));
	}
	sqlite3_reset(st);
	return rc ? -1 : 0;
}

static void bind_id_or_null(sqlite3_stmt *s, int col, int64_t id)
{
	if (id > 0)
		sqlite3_bind_int64(s, col, id);
	else
		sqlite3_bind_null(s, col);
}

static void bind_text_or_null(sqlite3_stmt *s, int col, const char *text)
{
	if (text)
		sqlite3_bind_text(s, col, text, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, col);
}

/* The batch's INSERT of BATCH_ROWS rows: sql's VALUES tuple repeated (sql ends with it). */
static int batch_init(struct run_writer *w, struct batch *b, sqlite3_stmt *one, uint64_t *count)
{
	const char *sql = sqlite3_sql(one), *values = strstr(sql, " VALUES ");
	int cols = sqlite3_bind_parameter_count(one);  /* one row's values */
	struct strbuf sb = STRBUF_INIT;

	b->one = one, b->cols = cols, b->count = count, b->n = 0;
	if (!values || cols > BATCH_COLS)
		return -1;
	strbuf_addstr(&sb, sql);
	for (int i = 1; i < BATCH_ROWS; i++) {
		strbuf_addstr(&sb, ",");
		strbuf_addstr(&sb, values + strlen(" VALUES "));
	}
	b->many = sb.buf ? db_prepare(w->db, sb.buf) : NULL;
	strbuf_release(&sb);
	return b->many ? 0 : -1;
}

static void batch_bind(sqlite3_stmt *st, int first, const struct batch *b, int row)
{
	for (int c = 0; c < b->cols; c++)
		if (b->nulls[row] & (1u << c))
			sqlite3_bind_null(st, first + c);
		else
			sqlite3_bind_int64(st, first + c, b->v[row][c]);
}

/* Insert the batch's rows; a refused full batch (not a write failure) goes again row by row. */
static void batch_flush(struct run_writer *w, struct batch *b)
{
	int n = b->n, many = n == BATCH_ROWS;

	b->n = 0;
	if (many) {
		for (int r = 0; r < n; r++)
			batch_bind(b->many, 1 + r * b->cols, b, r);
		many = db_step_quiet(w->db, b->many) == 0;
		sqlite3_reset(b->many);
		if (!many && db_write_failure(w->db))
			return;
	}
	for (int r = 0; r < n && !many; r++) {
		batch_bind(b->one, 1, b, r);
		if (step(w, b->one) == 0)
			(*b->count)++, w->totals.events++;
	}
	if (many)
		*b->count += (uint64_t)n, w->totals.events += (uint64_t)n;
}

/* The next row to fill (all columns set, none NULL); batch_add inserts it in turn. */
static int64_t *batch_row(struct batch *b)
{
	b->nulls[b->n] = 0;
	return b->v[b->n];
}

static void batch_null(struct batch *b, int col)
{
	b->nulls[b->n] |= 1u << (col - 1);
}

static void batch_add(struct run_writer *w, struct batch *b)
{
	if (++b->n == BATCH_ROWS)
		batch_flush(w, b);
}

static void flush_batches(struct run_writer *w)
{
	batch_flush(w, &w->eager);
	eager_blocks_close(&w->blocks);  /* every committed row in a committed block */
	batch_flush(w, &w->kernel);
}

static int prepare_all(struct run_writer *w)
{
	struct { sqlite3_stmt **s; const char *sql; } stmts[] = {
		{ &w->ins_eager, "INSERT INTO eager_op_rows(key, start, dur, python_ns, flags) VALUES (?,?,?,?,?)" },
		{ &w->ins_call, "INSERT INTO function_calls(pid, tid, start_ns, end_ns, name_id, callsite_id, ok, kernel_detail) VALUES (?,?,?,?,?,?,?,?)" },
		{ &w->ins_bb, "INSERT INTO blackbox_execs(pid, tid, start_ns, end_ns, node_id, op_type_id, token) VALUES (?,?,?,?,?,?,(SELECT text FROM strings WHERE id = ?))" },
		{ &w->ins_site, "INSERT INTO callsites(file_id, line, func_id, parent_id, library) VALUES (?,?,?,?,?)" },
		{ &w->get_site, "SELECT id FROM callsites WHERE file_id = ? AND line = ? AND func_id = ? AND parent_id IS ? AND library = ?" },
		{ &w->ins_thread, "INSERT OR IGNORE INTO threads(pid, tid, name, role) VALUES (?,?,?,?)" },
		{ &w->ins_process, "INSERT INTO processes(pid, ppid, argv, start_ns) VALUES (?1,?2,?3,?4) ON CONFLICT(pid) DO UPDATE SET argv = ?3" },
		{ &w->upd_process_tf, "UPDATE processes SET tf_status = ?, tf_detail = ?, tf_version = coalesce(?, tf_version), python_version = coalesce(?, python_version) WHERE pid = ?" },
		{ &w->upd_process_exit, "UPDATE processes SET exit_status = ?, end_ns = ? WHERE pid = ?" },
		{ &w->upd_process_gpu, "UPDATE processes SET gpu_status = ?, gpu_detail = ? WHERE pid = ?" },
		{ &w->ins_function, "INSERT OR IGNORE INTO functions(pid, name_id, file_id, line) VALUES (?,?,?,?)" },
		{ &w->get_function, "SELECT id FROM functions WHERE pid = ? AND name_id = ? AND file_id IS ? AND line IS ?" },
		{ &w->ins_trace, "INSERT INTO traces(function_id, pid, tid, start_ns, end_ns, function_object, object_trace_no, tf_name_id, signature, callsite_id, jit_compile, reduce_retracing, has_input_signature, variables_created, status, collector_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)" },
		{ &w->ins_input, "INSERT OR REPLACE INTO trace_inputs(trace_id, position, name, kind, dtype, shape, value) VALUES (?,?,?,?,?,?,?)" },
		{ &w->ins_gf, "INSERT OR IGNORE INTO graph_functions(pid, name_id, role, created_ns, jit_compile, node_count, function_def) VALUES (?,?,?,?,?,?,?)" },
		{ &w->ins_ginput, "INSERT OR REPLACE INTO graph_inputs(graph_function_id, position, name, dtype, shape) VALUES (?,?,?,?,?)" },
		{ &w->ins_gconst, "INSERT INTO graph_constants(graph_function_id, node_name, dtype, value) VALUES (?,?,?,?)" },
		{ &w->ins_bbnode, "INSERT INTO blackbox_nodes(graph_function_id, node_name, op_type, token) VALUES (?,?,?,?)" },
		{ &w->ins_gpu, "INSERT INTO gpu_activity(pid, kind, name_id, device, context, stream, start_ns, end_ns, correlation_id, grid_x, grid_y, grid_z, block_x, block_y, block_z, bytes, copy_kind) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)" },
		{ &w->ins_api, "INSERT INTO gpu_api_calls(pid, tid, api, name_id, start_ns, end_ns, correlation_id, external_id) VALUES (?,?,?,?,?,?,?,?)" },
		{ &w->ins_ext, "INSERT OR REPLACE INTO gpu_external_ids(pid, external_id, event_table, event_id) VALUES (?,?,?,?)" },
		{ &w->ins_link_ref, "INSERT INTO temp.link_ref(pid, parent_id, child_name_id) VALUES (?,?,?)" },
		{ &w->ins_link_trace, "INSERT INTO temp.link_trace(gf_id, pid, trace_seq) VALUES (?,?,?)" },
		{ &w->ins_link_name, "INSERT INTO temp.link_name(gf_id, pid, user_name) VALUES (?,?,?)" },
		{ &w->ins_trace_seq, "INSERT OR REPLACE INTO temp.trace_seq(pid, seq, trace_id) VALUES (?,?,?)" },
		{ &w->get_trace_seq, "SELECT trace_id FROM temp.trace_seq WHERE pid = ? AND seq = ?" },
		{ &w->ins_trace_event, "INSERT INTO trace_events(pid, trace_seq, trace_id, kind, name, file, line, count, detail, function, function_file, function_line, repeats, loop_line) VALUES (?1,?2,(SELECT trace_id FROM temp.trace_seq WHERE pid = ?1 AND seq = ?2),?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)" },
		{ &w->ins_kernel, "INSERT INTO kernels(pid, tid, start_ns, end_ns, node_id, call_id, async) VALUES (?,?,?,?,?,?,?)" },
		{ &w->ins_knode, "INSERT INTO graph_nodes(pid, name, op_type) VALUES (?, coalesce((SELECT text FROM strings WHERE id = ?), '?'), coalesce((SELECT text FROM strings WHERE id = ?), '?'))" },
		{ &w->ins_gnode, "INSERT INTO graph_nodes(pid, graph_function_id, name, op_type) VALUES (?,?,?,?)" },
		{ &w->ins_call_seq, "INSERT OR REPLACE INTO temp.call_seq(pid, seq, call_id) VALUES (?,?,?)" },
		{ &w->ins_node_src, "INSERT INTO temp.node_src(pid, trace_seq, name, file, line) VALUES (?,?,?,?,?)" },
		{ &w->upd_process_kernels, "UPDATE processes SET kernel_status = ?, kernel_detail = ? WHERE pid = ?" },
		{ &w->ins_collective, "INSERT INTO collective_execs(pid, tid, op_id, start_ns, end_ns, graph, group_size, group_key, instance_key, key_status) VALUES (?,?,?,?,?,?,?,?,?,?)" },
		{ &w->ins_ktotal, "INSERT INTO kernel_totals(pid, tid, node_id, call_id, count, timed, timed_ns) VALUES (?,?,?,?,?,?,?)" },
		{ &w->ins_session, "INSERT INTO session_runs(pid, tid, start_ns, end_ns, kind, callsite_id, feeds, fetches, targets, ok) VALUES (?,?,?,?,?,?,?,?,?,?)" },
	};

	if (db_exec(w->db, "CREATE TEMP TABLE link_ref(pid INTEGER, parent_id INTEGER, child_name_id INTEGER);"
			   "CREATE TEMP TABLE link_trace(gf_id INTEGER, pid INTEGER, trace_seq INTEGER);"
			   "CREATE TEMP TABLE link_name(gf_id INTEGER, pid INTEGER, user_name TEXT);"
			   "CREATE TEMP TABLE trace_seq(pid INTEGER, seq INTEGER, trace_id INTEGER, PRIMARY KEY (pid, seq));"
			   "CREATE TEMP TABLE call_seq(pid INTEGER, seq INTEGER, call_id INTEGER, PRIMARY KEY (pid, seq));"
			   "CREATE TEMP TABLE node_src(pid INTEGER, trace_seq INTEGER, name TEXT, file TEXT, line INTEGER);") != 0)
		return -1;
	for (size_t i = 0; i < sizeof(stmts) / sizeof(stmts[0]); i++)
		if (!(*stmts[i].s = db_prepare(w->db, stmts[i].sql)))
			return -1;
	if (eager_buckets_init(&w->buckets, w->db) != 0 ||
	    eager_buckets_init_as(&w->call_buckets, w->db, CALL_BUCKETS_SQL) != 0 ||
	    eager_buckets_init_as(&w->bb_buckets, w->db, BB_BUCKETS_SQL) != 0 || eager_keys_init(&w->keys, w->db) != 0 ||
	    eager_blocks_init(&w->blocks, w->db) != 0)
		return -1;
	return batch_init(w, &w->eager, w->ins_eager, &w->totals.eager_ops) ||
	       batch_init(w, &w->kernel, w->ins_kernel, &w->totals.kernels) ? -1 : 0;
}

static int release_writer(struct run_writer *w);

/* sqlite3_wal_hook: after each commit, the WAL's size in frames (pages). */
static int wal_committed(void *arg, sqlite3 *db, const char *name, int frames)
{
	(void)db;
	(void)name;
	((struct run_writer *)arg)->wal_frames = frames;
	return SQLITE_OK;
}

struct run_writer *run_writer_create(const char *path, const char *shm_dir, char *err, size_t errlen)
{
	struct run_writer *w = calloc(1, sizeof(*w));

	if (!w) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	/*
	 * No memory statistics: they take SQLite's global malloc mutex twice per
	 * row.  Only possible before SQLite's first use in this process (the
	 * launcher's case); otherwise a harmless SQLITE_MISUSE.
	 */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if (db_create_recording(path, &w->db, err, errlen) != 0) {
		free(w);
		return NULL;
	}
	/*
	 * A WAL hook replaces SQLite's automatic checkpoint: the checkpointer's
	 * thread does it.  No fsync, like perf's own files: a crash of agprof or
	 * of the program leaves a valid file (the pages are in the OS's cache),
	 * only the machine's might not.  With synchronous=NORMAL each checkpoint
	 * waited for the disk, the writer's own at the WAL's bound longer than
	 * the main ring holds at 2 M events/s (bench/ingest 8000000 2000000:
	 * 620 to 7,240 of 8 M events dropped in 5 of 9 runs, none in 12 now),
	 * and a last fsync cost the finish 0.06 s more.
	 */
	db_exec(w->db, "PRAGMA synchronous=OFF");
	if ((w->ckpt = checkpointer_start(path)))
		sqlite3_wal_hook(w->db, wal_committed, w);
	w->shm_dir = strdup(shm_dir);
	w->rec = malloc(RING_RECORD_MAX + sizeof(struct agp_rec_span));
	shm_fault_install();
	writer_stop = 0;
	if (!w->shm_dir || !w->rec || string_table_init(&w->st, w->db) != 0 || prepare_all(w) != 0 || db_exec(w->db, "BEGIN") != 0) {
		snprintf(err, errlen, "cannot prepare '%s': %s", path, sqlite3_errmsg(w->db));
		checkpointer_stop(w->ckpt);
		string_table_release(&w->st);
		sqlite3_close_v2(w->db);
		free(w->rec);
		free(w->shm_dir);
		free(w);
		return NULL;
	}
	db_meta_set_int(w->db, "schema_version", AGPROF_SCHEMA_VERSION);
	w->budget.max_events = RUN_DEFAULT_MAX_EVENTS;
	/*
	 * Indexes from the start: the launcher keeps them up to date while the
	 * program runs (on the second core; the time-ordered keys append), so
	 * the run's finish has none to build (bench/long_run.py: ~1 s less per
	 * 400k eager ops after the program ended), and a launcher killed
	 * mid-run leaves an indexed file.
	 */
	if (db_create_indexes(w->db) != 0) {
		snprintf(err, errlen, "cannot prepare '%s': %s", path, sqlite3_errmsg(w->db));
		release_writer(w);
		return NULL;
	}
	return w;
}

static int64_t intern(struct run_writer *w, const char *text)
{
	return text ? string_table_intern(&w->st, text, strlen(text)) : 0;
}

/*
 * The callsites row of one frame of a chain (parent: the row of the next
 * frame out toward user code, 0 = none), added when new.  NULLs never
 * compare equal in UNIQUE, so the lookup comes first.
 */
static int64_t callsite_id(struct run_writer *w, int64_t file, int64_t line, int64_t func, int64_t parent,
			   int library)
{
	int64_t id = 0;
	int i;

	if (file <= 0 || func <= 0)
		return 0;
	for (i = 0; i < 2 && !id; i++) {
		sqlite3_stmt *st = i ? w->ins_site : w->get_site;

		sqlite3_bind_int64(st, 1, file);
		sqlite3_bind_int64(st, 2, line);
		sqlite3_bind_int64(st, 3, func);
		bind_id_or_null(st, 4, parent);
		sqlite3_bind_int(st, 5, library ? 1 : 0);
		if (i) {
			if (step(w, st) == 0)
				id = sqlite3_last_insert_rowid(w->db);
		} else {
			if (sqlite3_step(st) == SQLITE_ROW)
				id = sqlite3_column_int64(st, 0);
			sqlite3_reset(st);
		}
	}
	return id;
}

/* Thread name and role, read while the process is (probably) still alive. */
static void thread_seen(struct run_writer *w, struct stream *s, int tid, int32_t native_role)
{
	char path[128], name[64] = "";
	const char *role = "other";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", s->pid, tid);
	f = fopen(path, "r");
	if (f) {
		if (fgets(name, sizeof(name), f))
			name[strcspn(name, "\n")] = '\0';
		fclose(f);
	}
	if (tid == s->pid)
		role = "main";
	else if (!strncmp(name, "tf_data", 7) || native_role == AGP_ROLE_TF_DATA)
		role = "tf-data";
	else if (native_role == AGP_ROLE_TF_EXECUTOR)
		role = "tf-executor";
	else if (!strncmp(name, "tf_", 3))
		role = "tf-executor";
	sqlite3_bind_int(w->ins_thread, 1, s->pid);
	sqlite3_bind_int(w->ins_thread, 2, tid);
	bind_text_or_null(w->ins_thread, 3, name[0] ? name : NULL);
	sqlite3_bind_text(w->ins_thread, 4, role, -1, SQLITE_STATIC);
	step(w, w->ins_thread);
}

/* A call's seq (its kernels carry the low 32 bits), resolved at the end of the run. */
static void call_seq_row(struct run_writer *w, struct stream *s, uint64_t seq, int64_t call)
{
	sqlite3_bind_int(w->ins_call_seq, 1, s->pid);
	sqlite3_bind_int64(w->ins_call_seq, 2, (int64_t)(seq & 0xffffffffu));
	sqlite3_bind_int64(w->ins_call_seq, 3, call);
	step(w, w->ins_call_seq);
}

/*
 * The graph_nodes row of a kernel's (name, type) in this process, made on
 * its first run with no graph function: the end of the run moves each
 * kernel of a call onto its graph function's node of that name.
 */
static int64_t kernel_node(struct run_writer *w, struct stream *s, uint32_t name, uint32_t type)
{
	/* by strings rows: each thread interns the same text under an id of its own */
	int64_t name_row = local_id_get(&s->strings, name), type_row = local_id_get(&s->strings, type);
	int64_t key = (int64_t)((uint64_t)(name_row & 0xffffffff) << 32 | (uint64_t)(type_row & 0xffffffff)), id;
	size_t v;

	if (idmap_get(&s->kernel_nodes, key, &v))
		return (int64_t)v;
	sqlite3_bind_int(w->ins_knode, 1, s->pid);
	sqlite3_bind_int64(w->ins_knode, 2, name_row);
	sqlite3_bind_int64(w->ins_knode, 3, type_row);
	if (step(w, w->ins_knode) != 0)
		return 0;
	id = sqlite3_last_insert_rowid(w->db);
	idmap_put(&s->kernel_nodes, key, (size_t)id);
	return id;
}

/*
 * Kernels one by one are bounded by --max-events too (a retracing function
 * makes every call a first, sampled call: TFP's HMC stored 1.5 M rows).
 * Past it a process keeps the calls whose kernels it has begun storing and
 * no later ones, so a call's kernels are all stored or none; kernels of no
 * call stop at once.  Kernels of no call (eager ops', tf.data's) also stop
 * when eager ops go to buckets: the ops they ran for are rows no more, and
 * a long eager loop would otherwise go on storing one kernel in 64 (its
 * samples, AGP_KDETAIL_EVERY) at 69 bytes each, past the size the budget
 * bounds.  The totals (kernel_totals) stay exact either way.
 */
static int kernel_detail_refused(struct run_writer *w, struct stream *s, uint32_t call_seq)
{
	if (!s->kernel_capped && w->budget.max_events &&
	    w->totals.kernels + (uint64_t)w->kernel.n >= w->budget.max_events) {
		s->kernel_capped = 1;
		s->kernel_seq_cap = s->kernel_seq_seen;
		if (!w->kernels_capped_ns)
			w->kernels_capped_ns = now_ns();
	}
	if ((s->kernel_capped && (!call_seq || call_seq > s->kernel_seq_cap)) || (!call_seq && w->aggregating)) {
		w->kernels_refused++;
		return 1;
	}
	if (call_seq > s->kernel_seq_seen)
		s->kernel_seq_seen = call_seq;
	return 0;
}

/* call_id holds -(call seq) until the end of the run resolves it (link_kernels_sql). */
static void write_kernel(struct run_writer *w, struct stream *s, int tid, const struct agp_rec_kernel *r)
{
	struct batch *b = &w->kernel;
	int64_t node, *v;

	if (kernel_detail_refused(w, s, r->call_seq))
		return;
	node = kernel_node(w, s, r->h.arg, r->type);
	v = batch_row(b);

	v[0] = s->pid;
	v[1] = tid;
	v[2] = (int64_t)r->start_ns;
	v[3] = (int64_t)r->start_ns + r->dur_ns;
	v[4] = node;
	if (node <= 0)
		batch_null(b, 5);
	v[5] = -(int64_t)r->call_seq;
	if (!r->call_seq)
		batch_null(b, 6);
	v[6] = (r->flags & AGP_KERNEL_ASYNC) != 0;
	batch_add(w, b);  /* counted in w->totals once stored */
}

/*
 * Past the budget: an eager op, graph call or black-box run goes into its
 * bucket (eager_buckets.h), never a row.  The key's three ids are the
 * table's (eager: op, device, site; call: name, -, site; black box: node,
 * op type, token).
 */
static void aggregate_span(struct run_writer *w, struct eager_buckets *b, struct stream *s, int tid,
			   const struct agp_rec_span *r, int64_t op, int64_t device, int64_t site, int64_t python_ns)
{
	struct eager_key k = {
		.pid = s->pid, .tid = tid, .op = op, .device = device, .site = site,
		.second = (int64_t)(r->start_ns / 1000000000u),
	};

	if (!w->aggregate_from_ns || (int64_t)r->start_ns < w->aggregate_from_ns)
		w->aggregate_from_ns = (int64_t)r->start_ns;  /* threads are drained in turn: the earliest */
	eager_buckets_add(b, &k, (int64_t)r->start_ns, (int64_t)r->end_ns, python_ns,
			  (r->flags & AGP_SPAN_SLOW_PATH) != 0, (r->flags & AGP_SPAN_FAILED) != 0);
}

static void aggregate_eager(struct run_writer *w, struct stream *s, int tid, const struct agp_rec_span *r)
{
	aggregate_span(w, &w->buckets, s, tid, r, local_id_get(&s->strings, r->h.arg),
		       local_id_get(&s->strings, r->aux), local_id_get(&s->sites, r->site), r->aux2);
}

/*
 * Past the budget a graph call stays a row only where a join needs one:
 * its kernels are recorded one by one (kernels.call_id), GPU activity may
 * name it (gpu_external_ids), or it is its function's first call in the
 * process (the run right after its trace: the savings' first-run time,
 * merge's clock alignment, the kernel totals' call).  These are few: a
 * sampled call in many, one per function.  1: aggregated.
 */
static int aggregate_call(struct run_writer *w, struct stream *s, int tid, const struct agp_rec_span *r,
			  int64_t name, int64_t site)
{
	size_t first;

	if (!w->aggregating || (r->flags & AGP_SPAN_KERNEL_DETAIL) || (s->gpu_on && r->seq) ||
	    !idmap_get(&s->fn_rows, name, &first))
		return 0;
	aggregate_span(w, &w->call_buckets, s, tid, r, name, 0, site, 0);
	if (r->seq) {
		struct agg_call *a = &s->agg_calls[r->seq & (AGG_CALLS - 1)];

		a->seq = (uint32_t)r->seq, a->row = (int64_t)first;
	}
	return 1;
}

static int aggregate_blackbox(struct run_writer *w, struct stream *s, int tid, const struct agp_rec_span *r,
			      int64_t node, int64_t type)
{
	if (!w->aggregating)
		return 0;
	aggregate_span(w, &w->bb_buckets, s, tid, r, node, type, local_id_get(&s->strings, r->aux2), 0);
	return 1;
}

/*
 * The budget counts the high-rate rows kept one by one (eager ops, graph
 * calls, black-box runs, Session steps; kernels are bounded apart, traces
 * and GPU activity are not counted), the batch's pending ones included.
 * Checked per span (eager op, call, black box): a few additions.
 */
static int over_event_budget(const struct run_writer *w)
{
	const struct run_totals *t = &w->totals;
	uint64_t used = t->eager_ops + t->calls + t->blackbox + t->session_runs + (uint64_t)w->eager.n;

	return w->budget.max_events && used >= w->budget.max_events;
}

/* The row that stands for an aggregated call of that seq (aggregate_call), or 0. */
static int64_t agg_call_row(const struct stream *s, uint32_t seq)
{
	const struct agg_call *a = &s->agg_calls[seq & (AGG_CALLS - 1)];

	return a->seq == seq ? a->row : 0;
}

/*
 * One kernel's totals (a table entry read at the end, or an
 * AGP_REC_KERNEL_AGG record): the workload's numbers, clamped to what
 * SQLite holds.  call_id holds -(call seq) until the end of the run.
 */
static void write_kernel_total(struct run_writer *w, struct stream *s, int tid, uint32_t name, uint32_t type,
			       uint32_t call_seq, uint64_t count, uint32_t timed, uint64_t timed_ns)
{
	sqlite3_stmt *st = w->ins_ktotal;
	int64_t node;

	if (!count)
		return;
	node = kernel_node(w, s, name, type);
	sqlite3_bind_int(st, 1, s->pid);
	sqlite3_bind_int(st, 2, tid);
	bind_id_or_null(st, 3, node);
	if (call_seq && agg_call_row(s, call_seq))
		sqlite3_bind_int64(st, 4, agg_call_row(s, call_seq));  /* its function's first call: the join's */
	else if (call_seq)
		sqlite3_bind_int64(st, 4, -(int64_t)call_seq);
	else
		sqlite3_bind_null(st, 4);
	sqlite3_bind_int64(st, 5, count > INT64_MAX ? INT64_MAX : (int64_t)count);
	sqlite3_bind_int64(st, 6, timed);
	sqlite3_bind_int64(st, 7, timed_ns > INT64_MAX ? INT64_MAX : (int64_t)timed_ns);
	step(w, st);
}

static void write_kernel_agg(struct run_writer *w, struct stream *s, int tid, const struct agp_rec_kernel_agg *r)
{
	write_kernel_total(w, s, tid, r->h.arg, r->type, r->call_seq, r->count, r->timed, r->timed_ns);
}

/*
 * At the end: every thread's kernel totals table (agp_protocol.h), read
 * once, when every string it names has been drained.
 */
static void read_kernel_totals(struct run_writer *w, struct stream *s)
{
	struct agp_kernel_total *tab = malloc(AGP_KTOTAL_BYTES);
	const char *base = (const char *)s->shm + AGP_KTOTAL_OFFSET;
	int32_t tid;

	for (uint32_t t = 0; tab && t < AGP_MAX_THREADS && !s->damaged; t++) {
		if (SHM_LOAD(&s->shm->threads[t].tid, &tid) != 0 || !tid)
			continue;
		if (shm_copy(tab, base + (size_t)t * AGP_KTOTAL_BYTES, AGP_KTOTAL_BYTES) != 0)
			continue;
		for (uint32_t i = 0; i < AGP_KTOTAL_SLOTS; i++)
			write_kernel_total(w, s, tid, tab[i].name, tab[i].type, tab[i].call_seq, tab[i].count,
					   tab[i].timed, tab[i].timed_ns);
	}
	free(tab);
}

/* Times from the ring kept within +-2^62 ns: the view's sums (eager_ops) stay integers. */
#define EAGER_TIME_MAX (INT64_C(1) << 62)

static int64_t eager_time(uint64_t t)
{
	return t > (uint64_t)EAGER_TIME_MAX ? EAGER_TIME_MAX : (int64_t)t;
}

/*
 * An eager op's eager_op_rows values (schema 6): key, start after the
 * keys' base, duration, python_ns, flags.  0, or -1 when its key could not
 * be stored (the op is then lost, and said so).
 */
static int eager_row(struct run_writer *w, struct stream *s, int tid, const struct agp_rec_span *r, int64_t v[5])
{
	int64_t start = eager_time(r->start_ns), end = eager_time(r->end_ns);
	struct eager_key k = {
		.pid = s->pid, .tid = tid, .op = local_id_get(&s->strings, r->h.arg),
		.device = local_id_get(&s->strings, r->aux), .site = local_id_get(&s->sites, r->site),
	};

	if (!(v[0] = eager_keys_get(&w->keys, &k, start))) {
		if (!db_write_failure(w->db) && !w->lost_rows++)
			w->lost_why = strdup(sqlite3_errmsg(w->db));  /* said at the finish, as step()'s */
		return -1;
	}
	v[1] = start - w->keys.base_ns;  /* both within 2^62: no overflow */
	v[2] = end - start;
	v[3] = (int64_t)r->aux2;
	v[4] = ((r->flags & AGP_SPAN_SLOW_PATH) != 0) | ((r->flags & AGP_SPAN_FAILED) != 0) << 1;
	eager_blocks_add(&w->blocks, s->pid, tid, start);
	return 0;
}

/* An eager op's row, batched unless its rowid is needed now (gpu_external_ids). */
static void write_eager(struct run_writer *w, struct stream *s, int tid, const struct agp_rec_span *r)
{
	struct batch *b = &w->eager;

	/* a full block is closed once its rows are inserted (the batch is then mostly empty already) */
	if (eager_blocks_full(&w->blocks)) {
		batch_flush(w, b);
		eager_blocks_close(&w->blocks);
	}
	if (eager_row(w, s, tid, r, batch_row(b)) == 0)
		batch_add(w, b);
}

/* The budget is spent (why: "max-events", "max-size"): eager ops, calls, black boxes are aggregated from now on. */
static void start_aggregating(struct run_writer *w, const char *why)
{
	if (w->aggregating || !w->buckets.slots)
		return;
	w->aggregating = 1;
	w->aggregate_why = why;
}

static void write_span(struct run_writer *w, struct stream *s, int tid, const struct agp_rec_span *r)
{
	int64_t name = local_id_get(&s->strings, r->h.arg);
	int64_t site = local_id_get(&s->sites, r->site);
	sqlite3_stmt *st;
	const char *table;
	uint64_t *count;   /* counted once stored: the summary never claims lost rows */

	if (!w->aggregating && over_event_budget(w))
		start_aggregating(w, "max-events");
	if (r->h.type == AGP_REC_EAGER && w->aggregating) {
		aggregate_eager(w, s, tid, r);  /* no gpu_external_ids link: the op has no row */
		return;
	}
	if (r->h.type == AGP_REC_EAGER && !(s->gpu_on && r->seq)) {
		write_eager(w, s, tid, r);
		return;
	}
	if (r->h.type == AGP_REC_EAGER) {
		int64_t v[5];

		batch_flush(w, &w->eager);  /* rows in reading order, so ids in time order */
		if (eager_blocks_full(&w->blocks))
			eager_blocks_close(&w->blocks);
		if (eager_row(w, s, tid, r, v) != 0)
			return;
		st = w->ins_eager, table = "eager_ops";
		for (int c = 0; c < 5; c++)
			sqlite3_bind_int64(st, c + 1, v[c]);
		count = &w->totals.eager_ops;
	} else if (r->h.type == AGP_REC_CALL) {
		if (aggregate_call(w, s, tid, r, name, site))
			return;
		st = w->ins_call, table = "function_calls";
		sqlite3_bind_int(st, 1, s->pid);
		sqlite3_bind_int(st, 2, tid);
		sqlite3_bind_int64(st, 3, (int64_t)r->start_ns);
		sqlite3_bind_int64(st, 4, (int64_t)r->end_ns);
		sqlite3_bind_int64(st, 5, name);
		bind_id_or_null(st, 6, site);
		sqlite3_bind_int(st, 7, (r->flags & AGP_SPAN_FAILED) == 0);
		sqlite3_bind_int(st, 8, (r->flags & AGP_SPAN_KERNEL_DETAIL) != 0);
		count = &w->totals.calls;
		table = "function_calls";
	} else {
		int64_t node = name > 0 ? name : intern(w, "?");
		int64_t type = local_id_get(&s->strings, r->aux) > 0 ? local_id_get(&s->strings, r->aux) : intern(w, "?");

		if (aggregate_blackbox(w, s, tid, r, node, type))
			return;
		st = w->ins_bb, table = NULL;
		sqlite3_bind_int(st, 1, s->pid);
		sqlite3_bind_int(st, 2, tid);
		sqlite3_bind_int64(st, 3, (int64_t)r->start_ns);
		sqlite3_bind_int64(st, 4, (int64_t)r->end_ns);
		sqlite3_bind_int64(st, 5, node);
		sqlite3_bind_int64(st, 6, type);
		bind_id_or_null(st, 7, local_id_get(&s->strings, r->aux2));
		count = &w->totals.blackbox;
	}
	if (step(w, st) == 0) {
		(*count)++;
		w->totals.events++;
		if (r->h.type == AGP_REC_CALL)
			idmap_put(&s->fn_rows, name, (size_t)sqlite3_last_insert_rowid(w->db));  /* the first wins */
		if (r->h.type == AGP_REC_CALL && r->seq)
			call_seq_row(w, s, r->seq, sqlite3_last_insert_rowid(w->db));
		if (table && s->gpu_on && r->seq) {
			sqlite3_bind_int(w->ins_ext, 1, s->pid);
			sqlite3_bind_int64(w->ins_ext, 2, (int64_t)r->seq);
			sqlite3_bind_text(w->ins_ext, 3, table, -1, SQLITE_STATIC);
			sqlite3_bind_int64(w->ins_ext, 4, sqlite3_last_insert_rowid(w->db));
			step(w, w->ins_ext);
		}
	}
}

static void write_session(struct run_writer *w, struct stream *s, int tid, const struct agp_rec_session *r)
{
	static const char *const kinds[] = {
		[AGP_SESSION_RUN] = "run", [AGP_SESSION_PARTIAL] = "partial", [AGP_SESSION_CALLABLE] = "callable",
	};
	sqlite3_stmt *st = w->ins_session;

	sqlite3_bind_int(st, 1, s->pid);
	sqlite3_bind_int(st, 2, tid);
	sqlite3_bind_int64(st, 3, (int64_t)r->start_ns);
	sqlite3_bind_int64(st, 4, (int64_t)r->end_ns);
	sqlite3_bind_text(st, 5, r->h.arg >= AGP_SESSION_RUN && r->h.arg <= AGP_SESSION_CALLABLE ? kinds[r->h.arg] : "run",
			  -1, SQLITE_STATIC);
	bind_id_or_null(st, 6, local_id_get(&s->sites, r->site));
	sqlite3_bind_int64(st, 7, r->feeds);
	sqlite3_bind_int64(st, 8, r->fetches);
	sqlite3_bind_int64(st, 9, r->targets);
	sqlite3_bind_int(st, 10, (r->flags & AGP_SPAN_FAILED) == 0);
	if (step(w, st) == 0) {
		w->totals.events++;
		w->totals.session_runs++;
	}
}

static void ring_damaged(struct run_writer *w, struct stream *s, uint32_t slot, const char *why)
{
	if (!s->ring_damaged[slot])
		add_note(w, "process %d, thread ring %u: %s (its later events are missing)", s->pid, slot, why);
	s->ring_damaged[slot] = 1;
}

/*
 * Decode one record copied out of the ring (n bytes at w->rec, zero-padded
 * past n up to a span's size, so that a short record reads as zeros).
 */
static void ring_record(struct run_writer *w, struct stream *s, int tid, size_t n)
{
	const struct agp_rec_hdr *h = (const void *)w->rec;

	switch (h->type) {
	case AGP_REC_STRING: {
		const char *text = w->rec + sizeof(*h);

		/* the NUL is the collector's promise, not ours to rely on */
		local_id_set(&s->strings, h->arg,
			   string_table_intern(&w->st, text, strnlen(text, n - sizeof(*h))));
		break;
	}
	case AGP_REC_SITE: {
		const struct agp_rec_site *r = (const void *)h;

		local_id_set(&s->sites, h->arg,
			   callsite_id(w, local_id_get(&s->strings, r->file), r->line,
				       local_id_get(&s->strings, r->func), local_id_get(&s->sites, r->parent),
				       r->flags & AGP_SITE_LIBRARY));
		break;
	}
	case AGP_REC_EAGER:
	case AGP_REC_CALL:
	case AGP_REC_BLACKBOX:
		write_span(w, s, tid, (const void *)h);
		break;
	case AGP_REC_SESSION:
		if (n >= sizeof(struct agp_rec_session))
			write_session(w, s, tid, (const void *)h);
		break;
	case AGP_REC_KERNEL:
		if (n >= sizeof(struct agp_rec_kernel) && ((const struct agp_rec_kernel *)h)->start_ns < (uint64_t)INT64_MAX / 2)
			write_kernel(w, s, tid, (const void *)h);
		break;
	case AGP_REC_KERNEL_AGG:
		if (n >= sizeof(struct agp_rec_kernel_agg))
			write_kernel_agg(w, s, tid, (const void *)h);
		break;
	}
}

/*
 * Drain one thread's ring.  The producer never runs more than a capacity
 * ahead of the tail and never publishes a record that crosses head or the
 * ring's end: anything else is damage, and the ring is read no further.
 * So one call reads at most one capacity, whatever the ring says.
 */
/*
 * The records of one ring between *tail and head, each copied out and
 * written; *tail moves past them.  Stops at a malformed record (tail < head
 * then) or a stop request; -1 when the file shrank under the copy.
 */
static int drain_records(struct run_writer *w, struct stream *s, int32_t tid, const char *data, uint32_t cap,
			 uint64_t head, uint64_t *tail)
{
	while (*tail < head && !writer_stop) {
		uint64_t off = *tail & (cap - 1);
		struct agp_rec_hdr h;
		size_t n;

		if (shm_copy(&h, data + off, sizeof(h)) != 0)
			return -1;
		if (h.type == AGP_REC_WRAP) {
			if (head - *tail < cap - off)
				break;  /* damaged: caught by the caller */
			*tail += cap - off;
			continue;
		}
		n = (size_t)h.words * 8u;
		if (h.words == 0 || n > cap - off || n > head - *tail)
			break;
		if (shm_copy(w->rec, data + off, n) != 0)
			return -1;
		memset(w->rec + n, 0, sizeof(struct agp_rec_span));
		ring_record(w, s, tid, n);
		*tail += n;
	}
	return 0;
}

static void drain_ring(struct run_writer *w, struct stream *s, uint32_t slot)
{
	struct agp_thread_ring *ring = &s->shm->threads[slot];
	const char *data = (const char *)s->shm + AGP_HEADER_BYTES + (size_t)slot * AGP_RING_BYTES;
	int32_t tid;
	uint64_t head, tail = s->tails[slot];
	uint32_t cap, meta[2];

	if (s->ring_damaged[slot])
		return;
	if (SHM_LOAD(&ring->tid, &tid) != 0)
		goto fault;
	if (!tid)
		return;
	/* role and capacity are set before tid is published */
	if (shm_copy(meta, &ring->role, sizeof(meta)) != 0)
		goto fault;
	cap = meta[1];
	if (cap == 0 || cap > AGP_RING_BYTES || (cap & (cap - 1))) {
		ring_damaged(w, s, slot, "bad ring capacity");
		return;
	}
	if (!s->thread_seen[slot]) {
		s->thread_seen[slot] = 1;
		thread_seen(w, s, tid, (int32_t)meta[0]);
	}
	if (SHM_LOAD(&ring->head, &head) != 0)
		goto fault;
	if (head < tail || head - tail > cap) {
		ring_damaged(w, s, slot, "ring head out of range");
		return;
	}
	if (head - tail >= cap / 4)
		w->behind = 1;
	if (drain_records(w, s, tid, data, cap, head, &tail) != 0)
		goto fault;
	if (tail < head && !writer_stop)
		ring_damaged(w, s, slot, "malformed record");
	s->tails[slot] = tail;
	/* A store into a shrunk file would be SIGBUS too: through the guarded copy. */
	if (shm_store64(&ring->tail, tail) != 0)
		goto fault;
	return;
fault:
	stream_damaged(w, s, "its ring file shrank while it was read");
}

/* Side records */

#define FIELD_TAGS 256  /* tags 150-179 are in use (common/agp_protocol.h) */
struct fields {
	const struct agp_field *f[FIELD_TAGS];
	const char *v[FIELD_TAGS];
};

static void fields_parse(struct fields *fs, const char *p, size_t len)
{
	const char *end = p + len;

	memset(fs, 0, sizeof(*fs));
	while ((size_t)(end - p) >= sizeof(struct agp_field)) {
		const struct agp_field *f = (const void *)p;
		size_t padded = ((size_t)f->len + 7) & ~(size_t)7;

		if (padded > (size_t)(end - p) - sizeof(*f))
			break;
		if (f->tag < FIELD_TAGS) {
			fs->f[f->tag] = f;
			fs->v[f->tag] = p + sizeof(*f);
		}
		p += sizeof(*f) + padded;
	}
}

static int64_t fint(const struct fields *fs, int tag)
{
	int64_t v = 0;

	if (fs->f[tag] && fs->f[tag]->len == 8)
		memcpy(&v, fs->v[tag], 8);
	return v;
}

/* malloc'd NUL-terminated copy of a text field, or NULL. */
static char *ftext(const struct fields *fs, int tag)
{
	char *out;

	if (!fs->f[tag])
		return NULL;
	out = malloc(fs->f[tag]->len + 1);
	if (out) {
		memcpy(out, fs->v[tag], fs->f[tag]->len);
		out[fs->f[tag]->len] = '\0';
	}
	return out;
}

static void side_process(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	struct strbuf argv = STRBUF_INIT;
	const char *p = fs->v[AGP_F_ARGV];
	size_t len = fs->f[AGP_F_ARGV] ? fs->f[AGP_F_ARGV]->len : 0, i = 0;

	strbuf_addch(&argv, '[');
	while (i < len) {
		size_t n = strnlen(p + i, len - i);
		char *arg = strndup(p + i, n);

		if (argv.len > 1)
			strbuf_addch(&argv, ',');
		strbuf_add_json_string(&argv, arg);
		free(arg);
		i += n + 1;
	}
	strbuf_addch(&argv, ']');
	sqlite3_bind_int(w->ins_process, 1, s->pid);
	sqlite3_bind_int64(w->ins_process, 2, fint(fs, AGP_F_PPID));
	sqlite3_bind_text(w->ins_process, 3, argv.buf, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(w->ins_process, 4, fint(fs, AGP_F_START));
	step(w, w->ins_process);
	strbuf_release(&argv);
}

static void side_tf_status(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	char *status = ftext(fs, AGP_F_STATUS), *detail = ftext(fs, AGP_F_DETAIL);
	char *tfver = ftext(fs, AGP_F_TFVER), *pyver = ftext(fs, AGP_F_PYVER);

	bind_text_or_null(w->upd_process_tf, 1, status ? status : "hooked");
	bind_text_or_null(w->upd_process_tf, 2, detail);
	bind_text_or_null(w->upd_process_tf, 3, tfver);
	bind_text_or_null(w->upd_process_tf, 4, pyver);
	sqlite3_bind_int(w->upd_process_tf, 5, s->pid);
	step(w, w->upd_process_tf);
	free(status), free(detail), free(tfver), free(pyver);
}

static int64_t function_row(struct run_writer *w, int pid, const char *name, const char *file, int64_t line)
{
	int64_t name_id = intern(w, name ? name : "?"), file_id = intern(w, file), id = 0;
	sqlite3_stmt *both[] = { w->ins_function, w->get_function };

	/* insert unless there, then read its id: the same four keys */
	for (int i = 0; i < 2; i++) {
		sqlite3_bind_int(both[i], 1, pid);
		sqlite3_bind_int64(both[i], 2, name_id);
		bind_id_or_null(both[i], 3, file_id);
		if (file)
			sqlite3_bind_int64(both[i], 4, line);
		else
			sqlite3_bind_null(both[i], 4);
	}
	step(w, w->ins_function);
	if (sqlite3_step(w->get_function) == SQLITE_ROW)
		id = sqlite3_column_int64(w->get_function, 0);
	sqlite3_reset(w->get_function);
	return id;
}

/* A trace's call site: its user frame, and the innermost library frame below it. */
static int64_t trace_site(struct run_writer *w, const struct fields *fs, const char *sfile, const char *sfunc)
{
	char *lfile = ftext(fs, AGP_F_LIB_FILE), *lfunc = ftext(fs, AGP_F_LIB_FUNC);
	int64_t site = callsite_id(w, intern(w, sfile), fint(fs, AGP_F_SITE_LINE), intern(w, sfunc), 0, 0);

	if (lfile && lfunc)
		site = callsite_id(w, intern(w, lfile), fint(fs, AGP_F_LIB_LINE), intern(w, lfunc), site, 1);
	free(lfile);
	free(lfunc);
	return site;
}

static void side_trace(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	char *name = ftext(fs, AGP_F_NAME), *file = ftext(fs, AGP_F_FILE);
	char *sig = ftext(fs, AGP_F_SIGNATURE), *tfname = ftext(fs, AGP_F_TFNAME);
	char *sfile = ftext(fs, AGP_F_SITE_FILE), *sfunc = ftext(fs, AGP_F_SITE_FUNC);
	char *status = ftext(fs, AGP_F_STATUS);
	int64_t fn = function_row(w, s->pid, name, file, fint(fs, AGP_F_LINE));
	sqlite3_stmt *st = w->ins_trace;

	sqlite3_bind_int64(st, 1, fn);
	sqlite3_bind_int(st, 2, s->pid);
	sqlite3_bind_int64(st, 3, fint(fs, AGP_F_TID));
	sqlite3_bind_int64(st, 4, fint(fs, AGP_F_START));
	sqlite3_bind_int64(st, 5, fint(fs, AGP_F_END));
	sqlite3_bind_int64(st, 6, fint(fs, AGP_F_OBJECT));
	sqlite3_bind_int64(st, 7, fint(fs, AGP_F_OBJTRACE));
	bind_id_or_null(st, 8, intern(w, tfname));
	bind_text_or_null(st, 9, sig);
	bind_id_or_null(st, 10, trace_site(w, fs, sfile, sfunc));
	sqlite3_bind_int64(st, 11, fint(fs, AGP_F_JIT));
	sqlite3_bind_int64(st, 12, fint(fs, AGP_F_REDUCE));
	sqlite3_bind_int64(st, 13, fint(fs, AGP_F_HAS_SIG));
	sqlite3_bind_int64(st, 14, fint(fs, AGP_F_VARS));
	sqlite3_bind_text(st, 15, status ? status : "ok", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 16, fint(fs, AGP_F_COLLECTOR_NS) > 0 ? fint(fs, AGP_F_COLLECTOR_NS) : 0);
	if (step(w, st) == 0) {
		sqlite3_bind_int(w->ins_trace_seq, 1, s->pid);
		sqlite3_bind_int64(w->ins_trace_seq, 2, fint(fs, AGP_F_TRACE_SEQ));
		sqlite3_bind_int64(w->ins_trace_seq, 3, sqlite3_last_insert_rowid(w->db));
		step(w, w->ins_trace_seq);
		w->totals.traces++;
		w->totals.events++;
	}
	free(name), free(file), free(sig), free(tfname), free(sfile), free(sfunc), free(status);
}

static void side_trace_input(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	sqlite3_stmt *get = w->get_trace_seq;
	int64_t trace = 0;
	char *name, *kind, *dtype, *shape, *value;

	sqlite3_bind_int(get, 1, s->pid);
	sqlite3_bind_int64(get, 2, fint(fs, AGP_F_TRACE_SEQ));
	if (sqlite3_step(get) == SQLITE_ROW)
		trace = sqlite3_column_int64(get, 0);
	sqlite3_reset(get);
	if (!trace)
		return;
	name = ftext(fs, AGP_F_NAME), kind = ftext(fs, AGP_F_KIND), dtype = ftext(fs, AGP_F_DTYPE);
	shape = ftext(fs, AGP_F_SHAPE), value = ftext(fs, AGP_F_VALUE);
	sqlite3_bind_int64(w->ins_input, 1, trace);
	sqlite3_bind_int64(w->ins_input, 2, fint(fs, AGP_F_POSITION));
	bind_text_or_null(w->ins_input, 3, name);
	sqlite3_bind_text(w->ins_input, 4, kind ? kind : "object", -1, SQLITE_TRANSIENT);
	bind_text_or_null(w->ins_input, 5, dtype);
	bind_text_or_null(w->ins_input, 6, shape);
	bind_text_or_null(w->ins_input, 7, value);
	step(w, w->ins_input);
	free(name), free(kind), free(dtype), free(shape), free(value);
}

/* A pitfall seen while tracing (collector/pywatch.c). */
static void side_trace_event(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	sqlite3_stmt *st = w->ins_trace_event;
	char *kind = ftext(fs, AGP_F_KIND), *name = ftext(fs, AGP_F_NAME), *file = ftext(fs, AGP_F_FILE);
	char *detail = ftext(fs, AGP_F_DETAIL), *func = ftext(fs, AGP_F_FUNC), *ffile = ftext(fs, AGP_F_FUNC_FILE);

	if (kind) {
		sqlite3_bind_int(st, 1, s->pid);
		sqlite3_bind_int64(st, 2, fint(fs, AGP_F_TRACE_SEQ));
		sqlite3_bind_text(st, 3, kind, -1, SQLITE_TRANSIENT);
		bind_text_or_null(st, 4, name);
		bind_text_or_null(st, 5, file);
		sqlite3_bind_int64(st, 6, fint(fs, AGP_F_LINE));
		sqlite3_bind_int64(st, 7, fint(fs, AGP_F_COUNT));
		bind_text_or_null(st, 8, detail);
		bind_text_or_null(st, 9, func);
		bind_text_or_null(st, 10, ffile);
		sqlite3_bind_int64(st, 11, fint(fs, AGP_F_FUNC_LINE));
		sqlite3_bind_int64(st, 12, fint(fs, AGP_F_REPEATS));
		sqlite3_bind_int64(st, 13, fint(fs, AGP_F_LOOP_LINE));
		if (db_step_done(w->db, st) == 0)
			w->totals.events++;
	}
	free(kind), free(name), free(file), free(detail), free(func), free(ffile);
}

/* "__forward_f_12" -> "f"; strips `suffixes` trailing "_<digits>" groups. */
static char *user_name_of(const char *name, const char *prefix, int suffixes)
{
	size_t plen = strlen(prefix);
	char *out, *us;

	if (strncmp(name, prefix, plen) != 0)
		return NULL;
	out = strdup(name + plen);
	while (out && suffixes-- > 0) {
		us = strrchr(out, '_');
		if (!us || !us[1] || strspn(us + 1, "0123456789") != strlen(us + 1)) {
			free(out);
			return NULL;
		}
		*us = '\0';
	}
	return out;
}

/* The role of a registered graph function, from its name; *user: the user function's name, or NULL. */
static const char *graph_function_role(const char *name, const char *kind, int64_t parent_trace, char **user)
{
	if ((*user = user_name_of(name, "__inference___backward_", 2)))
		return "backward";
	if ((*user = user_name_of(name, "__forward_", 1)))
		return "forward";
	if ((*user = user_name_of(name, "__inference_", 1)))
		return "inference";
	if (kind && !strcmp(kind, "loaded"))
		return "loaded";
	return parent_trace ? "branch" : "other";
}

static int is_py_function_op(const char *op)
{
	return op && (!strcmp(op, "EagerPyFunc") || !strcmp(op, "PyFunc") || !strcmp(op, "PyFuncStateless"));
}

/* The rows a parsed FunctionDef adds under graph function gf: inputs, constants, black boxes, references. */
static void write_graph_rows(struct run_writer *w, struct stream *s, int64_t gf, const struct functiondef *fd)
{
	for (size_t i = 0; i < fd->ninputs; i++) {
		sqlite3_bind_int64(w->ins_ginput, 1, gf);
		sqlite3_bind_int64(w->ins_ginput, 2, (int64_t)i);
		bind_text_or_null(w->ins_ginput, 3, fd->inputs[i].name);
		bind_text_or_null(w->ins_ginput, 4, fd->inputs[i].dtype);
		bind_text_or_null(w->ins_ginput, 5, fd->inputs[i].shape);
		step(w, w->ins_ginput);
	}
	for (size_t i = 0; i < fd->nnodes; i++) {
		const struct fdef_node *n = &fd->nodes[i];

		sqlite3_bind_int(w->ins_gnode, 1, s->pid);
		sqlite3_bind_int64(w->ins_gnode, 2, gf);
		sqlite3_bind_text(w->ins_gnode, 3, n->name ? n->name : "?", -1, SQLITE_STATIC);
		sqlite3_bind_text(w->ins_gnode, 4, n->op ? n->op : "?", -1, SQLITE_STATIC);
		step(w, w->ins_gnode);
		if (n->const_value) {
			sqlite3_bind_int64(w->ins_gconst, 1, gf);
			bind_text_or_null(w->ins_gconst, 2, n->name ? n->name : "?");
			bind_text_or_null(w->ins_gconst, 3, n->const_dtype);
			bind_text_or_null(w->ins_gconst, 4, n->const_value);
			step(w, w->ins_gconst);
		}
		if (is_py_function_op(n->op)) {
			sqlite3_bind_int64(w->ins_bbnode, 1, gf);
			bind_text_or_null(w->ins_bbnode, 2, n->name ? n->name : "?");
			bind_text_or_null(w->ins_bbnode, 3, n->op);
			bind_text_or_null(w->ins_bbnode, 4, n->token);
			step(w, w->ins_bbnode);
		}
	}
	for (size_t i = 0; i < fd->nrefs; i++) {
		sqlite3_bind_int(w->ins_link_ref, 1, s->pid);
		sqlite3_bind_int64(w->ins_link_ref, 2, gf);
		sqlite3_bind_int64(w->ins_link_ref, 3, intern(w, fd->refs[i]));
		step(w, w->ins_link_ref);
	}
}

/* The links the end of the run resolves: to the trace being built, to the user function. */
static void write_graph_links(struct run_writer *w, struct stream *s, int64_t gf, int64_t parent_trace,
			      const char *role, const char *user)
{
	if (parent_trace) {
		sqlite3_bind_int64(w->ins_link_trace, 1, gf);
		sqlite3_bind_int(w->ins_link_trace, 2, s->pid);
		sqlite3_bind_int64(w->ins_link_trace, 3, parent_trace);
		step(w, w->ins_link_trace);
	}
	if (user && strcmp(role, "inference") != 0) {
		sqlite3_bind_int64(w->ins_link_name, 1, gf);
		sqlite3_bind_int(w->ins_link_name, 2, s->pid);
		sqlite3_bind_text(w->ins_link_name, 3, user, -1, SQLITE_TRANSIENT);
		step(w, w->ins_link_name);
	}
}

static void side_funcdef(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	char *name = ftext(fs, AGP_F_NAME), *kind = ftext(fs, AGP_F_KIND), *user = NULL;
	const void *blob = fs->v[AGP_F_BLOB];
	size_t blen = fs->f[AGP_F_BLOB] ? fs->f[AGP_F_BLOB]->len : 0;
	struct functiondef fd;
	int parsed = blen ? functiondef_parse(&fd, blob, blen) == 0 : 0;
	int64_t parent_trace = fint(fs, AGP_F_PARENT_TRACE), gf;
	const char *role = name ? graph_function_role(name, kind, parent_trace, &user) : NULL;

	if (!name)
		goto out;
	sqlite3_bind_int(w->ins_gf, 1, s->pid);
	sqlite3_bind_int64(w->ins_gf, 2, intern(w, name));
	sqlite3_bind_text(w->ins_gf, 3, role, -1, SQLITE_STATIC);
	sqlite3_bind_int64(w->ins_gf, 4, fint(fs, AGP_F_CREATED));
	sqlite3_bind_int(w->ins_gf, 5, parsed ? fd.jit_compile : 0);
	sqlite3_bind_int64(w->ins_gf, 6, parsed ? (int64_t)fd.nnodes : 0);
	if (blen)
		sqlite3_bind_blob(w->ins_gf, 7, blob, (int)blen, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(w->ins_gf, 7);
	if (step(w, w->ins_gf) != 0 || sqlite3_changes(w->db) == 0)
		goto out;  /* registered again: the first registration stands */
	gf = sqlite3_last_insert_rowid(w->db);
	write_graph_links(w, s, gf, parent_trace, role, user);
	if (parsed)
		write_graph_rows(w, s, gf, &fd);
out:
	if (parsed)
		functiondef_release(&fd);
	free(name), free(kind), free(user);
}

static void side_gpu(struct run_writer *w, struct stream *s, uint32_t type, const struct fields *fs)
{
	static const char *const kinds[] = { "?", "kernel", "memcpy", "memset", "sync" };
	char *name = ftext(fs, AGP_F_NAME), *detail = ftext(fs, AGP_F_DETAIL), *copy = ftext(fs, AGP_F_COPY_KIND);
	sqlite3_stmt *st;
	int64_t k;

	if (type == AGP_SIDE_GPU_STATUS) {
		s->gpu_on = fint(fs, AGP_F_STATUS) != 0;
		sqlite3_bind_text(w->upd_process_gpu, 1, s->gpu_on ? "on" : "off", -1, SQLITE_STATIC);
		bind_text_or_null(w->upd_process_gpu, 2, detail);
		sqlite3_bind_int(w->upd_process_gpu, 3, s->pid);
		step(w, w->upd_process_gpu);
	} else if (type == AGP_SIDE_GPU_ACTIVITY) {
		st = w->ins_gpu;
		k = fint(fs, AGP_F_GPU_KIND);
		sqlite3_bind_int(st, 1, s->pid);
		sqlite3_bind_text(st, 2, kinds[k >= 1 && k <= 4 ? k : 0], -1, SQLITE_STATIC);
		bind_id_or_null(st, 3, intern(w, name));
		sqlite3_bind_int64(st, 4, fint(fs, AGP_F_DEVICE));
		sqlite3_bind_int64(st, 5, fint(fs, AGP_F_CONTEXT));
		sqlite3_bind_int64(st, 6, fint(fs, AGP_F_STREAM));
		sqlite3_bind_int64(st, 7, fint(fs, AGP_F_START));
		sqlite3_bind_int64(st, 8, fint(fs, AGP_F_END));
		sqlite3_bind_int64(st, 9, fint(fs, AGP_F_CORR));
		for (int i = 0; i < 6; i++)
			sqlite3_bind_int64(st, 10 + i, fint(fs, AGP_F_GRID_X + i));
		sqlite3_bind_int64(st, 16, fint(fs, AGP_F_BYTES));
		bind_text_or_null(st, 17, copy);
		if (step(w, st) == 0)
			w->totals.gpu++, w->totals.events++;
	} else {
		st = w->ins_api;
		sqlite3_bind_int(st, 1, s->pid);
		sqlite3_bind_int64(st, 2, fint(fs, AGP_F_TID));
		sqlite3_bind_text(st, 3, fint(fs, AGP_F_API) == 2 ? "driver" : "runtime", -1, SQLITE_STATIC);
		bind_id_or_null(st, 4, intern(w, name));
		sqlite3_bind_int64(st, 5, fint(fs, AGP_F_START));
		sqlite3_bind_int64(st, 6, fint(fs, AGP_F_END));
		sqlite3_bind_int64(st, 7, fint(fs, AGP_F_CORR));
		if (fint(fs, AGP_F_EXTERNAL))
			sqlite3_bind_int64(st, 8, fint(fs, AGP_F_EXTERNAL));
		else
			sqlite3_bind_null(st, 8);
		if (step(w, st) == 0)
			w->totals.events++;
	}
	free(name), free(detail), free(copy);
}

/* The decimal number at p, read no further than end (the text is not NUL-terminated); 0 when none. */
static int64_t digits_value(const char *p, const char *end)
{
	int64_t v = 0;

	for (; p < end && *p >= '0' && *p <= '9' && v < INT32_MAX; p++)
		v = v * 10 + (*p - '0');
	return v;
}

/* "name\tfile\tline\n" entries of one trace's graph (collector/pytrace.py), untrusted. */
static void node_sources(struct run_writer *w, struct stream *s, int64_t trace_seq, const char *p, size_t len)
{
	const char *end = p + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *t1, *t2;
		const char *stop = nl ? nl : end;

		t1 = memchr(p, '\t', (size_t)(stop - p));
		t2 = t1 ? memchr(t1 + 1, '\t', (size_t)(stop - t1 - 1)) : NULL;
		if (t2 && t1 > p && t2 > t1 + 1) {
			sqlite3_bind_int(w->ins_node_src, 1, s->pid);
			sqlite3_bind_int64(w->ins_node_src, 2, trace_seq);
			sqlite3_bind_text(w->ins_node_src, 3, p, (int)(t1 - p), SQLITE_TRANSIENT);
			sqlite3_bind_text(w->ins_node_src, 4, t1 + 1, (int)(t2 - t1 - 1), SQLITE_TRANSIENT);
			sqlite3_bind_int64(w->ins_node_src, 5, digits_value(t2 + 1, stop));
			step(w, w->ins_node_src);
		}
		p = stop + 1;
	}
}

static void side_kernels(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	char *status, *detail;

	if (fs->f[AGP_F_NODE_LINES]) {
		node_sources(w, s, fint(fs, AGP_F_TRACE_SEQ), fs->v[AGP_F_NODE_LINES], fs->f[AGP_F_NODE_LINES]->len);
		return;
	}
	status = ftext(fs, AGP_F_STATUS), detail = ftext(fs, AGP_F_DETAIL);
	bind_text_or_null(w->upd_process_kernels, 1, status);
	bind_text_or_null(w->upd_process_kernels, 2, detail);
	sqlite3_bind_int(w->upd_process_kernels, 3, s->pid);
	step(w, w->upd_process_kernels);
	free(status), free(detail);
}

/* One collective execution (collector/hooks_collective.c): keys all three or none. */
static void side_collective(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	static const int key_tags[3] = { AGP_F_COLL_GROUP_SIZE, AGP_F_COLL_GROUP_KEY, AGP_F_COLL_INSTANCE_KEY };
	sqlite3_stmt *st = w->ins_collective;
	char *op = ftext(fs, AGP_F_NAME), *why = ftext(fs, AGP_F_COLL_KEY_STATUS);
	int keyed = fs->f[AGP_F_COLL_GROUP_KEY] && fs->f[AGP_F_COLL_INSTANCE_KEY];

	sqlite3_bind_int(st, 1, s->pid);
	sqlite3_bind_int64(st, 2, fint(fs, AGP_F_TID));
	sqlite3_bind_int64(st, 3, intern(w, op ? op : "?"));
	sqlite3_bind_int64(st, 4, fint(fs, AGP_F_START));
	sqlite3_bind_int64(st, 5, fint(fs, AGP_F_END) > fint(fs, AGP_F_START) ? fint(fs, AGP_F_END) : fint(fs, AGP_F_START));
	sqlite3_bind_int(st, 6, fint(fs, AGP_F_COLL_GRAPH) != 0);
	for (int i = 0; i < 3; i++) {
		if (keyed && fs->f[key_tags[i]])
			sqlite3_bind_int64(st, 7 + i, fint(fs, key_tags[i]));
		else
			sqlite3_bind_null(st, 7 + i);
	}
	bind_text_or_null(st, 10, keyed ? NULL : why ? why : "no keys recorded");
	step(w, st);
	free(op), free(why);
}

/* A process's collector changed its capture bits (collector/capture.c). */
static void side_capture(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	char *why = ftext(fs, AGP_F_CAPTURE_WHY);
	int64_t calls = fint(fs, AGP_F_CAPTURE_CALLS);

	w->capture.used = 1;
	if (calls > w->capture.calls)
		w->capture.calls = calls;
	if (capture_log_add(&w->capture, s->pid, (uint64_t)fint(fs, AGP_F_START),
			    (uint32_t)fint(fs, AGP_F_CAPTURE_OFF) & ~AGP_CAPTURE_LAUNCHER, why) != 0 &&
	    !w->capture_note_said++)
		add_note(w, "process %d: capture window changes past %d were not kept", s->pid, CAPTURE_LOG_MAX_CHANGES);
	free(why);
}

static void side_record(struct run_writer *w, struct stream *s, uint32_t type, const char *p, size_t len)
{
	struct fields fs;

	fields_parse(&fs, p, len);
	switch (type) {
	case AGP_SIDE_PROCESS: side_process(w, s, &fs); break;
	case AGP_SIDE_TF_STATUS: side_tf_status(w, s, &fs); break;
	case AGP_SIDE_TRACE: side_trace(w, s, &fs); break;
	case AGP_SIDE_TRACE_INPUT: side_trace_input(w, s, &fs); break;
	case AGP_SIDE_TRACE_EVENT: side_trace_event(w, s, &fs); break;
	case AGP_SIDE_FUNCDEF: side_funcdef(w, s, &fs); break;
	case AGP_SIDE_KERNELS: side_kernels(w, s, &fs); break;
	case AGP_SIDE_EXIT:
		sqlite3_bind_int64(w->upd_process_exit, 1, fint(&fs, AGP_F_EXIT_STATUS));
		sqlite3_bind_int64(w->upd_process_exit, 2, fint(&fs, AGP_F_END));
		sqlite3_bind_int(w->upd_process_exit, 3, s->pid);
		step(w, w->upd_process_exit);
		break;
	case AGP_SIDE_GPU_STATUS:
	case AGP_SIDE_GPU_ACTIVITY:
	case AGP_SIDE_GPU_API:
		side_gpu(w, s, type, &fs);
		break;
	case AGP_SIDE_CAPTURE:
		side_capture(w, s, &fs);
		break;
	case AGP_SIDE_COLLECTIVE:
		side_collective(w, s, &fs);
		break;
	}
}

static void drain_side(struct run_writer *w, struct stream *s)
{
	size_t off = 0, got = 0;

	if (s->side_fd < 0 || s->side_damaged)
		return;
	/* bounded: a process that outlives the program may still be appending */
	while (got < SIDE_READ_PER_POLL) {
		ssize_t n;

		if (s->side_cap - s->side_len < 65536) {
			size_t ncap = s->side_cap ? s->side_cap * 2 : 262144;
			char *nb = realloc(s->side_buf, ncap);

			if (!nb)
				return;
			s->side_buf = nb;
			s->side_cap = ncap;
		}
		n = read(s->side_fd, s->side_buf + s->side_len, s->side_cap - s->side_len);
		if (n <= 0)
			break;
		s->side_len += (size_t)n;
		got += (size_t)n;
	}
	while (s->side_len - off >= sizeof(struct agp_side_hdr) && !writer_stop) {
		struct agp_side_hdr h;

		memcpy(&h, s->side_buf + off, sizeof(h));
		if (h.len > SIDE_RECORD_MAX) {
			add_note(w, "process %d: side record of %u bytes (its later facts are missing)", s->pid, h.len);
			s->side_damaged = 1;
			break;
		}
		if (s->side_len - off - sizeof(h) < h.len)
			break;  /* the rest is still being written */
		side_record(w, s, h.type, s->side_buf + off + sizeof(h), h.len);
		off += sizeof(h) + h.len;
	}
	memmove(s->side_buf, s->side_buf + off, s->side_len - off);
	s->side_len -= off;
}

static void drain_stream(struct run_writer *w, struct stream *s)
{
	uint32_t n;

	/* Side first: the process row must exist before its threads and events. */
	drain_side(w, s);
	if (s->damaged)
		return;
	if (SHM_LOAD(&s->shm->nthreads, &n) != 0) {
		stream_damaged(w, s, "its ring file shrank while it was read");
		return;
	}
	if (n > AGP_MAX_THREADS)
		n = AGP_MAX_THREADS;
	for (uint32_t i = 0; i < n && !s->damaged && !writer_stop; i++)
		drain_ring(w, s, i);
}

/* Pick up streams of processes that started since the last scan. */
/* The mapping of a complete, initialised ring file and its pid; NULL for not (yet) one. */
static void *map_ring_file(const char *path, int32_t *pid)
{
	int fd = open(path, O_RDWR | O_CLOEXEC);
	struct stat st;
	uint64_t magic;
	void *map;

	if (fd < 0)
		return NULL;
	/* A file still being created is shorter: touching it would be SIGBUS. */
	if (fstat(fd, &st) != 0 || (uint64_t)st.st_size < AGP_SHM_FILE_BYTES) {
		close(fd);
		return NULL;
	}
	map = mmap(NULL, AGP_SHM_FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return NULL;
	if (SHM_LOAD((_Atomic uint64_t *)&((struct agp_shm_header *)map)->magic, &magic) != 0 ||
	    magic != AGP_SHM_MAGIC || shm_copy(pid, &((struct agp_shm_header *)map)->pid, sizeof(*pid)) != 0) {
		munmap(map, AGP_SHM_FILE_BYTES);  /* not initialised yet (or shrunk): next scan */
		return NULL;
	}
	return map;
}

/*
 * A new process: its header gets the launcher's bit as it is now (its
 * collector started it from AGPROF_CAPTURE_OFF, which may be stale for an
 * exec'd child) and its windows are written from its start.
 */
static void stream_capture_init(struct run_writer *w, struct stream *s)
{
	uint64_t start = 0;

	if (w->capture.launcher_bits)
		shm_bits32(&s->shm->capture_off, AGP_CAPTURE_LAUNCHER, 0);
	else
		shm_bits32(&s->shm->capture_off, 0, AGP_CAPTURE_LAUNCHER);
	shm_copy(&start, &s->shm->start_ns, sizeof(start));
	if (capture_log_process(&w->capture, s->pid, start) != 0)
		add_note(w, "out of memory for the capture windows");
}

void run_writer_capture(struct run_writer *w, int closed, uint64_t ns, const char *why, const char *desc)
{
	w->capture.used = 1;
	if (desc && !w->capture_desc)
		w->capture_desc = strdup(desc);
	w->capture.launcher_bits = closed ? AGP_CAPTURE_LAUNCHER : 0;
	if (capture_log_add(&w->capture, 0, ns, w->capture.launcher_bits, why) != 0)
		add_note(w, "out of memory for the capture windows");
	for (size_t i = 0; i < w->nstreams; i++)
		if (!w->streams[i]->damaged)
			shm_bits32(&w->streams[i]->shm->capture_off, closed ? AGP_CAPTURE_LAUNCHER : 0,
				   closed ? 0 : AGP_CAPTURE_LAUNCHER);
}

/* A new stream for the ring file name (shorter than a stream's name) at path; -1 when out of memory. */
static int add_stream(struct run_writer *w, const char *name, char *path, void *map, int32_t pid)
{
	struct stream *s = calloc(1, sizeof(*s)), **ns = s ? realloc(w->streams, (w->nstreams + 1) * sizeof(*ns)) : NULL;

	if (!ns) {
		free(s);
		munmap(map, AGP_SHM_FILE_BYTES);
		return -1;
	}
	w->streams = ns;
	memcpy(s->name, name, strnlen(name, sizeof(s->name) - 1));  /* calloc'd: NUL-terminated */
	if (borrowed_map && borrowed_map->pid == pid && map != borrowed_map) {
		munmap(map, AGP_SHM_FILE_BYTES);
		map = borrowed_map;
		s->borrowed = 1;
	}
	s->shm = map;
	s->pid = pid;
	stream_capture_init(w, s);
	memcpy(path + strlen(path) - 4, "side", 4);
	s->side_fd = open(path, O_RDONLY | O_CLOEXEC);
	w->streams[w->nstreams++] = s;
	w->totals.processes++;
	return 0;
}

static int stream_known(const struct run_writer *w, const char *name)
{
	for (size_t i = 0; i < w->nstreams; i++)
		if (!strcmp(w->streams[i]->name, name))
			return 1;
	return 0;
}

/* New processes: the ring files of the session folder not seen before. */
static void scan_streams(struct run_writer *w)
{
	DIR *d = opendir(w->shm_dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char path[4096];
		int32_t pid;
		void *map;

		if (len < 6 || len >= sizeof(((struct stream *)0)->name) || strcmp(de->d_name + len - 5, ".ring") ||
		    stream_known(w, de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", w->shm_dir, de->d_name);
		if ((map = map_ring_file(path, &pid)) && add_stream(w, de->d_name, path, map, pid) != 0)
			break;
	}
	closedir(d);
}

/* The recording's size in bytes (WAL mode: the logical size, WAL pages included). */
static uint64_t recording_bytes(struct run_writer *w)
{
	sqlite3_stmt *st = db_prepare(w->db, "SELECT page_count * page_size FROM pragma_page_count, pragma_page_size");
	uint64_t n = 0;

	if (st && sqlite3_step(st) == SQLITE_ROW)
		n = (uint64_t)sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

/*
 * Once per commit: --max-size is checked (one page-count query, never per
 * event), every bucket that changed is written (the open ones' rows
 * replaced by id), so a commit holds every aggregated event up to then,
 * and the buckets whose second ended over a second ago leave memory, so it
 * stays bounded.
 */
static void budget_tick(struct run_writer *w, uint64_t now)
{
	struct eager_buckets *all[] = { &w->buckets, &w->call_buckets, &w->bb_buckets };

	if (!w->aggregating && w->budget.max_bytes && recording_bytes(w) >= w->budget.max_bytes)
		start_aggregating(w, "max-size");
	if (!w->aggregating)
		return;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		eager_buckets_close(all[i], (int64_t)(now / 1000000000u) - 1);
		eager_buckets_sync(all[i]);  /* the open ones too: a SIGKILL loses one commit interval at most */
	}
	if (!w->aggregate_meta_said && w->aggregate_from_ns) {
		/* said at once, not only at the finish: a recording whose launcher was killed says it too */
		db_meta_set(w->db, "aggregate_reason", w->aggregate_why);
		db_meta_set_int(w->db, "aggregate_from_ns", w->aggregate_from_ns);
		w->aggregate_meta_said = 1;
	}
}

static void count_aggregated(struct run_writer *w)
{
	w->totals.eager_aggregated = (uint64_t)w->buckets.stored;
	w->totals.calls_aggregated = (uint64_t)w->call_buckets.stored;
	w->totals.blackbox_aggregated = (uint64_t)w->bb_buckets.stored;
}

/*
 * SQLite starts the WAL over only when a write begins with every frame
 * already in the main file, which the checkpointer, always a commit
 * behind, never leaves: past WAL_BOUND_FRAMES (256 MiB of 4 KiB pages)
 * the writer copies that last commit itself, between its COMMIT and the
 * next write.
 */
#define WAL_BOUND_FRAMES 65536

/* Commit what was written so far; the totals follow what is on disk. */
static void commit(struct run_writer *w)
{
	budget_tick(w, now_ns());
	flush_batches(w);
	count_aggregated(w);
	if (db_exec(w->db, "COMMIT") != 0)
		return;
	w->committed = w->totals;
	if (w->ckpt) {
		if (w->wal_frames > WAL_BOUND_FRAMES)
			sqlite3_wal_checkpoint_v2(w->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		checkpointer_kick(w->ckpt);
	}
	db_exec(w->db, "BEGIN");
}

void run_writer_budget(struct run_writer *w, const struct run_budget *b)
{
	w->budget = *b;
}

int run_writer_poll(struct run_writer *w)
{
	uint64_t now = now_ns();

	w->behind = 0;
	if (db_write_failure(w->db))
		return -1;  /* sticky: the file keeps what was committed */
	if (now - w->last_scan_ns > 20000000ull || !w->nstreams) {
		scan_streams(w);
		w->last_scan_ns = now;
	}
	for (size_t i = 0; i < w->nstreams; i++)
		drain_stream(w, w->streams[i]);
	if (now - w->last_commit_ns > 250000000ull) {
		commit(w);
		w->last_commit_ns = now;
	}
	return db_write_failure(w->db) ? -1 : 0;
}

unsigned run_writer_idle_us(const struct run_writer *w)
{
	return w->behind ? 0 : RUN_WRITER_IDLE_US;
}

const char *run_writer_error(struct run_writer *w)
{
	int rc = db_write_failure(w->db);

	return rc ? sqlite3_errstr(rc) : NULL;
}

static const char link_sql[] =
	/* graph functions built by a trace */
	"UPDATE graph_functions SET trace_id = (SELECT t.id FROM traces t WHERE t.pid = graph_functions.pid"
	"  AND t.tf_name_id = graph_functions.name_id) WHERE trace_id IS NULL;"
	"UPDATE graph_functions SET function_id = (SELECT function_id FROM traces WHERE id = trace_id)"
	"  WHERE trace_id IS NOT NULL;"
	/* forward/backward pairs, by the user function's name (latest definition) */
	"UPDATE graph_functions SET function_id = (SELECT f.id FROM temp.link_name l JOIN strings s"
	"  ON s.text = l.user_name JOIN functions f ON f.name_id = s.id AND f.pid = l.pid"
	"  WHERE l.gf_id = graph_functions.id ORDER BY f.id DESC LIMIT 1) WHERE function_id IS NULL;"
	/* functions referenced by another function's nodes (cond/while branches) */
	"UPDATE graph_functions SET parent_id = (SELECT l.parent_id FROM temp.link_ref l"
	"  WHERE l.pid = graph_functions.pid AND l.child_name_id = graph_functions.name_id LIMIT 1)"
	"  WHERE parent_id IS NULL;"
	/* functions registered while a trace was being built */
	"UPDATE graph_functions SET function_id = (SELECT t.function_id FROM temp.link_trace l"
	"  JOIN temp.trace_seq q ON q.pid = l.pid AND q.seq = l.trace_seq JOIN traces t ON t.id = q.trace_id"
	"  WHERE l.gf_id = graph_functions.id) WHERE function_id IS NULL;"
	"UPDATE graph_functions SET role = 'branch' WHERE role = 'other' AND parent_id IS NOT NULL;"
	/* trace events written before their trace (a failed trace closes late) */
	"UPDATE trace_events SET trace_id = (SELECT q.trace_id FROM temp.trace_seq q"
	"  WHERE q.pid = trace_events.pid AND q.seq = trace_events.trace_seq) WHERE trace_id IS NULL;"
	/* an __inference_ function no trace of this process built was loaded (SavedModel) */
	"UPDATE graph_functions SET role = 'loaded' WHERE role = 'inference' AND trace_id IS NULL"
	"  AND function_id IS NULL AND id NOT IN (SELECT gf_id FROM temp.link_trace);"
	"UPDATE function_calls SET graph_function_id = (SELECT g.id FROM graph_functions g"
	"  WHERE g.pid = function_calls.pid AND g.name_id = function_calls.name_id);"
	"UPDATE function_call_buckets SET graph_function_id = (SELECT g.id FROM graph_functions g"
	"  WHERE g.pid = function_call_buckets.pid AND g.name_id = function_call_buckets.name_id);"
	/* aggregated black-box runs as the rows (schema 7), by token, else by the one node of their name */
	"UPDATE blackbox_buckets SET blackbox_node_id = (SELECT n.id FROM blackbox_nodes n"
	"  JOIN graph_functions g ON g.id = n.graph_function_id"
	"  WHERE g.pid = blackbox_buckets.pid AND n.token = blackbox_buckets.token LIMIT 1) WHERE token IS NOT NULL;"
	"UPDATE blackbox_buckets SET blackbox_node_id = (SELECT CASE WHEN count(DISTINCT n.graph_function_id) = 1"
	"  THEN min(n.id) END FROM blackbox_nodes n"
	"  JOIN graph_functions g ON g.id = n.graph_function_id JOIN strings s ON s.id = blackbox_buckets.node_id"
	"  WHERE g.pid = blackbox_buckets.pid AND n.node_name = s.text) WHERE blackbox_node_id IS NULL;"
	/* each black-box run to its node (tokens are unique per process) */
	"UPDATE blackbox_execs SET blackbox_node_id = (SELECT n.id FROM blackbox_nodes n"
	"  JOIN graph_functions g ON g.id = n.graph_function_id"
	"  WHERE g.pid = blackbox_execs.pid AND n.token = blackbox_execs.token LIMIT 1) WHERE token IS NOT NULL;"
	/* a run whose kernel token was not read: by node name, only when one node has it */
	"UPDATE blackbox_execs SET blackbox_node_id = (SELECT CASE WHEN count(DISTINCT n.graph_function_id) = 1"
	"  THEN min(n.id) END FROM blackbox_nodes n"
	"  JOIN graph_functions g ON g.id = n.graph_function_id JOIN strings s ON s.id = blackbox_execs.node_id"
	"  WHERE g.pid = blackbox_execs.pid AND n.node_name = s.text) WHERE blackbox_node_id IS NULL;"
	/* threads that ran a tf.data function's black box are tf.data threads */
	"UPDATE threads SET role = 'tf-data' WHERE role NOT IN ('main', 'tf-data') AND EXISTS"
	"  (SELECT 1 FROM blackbox_execs b JOIN blackbox_nodes n ON n.id = b.blackbox_node_id"
	"   JOIN graph_functions g ON g.id = n.graph_function_id JOIN strings s ON s.id = g.name_id"
	"   WHERE b.pid = threads.pid AND b.tid = threads.tid AND s.text LIKE '%Dataset%');"
	"UPDATE threads SET role = 'tf-data' WHERE role NOT IN ('main', 'tf-data') AND EXISTS"
	"  (SELECT 1 FROM blackbox_buckets b JOIN blackbox_nodes n ON n.id = b.blackbox_node_id"
	"   JOIN graph_functions g ON g.id = n.graph_function_id JOIN strings s ON s.id = g.name_id"
	"   WHERE b.pid = threads.pid AND b.tid = threads.tid AND s.text LIKE '%Dataset%');"
	"UPDATE threads SET role = 'python-main' WHERE role = 'main' AND pid IN"
	"  (SELECT pid FROM processes WHERE python_version IS NOT NULL);"
	"UPDATE threads SET role = 'other' WHERE role = 'main';";

/*
 * Kernels: each to its call (by the call's seq), then each kernel of a call
 * from its (name, type) node to the node of that name in the call's graph
 * function, else in the one graph function of the process that has it (a
 * nested function's body); the nodes get their creation lines.
 */
static const char link_kernel_calls_sql[] =  /* before kernels_call, a late index (schema.sql), is built */
	"UPDATE kernels SET call_id = (SELECT q.call_id FROM temp.call_seq q"
	"  WHERE q.pid = kernels.pid AND q.seq = -kernels.call_id) WHERE call_id < 0;";
static const char link_kernels_sql[] =
	"CREATE TEMP TABLE kmap(u INTEGER, gf INTEGER, n INTEGER, PRIMARY KEY (u, gf));"
	"INSERT OR IGNORE INTO temp.kmap(u, gf) SELECT DISTINCT k.node_id, c.graph_function_id FROM kernels k"
	"  JOIN function_calls c ON c.id = k.call_id WHERE k.node_id IS NOT NULL AND c.graph_function_id IS NOT NULL;"
	"INSERT OR IGNORE INTO temp.kmap(u, gf) SELECT DISTINCT node_id, graph_function_id FROM kernel_totals"
	"  WHERE node_id IS NOT NULL AND graph_function_id IS NOT NULL;"
	"UPDATE temp.kmap SET n = (SELECT n.id FROM graph_nodes u JOIN graph_nodes n ON n.graph_function_id = kmap.gf"
	"  AND n.name = u.name WHERE u.id = kmap.u LIMIT 1);"
	/* by name in the process: one lookup per node (a scan of graph_nodes per node took minutes on TFP's HMC) */
	"CREATE TEMP TABLE kname(pid INTEGER, name TEXT, nodes INTEGER, id INTEGER, PRIMARY KEY (pid, name));"
	"INSERT INTO temp.kname SELECT pid, name, count(*), min(id) FROM graph_nodes"
	"  WHERE graph_function_id IS NOT NULL GROUP BY pid, name;"
	"UPDATE temp.kmap SET n = (SELECT CASE WHEN k.nodes = 1 THEN k.id END FROM graph_nodes u JOIN temp.kname k"
	"  ON k.pid = u.pid AND k.name = u.name WHERE u.id = kmap.u) WHERE n IS NULL;"
	"UPDATE kernels SET node_id = coalesce((SELECT m.n FROM temp.kmap m JOIN function_calls c ON c.id = kernels.call_id"
	"  WHERE m.u = kernels.node_id AND m.gf = c.graph_function_id), node_id) WHERE call_id IS NOT NULL;"
	"UPDATE kernel_totals SET node_id = coalesce((SELECT m.n FROM temp.kmap m WHERE m.u = kernel_totals.node_id"
	"  AND m.gf = kernel_totals.graph_function_id), node_id) WHERE graph_function_id IS NOT NULL;"
	/*
	 * A kernel on another thread while one call was in flight was given that
	 * call; if its node is of another top-level function (a tf.data map's, a
	 * variable initializer's) it ran beside the call, not in it: a sequential
	 * map's py_function was "95% of the train step's kernel time".  A thread
	 * that ran a tf.data function's kernels is a tf.data thread (the
	 * collector could not tell from its stack), and none of its kernels is
	 * another thread's call's: a map's Cast is no Cast of the step.
	 */
	"UPDATE threads SET role = 'tf-data' WHERE role NOT IN ('python-main', 'tf-data') AND EXISTS (SELECT 1"
	"  FROM kernels k JOIN graph_nodes n ON n.id = k.node_id JOIN graph_functions g ON g.id = n.graph_function_id"
	"  JOIN strings s ON s.id = g.name_id WHERE k.pid = threads.pid AND k.tid = threads.tid"
	"  AND g.parent_id IS NULL AND s.text LIKE '%!_Dataset!_%' ESCAPE '!');"
	"UPDATE kernels SET call_id = NULL WHERE call_id IS NOT NULL AND EXISTS (SELECT 1 FROM threads t"
	"  JOIN function_calls c ON c.id = kernels.call_id WHERE t.pid = kernels.pid AND t.tid = kernels.tid"
	"  AND t.role = 'tf-data' AND c.tid != kernels.tid);"
	"UPDATE kernel_totals SET call_id = NULL, graph_function_id = NULL WHERE call_id IS NOT NULL AND EXISTS"
	"  (SELECT 1 FROM threads t JOIN function_calls c ON c.id = kernel_totals.call_id WHERE t.pid = kernel_totals.pid"
	"   AND t.tid = kernel_totals.tid AND t.role = 'tf-data' AND c.tid != kernel_totals.tid);"
	"UPDATE kernels SET call_id = NULL WHERE call_id IS NOT NULL AND EXISTS (SELECT 1 FROM graph_nodes n"
	"  JOIN graph_functions g ON g.id = n.graph_function_id JOIN function_calls c ON c.id = kernels.call_id"
	"  WHERE n.id = kernels.node_id AND g.parent_id IS NULL AND g.id IS NOT c.graph_function_id);"
	"UPDATE kernel_totals SET call_id = NULL, graph_function_id = NULL WHERE call_id IS NOT NULL AND EXISTS"
	"  (SELECT 1 FROM graph_nodes n JOIN graph_functions g ON g.id = n.graph_function_id"
	"   WHERE n.id = kernel_totals.node_id AND g.parent_id IS NULL AND g.id IS NOT kernel_totals.graph_function_id);"
	"UPDATE graph_nodes SET file = s.file, line = s.line FROM temp.node_src s"
	"  JOIN temp.trace_seq q ON q.pid = s.pid AND q.seq = s.trace_seq JOIN graph_functions g ON g.trace_id = q.trace_id"
	"  WHERE g.id = graph_nodes.graph_function_id AND s.name = graph_nodes.name;";

/* Kernel totals: to a call they ran under, and so to its graph function (after link_sql). */
static const char link_kernel_totals_sql[] =
	"UPDATE kernel_totals SET call_id = (SELECT q.call_id FROM temp.call_seq q"
	"  WHERE q.pid = kernel_totals.pid AND q.seq = -kernel_totals.call_id) WHERE call_id < 0;"
	"UPDATE kernel_totals SET graph_function_id = (SELECT c.graph_function_id FROM function_calls c"
	"  WHERE c.id = kernel_totals.call_id) WHERE call_id IS NOT NULL;";

static const char link_parents_sql[] =
	"UPDATE graph_functions SET function_id = (SELECT p.function_id FROM graph_functions p"
	"  WHERE p.id = graph_functions.parent_id) WHERE function_id IS NULL AND parent_id IS NOT NULL;";

/* Kernels a stream's threads did not record (kept apart: they never cost an exact count). */
static void count_dropped_kernels(struct run_writer *w, struct stream *s)
{
	uint64_t d = 0, v;
	sqlite3_stmt *st;

	for (uint32_t t = 0; t < AGP_MAX_THREADS && !s->damaged; t++)
		if (SHM_LOAD(&s->shm->threads[t].dropped_kernels, &v) == 0)
			d = d + v < d ? UINT64_MAX : d + v;
	if (d > INT64_MAX)
		d = INT64_MAX;
	if (!d || !(st = db_prepare(w->db, "UPDATE processes SET dropped_kernels = dropped_kernels + ? WHERE pid = ?")))
		return;
	sqlite3_bind_int64(st, 1, (int64_t)d);
	sqlite3_bind_int(st, 2, s->pid);
	step(w, st);
	sqlite3_finalize(st);
	w->totals.dropped_kernels = w->totals.dropped_kernels + d < d ? UINT64_MAX : w->totals.dropped_kernels + d;
}

/* Drain every stream a last time and store the events each lost; their sum. */
static uint64_t drain_all_and_count_drops(struct run_writer *w)
{
	uint64_t dropped = 0;
	sqlite3_stmt *st;

	scan_streams(w);
	for (size_t i = 0; i < w->nstreams; i++) {
		struct stream *s = w->streams[i];
		uint64_t d = 0, v;

		drain_stream(w, s);
		if (!s->damaged && SHM_LOAD(&s->shm->dropped_no_slot, &v) == 0)
			d = v;
		for (uint32_t t = 0; t < AGP_MAX_THREADS && !s->damaged; t++)
			if (SHM_LOAD(&s->shm->threads[t].dropped, &v) == 0)
				d = d + v < d ? UINT64_MAX : d + v;  /* the workload's numbers: saturate */
		if (d > INT64_MAX)
			d = INT64_MAX;
		read_kernel_totals(w, s);
		count_dropped_kernels(w, s);
		if (d && (st = db_prepare(w->db, "UPDATE processes SET dropped_events = dropped_events + ? WHERE pid = ?"))) {
			sqlite3_bind_int64(st, 1, (int64_t)d);
			sqlite3_bind_int(st, 2, s->pid);
			step(w, st);
			sqlite3_finalize(st);
		}
		dropped = dropped + d < dropped ? INT64_MAX : dropped + d;
	}
	return dropped > INT64_MAX ? INT64_MAX : dropped;
}

/* Calls after a process's kernel budget ran out hold counts only: not detailed. */
static int unmark_refused_calls(struct run_writer *w)
{
	sqlite3_stmt *st = db_prepare(w->db, "UPDATE function_calls SET kernel_detail = 0 WHERE id IN"
				      " (SELECT call_id FROM temp.call_seq WHERE pid = ? AND seq > ?)");
	int rc = st ? 0 : -1;

	for (size_t i = 0; st && i < w->nstreams; i++) {
		if (!w->streams[i]->kernel_capped)
			continue;
		sqlite3_bind_int(st, 1, w->streams[i]->pid);
		sqlite3_bind_int64(st, 2, w->streams[i]->kernel_seq_cap);
		step(w, st);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (w->kernels_refused)
		db_meta_set_int(w->db, "kernels_refused", (int64_t)(w->kernels_refused > INT64_MAX ? INT64_MAX : w->kernels_refused));
	if (w->kernels_capped_ns)
		db_meta_set_int(w->db, "kernels_capped_ns", (int64_t)(w->kernels_capped_ns & INT64_MAX));
	return rc;
}

/* The links between rows that only the whole recording tells; 0 or -1. */
static int link_rows(struct run_writer *w, const struct run_session *sess)
{
	sqlite3_stmt *st;
	int rc = 0;

	if (db_exec(w->db, link_kernel_calls_sql) != 0 || db_exec(w->db, link_sql) != 0 || unmark_refused_calls(w) != 0)
		rc = -1;
	for (int depth = 0; depth < 8; depth++)
		db_exec(w->db, link_parents_sql);
	if (db_exec(w->db, link_kernel_totals_sql) != 0 || db_exec(w->db, link_kernels_sql) != 0 ||
	    db_create_late_indexes(w->db) != 0)
		rc = -1;
	/* The main process's status is the one waitpid saw. */
	if ((st = db_prepare(w->db, "UPDATE processes SET exit_status = ?, end_ns = coalesce(end_ns, ?) WHERE pid = ?"))) {
		sqlite3_bind_int(st, 1, sess->exit_status);
		sqlite3_bind_int64(st, 2, (int64_t)sess->end_ns);
		sqlite3_bind_int(st, 3, sess->main_pid);
		step(w, st);
		sqlite3_finalize(st);
	}
	return rc;
}

static const char meta_from_processes_sql[] =
	"INSERT OR REPLACE INTO meta SELECT 'python_version', python_version FROM processes"
	" WHERE python_version IS NOT NULL ORDER BY start_ns LIMIT 1;"
	"INSERT OR REPLACE INTO meta SELECT 'tf_version', tf_version FROM processes"
	" WHERE tf_version IS NOT NULL ORDER BY start_ns LIMIT 1;"
	"INSERT OR REPLACE INTO meta VALUES ('tf_status', coalesce("
	" (SELECT 'hooked' FROM processes WHERE tf_status = 'hooked' LIMIT 1),"
	" (SELECT 'mismatch' FROM processes WHERE tf_status = 'mismatch' LIMIT 1), 'not-loaded'));"
	"INSERT OR REPLACE INTO meta VALUES ('gpu_status', coalesce("
	" (SELECT 'on' FROM processes WHERE gpu_status = 'on' LIMIT 1), 'off'));"
	"INSERT OR REPLACE INTO meta SELECT 'gpu_detail', gpu_detail FROM processes"
	" WHERE gpu_detail IS NOT NULL ORDER BY start_ns LIMIT 1;";

/* The meta table: the run as the launcher saw it. */
static void write_meta(struct run_writer *w, const struct run_session *sess, uint64_t dropped)
{
	struct strbuf argv = STRBUF_INIT;
	char host[256] = "";

	strbuf_addch(&argv, '[');
	for (char **a = sess->argv; *a; a++) {
		if (a != sess->argv)
			strbuf_addch(&argv, ',');
		strbuf_add_json_string(&argv, *a);
	}
	strbuf_addch(&argv, ']');
	gethostname(host, sizeof(host) - 1);
	db_meta_set(w->db, "agprof_version", AGPROF_VERSION);
	db_meta_set(w->db, "argv", strbuf_failed(&argv) ? "[]" : argv.buf);
	db_meta_set(w->db, "cwd", sess->cwd);
	srcfile_record(w->db, sess->cwd); /* best effort: a missing fingerprint only loses "file changed" */
	db_meta_set(w->db, "host", host);
	db_meta_set_int(w->db, "start_wall_ns", (int64_t)sess->start_wall_ns);
	db_meta_set_int(w->db, "start_ns", (int64_t)sess->start_ns);
	db_meta_set_int(w->db, "end_ns", (int64_t)sess->end_ns);
	db_meta_set_int(w->db, "exit_status", sess->exit_status);
	db_meta_set_int(w->db, "exit_signal", sess->exit_signal);
	if (sess->attached)
		db_meta_set(w->db, "attached", sess->attached);
	if (sess->tf) {
		db_meta_set(w->db, "tf_task_type", sess->tf->task_type[0] ? sess->tf->task_type : NULL);
		if (sess->tf->task_index >= 0)
			db_meta_set_int(w->db, "tf_task_index", sess->tf->task_index);
		db_meta_set_int(w->db, "tf_cluster_size", sess->tf->cluster_size);
	}
	db_meta_set_int(w->db, "dropped_events", (int64_t)dropped);
	if (w->notes.len)
		db_meta_set(w->db, "incomplete", w->notes.buf);
	db_exec(w->db, meta_from_processes_sql);
	strbuf_release(&argv);
}

/* The capture windows (capture_log.h) and what made them: meta.capture, meta.capture_calls. */
static void write_capture(struct run_writer *w, const struct run_session *sess)
{
	if (!w->capture.used)
		return;
	if (capture_log_write(&w->capture, w->db, sess->end_ns) != 0)
		add_note(w, "the capture windows could not be stored");
	db_meta_set(w->db, "capture", w->capture_desc ? w->capture_desc : "agprof.start/stop");
	db_meta_set_int(w->db, "capture_calls", w->capture.calls);
	db_meta_set_int(w->db, "capture_windows", w->capture.windows);
	w->totals.capture_used = 1;
	w->totals.capture_windows = w->capture.windows;
	w->totals.capture_calls = w->capture.calls;
}

/* After a write failure: keep what was committed, write nothing more. */
static void keep_committed(struct run_writer *w)
{
	if (!sqlite3_get_autocommit(w->db))
		sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
	w->committed.dropped = w->totals.dropped;
	w->committed.processes = w->totals.processes;
	w->committed.damaged = w->totals.damaged;
	/*
	 * No checkpoint: on a full disk it would stop half-way, leaving a
	 * main file whose header no longer matches its size.  The main file
	 * stays as the last checkpoint left it and the WAL beside it holds
	 * the committed rows; any SQLite reader joins the two.
	 */
	sqlite3_db_config(w->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
}

/* Close the database and free w; 0 or -1. */
static int release_writer(struct run_writer *w)
{
	int rc = 0;

	checkpointer_stop(w->ckpt);
	w->ckpt = NULL;
	strbuf_release(&w->notes);
	capture_log_release(&w->capture);
	eager_buckets_release(&w->buckets);
	eager_buckets_release(&w->call_buckets);
	eager_buckets_release(&w->bb_buckets);
	eager_keys_release(&w->keys);
	eager_blocks_release(&w->blocks);
	free(w->capture_desc);
	free(w->rec);
	free(w->lost_why);
	db_forget_write_failure(w->db);
	string_table_release(&w->st);
	for (sqlite3_stmt *p = sqlite3_next_stmt(w->db, NULL); p; p = sqlite3_next_stmt(w->db, NULL))
		sqlite3_finalize(p);
	if (sqlite3_close(w->db) != SQLITE_OK)
		rc = -1;
	for (size_t i = 0; i < w->nstreams; i++) {
		if (!w->streams[i]->borrowed)
			munmap(w->streams[i]->shm, AGP_SHM_FILE_BYTES);
		if (w->streams[i]->side_fd >= 0)
			close(w->streams[i]->side_fd);
		free(w->streams[i]->side_buf);
		idmap_release(&w->streams[i]->strings);
		idmap_release(&w->streams[i]->sites);
		idmap_release(&w->streams[i]->kernel_nodes);
		idmap_release(&w->streams[i]->fn_rows);
		free(w->streams[i]);
	}
	free(w->streams);
	free(w->shm_dir);
	free(w);
	return rc;
}

/* Every open bucket written; when and why the switch happened (meta.aggregate_*). */
static void finish_budget(struct run_writer *w)
{
	eager_buckets_close(&w->buckets, INT64_MAX);
	eager_buckets_close(&w->call_buckets, INT64_MAX);
	eager_buckets_close(&w->bb_buckets, INT64_MAX);
	count_aggregated(w);
	if (w->buckets.refused + w->call_buckets.refused + w->bb_buckets.refused)
		add_note(w, "%lld aggregated eager ops, %lld graph calls, %lld black-box runs could not be stored",
			 (long long)w->buckets.refused, (long long)w->call_buckets.refused,
			 (long long)w->bb_buckets.refused);
	if (w->budget.max_events)
		db_meta_set_int(w->db, "max_events", (int64_t)w->budget.max_events);
	if (w->budget.max_bytes)
		db_meta_set_int(w->db, "max_size_bytes", (int64_t)w->budget.max_bytes);
	if (!w->aggregating)
		return;
	db_meta_set(w->db, "aggregate_reason", w->aggregate_why);
	if (w->aggregate_from_ns)
		db_meta_set_int(w->db, "aggregate_from_ns", w->aggregate_from_ns);
	db_meta_set_int(w->db, "aggregated_eager_ops", w->buckets.stored);
	db_meta_set_int(w->db, "aggregated_calls", w->call_buckets.stored);
	db_meta_set_int(w->db, "aggregated_blackbox_execs", w->bb_buckets.stored);
}

/* AGPROF_TIMING=1: how long each step of the finish took (bench/long_run.py). */
static void finish_timing(const char *step, uint64_t *t)
{
	uint64_t now = now_ns();

	if (getenv("AGPROF_TIMING"))
		fprintf(stderr, "agprof: timing: finish %-12s %.3f s\n", step, (double)(now - *t) / 1e9);
	*t = now;
}

int run_writer_finish(struct run_writer *w, const struct run_session *sess, struct run_totals *totals)
{
	uint64_t t = now_ns();
	int rc = 0;

	checkpointer_stop(w->ckpt);  /* the final checkpoint below is the writer's (or none, on a write failure) */
	w->ckpt = NULL;
	if (!db_write_failure(w->db)) {
		w->totals.dropped = drain_all_and_count_drops(w);
		flush_batches(w);
		finish_budget(w);
		if (writer_stop)
			add_note(w, "agprof was interrupted before it had read every buffer");
		if (w->lost_rows)
			add_note(w, "%llu rows could not be stored (%s)", (unsigned long long)w->lost_rows,
				 w->lost_why ? w->lost_why : "?");
		finish_timing("drain", &t);
		rc = link_rows(w, sess);
		finish_timing("links", &t);
		write_capture(w, sess);
		write_meta(w, sess, w->totals.dropped);
		if (db_exec(w->db, "COMMIT") != 0)
			rc = -1;
		else
			w->committed = w->totals;
		finish_timing("meta", &t);
	}
	if (db_write_failure(w->db)) {
		rc = -1;
		keep_committed(w);
	} else {
		/* One self-contained file: fold the WAL back in. */
		db_exec(w->db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
		finish_timing("checkpoint", &t);
	}
	if (totals) {
		*totals = w->committed;
		totals->error = db_write_failure(w->db) ? sqlite3_errstr(db_write_failure(w->db)) : NULL;
		snprintf(totals->note, sizeof(totals->note), "%s", w->notes.len ? w->notes.buf : "");
	}
	return release_writer(w) || rc ? -1 : 0;
}
