/*
 * test-explain.c - the model and the retrace explanations on small
 * recordings made with SQL through the schema: one per cause, the closest
 * earlier trace, aggregation of eager ops, calls and black boxes.
 */
#include "db.h"
#include "model.h"
#include "recording.h"

#include "recording_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char path[64];
static sqlite3 *db;

static void setup(void)
{

	db = fixture_recording(path, sizeof(path), "test");
	cr_assert_eq(db_exec(db, "INSERT INTO meta VALUES ('start_ns', '0'), ('end_ns', '10000000000'),"
				 " ('tf_status', 'hooked'), ('cwd', '/src');"
				 "INSERT INTO strings(id, text) VALUES (1, 'f'), (2, '/src/train.py'), (3, 'main'),"
				 " (4, 'MatMul'), (5, 'AddV2'), (6, '__inference_f_1'), (7, 'EagerPyFunc');"
				 "INSERT INTO callsites(id, file_id, line, func_id) VALUES (1, 2, 40, 3), (2, 2, 41, 3);"
				 "INSERT INTO functions(id, pid, name_id, file_id, line) VALUES (1, 1, 1, 2, 10);"),
		     0);
}

static void teardown(void)
{
	if (db)
		sqlite3_close(db);
	db = NULL;
	db_remove(path);
}

/* A trace of function 1 at time t, by object obj, called from callsite 1. */
static void add_trace(int id, long long t, int obj, int obj_trace_no, int vars)
{
	char sql[512];

	snprintf(sql, sizeof(sql),
		 "INSERT INTO traces(id, function_id, pid, tid, start_ns, end_ns, function_object, object_trace_no,"
		 " tf_name_id, signature, callsite_id, variables_created) VALUES (%d, 1, 1, 1, %lld, %lld, %d, %d, 6,"
		 " 'sig', 1, %d)",
		 id, t, t + 1000000, obj, obj_trace_no, vars);
	cr_assert_eq(db_exec(db, sql), 0);
}

static void add_input(int trace, int pos, const char *name, const char *kind, const char *dtype, const char *shape,
		      const char *value)
{
	sqlite3_stmt *s = db_prepare(db, "INSERT INTO trace_inputs VALUES (?, ?, ?, ?, ?, ?, ?)");

	cr_assert(s);
	sqlite3_bind_int(s, 1, trace);
	sqlite3_bind_int(s, 2, pos);
	sqlite3_bind_text(s, 3, name, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 4, kind, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 5, dtype, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 6, shape, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 7, value, -1, SQLITE_STATIC);
	cr_assert_eq(sqlite3_step(s), SQLITE_DONE);
	sqlite3_finalize(s);
}

static void load(struct recording *rec, struct model *m)
{
	sqlite3_close(db);
	db = NULL;
	cr_assert_eq(recording_open(rec, path), 0);
	cr_assert_eq(model_load(m, rec), 0);
}

static const struct model_trace *retrace(const struct model *m, size_t k)
{
	cr_assert_eq(m->nfunctions, 1);
	cr_assert_gt(m->functions[0].ntraces, k);
	return &m->functions[0].traces[k];
}

TestSuite(explain, .init = setup, .fini = teardown);

Test(explain, shape_names_argument_and_dimension)
{
	struct recording rec;
	struct model m;

	add_trace(1, 100, 7, 1, 0);
	add_input(1, 0, "x", "tensor", "float32", "[64,20]", NULL);
	add_trace(2, 200, 7, 2, 0);
	add_input(2, 0, "x", "tensor", "float32", "[8,20]", NULL);
	load(&rec, &m);
	cr_assert_eq(retrace(&m, 1)->why.cause, CAUSE_SHAPE);
	cr_assert_str_eq(retrace(&m, 1)->why.argument, "x");
	cr_assert_str_eq(retrace(&m, 1)->why.before, "[64,20]");
	cr_assert_str_eq(retrace(&m, 1)->why.after, "[8,20]");
	cr_assert(strstr(retrace(&m, 1)->why.detail, "dimension 0"), "%s", retrace(&m, 1)->why.detail);
	cr_assert_eq(retrace(&m, 0)->why.cause, CAUSE_NONE);
	cr_assert_eq(m.functions[0].main_cause, CAUSE_SHAPE);
	model_release(&m);
	recording_close(&rec);
}

