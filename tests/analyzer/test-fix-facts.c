/*
 * test-fix-facts.c - the fix engine's reading of the code facts
 * (analyzer/advice/fix_facts.c, docs/schema.md code_facts) on small
 * recordings written here: the facts' version per file, a chain of calls
 * (ds.range(4).map(step).batch(2): each call its own arguments), an
 * assignment's spans and the names its value reads, TensorFlow's import
 * name, and rows a reader must pass over (too few numbers, a column past
 * the bound, a detail of another shape).  The loader keeps a file's facts
 * whole or drops them (the row bound).
 */
#include "code_facts.h"
#include "db.h"
#include "fix_facts.h"
#include "model.h"
#include "recording.h"
#include "strbuf.h"

#include "recording_fixture.h"

#include <criterion/criterion.h>
#include <string.h>

static char path[64];
static struct recording rec;
static struct model m;

/*
 * a.py (version 2): `import tensorflow as tf` (line 1), and line 5
 * `ds = tf.data.Dataset.range(4).map(step).batch(2)` as writer/codefacts.py
 * writes it: the outer call keyed at its start, the chained ones past
 * their callee with their start in the detail.  b.py: version 1 (a
 * call-span, no marker).  c.py: a function fact only.  e.py: TensorFlow
 * imported inside a def only.  h.py: hostile rows.
 */
static const char facts_sql[] =
	"INSERT INTO code_facts VALUES"
	" ('a.py', 'facts', 0, 0, 0, '2', 'python 3.11'),"
	" ('a.py', 'bind', 1, 7, 1, 'tf', 'import tensorflow;module'),"
	" ('a.py', 'assign', 5, 0, 5, 'ds', '48 5 5 5 48 - step,tf'),"
	" ('a.py', 'call-span', 5, 5, 5, 'tf.data.Dataset.range.().map.().batch', '48'),"
	" ('a.py', 'arg', 5, 46, 5, '#0', '47 5 5 5 46'),"
	" ('a.py', 'call-span', 5, 33, 5, 'tf.data.Dataset.range.().map', '39 chained from 5 5'),"
	" ('a.py', 'arg', 5, 34, 5, '#0', '38 5 33 5 34'),"
	" ('a.py', 'call-span', 5, 26, 5, 'tf.data.Dataset.range', '29 chained from 5 5'),"
	" ('a.py', 'arg', 5, 27, 5, '#0', '28 5 26 5 27'),"
	" ('b.py', 'call-span', 3, 0, 3, 'f', '3'),"
	" ('c.py', 'function', 1, 0, 2, 'f', ';'),"
	" ('e.py', 'facts', 0, 0, 0, '2', ''),"
	" ('e.py', 'function', 10, 0, 12, 'main', ';'),"
	" ('e.py', 'bind', 11, 11, 11, 'tf', 'import tensorflow;module'),"
	" ('h.py', 'facts', 0, 0, 0, 'two', ''),"
	" ('h.py', 'assign', 1, 0, 1, 'x', '1 2 3'),"
	" ('h.py', 'assign', 2, 0, 2, 'x', '1 2 0 2 5 -'),"
	" ('h.py', 'assign', 3, 0, 3, 'x', '1 3 0 3 -5 - y'),"
	" ('h.py', 'assign', 4, 0, 4, 'x', '9 4 4 4 9 alone,mlstring *'),"
	" ('h.py', 'call-span', 5, 0, 5, 'f', 'x'),"
	" ('h.py', 'call-span', 6, 4, 6, 'g', '9 chained from 6 99999999'),"
	" ('h.py', 'arg', 6, 5, 6, '#0', '6 6 -4 6 5');";

static void load(const char *more_sql)
{
	sqlite3 *db = fixture_recording(path, sizeof(path), "fixfacts");

	cr_assert_eq(db_exec(db, facts_sql), 0);
	if (more_sql)
		cr_assert_eq(db_exec(db, more_sql), 0);
	fixture_load(db, path, &rec, &m);
}

