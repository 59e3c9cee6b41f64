/* test-timeline-db.c - analyzer/timeline/timeline.c on a small recording made here:
 * track order and roles, retraces, exact versus density rendering, long
 * events, stepping, search and details; CPU kernel lanes (schema 4). */
#include "db.h"
#include "recording.h"
#include "timeline.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];
static struct recording rec;
static struct timeline tl;

/*
 * pid 10: main thread 10 (python-main), executor 11 (tf-executor); a GPU
 * stream 7.  Times in ns from 1000000.  f (id 1) traced 3 times: trace 1 and
 * 2 by object 100 (2 is a retrace by object_trace_no), trace 3 by object 200
 * (a retrace: the function's second object); g (id 2) once.  100 eager ops
 * MatMul/Relu alternating, 1000 ns apart, 100 ns each; one call of 50000 ns;
 * a py_function on the executor; two kernels.  Three CPU kernels on the
 * executor: two of the call (graph nodes dense/BiasAdd and sort/TopKV2, the
 * second with its source line), one whose node id is in no graph_nodes row
 * (the file is untrusted).
 */
static const char fixture[] =
	"INSERT INTO meta VALUES ('start_ns', '1000000'), ('end_ns', '1200000');"
	"INSERT INTO processes (pid, start_ns, end_ns, argv)"
	"  VALUES (10, 1000000, 1200000, '[\"/usr/bin/python3\",\"train.py\",\"--lr\"]');"
	"INSERT INTO threads VALUES (10, 11, 'tf_inter', 'tf-executor'), (10, 10, 'python3', 'python-main');"
	"INSERT INTO strings VALUES (1, 'f'), (2, 'g'), (3, 'MatMul'), (4, 'Relu'), (5, '__inference_f_1'),"
	"  (6, 'EagerPyFunc'), (7, 'node_py'), (8, 'sgemm_kernel'), (9, 'train.py');"
	"INSERT INTO functions VALUES (1, 10, 1, 9, 3), (2, 10, 2, 9, 9);"
	"INSERT INTO traces (id, function_id, pid, tid, start_ns, end_ns, function_object, object_trace_no, signature)"
	"  VALUES (1, 1, 10, 10, 1000100, 1000900, 100, 1, 'x: (64, 20)'),"
	"         (2, 1, 10, 10, 1050000, 1050500, 100, 2, 'x: (8, 20)'),"
	"         (3, 1, 10, 10, 1150000, 1150300, 200, 1, 'x: (8, 20)'),"
	"         (4, 2, 10, 10, 1100000, 1100200, 300, 1, NULL);"
	"INSERT INTO trace_inputs VALUES (2, 0, 'x', 'tensor', 'float32', '[8,20]', NULL);"
	"INSERT INTO graph_functions (id, pid, name_id, role, trace_id, function_id, created_ns)"
	"  VALUES (1, 10, 5, 'inference', 1, 1, 1000900);"
	"INSERT INTO function_calls (pid, tid, start_ns, end_ns, graph_function_id, name_id)"
	"  VALUES (10, 10, 1001000, 1051000, 1, 5);"
	"WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 99)"
	"  INSERT INTO eager_ops (pid, tid, start_ns, end_ns, op_id) SELECT 10, 10, 1100000 + i * 1000,"
	"  1100000 + i * 1000 + 100, 3 + i % 2 FROM s;"
	"INSERT INTO blackbox_execs (pid, tid, start_ns, end_ns, node_id, op_type_id)"
	"  VALUES (10, 11, 1010000, 1020000, 7, 6);"
	"INSERT INTO gpu_activity (pid, kind, name_id, device, stream, start_ns, end_ns)"
	"  VALUES (10, 'kernel', 8, 0, 7, 1011000, 1012000), (10, 'kernel', 8, 0, 7, 1013000, 1014000);"
	"INSERT INTO graph_nodes VALUES (1, 10, 1, 'dense/BiasAdd', 'BiasAdd', NULL, NULL),"
	"  (2, 10, 1, 'sort/TopKV2', 'TopKV2', 'train.py', 43);"
	"INSERT INTO kernels (pid, tid, start_ns, end_ns, node_id, call_id)"
	"  VALUES (10, 11, 1002000, 1003000, 1, 1), (10, 11, 1003500, 1008000, 2, 1), (10, 11, 1060000, 1060100, 99, NULL);";

