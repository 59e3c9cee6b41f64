/*
 * test-rules.c - the rule engine: parsing, expressions with units,
 * templates, cause variants, a rule's own cases, escalation, threshold overrides, errors that
 * stop one rule but not the others, sources added by other modules.
 */
#include "db.h"
#include "model.h"
#include "recording.h"
#include "rule_advice.h"
#include "rules.h"

#include "recording_fixture.h"

#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char path[64];
static struct recording rec;
static struct model m;

/* Function f traced 3 times, shape changes, 1 ms each; 2 eager ops. */
static void setup(void)
{
	sqlite3 *db;

	db = fixture_recording(path, sizeof(path), "rules");
	cr_assert_eq(db_exec(db,
		"INSERT INTO meta VALUES ('start_ns', '0'), ('end_ns', '100000000'), ('tf_status', 'hooked');"
		"INSERT INTO strings(id, text) VALUES (1, 'f'), (2, '/src/a.py'), (3, 'main'), (4, 'AddV2');"
		"INSERT INTO callsites(id, file_id, line, func_id) VALUES (1, 2, 40, 3);"
		"INSERT INTO functions(id, pid, name_id, file_id, line) VALUES (1, 1, 1, 2, 10);"
		"INSERT INTO traces(id, function_id, pid, tid, start_ns, end_ns, function_object, object_trace_no, callsite_id)"
		" VALUES (1, 1, 1, 1, 0, 1000000, 7, 1, 1), (2, 1, 1, 1, 2000000, 3000000, 7, 2, 1),"
		" (3, 1, 1, 1, 4000000, 5000000, 7, 3, 1);"
		"INSERT INTO trace_inputs VALUES (1, 0, 'x', 'tensor', 'float32', '[8]', NULL),"
		" (2, 0, 'x', 'tensor', 'float32', '[4]', NULL), (3, 0, 'x', 'tensor', 'float32', '[2]', NULL);"
		"INSERT INTO eager_ops(pid, tid, start_ns, end_ns, op_id, callsite_id) VALUES (1, 1, 10, 20, 4, 1),"
		" (1, 1, 30, 50, 4, 1);"), 0);
	fixture_load(db, path, &rec, &m);
}

static void teardown(void)
{
	fixture_release(path, &rec, &m);
}

TestSuite(rules, .init = setup, .fini = teardown);

static const char base_rule[] =
	"# a comment\n"
	"id: many\n"
	"title: many traces\n"
	"severity: warning\n"
	"threshold: max = 2   traces allowed\n"
	"threshold: big = 10\n"
	"select: functions\n"
	"when: traces > max and cause == \"shape\"\n"
	"escalate: traces > big\n"
	"cost: retrace_ns\n"
	"message: {name} traced {traces} times, {retrace_ns:ms} ({trace_share:pct}) by {cause}: {detail}\n"
	"recommendation: generic\n"
	"recommendation[shape]: use input_signature for {argument}\n"
	"before[shape]: |\n"
	"    @tf.function\n"
	"    def f(x):\n"
	"\n"
	"        return x\n"
	"after[shape]: |\n"
	"    fixed\n";

Test(rules, fires_with_template_variant_and_location)
{
	struct ruleset rs;

	ruleset_init(&rs);
	cr_assert_eq(ruleset_load_text(&rs, "t.rule", base_rule), 0);
	cr_assert_eq(rules_run(&rs, &m), 1);
	cr_assert_eq(rs.errors, 0);
	cr_assert_str_eq(m.findings[0].rule, "many");
	cr_assert_eq(m.findings[0].severity, SEV_WARNING);
	cr_assert_str_eq(m.findings[0].function, "f");
	cr_assert_eq(m.findings[0].cause, CAUSE_SHAPE);
	cr_assert_eq(m.findings[0].loc.line, 40, "the call that retraced");
	cr_assert_eq(m.findings[0].cost_ns, 2000000);
	cr_assert_str_eq(m.findings[0].message, "f traced 3 times, 2.00 ms (3.0%) by shape: x: [8] -> [4] (dimension 0)");
	cr_assert_str_eq(m.findings[0].recommendation, "use input_signature for x");
	cr_assert_str_eq(m.findings[0].example_before, "@tf.function\ndef f(x):\n\n    return x");
	cr_assert_str_eq(m.findings[0].example_after, "fixed");
	ruleset_release(&rs);
}