static void teardown(void)
{
	fixture_release(path, &rec, &m);
}

/* The call-span fact of file at line:col, or NULL. */
static const struct code_fact *span_fact(const char *file, int line, int col)
{
	for (const struct code_fact *f = NULL; (f = facts_next(&m, f, file, "call-span"));)
		if (f->line == line && f->col == col)
			return f;
	return NULL;
}

Test(fix_facts, version_per_file, .fini = teardown)
{
	load(NULL);
	cr_assert_eq(facts_version(&m, "a.py"), FACTS_VERSION);
	cr_assert_eq(facts_version(&m, "b.py"), 1, "positions without the marker: the first facts");
	cr_assert_eq(facts_version(&m, "c.py"), 0, "no positions: the legacy reader");
	cr_assert_eq(facts_version(&m, "nowhere.py"), 0);
	cr_assert_eq(facts_version(&m, "h.py"), 1, "a marker that is no number is none");
}

/* Each call of a chain has its own arguments, and its start; the outermost is not chained. */
Test(fix_facts, chained_calls_apart, .fini = teardown)
{
	struct code_call c;

	load(NULL);
	cr_assert_eq(facts_call_starting(&m, "a.py", 5, 5, &c), 0);
	cr_assert_str_eq(c.call->name, "tf.data.Dataset.range.().map.().batch");
	cr_assert_eq(c.nargs, 1);
	cr_assert_eq(c.args[0].value.col, 46);
	cr_assert_eq(c.chained, 0);
	cr_assert_eq(facts_call_of(&m, span_fact("a.py", 5, 33), &c), 0);
	cr_assert_eq(c.span.line, 5);
	cr_assert_eq(c.span.col, 5, "its start, from the detail");
	cr_assert_eq(c.span.end_col, 39);
	cr_assert_eq(c.nargs, 1);
	cr_assert_eq(c.args[0].value.col, 34, "map's argument, not range's or batch's");
	cr_assert_eq(c.chained, 1);
	cr_assert_eq(facts_call_at(&m, "a.py", 5, "map", 1, &c), 0);
	cr_assert_eq(c.args[0].value.col, 34);
	cr_assert_eq(facts_call_at(&m, "a.py", 5, "range", 1, &c), 0);
	cr_assert_eq(c.args[0].value.col, 27);
}

/* A version 1 call: whether it is chained is not told. */
Test(fix_facts, chained_unknown_in_version_1, .fini = teardown)
{
	struct code_call c;

	load(NULL);
	cr_assert_eq(facts_call_starting(&m, "b.py", 3, 0, &c), 0);
	cr_assert_eq(c.chained, -1);
}

Test(fix_facts, assignment, .fini = teardown)
{
	struct code_assign a;

	load(NULL);
	cr_assert_eq(facts_assign_of(facts_next(&m, NULL, "a.py", "assign"), &a), 0);
	cr_assert_str_eq(a.targets, "ds");
	cr_assert_eq(a.stmt.end_col, 48);
	cr_assert_eq(a.value.line, 5);
	cr_assert_eq(a.value.col, 5);
	cr_assert_eq(a.value.end_col, 48);
	cr_assert_eq(a.alone, 0);
	cr_assert_eq(a.multiline_string, 0);
	cr_assert_str_eq(a.reads, "step,tf");
	cr_assert(facts_list_has(a.reads, "tf"));
	cr_assert(facts_list_has(a.reads, "step"));
	cr_assert(!facts_list_has(a.reads, "st"), "a prefix of a name is not the name");
	cr_assert(!facts_list_has(a.reads, "f"));
	cr_assert(facts_list_has("*", "anything"), "too many to list: every name");
	cr_assert(!facts_list_has("-", "x"));
}

