/*
 * test-live.c - the live view of agprof top (analyzer/model/live.c) on a
 * recording written here: its window, read through eager_op_blocks' id
 * ranges and the start_ns indexes, against a plain scan of every row
 * (the eager_ops view, function_calls) for windows moving forward and
 * back; user lines through library frames; the newest retrace; the end.
 * (tests/tui/test_top.py checks agprof top on real TensorFlow runs.)
 */
#include "db.h"
#include "live.h"
#include "recording.h"

#include "recording_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MS 1000000LL
#define RUN_MS 20000

static char path[64];

/*
 * pid 1, 20 s: thread 10 dispatches AddV2 every ms (line 10 of train.py,
 * or every third one through lib.py:5 called from line 20), reads an
 * iterator every 10 ms (line 10) and calls step every 5 ms (line 20);
 * thread 11 dispatches AddV2 every 3 ms with no Python frame.  step is
 * traced at 2 s and again at 7 s (x: [2] -> [3]).
 */
static const char base_sql[] =
	"INSERT INTO meta VALUES ('start_ns', '0'), ('tf_status', 'hooked');"
	"INSERT INTO processes(pid, start_ns, python_version, tf_status) VALUES (1, 0, '3.11', 'hooked');"
	"INSERT INTO threads VALUES (1, 10, 'python', 'python-main'), (1, 11, 'worker', 'other');"
	"INSERT INTO strings(id, text) VALUES (1, 'IteratorGetNext'), (2, '/src/train.py'), (3, 'main'),"
	" (4, 'AddV2'), (5, 'step'), (6, '/usr/lib/python3/site-packages/lib.py'), (7, 'helper'),"
	" (8, '__inference_step_1');"
	"INSERT INTO callsites(id, file_id, line, func_id, parent_id, library) VALUES (1, 2, 10, 3, NULL, 0),"
	" (2, 2, 20, 3, NULL, 0), (3, 6, 5, 7, 2, 1);"
	"INSERT INTO functions(id, pid, name_id, file_id, line) VALUES (1, 1, 5, 2, 3);"
	"INSERT INTO traces(id, function_id, pid, tid, start_ns, end_ns, function_object, object_trace_no, callsite_id)"
	" VALUES (1, 1, 1, 10, 2000000000, 2010000000, 77, 1, 2), (2, 1, 1, 10, 7000000000, 7010000000, 77, 2, 2);"
	"INSERT INTO trace_inputs(trace_id, position, name, kind, dtype, shape) VALUES"
	" (1, 0, 'x', 'tensor', 'float32', '[2]'), (2, 0, 'x', 'tensor', 'float32', '[3]');";

static void write_events(sqlite3 *db)
{
	sqlite3_stmt *op = db_prepare(db, "INSERT INTO eager_ops(pid, tid, start_ns, end_ns, op_id, callsite_id)"
					  " VALUES (1, ?1, ?2, ?2 + ?3, ?4, ?5)");
	sqlite3_stmt *call = db_prepare(db, "INSERT INTO function_calls(pid, tid, start_ns, end_ns, name_id,"
					    " callsite_id) VALUES (1, 10, ?1, ?1 + 2000000, 8, 2)");

	cr_assert(op && call);
	cr_assert_eq(db_exec(db, "BEGIN"), 0);
	for (int64_t ms = 0; ms < RUN_MS; ms++) {
		int64_t t = ms * MS;

		sqlite3_bind_int(op, 1, 10);
		sqlite3_bind_int64(op, 2, t + 100000);
		sqlite3_bind_int64(op, 3, 20000);
		sqlite3_bind_int(op, 4, 4);
		sqlite3_bind_int(op, 5, ms % 3 ? 1 : 3);
		cr_assert_eq(db_step_done(db, op), 0);
		if (ms % 3 == 0) {
			sqlite3_bind_int(op, 1, 11);
			sqlite3_bind_int64(op, 3, 5000);
			sqlite3_bind_null(op, 5);
			cr_assert_eq(db_step_done(db, op), 0);
		}
		if (ms % 10 == 0) {
			sqlite3_bind_int(op, 1, 10);
			sqlite3_bind_int64(op, 2, t + 300000);
			sqlite3_bind_int64(op, 3, 400000);
			sqlite3_bind_int(op, 4, 1);
			sqlite3_bind_int(op, 5, 1);
			cr_assert_eq(db_step_done(db, op), 0);
		}
		if (ms % 5 == 0) {
			sqlite3_bind_int64(call, 1, t + 500000);
			cr_assert_eq(db_step_done(db, call), 0);
		}
	}
	cr_assert_eq(db_exec(db, "COMMIT"), 0);
	sqlite3_finalize(op);
	sqlite3_finalize(call);
}

static void make_recording(void)
{
	sqlite3 *db;

	db = fixture_recording(path, sizeof(path), "live");
	cr_assert_eq(db_exec(db, base_sql), 0);
	write_events(db);
	sqlite3_close(db);
}

static void remove_recording(void)
{
	db_remove(path);
}

TestSuite(live, .init = make_recording, .fini = remove_recording);