Test(explain, dtype_wins_over_shape_and_compares_with_closest_trace)
{
	struct recording rec;
	struct model m;

	add_trace(1, 100, 7, 1, 0);
	add_input(1, 0, "x", "tensor", "float32", "[4]", NULL);
	add_trace(2, 200, 7, 2, 0);
	add_input(2, 0, "x", "tensor", "int32", "[5]", NULL);
	add_trace(3, 300, 7, 3, 0);
	add_input(3, 0, "x", "tensor", "float32", "[5]", NULL);
	load(&rec, &m);
	cr_assert_eq(retrace(&m, 1)->why.cause, CAUSE_DTYPE);
	cr_assert_str_eq(retrace(&m, 1)->why.before, "float32");
	/* Trace 3 differs from trace 1 by shape only and from trace 2 by dtype only: both distance 1, latest wins. */
	cr_assert_eq(retrace(&m, 2)->why.compared_with, 1);
	cr_assert_eq(retrace(&m, 2)->why.cause, CAUSE_DTYPE);
	model_release(&m);
	recording_close(&rec);
}

Test(explain, python_value_with_graph_constant)
{
	struct recording rec;
	struct model m;

	add_trace(1, 100, 7, 1, 0);
	add_input(1, 0, "lr", "python", NULL, NULL, "0.5");
	add_trace(2, 200, 7, 2, 0);
	add_input(2, 0, "lr", "python", NULL, NULL, "0.35");
	cr_assert_eq(db_exec(db, "INSERT INTO strings(id, text) VALUES (10, 'g1'), (11, 'g2');"
				 "INSERT INTO graph_functions(id, pid, name_id, role, trace_id, function_id, created_ns)"
				 " VALUES (1, 1, 10, 'inference', 1, 1, 0), (2, 1, 11, 'inference', 2, 1, 0);"
				 "INSERT INTO graph_constants VALUES (1, 'mul/y', 'float', '2'), (1, 'Const', 'float', '0.5'),"
				 " (2, 'mul/y', 'float', '3'), (2, 'Const', 'float', '0.349999994');"),
		     0);
	load(&rec, &m);
	cr_assert_eq(retrace(&m, 1)->why.cause, CAUSE_PYTHON_VALUE);
	cr_assert_str_eq(retrace(&m, 1)->why.before, "0.5");
	cr_assert_str_eq(retrace(&m, 1)->why.after, "0.35");
	/* Of the two changed constants, the one holding the argument's value. */
	cr_assert_str_eq(retrace(&m, 1)->why.const_name, "Const");
	cr_assert_str_eq(retrace(&m, 1)->why.const_before, "0.5");
	model_release(&m);
	recording_close(&rec);
}

Test(explain, python_object_when_signatures_are_equal)
{
	struct recording rec;
	struct model m;

	add_trace(1, 100, 7, 1, 0);
	add_input(1, 0, "x", "tensor", "float32", "[4]", NULL);
	add_input(1, 1, "cfg", "object", NULL, NULL, "Config");
	add_trace(2, 200, 7, 2, 0);
	add_input(2, 0, "x", "tensor", "float32", "[4]", NULL);
	add_input(2, 1, "cfg", "object", NULL, NULL, "Config");
	load(&rec, &m);
	cr_assert_eq(retrace(&m, 1)->why.cause, CAUSE_PYTHON_OBJECT);
	cr_assert_str_eq(retrace(&m, 1)->why.argument, "cfg");
	model_release(&m);
	recording_close(&rec);
}

Test(explain, new_function_object_and_structure)
{
	struct recording rec;
	struct model m;

	add_trace(1, 100, 7, 1, 0);
	add_input(1, 0, "x", "tensor", "float32", "[4]", NULL);
	add_trace(2, 200, 8, 1, 0);   /* another tf.function object, same signature */
	add_input(2, 0, "x", "tensor", "float32", "[4]", NULL);
	add_trace(3, 300, 8, 2, 0);   /* same object, one more argument */
	add_input(3, 0, "x", "tensor", "float32", "[4]", NULL);
	add_input(3, 1, "mask", "tensor", "bool", "[4]", NULL);
	load(&rec, &m);
	cr_assert_eq(retrace(&m, 1)->why.cause, CAUSE_NEW_FUNCTION_OBJECT);
	cr_assert_eq(retrace(&m, 2)->why.cause, CAUSE_INPUT_STRUCTURE);
	cr_assert_str_eq(retrace(&m, 2)->why.before, "(x)");
	cr_assert_str_eq(retrace(&m, 2)->why.after, "(x, mask)");
	cr_assert_eq(m.functions[0].function_objects, 2);
	model_release(&m);
	recording_close(&rec);
}