static void setup(void)
{
	sqlite3 *db;
	char err[256];

	snprintf(path, sizeof(path), "/tmp/agprof-test-timeline-%d.agprof", (int)getpid());
	unlink(path);
	cr_assert_eq(db_create_recording(path, &db, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(db_exec(db, fixture), 0);
	sqlite3_close(db);
	cr_assert_eq(recording_open(&rec, path), 0);
	/* 200 bins of 1000 ns: events over 16 us are kept as long slices */
	cr_assert_eq(timeline_open(&tl, &rec, 200), 0);
	cr_assert_eq(timeline_wait(&tl), 0);
}

static void teardown(void)
{
	timeline_release(&tl);
	recording_close(&rec);
	unlink(path);
	char wal[80];
	snprintf(wal, sizeof(wal), "%s-wal", path);
	unlink(wal);
	snprintf(wal, sizeof(wal), "%s-shm", path);
	unlink(wal);
}

TestSuite(timeline_db, .init = setup, .fini = teardown);

static size_t lane_of(enum tl_kind kind, int64_t tid)
{
	for (size_t i = 0; i < tl.nlanes; i++)
		if (tl.lanes[i].kind == kind && tl.tracks[tl.lanes[i].track].tid == tid)
			return i;
	cr_assert_fail("no lane %s on %lld", tl_kind_name(kind), (long long)tid);
	return 0;
}

Test(timeline_db, tracks_follow_roles_and_lanes_follow_kinds)
{
	cr_assert_eq(tl.ntracks, 3);
	cr_assert_str_eq(tl.tracks[0].role, "python-main");
	cr_assert_str_eq(tl.tracks[0].label, "main 10");
	cr_assert_str_eq(tl.tracks[0].name, "python3");
	cr_assert_str_eq(tl.tracks[0].command, "python3 train.py --lr", "argv without the program's directory");
	cr_assert_eq(tl.tracks[0].nlanes, 3);
	cr_assert_eq(tl.lanes[tl.tracks[0].lanes[0]].kind, TL_TRACE);
	cr_assert_eq(tl.lanes[tl.tracks[0].lanes[1]].kind, TL_CALL);
	cr_assert_eq(tl.lanes[tl.tracks[0].lanes[2]].kind, TL_EAGER);
	cr_assert_eq(tl.lanes[tl.tracks[0].lanes[2]].track, 0);
	cr_assert_eq(tl.lanes[tl.tracks[2].lanes[0]].track, 2);
	cr_assert_str_eq(tl.tracks[1].role, "tf-executor");
	cr_assert_str_eq(tl.tracks[2].role, "gpu-stream");
	cr_assert_str_eq(tl.tracks[2].label, "GPU0 s7");
	cr_assert_eq(tl_lane_events(&tl.lanes[lane_of(TL_EAGER, 10)]), 100);
	cr_assert_eq(tl.start_ns, 1000000);
	cr_assert_eq(tl.end_ns, 1200000);
}

Test(timeline_db, retraces_are_later_traces_of_an_object_or_a_function)
{
	cr_assert_eq(tl.nretraces, 2);
	cr_assert_eq(tl.retraces[0].slice.id, 2, "object 100's second trace");
	cr_assert_eq(tl.retraces[0].object_trace_no, 2);
	cr_assert_eq(tl.retraces[1].slice.id, 3, "f's first trace by another object");
	cr_assert_eq(tl.retraces[1].function_id, 1);
	cr_assert_str_eq(timeline_slice_name(&tl, &tl.retraces[1].slice), "f");
	cr_assert_eq(tl.retraces[1].slice.lane, lane_of(TL_TRACE, 10));
}

Test(timeline_db, dense_windows_merge_and_sparse_ones_are_exact)
{
	struct tl_render r = { 0 };
	struct tl_window all = { tl.start_ns, tl.end_ns, 20 };
	struct tl_window close = { 1100000, 1104000, 40 };
	size_t eager = lane_of(TL_EAGER, 10);
	uint32_t total = 0;

	/* at most 10 events per window: the 100 ops come from the bins */
	cr_assert_eq(timeline_lane_render(&tl, eager, &all, 10, &r), 0);
	cr_assert_not(r.exact);
	for (int c = 0; c < 20; c++) {
		if (c < 10)
			cr_assert_eq(r.cells[c].type, TL_CELL_EMPTY, "column %d", c);
		else
			cr_assert_eq(r.cells[c].type, TL_CELL_DENSITY, "column %d", c);
		total += r.cells[c].count;
	}
	cr_assert_eq(total, 100, "density keeps every event counted");
	cr_assert_eq(r.cells[10].shade, 1, "10%% busy");

	/* 4 us hold 4 ops: each its own slice, with its name */
	cr_assert_eq(timeline_lane_render(&tl, eager, &close, 10, &r), 0);
	cr_assert(r.exact);
	cr_assert_eq(r.nslices, 4);
	cr_assert_str_eq(timeline_slice_name(&tl, &r.slices[0]), "MatMul");
	cr_assert_str_eq(timeline_slice_name(&tl, &r.slices[1]), "Relu");
	cr_assert_eq(r.cells[0].type, TL_CELL_SLICE);
	cr_assert_eq(r.cells[2].type, TL_CELL_EMPTY);
	tl_render_release(&r);
}

Test(timeline_db, long_events_show_in_density_mode_too)
{
	struct tl_render r = { 0 };
	struct tl_window all = { tl.start_ns, tl.end_ns, 20 };
	size_t call = lane_of(TL_CALL, 10);

	cr_assert_eq(tl.lanes[call].nlongs, 1, "the 50 us call is longer than 16 bins");
	/* max_events 0 events allowed: forces density mode */
	cr_assert_eq(timeline_lane_render(&tl, call, &all, 0, &r), 0);
	cr_assert_eq(r.cells[0].type, TL_CELL_SLICE);
	cr_assert_eq(r.cells[5].type, TL_CELL_SLICE, "1001000..1051000 ends in column 5");
	cr_assert_eq(r.cells[6].type, TL_CELL_EMPTY);
	cr_assert_str_eq(timeline_slice_name(&tl, &r.slices[r.cells[0].slice]), "f",
			 "a call shows its user function's name");
	/* a window inside the call, starting after it began, still shows it */
	struct tl_window inside = { 1030000, 1031000, 10 };
	cr_assert_eq(timeline_lane_render(&tl, call, &inside, 100, &r), 0);
	cr_assert_eq(r.cells[0].type, TL_CELL_SLICE);
	cr_assert_eq(r.cells[9].type, TL_CELL_SLICE);
	tl_render_release(&r);
}

Test(timeline_db, stepping_walks_a_lane_in_time_order)
{
	struct tl_slice s;
	size_t eager = lane_of(TL_EAGER, 10);

	cr_assert_eq(timeline_lane_step(&tl, eager, 1100000, 1, 0, &s), 1);
	cr_assert_eq(s.start_ns, 1101000);
	cr_assert_eq(s.lane, eager);
	cr_assert_eq(timeline_lane_step(&tl, eager, 1101000, -1, 0, &s), 1);
	cr_assert_eq(s.start_ns, 1100000);
	cr_assert_eq(timeline_lane_step(&tl, eager, 1100000, -1, 0, &s), 0, "nothing before the first");
	cr_assert_eq(timeline_lane_step(&tl, eager, 1100050, 0, 0, &s), 1, "the op containing the time");
	cr_assert_eq(s.start_ns, 1100000);
	cr_assert_eq(timeline_lane_step(&tl, eager, 1100700, 0, 10, &s), 0, "nothing within 10 ns");
	cr_assert_eq(timeline_lane_step(&tl, eager, 1100700, 0, 600, &s), 1);
	cr_assert_eq(s.start_ns, 1101000, "the nearest within the slop");
	size_t trace = lane_of(TL_TRACE, 10);
	cr_assert_eq(timeline_lane_step(&tl, trace, 1040000, 1, 0, &s), 1);
	cr_assert_eq(s.id, 2);
	cr_assert(s.flags & TL_SLICE_RETRACE);
}

Test(timeline_db, search_matches_names_in_time_order)
{
	struct tl_slice *res;
	ptrdiff_t n;

	n = timeline_search(&tl, "matmul", TL_ALL_KINDS, 1000, &res);
	cr_assert_eq(n, 50);
	for (ptrdiff_t i = 1; i < n; i++)
		cr_assert_lt(res[i - 1].start_ns, res[i].start_ns);
	cr_assert_str_eq(timeline_slice_name(&tl, &res[0]), "MatMul");
	free(res);
	n = timeline_search(&tl, "f", 1u << TL_TRACE, 1000, &res);
	cr_assert_eq(n, 3, "traces match by function name");
	free(res);
	n = timeline_search(&tl, "MatMul", 1u << TL_TRACE, 1000, &res);
	cr_assert_eq(n, 0, "the kind filter applies");
	free(res);
	n = timeline_search(&tl, "relu", TL_ALL_KINDS, 5, &res);
	cr_assert_eq(n, 5, "at most max");
	free(res);
}

Test(timeline_db, details_of_a_retrace)
{
	struct tl_slice s;
	struct tl_detail *d;
	ptrdiff_t n;
	int sig = 0, no = 0, inputs = 0;

	cr_assert_eq(timeline_find(&tl, TL_TRACE, 2, &s), 1);
	n = timeline_details(&tl, &s, &d);
	cr_assert_gt(n, 4);
	cr_assert_str_eq(d[0].value, "tracing (retrace)");
	/* what a small pane shows first */
	cr_assert_str_eq(d[1].label, "name");
	cr_assert_str_eq(d[2].label, "trace #");
	cr_assert_str_eq(d[3].label, "duration", "no source line in this recording: duration comes next");
	for (ptrdiff_t i = 0; i < n; i++) {
		if (!strcmp(d[i].label, "signature"))
			sig = !strcmp(d[i].value, "x: (8, 20)");
		if (!strcmp(d[i].label, "trace #"))
			no = !strcmp(d[i].value, "2");
		if (!strcmp(d[i].label, "inputs"))
			inputs = !strcmp(d[i].value, "x: float32[8,20]");
		if (!strcmp(d[i].label, "thread"))
			cr_assert(strstr(d[i].value, "python-main"));
	}
	cr_assert(sig && no && inputs);
	tl_details_free(d, (size_t)n);
}

/* The value of the detail labelled label, or NULL. */
static const char *detail_value(const struct tl_detail *d, ptrdiff_t n, const char *label)
{
	for (ptrdiff_t i = 0; i < n; i++)
		if (!strcmp(d[i].label, label))
			return d[i].value;
	return NULL;
}

Test(timeline_db, cpu_kernels_have_a_lane_on_their_thread_named_by_node)
{
	struct tl_render r = { 0 };
	struct tl_window call = { 1001000, 1011000, 40 };
	size_t k = lane_of(TL_CPUK, 11);
	const struct tl_track *t = &tl.tracks[tl.lanes[k].track];

	cr_assert_str_eq(t->role, "tf-executor");
	cr_assert_eq(t->nlanes, 2);
	cr_assert_eq(tl.lanes[t->lanes[0]].kind, TL_BLACKBOX);
	cr_assert_eq(tl.lanes[t->lanes[1]].kind, TL_CPUK, "the kernel lane comes after the thread's other lanes");
	cr_assert_eq(tl_lane_events(&tl.lanes[k]), 3);
	cr_assert_eq(timeline_lane_render(&tl, k, &call, 100, &r), 0);
	cr_assert(r.exact);
	cr_assert_eq(r.nslices, 2, "the two kernels of the call");
	cr_assert_str_eq(timeline_slice_name(&tl, &r.slices[0]), "dense/BiasAdd");
	cr_assert_str_eq(timeline_slice_name(&tl, &r.slices[1]), "sort/TopKV2");
	cr_assert_eq(r.cells[4].type, TL_CELL_SLICE, "1002000..1003000 covers columns 4 to 7");
	cr_assert_eq(r.cells[8].type, TL_CELL_EMPTY);
	tl_render_release(&r);
	struct tl_slice s;
	cr_assert_eq(timeline_lane_step(&tl, k, 1008000, 1, 0, &s), 1);
	cr_assert_str_eq(timeline_slice_name(&tl, &s), "cpu kernel", "a node id that no row has: the kind's name");
}

Test(timeline_db, details_of_a_cpu_kernel_give_op_type_source_and_call)
{
	struct tl_slice s;
	struct tl_detail *d;
	ptrdiff_t n;

	cr_assert_eq(timeline_lane_step(&tl, lane_of(TL_CPUK, 11), 1005000, 0, 0, &s), 1);
	n = timeline_details(&tl, &s, &d);
	cr_assert_gt(n, 5);
	cr_assert_str_eq(detail_value(d, n, "kind"), "cpu kernel");
	cr_assert_str_eq(detail_value(d, n, "name"), "sort/TopKV2", "the op's name");
	cr_assert_str_eq(detail_value(d, n, "op type"), "TopKV2");
	cr_assert_str_eq(detail_value(d, n, "source"), "train.py:43");
	cr_assert_str_eq(detail_value(d, n, "duration"), "4.50 us");
	cr_assert_str_eq(detail_value(d, n, "graph function"), "__inference_f_1");
	cr_assert_str_eq(detail_value(d, n, "function"), "f");
	cr_assert_str_eq(detail_value(d, n, "call"), "#1 __inference_f_1");
	cr_assert_null(detail_value(d, n, "compute"), "not an async kernel");
	tl_details_free(d, (size_t)n);
	/* the kernel outside any call, of no known node */
	cr_assert_eq(timeline_find(&tl, TL_CPUK, 3, &s), 1);
	n = timeline_details(&tl, &s, &d);
	cr_assert_gt(n, 0);
	cr_assert_str_eq(detail_value(d, n, "call"), "none (eager, Session.run or unknown)");
	cr_assert_str_eq(detail_value(d, n, "name"), "cpu kernel");
	cr_assert_null(detail_value(d, n, "op type"));
	tl_details_free(d, (size_t)n);
}

Test(timeline_db, search_finds_cpu_kernels_by_op_name_and_type)
{
	struct tl_slice *res;
	ptrdiff_t n;

	n = timeline_search(&tl, "topk", TL_ALL_KINDS, 1000, &res);
	cr_assert_eq(n, 1);
	cr_assert_eq(res[0].kind, TL_CPUK);
	cr_assert_eq(res[0].lane, lane_of(TL_CPUK, 11));
	free(res);
	n = timeline_search(&tl, "biasadd", 1u << TL_CPUK, 1000, &res);
	cr_assert_eq(n, 1, "name and type both match: one kernel");
	free(res);
	n = timeline_search(&tl, "dense/", 1u << TL_CPUK, 1000, &res);
	cr_assert_eq(n, 1, "by node name");
	free(res);
	n = timeline_search(&tl, "topk", 1u << TL_EAGER, 1000, &res);
	cr_assert_eq(n, 0, "the kind filter applies");
	free(res);
}

/* A recording from before schema 4 has no kernels nor graph_nodes tables. */
Test(timeline_db, a_recording_without_kernels_has_no_kernel_lanes)
{
	char old[80];
	sqlite3 *db;
	char err[256];
	struct recording r2;
	struct timeline t2;
	struct tl_slice *res, s;

	snprintf(old, sizeof(old), "%s-old.agprof", path);
	unlink(old);
	cr_assert_eq(db_create_recording(old, &db, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(db_exec(db, fixture), 0);
	cr_assert_eq(db_exec(db, "DROP TABLE kernels; DROP TABLE graph_nodes;"), 0);
	sqlite3_close(db);
	cr_assert_eq(recording_open(&r2, old), 0);
	cr_assert_eq(timeline_open(&t2, &r2, 200), 0);
	cr_assert_eq(timeline_wait(&t2), 0);
	for (size_t i = 0; i < t2.nlanes; i++)
		cr_assert_neq(t2.lanes[i].kind, TL_CPUK);
	cr_assert_eq(t2.ntracks, 3);
	cr_assert_eq(timeline_search(&t2, "topk", TL_ALL_KINDS, 1000, &res), 0);
	free(res);
	cr_assert_eq(timeline_find(&t2, TL_CPUK, 1, &s), 0);
	timeline_release(&t2);
	recording_close(&r2);
	unlink(old);
	snprintf(err, sizeof(err), "%s-wal", old);
	unlink(err);
	snprintf(err, sizeof(err), "%s-shm", old);
	unlink(err);
}

/*
 * Schema 5: eager ops past the recording's budget are eager_op_buckets
 * rows.  10 ops kept one by one on thread 10 from 1000000, 1000 ns apart,
 * then 300 + 200 ops in two buckets over 1100000-1200000.
 */
static const char bucket_fixture[] =
	"INSERT INTO meta VALUES ('start_ns', '1000000'), ('end_ns', '1200000');"
	"INSERT INTO processes (pid, start_ns, end_ns) VALUES (10, 1000000, 1200000);"
	"INSERT INTO threads VALUES (10, 10, 'python3', 'python-main');"
	"INSERT INTO strings VALUES (3, 'MatMul');"
	"WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < 9)"
	"  INSERT INTO eager_ops (pid, tid, start_ns, end_ns, op_id) SELECT 10, 10, 1000000 + i * 1000,"
	"  1000000 + i * 1000 + 100, 3 FROM s;"
	"INSERT INTO eager_op_buckets (pid, tid, start_ns, end_ns, op_id, count, total_ns)"
	"  VALUES (10, 10, 1100000, 1150000, 3, 300, 20000), (10, 10, 1150000, 1200000, 3, 200, 10000);"
	/* schema 7: 2 graph calls kept, then 40 + 60 aggregated; 70 black-box runs aggregated only */
	"INSERT INTO strings VALUES (4, '__inference_step_5'), (5, 'EagerPyFunc');"
	"INSERT INTO function_calls (pid, tid, start_ns, end_ns, name_id) VALUES (10, 10, 1000000, 1000500, 4),"
	"  (10, 10, 1002000, 1002500, 4);"
	"INSERT INTO function_call_buckets (pid, tid, start_ns, end_ns, name_id, count, total_ns)"
	"  VALUES (10, 10, 1100000, 1150000, 4, 40, 20000), (10, 10, 1150000, 1200000, 4, 60, 30000);"
	"INSERT INTO blackbox_buckets (pid, tid, start_ns, end_ns, node_id, op_type_id, count, total_ns)"
	"  VALUES (10, 10, 1100000, 1200000, 5, 5, 70, 7000);";

static void bucket_setup(void)
{
	sqlite3 *db;
	char err[256];

	snprintf(path, sizeof(path), "/tmp/agprof-test-timeline-%d.agprof", (int)getpid());
	unlink(path);
	cr_assert_eq(db_create_recording(path, &db, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(db_exec(db, bucket_fixture), 0);
	sqlite3_close(db);
	cr_assert_eq(recording_open(&rec, path), 0);
	cr_assert_eq(timeline_open(&tl, &rec, 200), 0);
	cr_assert_eq(timeline_wait(&tl), 0);
}

TestSuite(timeline_buckets, .init = bucket_setup, .fini = teardown);

Test(timeline_buckets, aggregated_ops_count_in_the_lane_and_draw_as_density)
{
	struct tl_render r = { 0 };
	struct tl_window all = { tl.start_ns, tl.end_ns, 20 };
	struct tl_window inside = { 1120000, 1121000, 10 };
	struct tl_window rows = { 1000000, 1010000, 20 };
	size_t eager = lane_of(TL_EAGER, 10);
	uint32_t total = 0;

	cr_assert_eq(tl_lane_events(&tl.lanes[eager]), 510, "rows and the buckets' counts");
	/* however many events a window may show one by one, the aggregated span has none */
	cr_assert_eq(timeline_lane_render(&tl, eager, &all, 100000, &r), 0);
	cr_assert_not(r.exact);
	for (int c = 0; c < 20; c++)
		total += r.cells[c].count;
	cr_assert_eq(total, 510, "every op counted once");
	cr_assert_eq(r.cells[0].type, TL_CELL_DENSITY);
	cr_assert_eq(r.cells[15].type, TL_CELL_DENSITY, "the buckets' time");
	cr_assert_eq(r.cells[5].type, TL_CELL_EMPTY, "between the rows and the buckets");

	cr_assert_eq(timeline_lane_render(&tl, eager, &inside, 100000, &r), 0);
	cr_assert_not(r.exact);
	cr_assert_eq(r.cells[3].type, TL_CELL_DENSITY, "zoomed into a bucket: still its density");

	cr_assert_eq(timeline_lane_render(&tl, eager, &rows, 100, &r), 0);
	cr_assert(r.exact, "before the switch: the rows one by one");
	cr_assert_eq(r.nslices, 10);
	tl_render_release(&r);
}

/* Schema 7: graph calls and black-box runs past the budget count in their lanes and draw as density. */
Test(timeline_buckets, aggregated_calls_and_blackboxes_count_in_their_lanes)
{
	struct tl_render r = { 0 };
	struct tl_window all = { tl.start_ns, tl.end_ns, 20 };
	size_t call = lane_of(TL_CALL, 10), bb = lane_of(TL_BLACKBOX, 10);
	uint32_t total = 0;

	cr_assert_eq(tl_lane_events(&tl.lanes[call]), 102, "2 rows and the buckets' 100 calls");
	cr_assert_eq(tl_lane_events(&tl.lanes[bb]), 70, "the black-box buckets' runs");
	cr_assert_eq(timeline_lane_render(&tl, call, &all, 100000, &r), 0);
	for (int c = 0; c < 20; c++)
		total += r.cells[c].count;
	cr_assert_eq(total, 102, "every call counted once");
	cr_assert_eq(r.cells[15].type, TL_CELL_DENSITY, "the buckets' time");
	tl_render_release(&r);
}

/*
 * Schema 6: the eager ops as the writer stores them (eager_op_rows, no
 * index; eager_op_keys; eager_op_blocks shared by the threads of one
 * close).  Two threads dispatch in runs of 1 to 7 ops; within a thread the
 * starts jitter backwards by up to 300 ns (rows are in drain order, not
 * strictly in time order).  The lane's window reads and steps go through
 * the blocks (timeline.c): they must find what a scan of every row finds.
 */
#define BLK_OPS 3000
#define BLK_IDS 256
static int64_t blk_start[BLK_OPS], blk_tid[BLK_OPS];

static void blocks_fixture(sqlite3 *db, const char *extra)
{
	sqlite3_stmt *row, *blk;
	uint32_t seed = 12345;
	int64_t t = 1000000, bmin[2] = { INT64_MAX, INT64_MAX }, bmax[2] = { INT64_MIN, INT64_MIN }, first = 1;
	int tid = 10, run = 0;

	cr_assert_eq(db_exec(db, "INSERT INTO meta VALUES ('start_ns', '1000000'), ('end_ns', '2000000');"
				 "INSERT INTO processes (pid, start_ns, end_ns) VALUES (10, 1000000, 2000000);"
				 "INSERT INTO threads VALUES (10, 10, 'python3', 'python-main'), (10, 11, 'w', 'other');"
				 "INSERT INTO strings VALUES (3, 'MatMul');"
				 "INSERT INTO eager_op_keys VALUES (1, 10, 10, 3, NULL, NULL, 900000),"
				 "  (2, 10, 11, 3, NULL, NULL, 900000);"),
		     0);
	cr_assert_eq(sqlite3_prepare_v2(db, "INSERT INTO eager_op_rows (id, key, start, dur) VALUES (?, ?, ?, 50)", -1,
					&row, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, "INSERT INTO eager_op_blocks (pid, tid, first_id, last_id, min_start_ns,"
					" max_start_ns) VALUES (10, ?, ?, ?, ?, ?)", -1, &blk, NULL), SQLITE_OK);
	for (int i = 0; i < BLK_OPS; i++) {
		if (run-- <= 0) {
			seed = seed * 1103515245 + 12345;
			run = (int)(seed >> 16) % 7;
			tid = tid == 10 ? 11 : 10;
		}
		seed = seed * 1103515245 + 12345;
		t += 200;
		blk_start[i] = t - (int64_t)((seed >> 16) % 300);
		blk_tid[i] = tid;
		sqlite3_bind_int64(row, 1, i + 1);
		sqlite3_bind_int64(row, 2, tid - 9);
		sqlite3_bind_int64(row, 3, blk_start[i] - 900000);
		cr_assert_eq(sqlite3_step(row), SQLITE_DONE);
		sqlite3_reset(row);
		bmin[tid - 10] = blk_start[i] < bmin[tid - 10] ? blk_start[i] : bmin[tid - 10];
		bmax[tid - 10] = blk_start[i] > bmax[tid - 10] ? blk_start[i] : bmax[tid - 10];
		if ((i + 1) % BLK_IDS && i + 1 < BLK_OPS)
			continue;
		for (int k = 0; k < 2; k++) {
			if (bmin[k] == INT64_MAX)
				continue;
			sqlite3_bind_int64(blk, 1, 10 + k);
			sqlite3_bind_int64(blk, 2, first);
			sqlite3_bind_int64(blk, 3, i + 1);
			sqlite3_bind_int64(blk, 4, bmin[k]);
			sqlite3_bind_int64(blk, 5, bmax[k]);
			cr_assert_eq(sqlite3_step(blk), SQLITE_DONE);
			sqlite3_reset(blk);
			bmin[k] = INT64_MAX, bmax[k] = INT64_MIN;
		}
		first = i + 2;
	}
	sqlite3_finalize(row);
	sqlite3_finalize(blk);
	if (extra)
		cr_assert_eq(db_exec(db, extra), 0);
}

static void blocks_open(const char *extra)
{
	sqlite3 *db;
	char err[256];

	snprintf(path, sizeof(path), "/tmp/agprof-test-timeline-%d.agprof", (int)getpid());
	unlink(path);
	cr_assert_eq(db_create_recording(path, &db, err, sizeof(err)), 0, "%s", err);
	blocks_fixture(db, extra);
	sqlite3_close(db);
	cr_assert_eq(recording_open(&rec, path), 0);
	cr_assert_eq(timeline_open(&tl, &rec, 200), 0);
	cr_assert_eq(timeline_wait(&tl), 0);
}

static void blocks_setup(void)
{
	blocks_open(NULL);
}

/* The nearest start on thread tid strictly before (dir < 0) or after t, by a scan of every op; -1 none. */
static int64_t brute_step(int64_t tid, int64_t t, int dir)
{
	int64_t best = -1;

	for (int i = 0; i < BLK_OPS; i++)
		if (blk_tid[i] == tid && (dir < 0 ? blk_start[i] < t : blk_start[i] > t) &&
		    (best < 0 || (dir < 0 ? blk_start[i] > best : blk_start[i] < best)))
			best = blk_start[i];
	return best;
}

static void check_steps_and_windows(void)
{
	for (int64_t tid = 10; tid <= 11; tid++) {
		size_t lane = lane_of(TL_EAGER, tid);
		struct tl_slice s;

		size_t ops = 0;

		for (int i = 0; i < BLK_OPS; i++)
			ops += blk_tid[i] == tid;
		cr_assert_eq(tl_lane_events(&tl.lanes[lane]), ops, "ops of thread %lld", (long long)tid);
		for (int64_t t = 999000; t < 1602000; t += 997)
			for (int dir = -1; dir <= 1; dir += 2) {
				int64_t want = brute_step(tid, t, dir);
				int found = timeline_lane_step(&tl, lane, t, dir, 0, &s);

				cr_assert_eq(found, want >= 0, "step %d from %lld on %lld", dir, (long long)t, (long long)tid);
				if (found)
					cr_assert_eq(s.start_ns, want, "step %d from %lld on %lld", dir, (long long)t,
						     (long long)tid);
			}
		for (int64_t t0 = 1000000; t0 < 1600000; t0 += 37000) {
			struct tl_window w = { t0, t0 + 3000, 10 };
			struct tl_render r = { 0 };
			size_t want = 0;

			for (int i = 0; i < BLK_OPS; i++)
				want += blk_tid[i] == tid && blk_start[i] < t0 + 3000 && blk_start[i] + 50 > t0;
			cr_assert_eq(timeline_lane_render(&tl, lane, &w, 1000, &r), 0);
			cr_assert(r.exact);
			cr_assert_eq(r.nslices, want, "ops in [%lld, +3000) on %lld", (long long)t0, (long long)tid);
			tl_render_release(&r);
		}
	}
}

TestSuite(timeline_blocks, .init = blocks_setup, .fini = teardown);

Test(timeline_blocks, lane_windows_and_steps_through_blocks_find_what_a_full_scan_finds)
{
	check_steps_and_windows();
}

static void hostile_setup(void)
{
	/* a block claiming every id, one with its bounds reversed, a negative duration: bounded, still exact */
	blocks_open("INSERT INTO eager_op_blocks (pid, tid, first_id, last_id, min_start_ns, max_start_ns)"
		    "  VALUES (10, 10, -9223372036854775808, 9223372036854775807, 1300000, 1300001),"
		    "         (10, 11, 5, 3, 1400000, 1200000);"
		    "UPDATE eager_op_rows SET dur = -1000000 WHERE id = 7;");
}

TestSuite(timeline_hostile_blocks, .init = hostile_setup, .fini = teardown);

Test(timeline_hostile_blocks, hostile_blocks_cost_time_not_results)
{
	check_steps_and_windows();
}
