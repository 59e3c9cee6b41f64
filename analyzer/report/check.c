/* check.c - thresholds for CI; see check.h. */
#include "check.h"
#include "checked.h"
#include "db.h"
#include "analyze.h"
#include "diff.h"
#include "recording.h"
#include "report.h"
#include "strbuf.h"
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	CO_MAX_TRACES = OPT_KEY_BASE + 100,  /* clear of the keys of `run`'s own table */
	CO_MAX_EAGER_SHARE,
	CO_FORBID,
	CO_FAIL_ON,
	CO_FORMAT,
	CO_RULES,
	CO_SET,
	CO_INCLUDE_LIBRARY,
	CO_BASELINE,
	CO_MAX_NEW_TRACES,
	CO_MAX_SLOWDOWN,
	CO_MAX_EAGER_INCREASE,
};

const struct opt check_options[] = {
	OPT_TEXT("thresholds (exit 1 when one is crossed):"),
	{ "max-traces", CO_MAX_TRACES, "N", "no function traced more than N times" },
	OPT_TEXT("  --max-traces FUNC=N     function FUNC (its Python name) traced at most N times; repeatable"),
	OPT_TEXT("  (--max-traces N counts the user's own functions: Keras' and tf.data's are left out)"),
	{ "include-library", CO_INCLUDE_LIBRARY, NULL, "--max-traces N counts library-owned functions too" },
	{ "max-eager-share", CO_MAX_EAGER_SHARE, "PCT", "eager dispatch at most PCT percent of the run" },
	{ "forbid", CO_FORBID, "RULE", "no finding of rule RULE; repeatable" },
	{ "fail-on", CO_FAIL_ON, "SEVERITY", "no finding of severity warning (or error) or worse" },
	OPT_TEXT("  (with no threshold, --fail-on error applies)"),
	{ "format", CO_FORMAT, "FMT", "text (default), junit (JUnit XML), github (workflow annotations)" },
	{ "rules", CO_RULES, "DIR", "also load the rule files of DIR" },
	{ "set", CO_SET, "RULE.NAME=VALUE", "change a rule's threshold" },
	OPT_TEXT("against a baseline (exit 1 when RECORDING regresses from BASE):"),
	{ "baseline", CO_BASELINE, "BASE", "compare with the recording BASE (e.g. of the main branch)" },
	{ "max-new-traces", CO_MAX_NEW_TRACES, "N", "a user function may trace N more times than in BASE\n"
						     "(default 0; one BASE never traced: 1 + N)" },
	{ "max-slowdown", CO_MAX_SLOWDOWN, "PCT", "per-step time may be PCT percent slower (default 50:\n"
						   "runs on a loaded machine differ); fails when significant\n"
						   "(Mann-Whitney, p<0.01) with the 95% interval above PCT;\n"
						   "with 20 steps or more on both sides" },
	{ "max-eager-increase", CO_MAX_EAGER_INCREASE, "PTS", "eager share may grow PTS percentage points\n"
							     "(default 5; fails only with 10% more eager ops too)" },
	OPT_TEXT("  (and none of RECORDING's findings at warning or worse may be new)"),
	OPT_END,
};

enum check_kind { CK_MAX_TRACES, CK_MAX_TRACES_FN, CK_EAGER_SHARE, CK_FORBID, CK_FAIL_ON, CK_BASELINE };
enum check_format { CF_TEXT, CF_JUNIT, CF_GITHUB };

struct violation {
	char *function;
	struct source_loc loc;
	char *message;
};

struct check {
	enum check_kind kind;
	char *name;         /* "max-traces=5", shown as the test name */
	char *function;     /* CK_MAX_TRACES_FN */
	char *rule;         /* CK_FORBID */
	double limit;       /* traces, percent, severity; CK_BASELINE: the gate (enum diff_gate) */
	char *passed;       /* what held, for the text output */
	struct violation *v;
	size_t nv, capv;
};

struct check_config {
	struct check *checks;
	size_t n, cap;
	enum check_format format;
	const char *rules_dir;
	const char **sets;
	size_t nsets, capsets;
	int include_library;  /* --max-traces N counts library-owned functions too */
	const char *baseline;       /* --baseline BASE */
	struct diff_limits limits;
	const struct diff *diff;    /* BASE compared with the recording, while evaluating */
};