Test(explain, second_trace_after_variable_creation_is_a_followup)
{
	struct recording rec;
	struct model m;

	add_trace(1, 100, 7, 1, 1);
	add_input(1, 0, "x", "tensor", "float32", "[4]", NULL);
	add_trace(2, 200, 7, 2, 0);
	add_input(2, 0, "x", "tensor", "float32", "[4]", NULL);
	load(&rec, &m);
	cr_assert(retrace(&m, 1)->why.followup);
	cr_assert_eq(m.functions[0].retrace_ns, 0, "a follow-up is not avoidable tracing");
	cr_assert_eq(m.functions[0].traces_creating_variables, 1);
	model_release(&m);
	recording_close(&rec);
}

/* A trace of function fn from start to end (ns), on thread 1, failed or not. */
static void add_span(int id, int fn, long long start, long long end, int obj, const char *status)
{
	char sql[512];

	snprintf(sql, sizeof(sql),
		 "INSERT INTO traces(id, function_id, pid, tid, start_ns, end_ns, function_object, object_trace_no,"
		 " signature, callsite_id, status) VALUES (%d, %d, 1, 1, %lld, %lld, %d, 1, 'sig', 1, '%s')",
		 id, fn, start, end, obj, status);
	cr_assert_eq(db_exec(db, sql), 0);
	add_input(id, 0, "n", "tensor", "int32", "[]", NULL);
}

/*
 * A tf.function calling itself while traced (the guide's recursion until
 * RecursionError): one object, each level a trace inside the one before.
 * One trace tree: no retrace, its time once.
 */
Test(explain, nested_traces_of_one_object_are_one_tree)
{
	struct recording rec;
	struct model m;
	const struct model_function *f;

	add_span(1, 1, 1000000, 11000000, 7, "failed");
	add_span(2, 1, 2000000, 10000000, 7, "failed");
	add_span(3, 1, 3000000, 9000000, 7, "failed");
	load(&rec, &m);
	f = &m.functions[0];
	cr_assert(retrace(&m, 1)->why.nested && retrace(&m, 1)->why.followup);
	cr_assert(retrace(&m, 2)->why.nested);
	cr_assert_eq(retrace(&m, 2)->why.compared_with, 1, "inside the trace just outside it");
	cr_assert_eq(f->function_objects, 1);
	cr_assert_eq(f->followups, 2);
	cr_assert_eq(f->retrace_ns, 0, "nested traces are not avoidable tracing");
	cr_assert_eq(f->trace_ns, 10000000, "the tree's time once, not %lld", (long long)f->trace_ns);
	cr_assert_eq(m.session.retrace_ns, 0);
	for (int c = CAUSE_NONE; c < CAUSE__COUNT; c++)
		cr_assert_eq(f->cause_counts[c], 0);
	model_release(&m);
	recording_close(&rec);
}

/* Traces one after the other are retraces, not a tree. */
Test(explain, traces_one_after_another_are_not_nested)
{
	struct recording rec;
	struct model m;

	add_span(1, 1, 1000000, 2000000, 7, "ok");
	add_span(2, 1, 3000000, 4000000, 7, "ok");
	load(&rec, &m);
	cr_assert_not(retrace(&m, 1)->why.nested);
	cr_assert_eq(m.functions[0].trace_ns, 2000000);
	model_release(&m);
	recording_close(&rec);
}

/*
 * The invariants of every finding (bounds.c): cost and saving at most the
 * run's wall time (10 s here) and the function's own time; two functions
 * of one name never share an estimate.
 */
