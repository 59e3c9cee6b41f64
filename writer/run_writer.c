/*
 * run_writer.c - drains the collector's shared memory into the recording.
 * See run_writer.h, common/agp_protocol.h (the input) and docs/schema.md (the
 * output).  Ids in the rings are per process; this file maps them to rows.
 */
#include "run_writer_int.h"
#include "links.h"
#include "shm_guard.h"
#include "recid.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Largest ring record: 65535 words; a span is the largest fixed layout. */
#define RING_RECORD_MAX (65535u * 8u)

/* The bucket tables of graph calls and black-box runs (eager_buckets_init_as's parameters). */
#define CALL_BUCKETS_SQL \
	"INSERT OR REPLACE INTO function_call_buckets(id, pid, tid, start_ns, end_ns, name_id, callsite_id," \
	" count, total_ns, failed, histogram) VALUES (?14,?1,?2,?3,?4,?5,?7,?8,?9,?12,?13)"
#define BB_BUCKETS_SQL \
	"INSERT OR REPLACE INTO blackbox_buckets(id, pid, tid, start_ns, end_ns, node_id, op_type_id, token," \
	" count, total_ns, failed, histogram)" \
	" VALUES (?14,?1,?2,?3,?4,?5,?6,(SELECT text FROM strings WHERE id = ?7),?8,?9,?12,?13)"

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

volatile sig_atomic_t run_writer_stopping;

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
	run_writer_stopping = 1;
}

void writer_note(struct run_writer *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void writer_note(struct run_writer *w, const char *fmt, ...)
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
		writer_note(w, "process %d: %s (its later events are missing)", s->pid, why);
	s->damaged = 1;
}