/* Details of another shape are refused, never read past. */
Test(fix_facts, hostile_rows, .fini = teardown)
{
	const struct code_fact *f = NULL;
	struct code_assign a;
	struct code_call c;
	int ok[4];

	load(NULL);
	for (int i = 0; i < 4; i++) {
		f = facts_next(&m, f, "h.py", "assign");
		cr_assert(f);
		ok[i] = facts_assign_of(f, &a) == 0;
	}
	cr_assert(!ok[0], "three numbers");
	cr_assert(!ok[1], "no names read");
	cr_assert(!ok[2], "a negative column");
	cr_assert(ok[3]);
	cr_assert(a.alone && a.multiline_string);
	cr_assert_str_eq(a.reads, "*");
	cr_assert_eq(facts_call_starting(&m, "h.py", 5, 0, &c), -1, "an end that is no number");
	cr_assert_eq(facts_call_of(&m, span_fact("h.py", 6, 4), &c), -1, "a start past the bound");
}

Test(fix_facts, tf_alias, .fini = teardown)
{
	load(NULL);
	cr_assert_str_eq(facts_tf_alias(&m, "a.py"), "tf");
	cr_assert_null(facts_tf_alias(&m, "e.py"), "imported inside a def: not the module's name for it");
}

/* The loader stops at its row bound: the file it cut is dropped whole, the others kept. */
Test(fix_facts, cut_file_dropped, .fini = teardown, .timeout = 120)
{
	load("WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 500000)"
	     " INSERT INTO code_facts SELECT 'z.py', 'bind', i, 0, i, 'x', 'store;module' FROM k;"
	     "INSERT INTO code_facts VALUES ('z.py', 'facts', 0, 0, 0, '2', '');");
	cr_assert_eq(facts_version(&m, "a.py"), FACTS_VERSION);
	cr_assert_eq(facts_version(&m, "z.py"), 0, "cut at the bound: none of its facts");
	cr_assert_eq(code_facts_known(&m, "z.py"), 0);
}

/*
 * Calls followed into the user's functions (code_obstacles): pkg/m.py's
 * step calls helpers.jitter (import pkg.n as helpers), which calls to_host
 * in n.py, which calls .numpy(); loop_a and loop_b call each other; deep
 * calls d1 -> d2 -> ... -> d6, whose .numpy() is past the depth bound;
 * traced calls traced (a @tf.function, whose body is traced already).
 */
static const char follow_sql[] =
	"INSERT INTO code_facts VALUES"
	" ('pkg/m.py', 'facts', 0, 0, 0, '2', ''),"
	" ('pkg/m.py', 'bind', 2, 0, 2, 'helpers', 'import pkg.n;module'),"
	" ('pkg/m.py', 'function', 5, 0, 8, 'step', ';x'),"
	" ('pkg/m.py', 'bind', 5, 0, 5, 'step', 'def;module'),"
	" ('pkg/m.py', 'call', 6, 4, 6, 'helpers.jitter', 'other'),"
	" ('pkg/m.py', 'function', 10, 0, 11, 'loop_a', ';'),"
	" ('pkg/m.py', 'bind', 10, 0, 10, 'loop_a', 'def;module'),"
	" ('pkg/m.py', 'call', 11, 4, 11, 'loop_b', 'other'),"
	" ('pkg/m.py', 'function', 12, 0, 13, 'loop_b', ';'),"
	" ('pkg/m.py', 'bind', 12, 0, 12, 'loop_b', 'def;module'),"
	" ('pkg/m.py', 'call', 13, 4, 13, 'loop_a', 'other'),"
	" ('pkg/m.py', 'function', 20, 0, 21, 'traced', ';'),"
	" ('pkg/m.py', 'call', 21, 4, 21, 'quick', 'other'),"
	" ('pkg/m.py', 'function', 22, 0, 24, 'quick', 'tf.function;'),"
	" ('pkg/m.py', 'bind', 23, 0, 23, 'quick', 'def;module'),"
	" ('pkg/m.py', 'call', 24, 4, 24, 'y.numpy', 'to-python'),"
	" ('n.py', 'facts', 0, 0, 0, '2', ''),"
	" ('n.py', 'function', 1, 0, 2, 'jitter', ';x'),"
	" ('n.py', 'bind', 1, 0, 1, 'jitter', 'def;module'),"
	" ('n.py', 'call', 2, 4, 2, 'to_host', 'other'),"
	" ('n.py', 'function', 3, 0, 4, 'to_host', ';y'),"
	" ('n.py', 'bind', 3, 0, 3, 'to_host', 'def;module'),"
	" ('n.py', 'call', 4, 4, 4, 'y.numpy', 'to-python');"
	"WITH RECURSIVE k(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM k WHERE i < 6)"
	" INSERT INTO code_facts SELECT 'd.py', 'function', 10 * i, 0, 10 * i + 1, 'd' || i, ';' FROM k"
	" UNION ALL SELECT 'd.py', 'bind', 10 * i, 0, 10 * i, 'd' || i, 'def;module' FROM k"
	" UNION ALL SELECT 'd.py', 'call', 10 * i + 1, 4, 10 * i + 1, 'd' || (i + 1), 'other' FROM k WHERE i < 6"
	" UNION ALL SELECT 'd.py', 'call', 61, 4, 61, 'y.numpy', 'to-python';";