Test(explain, findings_are_bounded_and_never_share_a_function)
{
	struct recording rec;
	struct model m;
	struct finding f = { .rule = "retracing", .function = "f" };
	const struct model_function *a, *b;

	cr_assert_eq(db_exec(db, "INSERT INTO strings(id, text) VALUES (20, '/src/other.py');"
				 "INSERT INTO functions(id, pid, name_id, file_id, line) VALUES (2, 1, 1, 20, 5);"),
		     0);
	add_span(1, 1, 1000000, 4000000, 7, "ok");
	add_span(2, 2, 5000000, 6000000, 8, "ok");
	load(&rec, &m);
	cr_assert_eq(m.nfunctions, 2);
	a = &m.functions[0];
	b = &m.functions[1];
	cr_assert_str_eq(a->name, b->name);
	cr_assert_null(model_finding_function(&m, &f), "two functions named f: the name alone picks none");
	f.fn = b;
	cr_assert_eq(model_finding_function(&m, &f), b);

	f.cost_ns = 26000000000LL;  /* 26 s in a 10 s run */
	f.saving_ns = 20700000000LL;
	f.saving_method = "retraces";
	model_bound_finding(&m, &f);
	cr_assert_eq(f.cost_ns, b->trace_ns + b->exec_ns, "at most the function's own time");
	cr_assert_eq(f.saving_ns, b->trace_ns + b->exec_ns);
	cr_assert(strstr(f.saving_method, "cut to the function's own time"), "%s", f.saving_method);

	f.fn = NULL;
	f.function = "main";
	f.cost_ns = 26000000000LL;
	f.saving_ns = 3000000000LL;
	f.saving_method = "eager";
	model_bound_finding(&m, &f);
	cr_assert_eq(f.cost_ns, 10000000000LL, "at most the run's wall time");
	cr_assert_eq(f.saving_ns, 3000000000LL, "a saving within the bounds is kept");
	cr_assert(strstr(f.saving_method, "wall time"));

	f.cost_ns = 5;
	f.saving_ns = 4;
	f.saving_method = "small";
	model_bound_finding(&m, &f);
	cr_assert_eq(f.cost_ns, 5);
	cr_assert_str_eq(f.saving_method, "small", "nothing cut, nothing said");
	model_release(&m);
	recording_close(&rec);
}

Test(explain, unknown_only_without_any_difference)
{
	struct recording rec;
	struct model m;

	add_trace(1, 100, 7, 1, 0);
	add_input(1, 0, "x", "tensor", "float32", "[4]", NULL);
	add_trace(2, 200, 7, 2, 0);
	add_input(2, 0, "x", "tensor", "float32", "[4]", NULL);
	load(&rec, &m);
	cr_assert_eq(retrace(&m, 1)->why.cause, CAUSE_UNKNOWN);
	model_release(&m);
	recording_close(&rec);
}

Test(explain, aggregates_events)
{
	struct recording rec;
	struct model m;

	add_trace(1, 100, 7, 1, 0);
	cr_assert_eq(db_exec(db, "INSERT INTO graph_functions(id, pid, name_id, role, trace_id, function_id, created_ns)"
				 " VALUES (1, 1, 6, 'inference', 1, 1, 0);"
				 "INSERT INTO blackbox_nodes(graph_function_id, node_name, op_type) VALUES (1, 'EagerPyFunc', 'EagerPyFunc');"
				 "INSERT INTO function_calls(pid, tid, start_ns, end_ns, graph_function_id, name_id, callsite_id)"
				 " VALUES (1, 1, 1000, 3000, 1, 6, 2), (1, 1, 5000, 6000, 1, 6, 2);"
				 "INSERT INTO blackbox_execs(pid, tid, start_ns, end_ns, node_id, op_type_id)"
				 " VALUES (1, 2, 1100, 1200, 7, 7), (1, 2, 5100, 5400, 7, 7);"
				 "INSERT INTO eager_ops(pid, tid, start_ns, end_ns, op_id, callsite_id, slow_path)"
				 " VALUES (1, 1, 10, 20, 4, 1, 0), (1, 1, 30, 60, 4, 1, 1), (1, 1, 70, 75, 5, 2, 0),"
				 " (1, 1, 80, 90, 5, 1, 0);"),
		     0);
	load(&rec, &m);
	cr_assert_eq(m.functions[0].calls, 2);
	cr_assert_eq(m.functions[0].exec_ns, 3000);
	cr_assert_eq(m.session.eager_ops, 4);
	cr_assert_eq(m.session.eager_ns, 55);
	cr_assert_eq(m.nops, 2);
	cr_assert_str_eq(m.ops[0].op, "MatMul");
	cr_assert_eq(m.ops[0].count, 2);
	cr_assert_eq(m.ops[0].slow_path, 1);
	cr_assert_eq(m.nsites, 2);
	cr_assert_eq(m.sites[0].loc.line, 40);
	cr_assert_eq(m.sites[0].count, 3);
	cr_assert_str_eq(m.sites[0].top_op, "MatMul");
	cr_assert_eq(m.nblackboxes, 1);
	cr_assert_eq(m.blackboxes[0].execs, 2);
	cr_assert_eq(m.blackboxes[0].total_ns, 400);
	cr_assert_str_eq(m.blackboxes[0].function, "f");
	cr_assert_null(model_empty_reason(&m));
	model_release(&m);
	recording_close(&rec);
}

