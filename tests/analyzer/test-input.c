/*
 * test-input.c - threads, input waits and tf.data pipelines on small
 * recordings written here: the split of eager ops into dispatch, iterator
 * reads and ops inside black boxes; per-thread shares; black-box runs per
 * node; the input source's pipeline and advice; ids that point nowhere.
 * (tests/analyzer/test_input.py checks the same on real TensorFlow runs.)
 */
#include "db.h"
#include "model.h"
#include "recording.h"
#include "rules.h"

#include "recording_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char path[64];
static struct recording rec;
static struct model m;

/*
 * pid 1: thread 10 is the Python main thread, 11 a tf.data thread.
 * Strings: ops, files, functions.  The pipeline: TensorSliceDataset (line
 * 5), MapDataset of augment (line 6), BatchDatasetV2 (line 6), then 4
 * IteratorGetNext reads at line 9, 30 ms each, in a loop of 150 ms.
 * The tf.data thread runs the map's PyFunc twice (0..1000, 2000..3000 us)
 * with 3 eager ops inside (no Python frame), and 1 eager op outside.
 * Main also dispatches 2 AddV2 at line 12.
 */
static const char base_sql[] =
	"INSERT INTO meta VALUES ('start_ns', '0'), ('end_ns', '300000000'), ('tf_status', 'hooked');"
	"INSERT INTO processes(pid, start_ns, end_ns, python_version, tf_status) VALUES (1, 0, 300000000, '3.11', 'hooked');"
	"INSERT INTO threads VALUES (1, 10, 'python', 'python-main'), (1, 11, 'tf_data_private', 'tf-data');"
	"INSERT INTO strings(id, text) VALUES (1, 'IteratorGetNext'), (2, '/src/train.py'), (3, 'main'),"
	" (4, 'AddV2'), (5, 'TensorSliceDataset'), (6, '%s'), (7, 'BatchDatasetV2'), (8, 'make'),"
	" (9, '__inference_Dataset_map_augment_15'), (10, 'PyFunc'), (11, '_EagerConst'),"
	" (12, '__inference_Dataset_map_other_16'), (13, 'pyfunc_0'), (14, 'pyfunc_1'), (15, '%s'),"
	" (16, '__inference_train_function_40');"
	/* A FunctionDef "f" with one node "it" of op IteratorGetNext, called twice. */
	"INSERT INTO graph_functions(id, pid, name_id, role, created_ns, function_def) VALUES (3, 1, 16, 'inference',"
	" 100, X'0a030a01661a150a026974120f4974657261746f724765744e657874');"
	"INSERT INTO function_calls(pid, tid, start_ns, end_ns, graph_function_id, name_id) VALUES"
	" (1, 10, 260000000, 270000000, 3, 16), (1, 10, 270000000, 280000000, 3, 16);"
	"INSERT INTO callsites(id, file_id, line, func_id) VALUES (1, 2, 5, 8), (2, 2, 6, 8), (3, 2, 9, 3),"
	" (4, 2, 12, 3);"
	/* map(other)'s function is made after the pipeline of line 5-6 (tf.data ties a black box to the
	 * dataset built right after its function): the two black boxes are two datasets' */
	"INSERT INTO graph_functions(id, pid, name_id, role, created_ns) VALUES (1, 1, 9, 'inference', 100),"
	" (2, 1, 12, 'inference', 900);"
	"INSERT INTO blackbox_nodes(id, graph_function_id, node_name, op_type, token) VALUES"
	" (1, 1, 'PyFunc', 'PyFunc', 'pyfunc_0'), (2, 2, 'PyFunc', 'PyFunc', 'pyfunc_1');"
	"INSERT INTO eager_ops(pid, tid, start_ns, end_ns, op_id, callsite_id) VALUES"
	" (1, 10, 200, 300, 5, 1), (1, 10, 400, 500, 6, 2), (1, 10, 600, 700, 7, 2),"
	" (1, 10, 100000000, 130000000, 1, 3), (1, 10, 140000000, 170000000, 1, 3),"
	" (1, 10, 180000000, 210000000, 1, 3), (1, 10, 220000000, 250000000, 1, 3),"
	" (1, 10, 3000000, 3000100, 4, 4), (1, 10, 3000200, 3000300, 4, 99),"
	" (1, 11, 100000, 110000, 11, NULL), (1, 11, 200000, 210000, 4, NULL), (1, 11, 2100000, 2110000, 11, NULL),"
	" (1, 11, 5000000, 5010000, 11, NULL), (1, 11, 5100000, 5110000, 777, NULL);"
	"INSERT INTO blackbox_execs(pid, tid, start_ns, end_ns, node_id, op_type_id, token, blackbox_node_id) VALUES"
	" (1, 11, 0, 1000000, 10, 10, 'pyfunc_0', 1), (1, 11, 2000000, 3000000, 10, 10, 'pyfunc_0', 1),"
	" (1, 11, 6000000, 6100000, 10, 10, 'pyfunc_1', 2);";