void check_config_free(struct check_config *st)
{
	for (size_t i = 0; i < st->n; i++) {
		struct check *c = &st->checks[i];

		for (size_t j = 0; j < c->nv; j++) {
			free(c->v[j].function);
			free(c->v[j].message);
		}
		free(c->v);
		free(c->name);
		free(c->function);
		free(c->rule);
		free(c->passed);
	}
	free(st->checks);
	free(st->sets);
	free(st);
}

static struct check *add_check(struct check_config *st, enum check_kind kind, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static struct check *add_check(struct check_config *st, enum check_kind kind, const char *fmt, ...)
{
	struct check *c;
	va_list ap;
	struct strbuf sb = STRBUF_INIT;

	if (ARRAY_GROW(st->checks, st->n, st->cap))
		return NULL;
	c = &st->checks[st->n++];
	memset(c, 0, sizeof(*c));
	c->kind = kind;
	va_start(ap, fmt);
	strbuf_vaddf(&sb, fmt, ap);
	va_end(ap);
	c->name = strbuf_detach(&sb);
	return c;
}

static int parse_count(const char *s, double *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < 0 || v > INT_MAX)
		return -1;
	*out = (double)v;
	return 0;
}

static int add_max_traces(struct check_config *st, const char *val)
{
	const char *eq = strrchr(val, '=');
	struct check *c;
	double n;

	if (eq ? eq == val || parse_count(eq + 1, &n) : parse_count(val, &n))
		return error("--max-traces wants N or FUNCTION=N, not '%s'", val);
	c = add_check(st, eq ? CK_MAX_TRACES_FN : CK_MAX_TRACES, "max-traces %s", val);
	if (!c || (eq && !(c->function = strndup(val, (size_t)(eq - val)))))
		return error("out of memory");
	c->limit = n;
	return 0;
}

static int add_eager_share(struct check_config *st, const char *val)
{
	char *end;
	double p = strtod(val, &end);
	struct check *c;

	if (end == val || (*end && strcmp(end, "%")) || p < 0 || p > 100)
		return error("--max-eager-share wants a percentage from 0 to 100, not '%s'", val);
	if (!(c = add_check(st, CK_EAGER_SHARE, "max-eager-share %g%%", p)))
		return error("out of memory");
	c->limit = p;
	return 0;
}

static int add_fail_on(struct check_config *st, const char *val)
{
	int sev = severity_parse(val);
	struct check *c;

	if (sev != SEV_WARNING && sev != SEV_ERROR)
		return error("--fail-on wants warning or error, not '%s'", val);
	if (!(c = add_check(st, CK_FAIL_ON, "fail-on %s", val)))
		return error("out of memory");
	c->limit = sev;
	return 0;
}

static int set_format(struct check_config *st, const char *val)
{
	static const char *const names[] = { [CF_TEXT] = "text", [CF_JUNIT] = "junit", [CF_GITHUB] = "github", NULL };
	int i = opt_choice("format", val, names);

	if (i < 0)
		return -1;
	st->format = (enum check_format)i;
	return 0;
}

static int add_set(struct check_config *st, const char *val)
{
	if (st->nsets == st->capsets) {
		size_t ncap = st->capsets ? st->capsets * 2 : 4;
		const char **p = realloc(st->sets, ncap * sizeof(*p));

		if (!p)
			return error("out of memory");
		st->sets = p;
		st->capsets = ncap;
	}
	st->sets[st->nsets++] = val;
	return 0;
}

/* --max-new-traces N, --max-slowdown PCT, --max-eager-increase PTS. */
static int baseline_limit(struct check_config *st, int key, const char *val)
{
	char *end;
	double v = strtod(val, &end);

	if (end == val || (*end && strcmp(end, "%")) || v < 0 || v > 1e6 || (key == CO_MAX_NEW_TRACES && v != (long)v))
		return error("--%s wants a number, not '%s'", opt_name(check_options, key), val);
	if (key == CO_MAX_NEW_TRACES)
		st->limits.max_new_traces = (long)v;
	else if (key == CO_MAX_SLOWDOWN)
		st->limits.max_slowdown = v;
	else
		st->limits.max_eager_increase = v;
	return 0;
}