/* A py_function's finding names the line that created its node, not its function's def. */
Test(explain, blackbox_at_the_line_that_made_its_node)
{
	struct recording rec;
	struct model m;

	add_trace(1, 100, 7, 1, 0);
	cr_assert_eq(db_exec(db, "INSERT INTO graph_functions(id, pid, name_id, role, trace_id, function_id, created_ns)"
				 " VALUES (1, 1, 6, 'inference', 1, 1, 0);"
				 "INSERT INTO blackbox_nodes(id, graph_function_id, node_name, op_type)"
				 " VALUES (1, 1, 'EagerPyFunc', 'EagerPyFunc');"
				 "INSERT INTO graph_nodes(pid, graph_function_id, name, op_type, file, line)"
				 " VALUES (1, 1, 'EagerPyFunc', 'EagerPyFunc', '/src/train.py', 14);"
				 "INSERT INTO blackbox_execs(pid, tid, start_ns, end_ns, node_id, blackbox_node_id, op_type_id)"
				 " VALUES (1, 2, 1100, 1200, 7, 1, 7);"),
		     0);
	load(&rec, &m);
	cr_assert_eq(m.nblackboxes, 1);
	cr_assert_eq(m.blackboxes[0].loc.line, 14);
	cr_assert_eq(m.blackboxes[0].def.line, 10);
	cr_assert_eq(m.functions[0].blackbox_execs, 1, "its runs still count in the function that holds it");
	model_release(&m);
	recording_close(&rec);
}

Test(explain, empty_recording_says_why)
{
	struct recording rec;
	struct model m;

	cr_assert_eq(db_exec(db, "DELETE FROM functions; UPDATE meta SET value = 'not-loaded' WHERE key = 'tf_status';"
				 "INSERT INTO meta VALUES ('exit_status', '1');"),
		     0);
	load(&rec, &m);
	cr_assert(model_empty_reason(&m));
	cr_assert(strstr(model_empty_reason(&m), "status 1 before TensorFlow"), "%s", model_empty_reason(&m));
	cr_assert(recording_empty_reason(&rec));
	model_release(&m);
	recording_close(&rec);
}

Test(explain, session_steps_by_line_and_not_empty)
{
	struct recording rec;
	struct model m;

	cr_assert_eq(db_exec(db, "DELETE FROM functions;"
				 "INSERT INTO session_runs(pid, tid, start_ns, end_ns, kind, callsite_id, feeds, fetches, targets, ok)"
				 " VALUES (1, 1, 1000, 2000, 'run', 1, 2, 1, 1, 1), (1, 1, 3000, 4000, 'run', 1, 2, 1, 1, 1),"
				 " (1, 1, 5000, 9000, 'run', 2, 2, 2, 0, 0), (1, 1, 9500, 9600, 'callable', NULL, 1, 0, 0, 1);"),
		     0);
	load(&rec, &m);
	cr_assert_null(model_empty_reason(&m), "Session steps are TensorFlow activity");
	cr_assert_eq(m.session.session_runs, 4);
	cr_assert_eq(m.session.session_run_ns, 1000 + 1000 + 4000 + 100);
	cr_assert_eq(m.session.first_tf_ns, 1000, "the active run starts at the first Session step");
	cr_assert_eq(m.nsession_runs, 3);
	cr_assert_eq(m.session_runs[0].loc.line, 41, "most time first");
	cr_assert_eq(m.session_runs[0].failed, 1);
	cr_assert_eq(m.session_runs[0].fetches, 2);
	cr_assert_eq(m.session_runs[1].loc.line, 40);
	cr_assert_eq(m.session_runs[1].runs, 2);
	cr_assert_eq(m.session_runs[1].total_ns, 2000);
	cr_assert_eq(m.session_runs[1].feeds, 2);
	cr_assert_eq(m.session_runs[1].targets, 1);
	cr_assert_str_eq(m.session_runs[1].func, "main");
	cr_assert_null(m.session_runs[2].loc.file, "no call site");
	cr_assert_str_eq(m.session_runs[2].kind, "callable");
	cr_assert_null(recording_empty_reason(&rec));
	model_release(&m);
	recording_close(&rec);
}

Test(explain, schema_1_recording_without_session_table_loads)
{
	struct recording rec;
	struct model m;

	cr_assert_eq(db_exec(db, "DROP TABLE session_runs; PRAGMA user_version = 1; DELETE FROM functions;"), 0);
	load(&rec, &m);
	cr_assert_eq(m.nsession_runs, 0);
	cr_assert(model_empty_reason(&m));
	cr_assert(recording_empty_reason(&rec));
	model_release(&m);
	recording_close(&rec);
}