Test(fix_facts, obstacles_follow_calls, .fini = teardown)
{
	struct code_obstacle ob[2];
	struct strbuf sb = STRBUF_INIT;

	load(follow_sql);
	cr_assert_eq(code_obstacles(&m, "pkg/m.py", 6, 8, ob, 2), 1);
	cr_assert_eq(ob[0].nvia, 2, "step -> jitter -> to_host");
	cr_assert_str_eq(ob[0].fact->path, "n.py");
	cr_assert_eq(ob[0].fact->line, 4);
	cr_assert_eq(ob[0].via[0]->line, 6);
	cr_assert_str_eq(ob[0].via[1]->path, "n.py");
	cr_assert_eq(ob[0].via[1]->line, 2);
	facts_obstacle_text(&sb, &m, &ob[0]);
	cr_assert_str_eq(sb.buf, "line 6: step calls helpers.jitter() at m.py:6, which calls to_host() at n.py:2,"
			 " which calls y.numpy() at n.py:4, which makes a tensor a NumPy or Python value, which a graph"
			 " cannot do");
	strbuf_release(&sb);
	/* a @tf.function's body is traced already: not entered (here, without eager ops, the call itself is named) */
	cr_assert_eq(code_obstacles(&m, "pkg/m.py", 21, 21, ob, 2), 1);
	cr_assert_eq(ob[0].nvia, 0);
	cr_assert_eq(ob[0].fact->line, 21);
}

/*
 * Methods of instances and nested defs (code_callee_function): o.py's step
 * calls noise.sample (noise = Noise() at the top), whose body draws NumPy
 * noise; quiet.sample, where Quiet (after Noise) has no sample; twice.sample,
 * twice bound twice; stepn, nested in outer, calls helper, nested beside it.
 */
