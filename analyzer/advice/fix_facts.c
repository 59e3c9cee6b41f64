/* fix_facts.c - see fix_facts.h. */
#include "fix_facts.h"
#include "code_facts.h"
#include "model.h"
#include "model_internal.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NAMED 4  /* obstacles named in the advice; the count says the rest */

/* The functions whose body is the program's own loop: the loop, not the function, is the unit. */
static int holds_the_loop(const char *func)
{
	return !func || func[0] == '<' || !strcmp(func, "main") || !strcmp(func, "run") || !strcmp(func, "train");
}

/* "policy (lines 16-19)" or "the loop at lines 24-26", into sb; the unit's lines in *from, *to. */
static const struct code_fact *unit_of(const struct model *m, const struct finding *f, const char *func,
				       struct strbuf *sb)
{
	const struct code_fact *u = NULL;

	if (!holds_the_loop(func) && (u = code_fact_around(m, "function", f->loc.file, f->loc.line)) &&
	    !strcmp(u->name, func)) {
		strbuf_addf(sb, "%s (lines %d-%d)", func, u->line, u->end_line);
		return u;
	}
	if ((u = code_fact_around(m, "loop", f->loc.file, f->loc.line)))
		strbuf_addf(sb, "the loop at lines %d-%d", u->line, u->end_line);
	return u;
}

/* "line 19: out.numpy() makes a tensor a NumPy ...; line 18: ..." */
static void name_obstacles(struct strbuf *sb, const struct code_obstacle *ob, size_t n, size_t total)
{
	for (size_t i = 0; i < n; i++)
		strbuf_addf(sb, "%sline %d: %s%s %s", i ? "; " : "", ob[i].fact->line, ob[i].fact->name,
			    !strcmp(ob[i].fact->kind, "call") ? "()" : "", ob[i].why);
	if (total > n)
		strbuf_addf(sb, "; and %zu more", total - n);
}

/* The model call alone in a graph, in the call's own names: "actor_fn = tf.function(actor) ..." */
static void model_call_advice(struct strbuf *sb, const struct code_fact *call)
{
	const char *base = code_callee_last(call->name);

	strbuf_addf(sb, " Put only the model call in a graph: %s() at line %d did the TensorFlow work; wrap it once,"
		    " where it is made and not in the loop (%s_fn = tf.function(%s)), and call %s_fn(...) at line %d"
		    " instead, with tensors or arrays of one shape and dtype (another shape traces it again). The"
		    " lines named stay in Python, as they are.", call->name, call->line, base, call->name, base,
		    call->line);
}

int facts_eager_advice(struct model *m, struct finding *f, const char *func, const struct code_fact **call_out)
{
	struct code_obstacle ob[MAX_NAMED];
	struct strbuf unit = STRBUF_INIT, sb = STRBUF_INIT;
	const struct code_fact *u, *call;
	size_t total;
	int body;

	*call_out = NULL;
	if (!f->loc.file || !code_facts_known(m, f->loc.file) || !(u = unit_of(m, f, func, &unit))) {
		strbuf_release(&unit);
		return 0;
	}
	body = strcmp(u->kind, "function") ? u->line : u->line + 1;  /* a function's def line is no obstacle */
	if (!(total = code_obstacles(m, f->loc.file, body, u->end_line, ob, MAX_NAMED))) {
		strbuf_release(&unit);
		return 0;
	}
	strbuf_addf(&sb, "%s cannot be traced as it is: ", unit.buf);
	name_obstacles(&sb, ob, total < MAX_NAMED ? total : MAX_NAMED, total);
	strbuf_addch(&sb, '.');
	call = code_model_call(m, f->loc.file, f->loc.line, f->loc.line);
	if (!call)
		call = code_model_call(m, f->loc.file, body, u->end_line);
	*call_out = call;
	if (call)
		model_call_advice(&sb, call);
	else
		strbuf_addstr(&sb, " Move the TensorFlow work out of it into a function of its own and decorate that"
			      " with @tf.function; the lines named stay in Python.");
	f->recommendation = model_strdup(m, sb.buf ? sb.buf : "");
	f->no_edit = model_strf(m, "%s holds code a trace cannot run as it is", unit.buf);
	strbuf_release(&unit);
	strbuf_release(&sb);
	return 1;
}