int check_option(void *ctx, int key, const char *val)
{
	struct check_config *st = ctx;
	struct check *c;

	switch (key) {
	case CO_MAX_TRACES:
		return add_max_traces(st, val);
	case CO_MAX_EAGER_SHARE:
		return add_eager_share(st, val);
	case CO_FORBID:
		c = add_check(st, CK_FORBID, "forbid %s", val);
		return c && (c->rule = strdup(val)) ? 0 : error("out of memory");
	case CO_FAIL_ON:
		return add_fail_on(st, val);
	case CO_FORMAT:
		return set_format(st, val);
	case CO_RULES:
		st->rules_dir = val;
		return 0;
	case CO_SET:
		return add_set(st, val);
	case CO_INCLUDE_LIBRARY:
		st->include_library = 1;
		return 0;
	case CO_BASELINE:
		if (st->baseline)
			return error("--baseline: one BASE recording ('%s' and '%s')", st->baseline, val);
		st->baseline = val;
		return 0;
	case CO_MAX_NEW_TRACES:
	case CO_MAX_SLOWDOWN:
	case CO_MAX_EAGER_INCREASE:
		return baseline_limit(st, key, val);
	}
	return error("unknown check option");
}

struct check_config *check_config_new(void)
{
	struct check_config *st = calloc(1, sizeof(struct check_config));
	struct diff_limits lim = DIFF_LIMITS_INIT;

	if (st)
		st->limits = lim;
	return st;
}

/* With no threshold at all, --fail-on error applies. */
static int add_default_check(struct check_config *st)
{
	struct check *c;

	/* --baseline: its gates, and the absolute thresholds asked for beside them */
	for (int g = 0; st->baseline && g < GATE__COUNT; g++) {
		if (!(c = add_check(st, CK_BASELINE, "baseline %s", diff_gate_name((enum diff_gate)g))))
			return error("out of memory");
		c->limit = g;
	}
	if (st->n)
		return 0;
	if (!(c = add_check(st, CK_FAIL_ON, "fail-on error")))
		return error("out of memory");
	c->limit = SEV_ERROR;
	return 0;
}

static void add_violation(struct check *c, const char *function, const struct source_loc *loc, const char *msg)
{
	struct violation *v;

	if (c->nv == c->capv) {
		size_t ncap = c->capv ? c->capv * 2 : 4;
		struct violation *p = realloc(c->v, ncap * sizeof(*p));

		if (!p)
			return;
		c->v = p;
		c->capv = ncap;
	}
	v = &c->v[c->nv++];
	v->function = function ? strdup(function) : NULL;
	memset(&v->loc, 0, sizeof(v->loc));
	if (loc)
		v->loc = *loc;
	v->message = strdup(msg);
}

/* Where a function's retracing shows: the call that retraced it, else its def. */
static struct source_loc function_loc(const struct model_function *f)
{
	for (size_t k = 1; k < f->ntraces; k++)
		if (f->traces[k].why.cause == f->main_cause && f->traces[k].callsite.file)
			return f->traces[k].callsite;
	return f->def;
}

static void traces_violation(struct check *c, const struct model_function *f)
{
	struct strbuf sb = STRBUF_INIT;
	struct source_loc loc = function_loc(f);

	strbuf_addf(&sb, "%s traced %zu times (limit %.0f)", f->made_by ? f->made_by : f->name, f->ntraces, c->limit);
	for (size_t k = 1; k < f->ntraces; k++)
		if (f->traces[k].why.cause == f->main_cause) {
			strbuf_addf(&sb, "; %zu retraces by %s, e.g. %s", f->cause_counts[f->main_cause],
				    retrace_cause_name(f->main_cause), f->traces[k].why.detail);
			break;
		}
	if (f->library)
		strbuf_addstr(&sb, " (a library's function, traced under the call at this line)");
	add_violation(c, f->name, &loc, sb.buf);
	strbuf_release(&sb);
}

/*
 * --max-traces N, or FUNC=N (c->function): one violation per function over
 * the limit.  N counts the user's own functions unless library is set
 * (--include-library): Keras' and tf.data's trace once per model or per
 * call, which the user does not write.  FUNC=N names its function.
 */
static void eval_max_traces(struct check *c, const struct model *m, struct strbuf *passed, int library)
{
	size_t most = 0, n = 0, skipped = 0;
	int found = 0;

	for (size_t j = 0; j < m->nfunctions; j++) {
		const struct model_function *f = &m->functions[j];

		if (c->function && strcmp(f->name, c->function))
			continue;
		if (!c->function && f->library && !library) {
			skipped++;
			continue;
		}
		found = 1;
		n += f->ntraces;
		if (f->ntraces > most)
			most = f->ntraces;
		if ((double)f->ntraces > c->limit)
			traces_violation(c, f);
	}
	if (c->function)
		strbuf_addf(passed, found ? "%s traced %zu times" : "%s was never traced", c->function, n);
	else if (!m->nfunctions)
		strbuf_addstr(passed, "no tf.function was traced");  /* eager ops only, or nothing: not "0 traces" */
	else
		strbuf_addf(passed, "most traces of one function: %zu", most);
	if (skipped)
		strbuf_addf(passed, " (%zu library-owned functions not counted: --include-library counts them)", skipped);
}