Test(rules, thresholds_can_be_overridden_and_escalate)
{
	struct ruleset rs;

	ruleset_init(&rs);
	cr_assert_eq(ruleset_load_text(&rs, "t.rule", base_rule), 0);
	cr_assert_eq(ruleset_set(&rs, "many.max=3"), 0);
	cr_assert_eq(rules_run(&rs, &m), 0, "3 traces do not exceed max=3");
	cr_assert_eq(ruleset_set(&rs, "many.max=1"), 0);
	cr_assert_eq(ruleset_set(&rs, "many.big=2"), 0);
	cr_assert_eq(rules_run(&rs, &m), 1);
	cr_assert_eq(m.findings[0].severity, SEV_ERROR);
	cr_assert_neq(ruleset_set(&rs, "many.nope=1"), 0);
	cr_assert_neq(ruleset_set(&rs, "nope.max=1"), 0);
	cr_assert_neq(ruleset_set(&rs, "many.max=abc"), 0);
	ruleset_release(&rs);
}

Test(rules, expressions_units_and_logic)
{
	static const char *const fire[] = {
		"eager_ns > 20ns and eager_ns < 1us",
		"eager_share > 0.00001% or 0",
		"not (eager_ops == 3)",
		"(eager_ops + 1) * 2 == 6 and -eager_ops < 0",
		"tf_status == 'hooked' and tf_status != \"x\"",
		"wall_ns >= 100ms and wall_ns <= 0.1s",
	};
	static const char *const quiet[] = {
		"eager_ns > 1us",
		"eager_ops > 2 and tf_status == 'other'",
		"tf_status > 1",
		"eager_ops / 0",
	};

	for (size_t i = 0; i < sizeof(fire) / sizeof(fire[0]) + sizeof(quiet) / sizeof(quiet[0]); i++) {
		struct ruleset rs;
		char text[512];
		int should = i < sizeof(fire) / sizeof(fire[0]);
		const char *expr = should ? fire[i] : quiet[i - sizeof(fire) / sizeof(fire[0])];
		size_t before = m.nfindings;

		snprintf(text, sizeof(text), "id: e%zu\nselect: session\nwhen: %s\nmessage: m\n", i, expr);
		ruleset_init(&rs);
		cr_assert_eq(ruleset_load_text(&rs, "e.rule", text), 0, "%s", expr);
		rules_run(&rs, &m);
		cr_assert_eq(rs.errors, 0, "%s", expr);
		cr_assert_eq(m.nfindings - before, (size_t)should, "'%s' should %s", expr, should ? "fire" : "not fire");
		ruleset_release(&rs);
	}
}

Test(rules, parse_errors_count_and_do_not_stop_others)
{
	static const char *const bad[] = {
		"id: a\nselect: functions\nwhen: traces >\nmessage: m\n",
		"id: a\nselect: functions\nwhen: traces > 1\n",
		"select: functions\nwhen: 1\nmessage: m\n",
		"id: a\nseverity: fatal\nselect: functions\nwhen: 1\nmessage: m\n",
		"id: a\nselect: functions\nwhen: 1\nmessage: m\nrecommendation[nonsense]: x\n",
		"id: a\nselect: functions\nwhen: 1\nmessage: m\n  stray indented line\n",
		"id: a\nselect: functions\nwhen: 1\nmessage: m\nthreshold: x 3\n",
		"id: a\nselect: functions\nwhen: 1\nmessage: m\nfrobnicate: 1\n",
		"id: a\nselect: functions\nwhen: 1\nmessage: m\ncase: traces > 1\n",
		"id: a\nselect: functions\nwhen: 1\nmessage: m\ncase[x]: traces >\n",
		"id: a\nselect: functions\nwhen: 1\nmessage: m\ncase[x]: 1\nmessage[y]: n\n",
		"id: a\nselect: functions\nwhen: 1\nmessage: m\nwhen[x]: 1\n",
		"id: a\nselect: functions\nwhen: 1\nmessage: m\nfix: rewrite-it\n",
		"id: a\nselect: functions\nwhen: 1\nmessage: m\nsaving: all\n",
		"id: a\nselect: functions\nwhen: 1\nmessage: m\nfix[shape]: retrace\n",
	};
	struct ruleset rs;

	cr_redirect_stderr();
	ruleset_init(&rs);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		cr_assert_neq(ruleset_load_text(&rs, "bad.rule", bad[i]), 0, "rule %zu should not load", i);
	cr_assert_eq(rs.errors, (int)(sizeof(bad) / sizeof(bad[0])));
	cr_assert_eq(ruleset_count(&rs), 0);
	/* A rule naming an unknown field fails when run; the next one still runs. */
	cr_assert_eq(ruleset_load_text(&rs, "field.rule", "id: a\nselect: functions\nwhen: nosuch > 1\nmessage: m\n"), 0);
	cr_assert_eq(ruleset_load_text(&rs, "src.rule", "id: b\nselect: nosuch\nwhen: 1\nmessage: m\n"), 0);
	cr_assert_eq(ruleset_load_text(&rs, "skip.rule", "id: c\nselect: nosuch\nif-missing: skip\nwhen: 1\nmessage: m\n"), 0);
	cr_assert_eq(ruleset_load_text(&rs, "ok.rule", "id: d\nselect: functions\nwhen: traces == 3\nmessage: {name}\n"), 0);
	cr_assert_eq(rules_run(&rs, &m), 1);
	cr_assert_eq(rs.errors, (int)(sizeof(bad) / sizeof(bad[0])) + 2);
	cr_assert_str_eq(m.findings[0].rule, "d");
	ruleset_release(&rs);
}