/* extra: SQL run after the base (NULL: none) */
static void load_with(const char *map_op, const char *last_op, const char *extra)
{
	char sql[sizeof(base_sql) + 128];
	sqlite3 *db;

	snprintf(sql, sizeof(sql), base_sql, map_op, last_op);
	db = fixture_recording(path, sizeof(path), "input");
	cr_assert_eq(db_exec(db, sql), 0);
	/* The last transformation (a prefetch, or a second batch) at line 6 too. */
	cr_assert_eq(db_exec(db, "INSERT INTO eager_ops(pid, tid, start_ns, end_ns, op_id, callsite_id)"
				 " VALUES (1, 10, 800, 900, 15, 2)"), 0);
	cr_assert_eq(extra ? db_exec(db, extra) : 0, 0);
	fixture_load(db, path, &rec, &m);
}

static void load(const char *map_op, const char *last_op)
{
	load_with(map_op, last_op, NULL);
}

static void teardown(void)
{
	fixture_release(path, &rec, &m);
}

static const struct model_thread *thread(int64_t tid)
{
	for (size_t i = 0; i < m.nthreads; i++)
		if (m.threads[i].tid == tid)
			return &m.threads[i];
	return NULL;
}

static struct metric_value field(const char *source, size_t row, const char *name)
{
	const struct metric_source *src = model_find_source(&m, source);
	struct metric_value v = { 0 };

	cr_assert(src, "source %s", source);
	cr_assert(row < src->count(&m, src->data), "row %zu of %s", row, source);
	cr_assert_eq(src->get(&m, src->data, row, name, &v), 0, "field %s.%s", source, name);
	return v;
}

/*
 * A read's python_ns is the loop's Python before it, not a wait: a fifth
 * read of 1 ms after 0.5 ms of Python adds 1 ms to the wait, in the thread's,
 * the session's and the loop's totals.
 */
Test(input, python_before_a_read_is_not_a_wait, .fini = teardown)
{
	load_with("MapDataset", "RepeatDataset",
		  "INSERT INTO eager_ops(pid, tid, start_ns, end_ns, op_id, callsite_id, python_ns)"
		  " VALUES (1, 10, 255000000, 256000000, 1, 3, 500000)");
	cr_assert_eq(m.session.input_waits, 5);
	cr_assert_eq(m.session.input_ns, 121000000);
	cr_assert_eq(thread(10)->input_ns, 121000000);
	cr_assert_eq(field("input", 0, "wait_ns").num, 121000000);
}

Test(input, split_of_eager_ops, .fini = teardown)
{
	const struct model_thread *main_t, *data_t;

	load("MapDataset", "RepeatDataset");
	/* 4 reads are input; 3 ops ran inside the PyFunc; the rest is dispatch. */
	cr_assert_eq(m.session.input_waits, 4);
	cr_assert_eq(m.session.input_ns, 120000000);
	cr_assert_eq(m.session.blackbox_eager_ops, 3);
	cr_assert_eq(m.session.eager_ops, 15 - 4 - 3);
	for (size_t i = 0; i < m.nops; i++)
		cr_assert(strcmp(m.ops[i].op, "IteratorGetNext"), "iterator reads are not eager dispatch");
	main_t = thread(10);
	data_t = thread(11);
	cr_assert(main_t && data_t);
	cr_assert_str_eq(main_t->role, "main");
	cr_assert_str_eq(data_t->role, "tf.data");
	cr_assert_eq(main_t->input_waits, 4);
	cr_assert_eq(data_t->eager_ops, 2);          /* outside the black box, no frame */
	cr_assert_eq(data_t->blackbox_eager_ops, 3);
	cr_assert_eq(data_t->active_ns, 6100000 - 0); /* its own span, not the run's */
	cr_assert(data_t->eager_share > 0 && data_t->eager_share <= 1.0);
	cr_assert_null(data_t->top_loc.file);
	cr_assert(strstr(data_t->top_sites, "<no Python frame>"), "%s", data_t->top_sites);
	cr_assert_null(strstr(data_t->top_sites, ":0"), "%s", data_t->top_sites);
	cr_assert(strstr(field("threads", (size_t)(data_t - m.threads), "top_site").text, "tf.data thread"));
}