static void eval_eager_share(struct check *c, const struct model *m, struct strbuf *passed)
{
	double p = 100 * m->session.eager_share;

	if (p > c->limit) {
		const struct model_eager_site *top = m->nsites ? &m->sites[0] : NULL;
		struct strbuf msg = STRBUF_INIT;

		strbuf_addf(&msg, "eager dispatch takes %.1f%% of the run (limit %g%%): %lld ops", p, c->limit,
			    (long long)m->session.eager_ops);
		if (top)
			strbuf_addf(&msg, "; the busiest line dispatches %lld of them", (long long)top->count);
		add_violation(c, top ? top->func : NULL, top ? &top->loc : NULL, msg.buf ? msg.buf : "");
		strbuf_release(&msg);
	}
	strbuf_addf(passed, "eager dispatch %.1f%% of the run", p);
}

/* --forbid RULE and --fail-on SEVERITY: the findings of that rule, or that bad. */
static void eval_findings(struct check *c, const struct model *m, struct strbuf *passed)
{
	for (size_t j = 0; j < m->nfindings; j++) {
		const struct finding *f = &m->findings[j];
		struct strbuf msg = STRBUF_INIT;

		if (c->kind == CK_FORBID ? strcmp(f->rule, c->rule) : (double)f->severity < c->limit)
			continue;
		strbuf_addf(&msg, "%s %s: %s", severity_name(f->severity), f->rule, f->message);
		add_violation(c, f->function, &f->loc, msg.buf ? msg.buf : "");
		strbuf_release(&msg);
	}
	if (c->kind == CK_FORBID)
		strbuf_addf(passed, "no finding of rule %s", c->rule);
	else
		strbuf_addf(passed, "no finding of severity %s or worse", severity_name((enum severity)c->limit));
}

static void baseline_violation(void *ctx, const char *function, const struct source_loc *loc, const char *msg)
{
	add_violation(ctx, function, loc, msg);
}

/* Evaluate every check on m; the number crossed. */
static int evaluate(struct check_config *st, const struct model *m)
{
	int crossed = 0;

	for (size_t i = 0; i < st->n; i++) {
		struct check *c = &st->checks[i];
		struct strbuf sb = STRBUF_INIT;

		if (c->kind == CK_MAX_TRACES || c->kind == CK_MAX_TRACES_FN)
			eval_max_traces(c, m, &sb, st->include_library);
		else if (c->kind == CK_EAGER_SHARE)
			eval_eager_share(c, m, &sb);
		else if (c->kind == CK_BASELINE)
			diff_regressions(st->diff, (enum diff_gate)c->limit, &st->limits, &sb, baseline_violation, c);
		else
			eval_findings(c, m, &sb);
		c->passed = strbuf_detach(&sb);
		crossed += c->nv > 0;
	}
	return crossed;
}

static void print_text(struct strbuf *out, const struct check_config *st, const struct model *m, int crossed)
{
	int color = want_color(1);
	const char *red = color ? "\033[31m" : "", *green = color ? "\033[32m" : "", *reset = color ? "\033[0m" : "";

	for (size_t i = 0; i < st->n; i++) {
		const struct check *c = &st->checks[i];

		if (!c->nv) {
			strbuf_addf(out, "%sok%s    %s: %s\n", green, reset, c->name, c->passed);
			continue;
		}
		strbuf_addf(out, "%sFAIL%s  %s: %zu violation%s\n", red, reset, c->name, c->nv, c->nv == 1 ? "" : "s");
		for (size_t j = 0; j < c->nv; j++) {
			strbuf_addstr(out, "      ");
			report_add_loc(out, m, &c->v[j].loc);
			strbuf_addf(out, ": %s%s%s\n", c->v[j].function ? c->v[j].function : "",
				    c->v[j].function ? ": " : "", c->v[j].message);
		}
	}
	strbuf_addf(out, "agprof check: %d of %zu threshold%s crossed\n", crossed, st->n, st->n == 1 ? "" : "s");
}