/* The fix: and saving: names reach the finding; a rule replacing one by id keeps those it does not name. */
Test(rules, fix_and_saving_keys_reach_the_finding_and_survive_a_replacement)
{
	static const char head[] = "id: k\nselect: functions\nwhen: traces == 3\nmessage: m\n";
	struct ruleset rs;
	char text[256];

	ruleset_init(&rs);
	snprintf(text, sizeof(text), "%sfix: retrace\nsaving: recompiles\n", head);
	cr_assert_eq(ruleset_load_text(&rs, "k.rule", text), 0);
	cr_assert_eq(rules_run(&rs, &m), 1);
	cr_assert_eq(m.findings[0].fix_kind, FIX_RETRACE);
	cr_assert_eq(m.findings[0].saving_kind, SAVING_RECOMPILES);
	snprintf(text, sizeof(text), "%ssaving: eager-loop\n", head);
	cr_assert_eq(ruleset_load_text(&rs, "k2.rule", text), 0);
	cr_assert_eq(ruleset_count(&rs), 1, "same id: replaced");
	m.nfindings = 0;
	cr_assert_eq(rules_run(&rs, &m), 1);
	cr_assert_eq(m.findings[0].fix_kind, FIX_RETRACE, "fix not named: the replaced rule's");
	cr_assert_eq(m.findings[0].saving_kind, SAVING_EAGER_LOOP, "saving named: its own");
	snprintf(text, sizeof(text), "%sfix: none\n", head);
	cr_assert_eq(ruleset_load_text(&rs, "k3.rule", text), 0);
	m.nfindings = 0;
	cr_assert_eq(rules_run(&rs, &m), 1);
	cr_assert_eq(m.findings[0].fix_kind, FIX_NONE, "none named: none");
	cr_assert_eq(m.findings[0].saving_kind, SAVING_EAGER_LOOP);
	cr_assert_eq(rs.errors, 0);
	for (int k = 0; k < FIX_NKINDS; k++)
		cr_assert_eq(fix_kind_parse(fix_kind_name(k)), k);
	for (int k = 0; k < SAVING_NKINDS; k++)
		cr_assert_eq(saving_kind_parse(saving_kind_name(k)), k);
	ruleset_release(&rs);
}

/* A source as another module (the GPU part) would register one. */
static size_t two(const struct model *mm, void *data)
{
	(void)mm;
	(void)data;
	return 2;
}

static int get(const struct model *mm, void *data, size_t row, const char *field, struct metric_value *out)
{
	(void)mm;
	(void)data;
	if (strcmp(field, "busy"))
		return -1;
	out->type = METRIC_NUM;
	out->num = row ? 0.9 : 0.1;
	return 0;
}