int writer_step(struct run_writer *w, sqlite3_stmt *st)
{
	int rc = db_step_quiet(w->db, st);

	if (rc && !db_write_failure(w->db) && !w->lost_rows++) {
		w->lost_why = strdup(sqlite3_errmsg(w->db));
		error("cannot store a record: %s in '%.200s'", w->lost_why ? w->lost_why : "?", sqlite3_sql(st));
	}
	sqlite3_reset(st);
	return rc ? -1 : 0;
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
		if (writer_step(w, b->one) == 0)
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

void writer_flush_batches(struct run_writer *w)
{
	batch_flush(w, &w->eager);
	eager_blocks_close(&w->blocks);  /* every committed row in a committed block */
	batch_flush(w, &w->kernel);
}

static int prepare_all(struct run_writer *w)
{
	struct { sqlite3_stmt **s; const char *sql; } stmts[] = {
		{ &w->ins_eager, "INSERT INTO eager_op_rows(key, start, dur, python_ns, flags) VALUES (?,?,?,?,?)" },
		{ &w->ins_call, "INSERT INTO function_calls(pid, tid, start_ns, end_ns, name_id, callsite_id, ok, kernel_detail, seq) VALUES (?,?,?,?,?,?,?,?,?)" },
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
		{ &w->ins_link_ref, "INSERT INTO link_ref(pid, parent_id, child_name_id) VALUES (?,?,?)" },
		{ &w->ins_link_trace, "INSERT INTO link_trace(gf_id, pid, trace_seq) VALUES (?,?,?)" },
		{ &w->ins_link_name, "INSERT INTO link_name(gf_id, pid, user_name) VALUES (?,?,?)" },
		{ &w->ins_trace_seq, "INSERT OR REPLACE INTO link_trace_seq(pid, seq, trace_id) VALUES (?,?,?)" },
		{ &w->get_trace_seq, "SELECT trace_id FROM link_trace_seq WHERE pid = ? AND seq = ?" },
		{ &w->ins_trace_event, "INSERT INTO trace_events(pid, trace_seq, trace_id, kind, name, file, line, count, detail, function, function_file, function_line, repeats, loop_line) VALUES (?1,?2,(SELECT trace_id FROM link_trace_seq WHERE pid = ?1 AND seq = ?2),?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)" },
		{ &w->ins_kernel, "INSERT INTO kernels(pid, tid, start_ns, end_ns, node_id, call_id, async) VALUES (?,?,?,?,?,?,?)" },
		{ &w->ins_knode, "INSERT INTO graph_nodes(pid, name, op_type) VALUES (?, coalesce((SELECT text FROM strings WHERE id = ?), '?'), coalesce((SELECT text FROM strings WHERE id = ?), '?'))" },
		{ &w->ins_gnode, "INSERT INTO graph_nodes(pid, graph_function_id, name, op_type) VALUES (?,?,?,?)" },
		{ &w->ins_kernel_cut, "INSERT OR IGNORE INTO link_kernel_cut(pid, seq) VALUES (?,?)" },
		{ &w->ins_node_src, "INSERT INTO link_node_src(pid, trace_seq, name, file_id, line) VALUES (?,?,?,?,?)" },
		{ &w->upd_process_kernels, "UPDATE processes SET kernel_status = ?, kernel_detail = ? WHERE pid = ?" },
		{ &w->ins_dataset, "INSERT INTO dataset_ops(pid, tid, op_id, start_ns, end_ns, input, input2, output) VALUES (?,?,?,?,?,?,?,?)" },
		{ &w->ins_collective, "INSERT INTO collective_execs(pid, tid, op_id, start_ns, end_ns, graph, group_size, group_key, instance_key, key_status) VALUES (?,?,?,?,?,?,?,?,?,?)" },
		{ &w->ins_ktotal, "INSERT INTO kernel_totals(pid, tid, node_id, call_id, count, timed, timed_ns) VALUES (?,?,?,?,?,?,?)" },
		{ &w->ins_session, "INSERT INTO session_runs(pid, tid, start_ns, end_ns, kind, callsite_id, feeds, fetches, targets, ok) VALUES (?,?,?,?,?,?,?,?,?,?)" },
	};

	if (db_exec(w->db, links_tables_sql) != 0)
		return -1;
	cpu_wait_init(&w->cpu, w->db);
	if (db_has_table(w->db, "op_prices"))
		w->ins_op_price = db_prepare(w->db, "INSERT INTO op_prices(pid, tid, op_id, samples, cpu_ns, wall_ns)"
					     " VALUES (?,?,?,?,?,?)");
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
	char recid[RECID_LEN];
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
	shm_guard_install();
	run_writer_stopping = 0;
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
	/* the fleet's join key (docs/fleet.md): written first, so that a run cut short has it too */
	if (recid_new(recid) == 0)
		db_meta_set(w->db, "recording_id", recid);
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
		writer_release(w);
		return NULL;
	}
	return w;
}

int64_t writer_intern(struct run_writer *w, const char *text)
{
	return text ? string_table_intern(&w->st, text, strlen(text)) : 0;
}

/*
 * The callsites row of one frame of a chain (parent: the row of the next
 * frame out toward user code, 0 = none), added when new.  NULLs never
 * compare equal in UNIQUE, so the lookup comes first.
 */