static void print_junit(struct strbuf *out, const struct check_config *st, const struct model *m, int crossed)
{
	strbuf_addstr(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	strbuf_addf(out, "<testsuites name=\"agprof check\" tests=\"%zu\" failures=\"%d\">\n", st->n, crossed);
	strbuf_addf(out, "  <testsuite name=\"agprof check\" tests=\"%zu\" failures=\"%d\" errors=\"0\" skipped=\"0\">\n",
		    st->n, crossed);
	for (size_t i = 0; i < st->n; i++) {
		const struct check *c = &st->checks[i];

		strbuf_addstr(out, "    <testcase classname=\"agprof.check\" name=\"");
		strbuf_add_xml_escaped(out, c->name);
		strbuf_addstr(out, "\"");
		if (!c->nv) {
			strbuf_addstr(out, ">\n      <system-out>");
			strbuf_add_xml_escaped(out, c->passed);
			strbuf_addstr(out, "</system-out>\n    </testcase>\n");
			continue;
		}
		strbuf_addstr(out, ">\n      <failure message=\"");
		strbuf_add_xml_escaped(out, c->v[0].message);
		strbuf_addf(out, "\" type=\"%s\">", c->name);
		for (size_t j = 0; j < c->nv; j++) {
			struct strbuf line = STRBUF_INIT;

			report_add_loc(&line, m, &c->v[j].loc);
			strbuf_addf(&line, ": %s\n", c->v[j].message);
			strbuf_add_xml_escaped(out, line.buf);
			strbuf_release(&line);
		}
		strbuf_addstr(out, "</failure>\n    </testcase>\n");
	}
	strbuf_addstr(out, "  </testsuite>\n</testsuites>\n");
}

/* Workflow command escaping: data escapes %, CR, LF; properties also : and ,. */
static void gh_escape(struct strbuf *out, const char *s, int property)
{
	for (; s && *s; s++) {
		if (*s == '%')
			strbuf_addstr(out, "%25");
		else if (*s == '\r')
			strbuf_addstr(out, "%0D");
		else if (*s == '\n')
			strbuf_addstr(out, "%0A");
		else if (property && *s == ':')
			strbuf_addstr(out, "%3A");
		else if (property && *s == ',')
			strbuf_addstr(out, "%2C");
		else
			strbuf_addch(out, *s);
	}
}

static void print_github(struct strbuf *out, const struct check_config *st, const struct model *m, int crossed)
{
	for (size_t i = 0; i < st->n; i++) {
		const struct check *c = &st->checks[i];

		for (size_t j = 0; j < c->nv; j++) {
			const struct violation *v = &c->v[j];
			struct strbuf title = STRBUF_INIT;

			strbuf_addstr(out, "::error ");
			if (v->loc.file) {
				strbuf_addstr(out, "file=");
				gh_escape(out, report_rel_path(m, v->loc.file), 1);
				strbuf_addf(out, ",line=%d,", v->loc.line);
			}
			strbuf_addf(&title, "agprof %s", c->name);
			strbuf_addstr(out, "title=");
			gh_escape(out, title.buf, 1);
			strbuf_release(&title);
			strbuf_addstr(out, "::");
			gh_escape(out, v->message, 0);
			strbuf_addch(out, '\n');
		}
	}
	strbuf_addf(out, "agprof check: %d of %zu threshold%s crossed\n", crossed, st->n, st->n == 1 ? "" : "s");
}

/*
 * Read only what the thresholds need: the rules need the whole analysis,
 * --max-eager-share the eager dispatch (the share the report prints, of
 * the time less the waits for a CPU: one scan of the eager ops, no graph
 * calls), --max-traces the traces (a few index lookups).
 * 0, or -1 after an error (m and rs are then released).
 */
static int load_for_checks(struct model *m, struct ruleset *rs, struct recording *rec, const struct check_config *st)
{
	/* Nothing recorded crosses no threshold: said on stderr, not an error. */
	struct analyze_opts ao = { .rules_dir = st->rules_dir, .sets = st->sets, .nsets = st->nsets, .allow_empty = 1 };
	unsigned parts = 0;

	for (size_t i = 0; i < st->n; i++) {
		if (st->checks[i].kind == CK_FORBID || st->checks[i].kind == CK_FAIL_ON || st->checks[i].kind == CK_BASELINE)
			parts |= MODEL_ALL;
		else if (st->checks[i].kind == CK_EAGER_SHARE)
			parts |= MODEL_EAGER_TOTALS;
	}
	if (parts & MODEL_EVENTS)
		return analyze(m, rs, rec, &ao) == ANALYZE_OK ? 0 : -1;
	ruleset_init(rs);
	if (model_load_parts(m, rec, parts))
		return -1;
	/* A crossed eager share names the busiest line: count per line then. */
	for (size_t i = 0; i < st->n; i++)
		if (st->checks[i].kind == CK_EAGER_SHARE && 100 * m->session.eager_share > st->checks[i].limit &&
		    model_load_eager_site_counts(m)) {
			model_release(m);
			return -1;
		}
	return 0;
}

/* Does the recording hold a row of table (a cheap look: check loads only what its checks read)? */
static int has_rows(sqlite3 *db, const char *table)
{
	char q[128];
	sqlite3_stmt *s;
	int any = 0;

	snprintf(q, sizeof(q), "SELECT 1 FROM %s LIMIT 1", table);
	if ((s = db_prepare(db, q))) {
		any = sqlite3_step(s) == SQLITE_ROW;
		sqlite3_finalize(s);
	}
	return any;
}

/*
 * Why the recording holds no TensorFlow activity, or NULL: the model of a
 * --max-traces check has no eager-op or call counts loaded, so a run of
 * eager ops only (no tf.function) is not empty; the recording says.
 */
static const char *empty_reason(const struct model *m, struct recording *rec)
{
	static const char *const tables[] = { "eager_op_rows", "eager_ops", "eager_op_buckets", "function_calls", "session_runs" };
	const char *why = model_empty_reason(m);

	for (size_t i = 0; why && i < sizeof(tables) / sizeof(tables[0]); i++)
		if (has_rows(rec->db, tables[i]))
			why = NULL;
	return why;
}

static void print_result(struct strbuf *out, const struct check_config *st, const struct model *m, int crossed)
{
	if (st->format == CF_JUNIT)
		print_junit(out, st, m, crossed);
	else if (st->format == CF_GITHUB)
		print_github(out, st, m, crossed);
	else
		print_text(out, st, m, crossed);
	/* names from the recording must not drive the terminal (JUnit is escaped as XML) */
	if (st->format != CF_JUNIT)
		strbuf_sanitize_text(out, 0, want_color(1));
}

/* --baseline BASE: analyzed with the same rules and compared with m; its warnings, and the summary in text. */
static int load_baseline(struct check_config *st, struct diff_baseline *b, const struct model *m,
			 struct recording *rec, struct strbuf *out)
{
	struct analyze_opts ao = { .rules_dir = st->rules_dir, .sets = st->sets, .nsets = st->nsets, .allow_empty = 1 };

	if (diff_baseline_load(b, st->baseline, &ao, m, rec->path))
		return -1;
	st->diff = &b->d;
	for (size_t i = 0; i < b->d.nwarnings; i++)
		warning("%s", b->d.warnings[i]);
	if (st->format == CF_TEXT)
		strbuf_addf(out, "baseline %s: %s\n", st->baseline, b->d.summary);
	return 0;
}

enum check_result check_run(struct recording *rec, struct check_config *st)
{
	struct model m;
	struct ruleset rs;
	struct strbuf out = STRBUF_INIT;
	enum check_result ret = CHECK_BAD_INPUT;
	const char *empty;
	int crossed;
	struct diff_baseline base;

	if (add_default_check(st))
		return CHECK_FAILED;
	if (load_for_checks(&m, &rs, rec, st))
		return CHECK_BAD_INPUT;
	for (size_t i = 0; i < st->n; i++)
		if (st->checks[i].kind == CK_FORBID && !ruleset_has(&rs, st->checks[i].rule)) {
			error("--forbid: no rule '%s'", st->checks[i].rule);
			goto cleanup;
		}
	if ((empty = empty_reason(&m, rec)))
		warning("'%s' holds no TensorFlow activity: %s", rec->path, empty);
	if (st->baseline && load_baseline(st, &base, &m, rec, &out))
		goto cleanup;
	crossed = evaluate(st, &m);
	print_result(&out, st, &m, crossed);
	if (strbuf_failed(&out)) {
		error("out of memory");
		ret = CHECK_FAILED;
	} else if (out.len && fwrite(out.buf, 1, out.len, stdout) != out.len)
		ret = CHECK_FAILED;
	else
		ret = crossed ? CHECK_CROSSED : CHECK_HELD;
cleanup:
	if (st->diff)
		diff_baseline_release(&base);
	st->diff = NULL;
	strbuf_release(&out);
	model_release(&m);
	ruleset_release(&rs);
	return ret;
}