static void anchor(const struct model *mm, void *data, size_t row, struct metric_anchor *a)
{
	(void)mm;
	(void)data;
	a->cost_ns = (int64_t)row + 5;
}

Test(rules, registered_sources_and_sorting)
{
	static const char *const fields[] = { "busy: share", NULL };
	struct metric_source src = { "custom", fields, two, get, anchor, NULL, NULL };
	struct ruleset rs;

	cr_assert_eq(model_add_source(&m, &src), 0);
	cr_assert(model_find_source(&m, "custom"));
	ruleset_init(&rs);
	cr_assert_eq(ruleset_load_text(&rs, "c.rule", "id: c\nseverity: info\nselect: custom\nwhen: busy > 50%\n"
						      "message: busy {busy:pct}\n"), 0);
	cr_assert_eq(ruleset_load_text(&rs, "d.rule", "id: d\nseverity: error\nselect: custom\nwhen: busy < 50%\n"
						      "message: idle\n"), 0);
	cr_assert_eq(ruleset_load_text(&rs, "e.rule", "id: e\nseverity: warning\nselect: custom\nwhen: busy < 50%\n"
						      "message: idle too\n"), 0);
	cr_assert_eq(rules_run(&rs, &m), 3);
	cr_assert_str_eq(m.findings[0].message, "busy 90.0%", "the costliest first");
	cr_assert_eq(m.findings[0].cost_ns, 6);
	cr_assert_str_eq(m.findings[1].rule, "d", "on equal cost, the error before the warning");
	cr_assert_str_eq(m.findings[2].rule, "e");
	ruleset_release(&rs);
}

Test(rules, cases_pick_the_texts_of_the_first_that_holds)
{
	static const char *const fields[] = { "busy: share", NULL };
	struct metric_source src = { "custom", fields, two, get, anchor, NULL, NULL };
	struct ruleset rs;
	const struct finding *hi, *lo;

	cr_assert_eq(model_add_source(&m, &src), 0);
	ruleset_init(&rs);
	cr_assert_eq(ruleset_load_text(&rs, "c.rule",
		"id: c\nselect: custom\nwhen: 1\n"
		"case[high]: busy > 50%\n"
		"message[high]: high {busy:pct}\n"
		"case[any]: busy > 0\n"
		"recommendation[any]: any rec\n"
		"message: default {busy:pct}\n"
		"recommendation: default rec\n"), 0);
	cr_assert_eq(rules_run(&rs, &m), 2);
	cr_assert_eq(rs.errors, 0);
	hi = &m.findings[0];
	lo = &m.findings[1];
	cr_assert_str_eq(hi->message, "high 90.0%", "the first case that holds");
	cr_assert_str_eq(hi->recommendation, "default rec", "a text the case lacks comes from the default");
	cr_assert_str_eq(lo->message, "default 10.0%", "the second case has no message of its own");
	cr_assert_str_eq(lo->recommendation, "any rec");
	ruleset_release(&rs);
}

/* Three rows of share 0.22, 0.30, 0.22 with standard errors 0.02, 0.02, 0 (no spread known). */
static size_t three(const struct model *mm, void *data)
{
	(void)mm;
	(void)data;
	return 3;
}

static int get_measured(const struct model *mm, void *data, size_t row, const char *field, struct metric_value *out)
{
	(void)mm;
	(void)data;
	out->type = METRIC_NUM;
	if (!strcmp(field, "share"))
		out->num = row == 1 ? 0.30 : 0.22;
	else if (!strcmp(field, "share_se"))
		out->num = row == 2 ? 0 : 0.02;
	else if (!strcmp(field, "ops"))
		out->num = 5000;
	else
		return -1;
	return 0;
}