int64_t writer_callsite_id(struct run_writer *w, int64_t file, int64_t line, int64_t func, int64_t parent,
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
		db_bind_id_or_null(st, 4, parent);
		sqlite3_bind_int(st, 5, library ? 1 : 0);
		if (i) {
			if (writer_step(w, st) == 0)
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
	db_bind_text_or_null(w->ins_thread, 3, name[0] ? name : NULL);
	sqlite3_bind_text(w->ins_thread, 4, role, -1, SQLITE_STATIC);
	writer_step(w, w->ins_thread);
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
	if (writer_step(w, w->ins_knode) != 0)
		return 0;
	id = sqlite3_last_insert_rowid(w->db);
	idmap_put(&s->kernel_nodes, key, (size_t)id);
	return id;
}

/* Tell s's collector: kernels of no call are refused from now on, sample them no more (AGP_DETAIL_FREE_KERNELS). */
static void free_kernels_off(struct stream *s)
{
	shm_bits32(&s->shm->detail_off, AGP_DETAIL_FREE_KERNELS, 0);
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
 * bounds.  Either way the collector is told (free_kernels_off), so that
 * only those already in a ring are refused; the totals (kernel_totals)
 * stay exact.
 */
static int kernel_detail_refused(struct run_writer *w, struct stream *s, uint32_t call_seq)
{
	if (!s->kernel_capped && w->budget.max_events &&
	    w->totals.kernels + (uint64_t)w->kernel.n >= w->budget.max_events) {
		s->kernel_capped = 1;
		s->kernel_seq_cap = s->kernel_seq_seen;
		free_kernels_off(s);
		if (!w->kernels_capped_ns)
			w->kernels_capped_ns = clock_ns(CLOCK_MONOTONIC);
	}
	if ((s->kernel_capped && (!call_seq || call_seq > s->kernel_seq_cap)) || (!call_seq && w->aggregating)) {
		w->kernels_refused++;
		return 1;
	}
	if (call_seq > s->kernel_seq_seen)
		s->kernel_seq_seen = call_seq;
	return 0;
}

/*
 * A call the collector detailed for its first AGP_KDETAIL_CALL_MAX kernels
 * on a thread and cut there (AGP_KERNEL_CUT on the last): none of its rows
 * is kept, so that a call's kernels are all stored or none.  Its later
 * rows (other threads') are refused here; those stored before the cut go
 * at the finish (cut_calls_sql), and the call's kernel_detail with them.
 */
static int kernel_call_cut(struct run_writer *w, struct stream *s, const struct agp_rec_kernel *r)
{
	if (!r->call_seq)
		return 0;
	for (unsigned i = 0; i < KERNEL_CUTS; i++)
		if (s->kernel_cut[i] == r->call_seq)
			goto refused;
	if (!(r->flags & AGP_KERNEL_CUT))
		return 0;
	s->kernel_cut[s->nkernel_cut++ % KERNEL_CUTS] = r->call_seq;
	sqlite3_bind_int(w->ins_kernel_cut, 1, s->pid);
	sqlite3_bind_int64(w->ins_kernel_cut, 2, r->call_seq);
	writer_step(w, w->ins_kernel_cut);
	w->kernel_cut_calls++;
refused:
	w->kernels_refused++;
	return 1;
}

/* call_id holds -(call seq) until the end of the run resolves it (link_kernels_sql). */
static void write_kernel(struct run_writer *w, struct stream *s, int tid, const struct agp_rec_kernel *r)
{
	struct batch *b = &w->kernel;
	int64_t node, *v;

	if (kernel_detail_refused(w, s, r->call_seq) || kernel_call_cut(w, s, r))
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
	db_bind_id_or_null(st, 3, node);
	if (call_seq && agg_call_row(s, call_seq))
		sqlite3_bind_int64(st, 4, agg_call_row(s, call_seq));  /* its function's first call: the join's */
	else if (call_seq)
		sqlite3_bind_int64(st, 4, -(int64_t)call_seq);
	else
		sqlite3_bind_null(st, 4);
	sqlite3_bind_int64(st, 5, count > INT64_MAX ? INT64_MAX : (int64_t)count);
	sqlite3_bind_int64(st, 6, timed);
	sqlite3_bind_int64(st, 7, timed_ns > INT64_MAX ? INT64_MAX : (int64_t)timed_ns);
	writer_step(w, st);
}

static void write_kernel_agg(struct run_writer *w, struct stream *s, int tid, const struct agp_rec_kernel_agg *r)
{
	write_kernel_total(w, s, tid, r->h.arg, r->type, r->call_seq, r->count, r->timed, r->timed_ns);
}

/*
 * The first `entries` of the kernel totals table of slot's owner
 * (agp_protocol.h), read when every string they name has been drained:
 * when the slot is freed, or at the end.  With clear, each part that held
 * totals is zeroed after it is read, for the slot's next owner (a part
 * that held some was reserved by its owner: the store never meets a hole
 * of the file); 0, or -1 when the file shrank.
 */
static int read_slot_kernel_totals(struct run_writer *w, struct stream *s, uint32_t slot, int32_t tid,
				   uint32_t entries, int clear)
{
	struct agp_kernel_total part[256];  /* 8 KiB: two pages */
	char *base = (char *)s->shm + AGP_KTOTAL_OFFSET + (size_t)slot * AGP_KTOTAL_BYTES;

	if (entries > AGP_KTOTAL_SLOTS)
		entries = AGP_KTOTAL_SLOTS;
	for (uint32_t first = 0; first < entries; first += 256) {
		uint32_t n = entries - first < 256 ? entries - first : 256;
		char *src = base + (size_t)first * sizeof(part[0]);
		int used = 0;

		if (shm_copy(part, src, n * sizeof(part[0])) != 0)
			return -1;
		for (uint32_t i = 0; i < n; i++) {
			used |= part[i].name || part[i].count;
			write_kernel_total(w, s, tid, part[i].name, part[i].type, part[i].call_seq, part[i].count,
					   part[i].timed, part[i].timed_ns);
		}
		if (clear && used && shm_zero(src, n * sizeof(part[0])) != 0)
			return -1;
	}
	return 0;
}

void writer_read_kernel_totals(struct run_writer *w, struct stream *s)
{
	uint32_t word;
	int32_t tid;

	for (uint32_t t = 0; t < AGP_MAX_THREADS && !s->damaged; t++) {
		if (SHM_LOAD(&s->shm->threads[t].state, &word) != 0 || SHM_LOAD(&s->shm->threads[t].tid, &tid) != 0)
			break;
		/* CLAIMING: maybe a freed owner's table not yet cleared; FREE: read when freed */
		if ((word & AGP_SLOT_MASK) != AGP_SLOT_LIVE && (word & AGP_SLOT_MASK) != AGP_SLOT_ENDED)
			continue;
		if (read_slot_kernel_totals(w, s, t, tid, AGP_KTOTAL_SLOTS, 0) != 0)
			break;
	}
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
			w->lost_why = strdup(sqlite3_errmsg(w->db));  /* said at the finish, as writer_step()'s */
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

/* The budget is spent (why: "max-events", "max-size") or the writer falls behind ("rate"): eager ops, calls, black boxes are aggregated from now on. */
static void start_aggregating(struct run_writer *w, const char *why)
{
	if (w->aggregating || !w->buckets.slots)
		return;
	w->aggregating = 1;
	w->aggregate_why = why;
	for (size_t i = 0; i < w->nstreams; i++)
		free_kernels_off(w->streams[i]);
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
	if (r->h.type == AGP_REC_EAGER)
		cpu_wait_track(&w->cpu, s->pid, tid);  /* its eager share is read on its own time (thread_samples) */
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
		db_bind_id_or_null(st, 6, site);
		sqlite3_bind_int(st, 7, (r->flags & AGP_SPAN_FAILED) == 0);
		sqlite3_bind_int(st, 8, (r->flags & AGP_SPAN_KERNEL_DETAIL) != 0);
		/* its kernels' key (they hold -seq), on disk: a cut-short recording is linked without the writer */
		if (r->seq)
			sqlite3_bind_int64(st, 9, (int64_t)(r->seq & 0xffffffffu));
		else
			sqlite3_bind_null(st, 9);
		count = &w->totals.calls;
		table = "function_calls";
	} else {
		int64_t node = name > 0 ? name : writer_intern(w, "?");
		int64_t type = local_id_get(&s->strings, r->aux) > 0 ? local_id_get(&s->strings, r->aux) : writer_intern(w, "?");

		if (aggregate_blackbox(w, s, tid, r, node, type))
			return;
		st = w->ins_bb, table = NULL;
		sqlite3_bind_int(st, 1, s->pid);
		sqlite3_bind_int(st, 2, tid);
		sqlite3_bind_int64(st, 3, (int64_t)r->start_ns);
		sqlite3_bind_int64(st, 4, (int64_t)r->end_ns);
		sqlite3_bind_int64(st, 5, node);
		sqlite3_bind_int64(st, 6, type);
		db_bind_id_or_null(st, 7, local_id_get(&s->strings, r->aux2));
		count = &w->totals.blackbox;
	}
	if (writer_step(w, st) == 0) {
		(*count)++;
		w->totals.events++;
		if (r->h.type == AGP_REC_CALL)
			idmap_put(&s->fn_rows, name, (size_t)sqlite3_last_insert_rowid(w->db));  /* the first wins */
		if (table && s->gpu_on && r->seq) {
			sqlite3_bind_int(w->ins_ext, 1, s->pid);
			sqlite3_bind_int64(w->ins_ext, 2, (int64_t)r->seq);
			sqlite3_bind_text(w->ins_ext, 3, table, -1, SQLITE_STATIC);
			sqlite3_bind_int64(w->ins_ext, 4, sqlite3_last_insert_rowid(w->db));
			writer_step(w, w->ins_ext);
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
	db_bind_id_or_null(st, 6, local_id_get(&s->sites, r->site));
	sqlite3_bind_int64(st, 7, r->feeds);
	sqlite3_bind_int64(st, 8, r->fetches);
	sqlite3_bind_int64(st, 9, r->targets);
	sqlite3_bind_int(st, 10, (r->flags & AGP_SPAN_FAILED) == 0);
	if (writer_step(w, st) == 0) {
		w->totals.events++;
		w->totals.session_runs++;
	}
}

static void ring_damaged(struct run_writer *w, struct stream *s, uint32_t slot, const char *why)
{
	if (!s->ring_damaged[slot])
		writer_note(w, "process %d, thread ring %u: %s (its later events are missing)", s->pid, slot, why);
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
			   writer_callsite_id(w, local_id_get(&s->strings, r->file), r->line,
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
	while (*tail < head && !run_writer_stopping) {
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

/*
 * The writer does not keep up with the workload: a ring a quarter full at
 * two polls in a row, the second one (polled again at once) no emptier.
 * A burst fills a ring once and the next poll finds it nearly empty; a
 * rate over what rows cost to write grows the backlog poll after poll
 * until events are dropped.  Aggregates cost a third of a row, so the
 * writer switches to them ("rate") rather than losing events; not with
 * --max-events 0 (every event a row, or dropped and counted), nor at the
 * finish, when nothing more is written.
 */
static int falling_behind(const struct run_writer *w, uint32_t fill)
{
	const struct run_budget *b = &w->budget;

	return w->polling && !w->aggregating && (b->max_events || b->max_bytes) && w->fullest_before >= RING_BEHIND &&
	       fill >= w->fullest_before;
}

/*
 * An ended thread's slot, drained to its last record: its kernel totals
 * stored (and cleared), then FREE for the next thread; the count of free
 * slots goes up first, so that a claim never takes it below zero.  0, or
 * -1 when the file shrank.
 */
static int slot_free(struct run_writer *w, struct stream *s, uint32_t slot, int32_t tid, uint32_t word)
{
	_Atomic uint32_t *state = &s->shm->threads[slot].state;
	uint32_t used;
	int swapped;

	if (shm_copy(&used, &s->shm->threads[slot].ktotals_used, sizeof(used)) != 0 ||
	    read_slot_kernel_totals(w, s, slot, tid, used, 1) != 0 || shm_add32(&s->shm->free_slots, 1) != 0)
		return -1;
	swapped = shm_cas32(state, word, AGP_SLOT_WORD(word >> AGP_SLOT_BITS, AGP_SLOT_FREE));
	if (swapped < 0)
		return -1;
	if (!swapped)  /* not the collector's doing: the slot stays as the workload left it */
		return shm_add32(&s->shm->free_slots, UINT32_MAX);
	w->slots_freed++;
	return 0;
}

/*
 * Drain the ring of a LIVE or ENDED slot; an ENDED one drained to its
 * head is freed.  A new owner number is a new thread: its threads row,
 * role and capacity are its own; the tail runs on (the last owner was
 * drained to the head its successor starts from).
 */
static void drain_ring(struct run_writer *w, struct stream *s, uint32_t slot)
{
	struct agp_thread_ring *ring = &s->shm->threads[slot];
	const char *data = (const char *)s->shm + AGP_HEADER_BYTES + (size_t)slot * AGP_RING_BYTES;
	int32_t tid;
	uint64_t head, tail = s->tails[slot];
	uint32_t word, state, cap, meta[2], fill;

	if (s->ring_damaged[slot])
		return;
	/* acquire: what the owner set before LIVE, and every record it published before ENDED */
	if (SHM_LOAD(&ring->state, &word) != 0)
		goto fault;
	state = word & AGP_SLOT_MASK;
	if (state != AGP_SLOT_LIVE && state != AGP_SLOT_ENDED)
		return;
	if (word >> AGP_SLOT_BITS != s->claims[slot]) {
		s->claims[slot] = word >> AGP_SLOT_BITS;
		s->thread_seen[slot] = 0;
	}
	if (SHM_LOAD(&ring->tid, &tid) != 0)
		goto fault;
	if (!tid)
		return;
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
	fill = (uint32_t)((head - tail) * RING_FILL_ONE / cap);
	if (fill > w->fullest)
		w->fullest = fill;
	if (falling_behind(w, fill))
		start_aggregating(w, "rate");
	if (drain_records(w, s, tid, data, cap, head, &tail) != 0)
		goto fault;
	if (tail < head && !run_writer_stopping)
		ring_damaged(w, s, slot, "malformed record");
	s->tails[slot] = tail;
	/* A store into a shrunk file would be SIGBUS too: through the guarded copy. */
	if (shm_store64(&ring->tail, tail) != 0)
		goto fault;
	if (state == AGP_SLOT_ENDED && tail == head && slot_free(w, s, slot, tid, word) != 0)
		goto fault;
	return;
fault:
	stream_damaged(w, s, "its ring file shrank while it was read");
}

void writer_drain_stream(struct run_writer *w, struct stream *s)
{
	uint32_t n;

	/* Side first: the process row must exist before its threads and events. */
	run_side_drain(w, s);
	if (s->damaged)
		return;
	if (SHM_LOAD(&s->shm->nthreads, &n) != 0) {
		stream_damaged(w, s, "its ring file shrank while it was read");
		return;
	}
	if (n > AGP_MAX_THREADS)
		n = AGP_MAX_THREADS;
	for (uint32_t i = 0; i < n && !s->damaged && !run_writer_stopping; i++)
		drain_ring(w, s, i);
	/* the collector's threads wait for a freed slot only while a launcher polls (agp_protocol.h) */
	if (!s->damaged && shm_store64(&s->shm->launcher_poll_ns, w->last_poll_ns) != 0)
		stream_damaged(w, s, "its ring file shrank while it was read");
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
		writer_note(w, "out of memory for the capture windows");
}

void run_writer_capture(struct run_writer *w, int closed, uint64_t ns, const char *why, const char *desc)
{
	w->capture.used = 1;
	if (desc && !w->capture_desc)
		w->capture_desc = strdup(desc);
	w->capture.launcher_bits = closed ? AGP_CAPTURE_LAUNCHER : 0;
	if (capture_log_add(&w->capture, 0, ns, w->capture.launcher_bits, why) != 0)
		writer_note(w, "out of memory for the capture windows");
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
	if (w->aggregating)
		free_kernels_off(s);  /* a process started past the switch */
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

/*
 * New processes: the ring files of the session folder not seen before.
 * Past WRITER_MAX_STREAMS a new file is only counted (streams_refused):
 * a workload that forks thousands of processes costs the launcher neither
 * a mapping nor a stream (about 70 KiB) each, nor a name compare per scan.
 */
void writer_scan_streams(struct run_writer *w)
{
	DIR *d = opendir(w->shm_dir);
	struct dirent *de;
	size_t rings = 0;

	if (!d)
		return;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		char path[4096];
		int32_t pid;
		void *map;

		if (len < 6 || len >= sizeof(((struct stream *)0)->name) || strcmp(de->d_name + len - 5, ".ring"))
			continue;
		rings++;
		if (w->nstreams >= WRITER_MAX_STREAMS || stream_known(w, de->d_name))
			continue;
		snprintf(path, sizeof(path), "%s/%s", w->shm_dir, de->d_name);
		if ((map = map_ring_file(path, &pid)) && add_stream(w, de->d_name, path, map, pid) != 0)
			break;
	}
	closedir(d);
	if (w->nstreams >= WRITER_MAX_STREAMS && rings > w->nstreams && rings - w->nstreams > w->streams_refused)
		w->streams_refused = rings - w->nstreams;
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

void writer_count_aggregated(struct run_writer *w)
{
	w->totals.eager_aggregated = (uint64_t)w->buckets.stored;
	w->totals.calls_aggregated = (uint64_t)w->call_buckets.stored;
	w->totals.blackbox_aggregated = (uint64_t)w->bb_buckets.stored;
	w->totals.aggregate_why = w->aggregating ? w->aggregate_why : NULL;
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
	budget_tick(w, clock_ns(CLOCK_MONOTONIC));
	writer_flush_batches(w);
	writer_count_aggregated(w);
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

/*
 * The next pause (run_writer.h, run_writer_idle_us): the time the fullest
 * ring, at the rate it filled since the previous poll, takes to fill a
 * sixteenth of itself; at most twice the last pause, as a rate that just
 * started looks slower than it is.
 */
static void pace(struct run_writer *w, uint64_t now, uint64_t previous)
{
	uint64_t us;

	/* threads come and go: an ended one's slot is free only once drained, and 256 can be spent in 50 ms */
	if (w->slots_freed) {
		w->idle_us = RUN_WRITER_IDLE_US;
		return;
	}
	if (!w->fullest) {
		w->idle_us = RUN_WRITER_QUIET_US;
		return;
	}
	us = (now - previous) / 1000 * (RING_FILL_ONE / 16) / w->fullest;
	if (us > 2ull * w->idle_us)
		us = 2ull * w->idle_us;
	if (us > RUN_WRITER_IDLE_MAX_US)
		us = RUN_WRITER_IDLE_MAX_US;
	w->idle_us = w->fullest >= RING_FILL_ONE / 16 || us < RUN_WRITER_IDLE_US ? RUN_WRITER_IDLE_US : (unsigned)us;
}

int run_writer_poll(struct run_writer *w)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC), previous = w->last_poll_ns;

	w->fullest_before = w->fullest;
	w->fullest = 0;
	w->slots_freed = 0;
	w->last_poll_ns = now;
	if (db_write_failure(w->db))
		return -1;  /* sticky: the file keeps what was committed */
	if (now - w->last_scan_ns > 20000000ull || !w->nstreams) {
		writer_scan_streams(w);
		w->last_scan_ns = now;
	}
	w->polling = 1;
	for (size_t i = 0; i < w->nstreams; i++)
		writer_drain_stream(w, w->streams[i]);
	w->polling = 0;
	cpu_wait_tick(w, now, 0);
	if (now - w->last_commit_ns > 250000000ull) {
		commit(w);
		w->last_commit_ns = now;
	}
	pace(w, now, previous);
	return db_write_failure(w->db) ? -1 : 0;
}

unsigned run_writer_idle_us(const struct run_writer *w)
{
	return w->fullest >= RING_BEHIND ? 0 : w->idle_us;
}

const char *run_writer_error(struct run_writer *w)
{
	int rc = db_write_failure(w->db);

	return rc ? sqlite3_errstr(rc) : NULL;
}