static const char instance_sql[] =
	"INSERT INTO code_facts VALUES"
	" ('o.py', 'facts', 0, 0, 0, '2', ''),"
	" ('o.py', 'bind', 3, 0, 3, 'Noise', 'class;module'),"
	" ('o.py', 'function', 4, 4, 5, 'sample', ';self,y'),"
	" ('o.py', 'bind', 4, 4, 4, 'sample', 'def;class 3'),"
	" ('o.py', 'call', 5, 15, 5, 'np.random.normal', 'numpy-random'),"
	" ('o.py', 'bind', 7, 0, 7, 'Quiet', 'class;module'),"
	" ('o.py', 'function', 8, 4, 8, 'other', ';self'),"
	" ('o.py', 'bind', 8, 4, 8, 'other', 'def;class 7'),"
	" ('o.py', 'bind', 10, 0, 10, 'noise', 'store;module'),"
	" ('o.py', 'assign', 10, 0, 10, 'noise', '15 10 8 10 15 alone -'),"
	" ('o.py', 'call', 10, 8, 10, 'Noise', 'other'),"
	" ('o.py', 'bind', 11, 0, 11, 'quiet', 'store;module'),"
	" ('o.py', 'assign', 11, 0, 11, 'quiet', '15 11 8 11 15 alone -'),"
	" ('o.py', 'call', 11, 8, 11, 'Quiet', 'other'),"
	" ('o.py', 'bind', 12, 0, 12, 'twice', 'store;module'),"
	" ('o.py', 'assign', 12, 0, 12, 'twice', '15 12 8 12 15 alone -'),"
	" ('o.py', 'call', 12, 8, 12, 'Noise', 'other'),"
	" ('o.py', 'bind', 13, 0, 13, 'twice', 'store;module'),"
	" ('o.py', 'function', 14, 0, 17, 'step', ';x'),"
	" ('o.py', 'bind', 14, 0, 14, 'step', 'def;module'),"
	" ('o.py', 'call', 15, 8, 15, 'noise.sample', 'other'),"
	" ('o.py', 'call', 16, 8, 16, 'quiet.sample', 'other'),"
	" ('o.py', 'call', 17, 8, 17, 'twice.sample', 'other'),"
	" ('o.py', 'function', 20, 0, 24, 'outer', ';'),"
	" ('o.py', 'bind', 20, 0, 20, 'outer', 'def;module'),"
	" ('o.py', 'function', 21, 4, 21, 'helper', ';'),"
	" ('o.py', 'bind', 21, 4, 21, 'helper', 'def;function 20'),"
	" ('o.py', 'call', 21, 25, 21, 'np.random.normal', 'numpy-random'),"
	" ('o.py', 'function', 22, 4, 23, 'stepn', ';x'),"
	" ('o.py', 'bind', 22, 4, 22, 'stepn', 'def;function 20'),"
	" ('o.py', 'call', 23, 15, 23, 'helper', 'other');";

Test(fix_facts, obstacles_follow_instances, .fini = teardown)
{
	struct code_obstacle ob[2];

	load(instance_sql);
	cr_assert_eq(code_obstacles(&m, "o.py", 15, 15, ob, 2), 1);
	cr_assert_eq(ob[0].nvia, 1, "step -> Noise.sample");
	cr_assert_eq(ob[0].fact->line, 5);
	/* Quiet has no sample (Noise's is not Quiet's); twice is bound twice: neither followed, each named itself */
	for (int line = 16; line <= 17; line++) {
		cr_assert_eq(code_obstacles(&m, "o.py", line, line, ob, 2), 1);
		cr_assert_eq(ob[0].nvia, 0);
		cr_assert_eq(ob[0].fact->line, line);
	}
	/* stepn's helper() is outer's nested def, beside stepn */
	cr_assert_eq(code_obstacles(&m, "o.py", 23, 23, ob, 2), 1);
	cr_assert_eq(ob[0].nvia, 1, "stepn -> helper");
	cr_assert_eq(ob[0].fact->line, 21);
}

/* A cycle ends where it closes; a chain past the depth bound is not entered further. */
Test(fix_facts, obstacles_follow_bounded, .fini = teardown)
{
	struct code_obstacle ob[2];

	load(follow_sql);
	/* loop_a's body -> loop_b -> loop_a: its call of loop_b, entered already, is not followed again (and,
	 * without eager ops recorded, is the obstacle) */
	cr_assert_eq(code_obstacles(&m, "pkg/m.py", 11, 11, ob, 2), 1);
	cr_assert_eq(ob[0].fact->line, 11);
	cr_assert_eq(ob[0].nvia, 2);
	/* d1's body calls d2; d6's .numpy() is 5 calls down: d5's call of d6 is the deepest read */
	cr_assert_eq(code_obstacles(&m, "d.py", 11, 11, ob, 2), 1);
	cr_assert_eq(ob[0].nvia, CODE_FOLLOW_DEPTH);
	cr_assert_str_eq(ob[0].fact->name, "d6");
}