/* The line of the outermost for or while loop holding line that starts after line after; 0 when none. */
static int outer_loop(const struct model *m, const char *file, int line, int after)
{
	int best = 0;

	for (size_t i = 0; i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];

		if (!strcmp(f->path, file) && !strcmp(f->kind, "loop") && strcmp(f->name, "comprehension") &&
		    f->line > after && f->line <= line && line <= f->end_line && (!best || f->line < best))
			best = f->line;
	}
	return best;
}

/* Whether s is a plain Python identifier (ASCII) of under 60 characters. */
static int plain_name(const char *s)
{
	size_t n = strlen(s);

	if (!n || n >= 60 || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (; *s; s++)
		if (!(*s == '_' || (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
			return 0;
	return 1;
}

int facts_wrap_line(const struct model *m, const struct code_fact *call, const char **why)
{
	const struct code_fact *fn = code_fact_around(m, "function", call->path, call->line);
	char scope[40], wrapped[72];
	int last = 0, ins, local;

	if (!plain_name(call->name))
		return *why = "the model is not called through a plain name", 0;
	snprintf(wrapped, sizeof(wrapped), "%s_fn", call->name);
	snprintf(scope, sizeof(scope), "function %d", fn ? fn->line : 0);
	if (code_bindings(m, call->path, wrapped, NULL, &last))
		return *why = "the name the wrapped model would take is the program's already", 0;
	if ((local = fn ? code_bindings(m, call->path, call->name, scope, &last) : 0) < 0 ||
	    (!local && code_bindings(m, call->path, call->name, "module", &last) <= 0))
		return *why = "where the model is made is not known (a global statement, or no assignment in the file)", 0;
	if (!local && fn && fn->col != 0)
		return *why = "the model call is in a method or a nested function", 0;
	/* a local model: before its loop in the function; the module's: before the def, or the loop, holding the call */
	ins = local ? outer_loop(m, call->path, call->line, fn->line) : fn ? fn->line : outer_loop(m, call->path, call->line, 0);
	if (!ins)
		return *why = "the model call is not in a loop", 0;
	if (last >= ins)
		return *why = "the model is assigned again below where it would be wrapped", 0;
	if (call->line - ins > 20)
		return *why = "the model call is over 20 lines below where it would be wrapped", 0;
	return ins;
}

/* ---- positions for the fix engine's edits (fix_facts.h) ------------------ */

#define MAX_COL 1000000

/* n numbers of detail (space-separated, each 0..MAX_COL) into v; 0, or -1 when it says otherwise. */
static int numbers(const char *detail, int *v, int n)
{
	const char *p = detail;

	for (int i = 0; i < n; i++) {
		char *end;
		long x = strtol(p, &end, 10);

		if (end == p || x < 0 || x > MAX_COL || (*end && *end != ' '))
			return -1;
		v[i] = (int)x;
		p = end;
	}
	return 0;
}

static int fact_is(const struct code_fact *f, const char *file, const char *kind)
{
	return file && !strcmp(f->path, file) && !strcmp(f->kind, kind);
}

int facts_version(const struct model *m, const char *file)
{
	int v;

	for (size_t i = 0; i < m->nfacts; i++)
		if (fact_is(&m->facts[i], file, "facts") && !numbers(m->facts[i].name, &v, 1) && v >= FACTS_VERSION)
			return FACTS_VERSION;  /* a later agprof's facts hold this one's */
	return facts_positions_known(m, file);
}

const struct code_fact *facts_next(const struct model *m, const struct code_fact *after, const char *file,
				   const char *kind)
{
	size_t i = after ? (size_t)(after - m->facts) + 1 : 0;

	for (; i < m->nfacts; i++)
		if (fact_is(&m->facts[i], file, kind))
			return &m->facts[i];
	return NULL;
}

/* Whether line is inside a def of file (function facts). */
static int in_function(const struct model *m, const char *file, int line)
{
	for (const struct code_fact *f = NULL; (f = facts_next(m, f, file, "function"));)
		if (f->line <= line && line <= f->end_line)
			return 1;
	return 0;
}

const char *facts_tf_alias(const struct model *m, const char *file)
{
	for (const struct code_fact *f = NULL; (f = facts_next(m, f, file, "bind"));)
		if (code_bind_is(f, "import tensorflow") && !in_function(m, file, f->line) && *f->name)
			return f->name;
	return NULL;
}

int facts_list_has(const char *names, const char *name)
{
	size_t n = strlen(name);

	if (!strcmp(names, "*"))
		return 1;
	for (const char *p = names; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return 1;
	return 0;
}

/* Whether the comma-separated flags flags[0..n) hold flag. */
static int has_flag(const char *flags, size_t n, const char *flag)
{
	size_t k = strlen(flag);

	for (const char *p = flags; p && p + k <= flags + n; p = memchr(p, ',', (size_t)(flags + n - p))) {
		p += *p == ',';
		if (!strncmp(p, flag, k) && (p + k == flags + n || p[k] == ','))
			return 1;
	}
	return 0;
}

int facts_assign_of(const struct code_fact *f, struct code_assign *a)
{
	const char *p = f->detail, *flags, *reads;
	int v[5];

	if (strcmp(f->kind, "assign") || numbers(p, v, 5))
		return -1;
	for (int i = 0; i < 5 && p; i++)
		p = strchr(p, ' ') ? strchr(p, ' ') + 1 : NULL;
	/* then two words: the flags, the names read */
	if (!p || !(reads = strchr(p, ' ')) || !reads[1] || strchr(reads + 1, ' '))
		return -1;
	flags = p;
	a->fact = f;
	a->stmt = (struct code_span){ f->line, f->col, f->end_line, v[0] };
	a->value = (struct code_span){ v[1], v[2], v[3], v[4] };
	a->alone = has_flag(flags, (size_t)(reads - flags), "alone");
	a->multiline_string = has_flag(flags, (size_t)(reads - flags), "mlstring");
	a->targets = f->name;
	a->reads = reads + 1;
	return 0;
}

int facts_positions_known(const struct model *m, const char *file)
{
	for (size_t i = 0; i < m->nfacts; i++)
		if (fact_is(&m->facts[i], file, "call-span") || fact_is(&m->facts[i], file, "def"))
			return 1;
	return 0;
}

/*
 * The arguments tied to the call (by its fact's line and column: its start,
 * or for a call chained inside another the position past its callee), in
 * source order; 0, or -1 past FACTS_MAX_ARGS.
 */
static int call_args(const struct model *m, const char *file, struct code_call *c)
{
	c->nargs = 0;
	for (size_t i = 0; i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];
		struct code_arg *a;
		int v[5];

		if (!fact_is(f, file, "arg") || numbers(f->detail, v, 5) || v[1] != c->call->line || v[2] != c->call->col)
			continue;
		if (c->nargs == FACTS_MAX_ARGS)
			return -1;
		a = &c->args[c->nargs++];
		a->value = (struct code_span){ f->line, f->col, f->end_line, v[0] };
		a->line = v[3];
		a->col = v[4];
		a->name = f->name;
	}
	/* the facts come by (line, col) of the value; a keyword's name starts before it, order holds */
	return 0;
}

/*
 * The span of call-span fact f into *sp: from its start to the column its
 * detail gives; a call chained inside another (ds.map(f) in
 * ds.map(f).batch(4)) is keyed past its callee and tells its start
 * (" chained from LINE COL").  0, or -1 when the detail says otherwise.
 */
static int call_span_of(const struct code_fact *f, struct code_span *sp)
{
	const char *from = strstr(f->detail, " chained from ");
	int end, start[2] = { f->line, f->col };

	if (numbers(f->detail, &end, 1) || (from && numbers(from + 14, start, 2)))
		return -1;
	*sp = (struct code_span){ start[0], start[1], f->end_line, end };
	return 0;
}

int facts_call_of(const struct model *m, const struct code_fact *f, struct code_call *c)
{
	if (call_span_of(f, &c->span))
		return -1;
	c->call = f;
	c->chained = strstr(f->detail, " chained") ? 1 : facts_version(m, f->path) == FACTS_VERSION ? 0 : -1;
	return call_args(m, f->path, c);
}

/* Whether the callee name (dotted, as written) ends in the part want. */
static int callee_is(const char *name, const char *want)
{
	return !strcmp(code_callee_last(name), want);
}

int facts_call_at(const struct model *m, const char *file, int line, const char *name, size_t nargs,
		  struct code_call *out)
{
	const struct code_fact *named = NULL, *counted = NULL;
	int nnamed = 0, ncounted = 0;

	for (size_t i = 0; i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];
		struct code_call c;
		struct code_span sp;

		if (!fact_is(f, file, "call-span") || call_span_of(f, &sp) || sp.line > line || line > sp.end_line)
			continue;
		if (callee_is(f->name, name)) {
			named = f;
			nnamed++;
		} else if (facts_call_of(m, f, &c) == 0 && (size_t)c.nargs == nargs) {
			counted = f;
			ncounted++;
		}
	}
	if (nnamed > 1 || (!nnamed && ncounted != 1))
		return -1;
	return facts_call_of(m, named ? named : counted, out);
}

int facts_call_starting(const struct model *m, const char *file, int line, int col, struct code_call *out)
{
	struct code_span sp;

	/* the outermost call of a chain starting there is keyed there; the ones chained inside it are not */
	for (size_t i = 0; i < m->nfacts; i++)
		if (fact_is(&m->facts[i], file, "call-span") && m->facts[i].line == line && m->facts[i].col == col &&
		    !call_span_of(&m->facts[i], &sp) && sp.line == line && sp.col == col)
			return facts_call_of(m, &m->facts[i], out);
	return -1;
}

int facts_def_line(const struct model *m, const char *file, int first, const char *name)
{
	for (size_t i = 0; i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];
		int v;

		if (fact_is(f, file, "def") && !strcmp(f->name, name) && !numbers(f->detail, &v, 1) && v == first)
			return f->line;
	}
	return 0;
}

int facts_decorator(const struct model *m, const char *file, int def_line, const char *name,
		    struct code_span *span)
{
	for (size_t i = 0; i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];
		int v[2];

		if (fact_is(f, file, "decorator") && !strcmp(f->name, name) && !numbers(f->detail, v, 2) &&
		    v[1] == def_line) {
			*span = (struct code_span){ f->line, f->col, f->end_line, v[0] };
			return 0;
		}
	}
	return -1;
}

int facts_params(const struct model *m, const char *file, int def_line, const char **names, const char **kinds,
		 int max)
{
	int n = 0;

	for (int i = 0; i < max; i++)
		names[i] = NULL;
	for (size_t i = 0; i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];
		int v[2];
		const char *kind;

		if (!fact_is(f, file, "param") || numbers(f->detail, v, 2) || v[0] != def_line)
			continue;
		if (v[1] >= max)
			return -1;
		kind = strchr(strchr(f->detail, ' ') + 1, ' ');  /* two numbers checked: two spaces */
		names[v[1]] = f->name;
		kinds[v[1]] = kind ? kind + 1 : "";
		n = v[1] + 1 > n ? v[1] + 1 : n;
	}
	for (int i = 0; i < n; i++)
		if (!names[i])
			return -1;  /* a parameter's fact missing: the list is not the def's */
	return n;
}