Test(input, blackbox_runs_per_node, .fini = teardown)
{
	int seen = 0;

	load("MapDataset", "RepeatDataset");
	/* Two nodes named PyFunc in two functions: each keeps its own runs. */
	for (size_t i = 0; i < m.nblackboxes; i++) {
		const struct model_blackbox *b = &m.blackboxes[i];

		if (b->id == 1) {
			cr_assert_eq(b->execs, 2, "execs %lld eager %lld made_by %s line %d", (long long)b->execs, (long long)b->eager_ops, b->made_by ? b->made_by : "-", b->loc.line);
			cr_assert_eq(b->eager_ops, 3);
			cr_assert_str_eq(b->thread, "tf.data");
			cr_assert_str_eq(b->made_by, "map(augment)");
			cr_assert_eq(b->loc.line, 6, "named at the .map line");
			seen++;
		} else if (b->id == 2) {
			cr_assert_eq(b->execs, 1);
			cr_assert_eq(b->eager_ops, 0);
			seen++;
		}
	}
	cr_assert_eq(seen, 2);
}

Test(input, sequential_pipeline_advice, .fini = teardown)
{
	struct metric_value v;

	load("MapDataset", "RepeatDataset");
	cr_assert_eq(model_find_source(&m, "input")->count(&m, model_find_source(&m, "input")->data), 1);
	cr_assert_str_eq(field("input", 0, "thread").text, "main");
	cr_assert_eq(field("input", 0, "waits").num, 4);
	cr_assert_eq(field("input", 0, "loop_ns").num, 150000000);
	cr_assert_float_eq(field("input", 0, "wait_share").num, 0.8, 1e-9);
	cr_assert_str_eq(field("input", 0, "verdict").text, "highly input-bound");
	cr_assert_eq(field("input", 0, "line").num, 9);
	cr_assert_eq(field("input", 0, "dataset_line").num, 6);
	cr_assert_eq(field("input", 0, "serial_maps").num, 1);
	cr_assert_eq(field("input", 0, "prefetch").num, 0);
	v = field("input", 0, "advice");
	/* The map runs a black box: rewrite it, no num_parallel_calls for it; prefetch is missing. */
	cr_assert(strstr(v.text, "slow stage is map(augment) at line 6") && strstr(v.text, "rewrite its body"), "%s",
		  v.text);
	cr_assert(strstr(v.text, ".prefetch(tf.data.AUTOTUNE)"), "%s", v.text);
	cr_assert_null(strstr(v.text, "num_parallel_calls"), "%s", v.text);
	v = field("input", 0, "pipeline");
	cr_assert(strstr(v.text, "from_tensor_slices at line 5 -> map(augment) at line 6, sequential"), "%s", v.text);
}

Test(input, parallel_prefetched_pipeline_advice, .fini = teardown)
{
	struct metric_value v;

	load("ParallelMapDatasetV2", "PrefetchDataset");
	cr_assert_eq(field("input", 0, "parallel_maps").num, 1);
	cr_assert_eq(field("input", 0, "prefetch").num, 1);
	v = field("input", 0, "advice");
	cr_assert_null(strstr(v.text, "num_parallel_calls"), "%s", v.text);
	cr_assert_null(strstr(v.text, "prefetch(tf.data"), "%s", v.text);
}

Test(input, input_bound_rule_ranks_first, .fini = teardown)
{
	struct ruleset rs;
	char *dir = getenv("AGPROF_RULES_DIR");

	load("MapDataset", "RepeatDataset");
	cr_assert(dir, "AGPROF_RULES_DIR");
	ruleset_init(&rs);
	cr_assert_eq(ruleset_load_dir(&rs, dir), 0);
	cr_assert(rules_run(&rs, &m) >= 1);
	model_sort_findings(&m);
	cr_assert(m.nfindings >= 1);
	cr_assert_str_eq(m.findings[0].rule, "input-bound");
	cr_assert_str_eq(m.findings[0].thread, "main");
	cr_assert_eq(m.findings[0].loc.line, 6);
	cr_assert_eq(m.findings[0].severity, SEV_ERROR); /* 80% of the loop */
	cr_assert_eq(m.findings[0].cost_ns, 120000000);
	for (size_t i = 0; i < m.nfindings; i++)
		cr_assert(strcmp(m.findings[i].rule, "eager-hotspot"), "iterator reads are no eager hotspot");
	ruleset_release(&rs);
}

Test(input, graph_readers_from_the_function_def, .fini = teardown)
{
	load("MapDataset", "RepeatDataset");
	cr_assert_eq(m.ngraph_readers, 1);
	cr_assert_str_eq(m.graph_readers[0].graph_function, "__inference_train_function_40");
	cr_assert_eq(m.graph_readers[0].calls, 2);
	cr_assert_eq(m.graph_readers[0].calls_ns, 20000000);
	cr_assert(strstr(field("input", 0, "graph_readers").text, "(2 calls)"));
}
