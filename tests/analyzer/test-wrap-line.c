/*
 * test-wrap-line.c - where agprof fix writes `model_fn = tf.function(model)`
 * for an eager model call (facts_wrap_line, analyzer/advice/fix_facts.c),
 * from code facts written here as writer/codefacts.py writes them: above
 * the module's loop, above the module-level def, above a function's own
 * loop for a local model; and never where the model is bound again below,
 * named by a global statement, called through an attribute, inside a
 * method, or where model_fn is a name the program has.
 */
#include "code_facts.h"
#include "fix_facts.h"
#include "model.h"
#include "recording.h"

#include "recording_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static char path[64];
static struct recording rec;
static struct model m;

/* facts of /p.py (rows "kind, line, col, end_line, name, detail"), loaded into m */
static void load_facts(const char *rows)
{
	sqlite3 *db = fixture_recording(path, sizeof(path), "wrapline");
	char sql[4096];

	snprintf(sql, sizeof(sql),
		 "INSERT INTO meta VALUES ('start_ns', '0'), ('end_ns', '1000');"
		 "INSERT INTO code_facts (path, kind, line, col, end_line, name, detail) VALUES %s;", rows);
	cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
	fixture_load(db, path, &rec, &m);
}

/* facts_wrap_line() of the call fact at line (its why into *why) */
static int wrap_line(int line, const char **why)
{
	*why = NULL;
	for (size_t i = 0; i < m.nfacts; i++)
		if (!strcmp(m.facts[i].kind, "call") && m.facts[i].line == line)
			return facts_wrap_line(&m, &m.facts[i], why);
	cr_assert_fail("no call fact at line %d", line);
	return -1;
}

/* No line for the call at line, and why says words. */
static void expect_refused(int line, const char *words)
{
	const char *why;

	cr_expect_eq(wrap_line(line, &why), 0, "line %d", line);
	cr_expect(why && strstr(why, words), "line %d: %s", line, why ? why : "");
}

static void teardown(void)
{
	fixture_release(path, &rec, &m);
}

#define MODEL_AT_3 "('/p.py', 'bind', 3, 0, 3, 'model', 'store;module')"

Test(wrap_line, module_loop, .fini = teardown)
{
	const char *why;

	load_facts(MODEL_AT_3 ", ('/p.py', 'loop', 10, 0, 14, 'for', 'range(500)'),"
		   " ('/p.py', 'call', 11, 13, 11, 'model', 'other'), ('/p.py', 'bind', 11, 4, 11, 'logits', 'store;module')");
	cr_expect_eq(wrap_line(11, &why), 10, "above the module's loop: %s", why ? why : "");
}

Test(wrap_line, module_level_def, .fini = teardown)
{
	const char *why;

	load_facts(MODEL_AT_3 ", ('/p.py', 'function', 20, 0, 23, 'policy', ';state'),"
		   " ('/p.py', 'bind', 20, 11, 20, 'state', 'store;function 20'),"
		   " ('/p.py', 'call', 21, 10, 21, 'model', 'other'), ('/p.py', 'loop', 30, 0, 33, 'for', 'range(4)')");
	cr_expect_eq(wrap_line(21, &why), 20, "above the def: %s", why ? why : "");
}

Test(wrap_line, local_model, .fini = teardown)
{
	const char *why;

	/* def rollout(model): ... for ...: model(x): the function's own loop, the model its parameter */
	load_facts("('/p.py', 'function', 5, 0, 12, 'rollout', ';model'), ('/p.py', 'bind', 5, 12, 5, 'model', 'param;function 5'),"
		   " ('/p.py', 'loop', 7, 4, 12, 'for', 'range(9)'), ('/p.py', 'call', 8, 12, 8, 'model', 'other')");
	cr_expect_eq(wrap_line(8, &why), 7, "above the function's loop: %s", why ? why : "");
}

Test(wrap_line, bound_again_in_loop, .fini = teardown)
{
	load_facts(MODEL_AT_3 ", ('/p.py', 'loop', 10, 0, 14, 'for', 'range(5)'),"
		   " ('/p.py', 'bind', 12, 4, 12, 'model', 'store;module'), ('/p.py', 'call', 11, 4, 11, 'model', 'other')");
	expect_refused(11, "assigned again");
}

Test(wrap_line, global_statement, .fini = teardown)
{
	load_facts(MODEL_AT_3 ", ('/p.py', 'global', 7, 4, 7, 'x,model', ''),"
		   " ('/p.py', 'loop', 10, 0, 14, 'for', 'range(5)'), ('/p.py', 'call', 11, 4, 11, 'model', 'other')");
	expect_refused(11, "global");
}

Test(wrap_line, refused, .fini = teardown)
{
	/* self.net(x) in a method; model(x) in a method; model_fn already the program's; a call in no loop */
	load_facts(MODEL_AT_3 ", ('/p.py', 'bind', 4, 0, 4, 'net_fn', 'store;module'), ('/p.py', 'bind', 2, 0, 2, 'net', 'store;module'),"
		   " ('/p.py', 'function', 20, 4, 25, 'act', ';self'), ('/p.py', 'call', 21, 8, 21, 'self.net', 'other'),"
		   " ('/p.py', 'call', 22, 8, 22, 'model', 'other'), ('/p.py', 'loop', 30, 0, 33, 'for', 'range(2)'),"
		   " ('/p.py', 'call', 31, 4, 31, 'net', 'other'), ('/p.py', 'call', 40, 0, 40, 'model', 'other')");
	expect_refused(21, "plain name");
	expect_refused(22, "method");
	expect_refused(31, "already");
	expect_refused(40, "not in a loop");
}