Test(rules, a_measure_within_two_standard_errors_of_its_threshold_is_borderline)
{
	static const char *const fields[] = { "share, share_se, ops", NULL };
	struct metric_source src = { "measured", fields, three, get_measured, anchor, NULL, NULL };
	struct ruleset rs;
	const struct finding *f[3] = { NULL };

	cr_assert_eq(model_add_source(&m, &src), 0);
	ruleset_init(&rs);
	cr_assert_eq(ruleset_load_text(&rs, "b.rule", "id: b\nseverity: warning\nselect: measured\n"
						      "threshold: min = 20%\nthreshold: high = 26%\n"
						      "when: ops > 1000 and share > min\nescalate: share > high\n"
						      "message: share {share:pct}\n"), 0);
	cr_assert_eq(rules_run(&rs, &m), 3);
	cr_assert_eq(rs.errors, 0);
	for (size_t i = 0; i < m.nfindings; i++)
		f[m.findings[i].cost_ns - 5] = &m.findings[i];  /* anchor(): cost = row + 5 */
	cr_assert(f[0] && f[1] && f[2]);
	/* 0.22 is 1 standard error above 0.20: open, so info and said */
	cr_assert_eq(f[0]->severity, SEV_INFO);
	cr_assert_eq(f[0]->borderline, BORDERLINE_FIRES);
	cr_assert(strstr(f[0]->message, "borderline"), "%s", f[0]->message);
	/* 0.30 is 5 above 0.20 (certain) and 2 above 0.26 (open): the rule's severity, borderline for error */
	cr_assert_eq(f[1]->severity, SEV_WARNING);
	cr_assert_eq(f[1]->borderline, BORDERLINE_ESCALATES);
	cr_assert(strstr(f[1]->message, "borderline for error"), "%s", f[1]->message);
	/* no spread known: as before, exact */
	cr_assert_eq(f[2]->severity, SEV_WARNING);
	cr_assert_eq(f[2]->borderline, 0);
	cr_assert_str_eq(f[2]->message, "share 22.0%");
	ruleset_release(&rs);
	/* a certain false side decides an and: no finding, open or not */
	ruleset_init(&rs);
	cr_assert_eq(ruleset_load_text(&rs, "n.rule", "id: n\nselect: measured\nthreshold: min = 20%\n"
						      "when: ops < 1000 and share > min\nmessage: never\n"), 0);
	cr_assert_eq(rules_run(&rs, &m), 0);
	ruleset_release(&rs);
}

Test(rules, builtin_rules_load_without_errors)
{
	struct ruleset rs;
	const char *want[] = { "retracing", "eager-hotspot", "py-function", "xla-recompile", "tracing-overhead",
			       "variable-creation" };

	ruleset_init(&rs);
	cr_assert_eq(ruleset_load_default(&rs, NULL), 0);
	cr_assert_eq(rs.errors, 0);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		cr_assert(ruleset_has(&rs, want[i]), "built-in rule %s", want[i]);
	rules_run(&rs, &m);
	cr_assert_eq(rs.errors, 0, "every built-in rule runs on a small recording");
	ruleset_release(&rs);
}

/* The tracing-overhead recommendation of the rules run with sets, or NULL. */
static const char *overhead_fix(struct ruleset *rs, const char *const *sets, size_t nsets)
{
	ruleset_init(rs);
	cr_assert_eq(ruleset_load_default(rs, NULL), 0);
	for (size_t i = 0; i < nsets; i++)
		cr_assert_eq(ruleset_set(rs, sets[i]), 0, "%s", sets[i]);
	rules_run(rs, &m);
	cr_assert_eq(rs->errors, 0);
	for (size_t i = 0; i < m.nfindings; i++)
		if (!strcmp(m.findings[i].rule, "tracing-overhead"))
			return m.findings[i].recommendation;
	return NULL;
}

Test(rules, tracing_overhead_points_at_a_retracing_finding_only_when_there_is_one)
{
	static const char *const both[] = { "tracing-overhead.max_share=0", "tracing-overhead.min_ns=0",
					    "retracing.max_traces=1" };
	static const char *const only[] = { "tracing-overhead.max_share=0", "tracing-overhead.min_ns=0",
					    "retracing.max_traces=100", "retracing.min_retraces=100" };
	struct ruleset rs;
	const char *fix;

	fix = overhead_fix(&rs, both, 3);
	cr_assert_not_null(fix);
	cr_assert(strstr(fix, "of f stable (see its retracing finding), and"), "%s", fix);
	ruleset_release(&rs);
	model_release(&m);
	cr_assert_eq(model_load(&m, &rec), 0);
	fix = overhead_fix(&rs, only, 4);
	cr_assert_not_null(fix);
	cr_assert(strstr(fix, "of f stable, and") && !strstr(fix, "see its"), "%s", fix);
	ruleset_release(&rs);
}