/* One count of the oracle: a scan of every row, nothing of live.c's paths. */
static int64_t scan(struct recording *rec, const char *sql, int64_t from, int64_t to)
{
	sqlite3_stmt *s = db_prepare(rec->db, sql);
	int64_t v;

	cr_assert(s);
	sqlite3_bind_int64(s, 1, from);
	sqlite3_bind_int64(s, 2, to);
	cr_assert_eq(sqlite3_step(s), SQLITE_ROW);
	v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

static const struct live_line *line_of(const struct live *lv, int line)
{
	for (size_t i = 0; i < lv->win.nlines; i++)
		if (lv->win.lines[i].loc.line == line && lv->win.lines[i].loc.file)
			return &lv->win.lines[i];
	return NULL;
}

/* The window of lv against the scan, every count. */
static void check_window(struct recording *rec, const struct live *lv)
{
	int64_t a = lv->win.from_ns, b = lv->win.to_ns;
	const struct live_line *l20 = line_of(lv, 20);

	cr_assert_eq(b - a, 1000 * MS);
	cr_expect_eq(lv->win.eager_ops, scan(rec, "SELECT count(*) FROM eager_ops WHERE op_id = 4 AND start_ns >= ?1"
						   " AND start_ns < ?2", a, b), "eager ops in [%lld, %lld)", (long long)a,
		     (long long)b);
	cr_expect_eq(lv->win.eager_ns, scan(rec, "SELECT sum(end_ns - start_ns) FROM eager_ops WHERE op_id = 4"
						  " AND start_ns >= ?1 AND start_ns < ?2", a, b));
	cr_expect_eq(lv->win.input_waits, scan(rec, "SELECT count(*) FROM eager_ops WHERE op_id = 1"
						     " AND start_ns >= ?1 AND start_ns < ?2", a, b));
	cr_expect_eq(lv->win.calls, scan(rec, "SELECT count(*) FROM function_calls WHERE start_ns >= ?1"
					       " AND start_ns < ?2", a, b));
	/* line 20: its graph calls and, through lib.py's frame, a third of thread 10's AddV2 */
	cr_assert(l20);
	cr_expect_eq(l20->calls, lv->win.calls);
	cr_expect_eq(l20->eager_ops, scan(rec, "SELECT count(*) FROM eager_ops WHERE callsite_id = 3"
					      " AND start_ns >= ?1 AND start_ns < ?2", a, b));
	cr_expect_str_eq(l20->loc.lib_file, "/usr/lib/python3/site-packages/lib.py");
	cr_expect_str_eq(l20->top_op, "AddV2");
	cr_expect(lv->win.nlines == 3, "lines 10, 20 and no frame, got %zu", lv->win.nlines);
}

Test(live, window_forward_and_back_matches_a_scan)
{
	struct recording rec;
	struct live lv;
	/* forward a second at a time (the blocks' mark moves), then back to the start (it resets) */
	static const int64_t ends_ms[] = { 1500, 2500, 3500, 7400, 8400, 12345, 19999, 20000, 1200, 9000 };

	cr_assert_eq(recording_open(&rec, path), 0);
	cr_assert_eq(live_init(&lv, &rec, 0), 0);
	for (size_t i = 0; i < sizeof(ends_ms) / sizeof(ends_ms[0]); i++) {
		/* live_refresh ends the window 300 ms before the clock: the launcher's commit lag */
		cr_assert_eq(live_refresh(&lv, ends_ms[i] * MS + 300 * MS), 0);
		cr_assert_eq(lv.win.to_ns, ends_ms[i] * MS);
		check_window(&rec, &lv);
		cr_expect_eq(lv.ended, 0);
		cr_expect_eq(lv.win.traces, ends_ms[i] == 2500 || ends_ms[i] == 7400);
	}
	live_release(&lv);
	recording_close(&rec);
}

Test(live, newest_retrace_and_the_end)
{
	struct recording rec;
	struct live lv;
	sqlite3 *db;

	cr_assert_eq(recording_open(&rec, path), 0);
	cr_assert_eq(live_init(&lv, &rec, 0), 0);
	cr_assert_eq(live_refresh(&lv, 5000 * MS), 0);
	cr_assert_eq(lv.m.nfunctions, 1);
	cr_expect_eq(lv.m.functions[0].ntraces, 2);
	cr_assert(lv.last_retrace && lv.last_fn);
	cr_expect_eq(lv.last_retrace->start_ns, 7000 * MS);
	cr_expect_eq(lv.last_retrace->why.cause, CAUSE_SHAPE);
	cr_expect_str_eq(lv.last_fn->name, "step");
	/* the launcher writes the end: the window is the last second of activity */
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(db_exec(db, "INSERT INTO meta VALUES ('end_ns', '25000000000')"), 0);
	sqlite3_close(db);
	cr_assert_eq(live_refresh(&lv, 0), 0);
	cr_expect_eq(lv.ended, 1);
	cr_expect_eq(lv.win.to_ns, (RUN_MS - 1) * MS + 100000 + 1, "after the last op's start");
	check_window(&rec, &lv);
	live_release(&lv);
	recording_close(&rec);
}
