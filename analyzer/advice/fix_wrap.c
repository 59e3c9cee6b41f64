/*
 * fix_wrap.c - eager-hotspot (fix_edit.h): the eager switch's edit
 * (fix_eager_switch.c), else @tf.function on the function holding the
 * busiest line when that is safe, else the advice in words.
 *
 * Whether it is safe is read from the parser's facts (docs/schema.md,
 * code_facts): the def and its extent (function, def), its decorators and
 * parameters, what in its body a trace cannot run or would run once
 * (code_obstacles(), and here: a conversion to a Python value, a try, a
 * yield, a change of a Python object the body did not make), and every use
 * of its name in the file (call-span and arg facts of its calls: each
 * argument a tensor made on the spot; ref facts: never passed around).  A
 * file without facts is read as lines (the legacy marks below); a
 * recording whose facts predate those kinds gets the advice in words.
 */
#include "fix_edit.h"
#include "model_internal.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

/* Whether s[0..n) is an identifier assigned at module level in l ("w = tf.Variable(...)"). */
static int module_global(const struct loaded *l, const char *s, size_t n)
{
	for (size_t i = 0; i < l->sf.nlines; i++) {
		const char *p = l->sf.lines[i];

		if (!strncmp(p, s, n) && !text_ident_char((unsigned char)p[n])) {
			p += n + strspn(p + n, " ");
			if (p[0] == '=' && p[1] != '=')
				return 1;
		}
	}
	return 0;
}

/* The module-level names the body lines from..to use: what a tf.function of it closes over. */
static void closed_over(const struct loaded *l, long from, long to, struct strbuf *out)
{
	for (long n = from; n <= to; n++) {
		const char *s = srcfile_line(&l->sf, n);

		for (size_t i = 0; s && s[i] && s[i] != '#';) {
			size_t k = 0;

			if (!isalpha((unsigned char)s[i]) && s[i] != '_') {
				i++;
				continue;
			}
			while (text_ident_char((unsigned char)s[i + k]))
				k++;
			if ((i == 0 || s[i - 1] != '.') && module_global(l, s + i, k)) {
				struct strbuf name = STRBUF_INIT;

				strbuf_add(&name, s + i, k);
				if (!out->buf || !strstr(out->buf, name.buf))
					strbuf_addf(out, "%s%s", out->len ? ", " : "", name.buf);
				strbuf_release(&name);
			}
			i += k;
		}
	}
}

/* ---- what stops @tf.function, from the parser's facts --------------------- */

/* Whether name is bound (assigned, a loop's or with's target, imported) in lines from..to of file. */
static int bound_in(const struct model *m, const char *file, const char *name, size_t n, long from, long to)
{
	for (const struct code_fact *f = NULL; (f = facts_next(m, f, file, "bind"));)
		if (f->line >= from && f->line <= to && strlen(f->name) == n && !strncmp(f->name, name, n))
			return 1;
	return 0;
}

/* Whether call fact f changes a Python object the body lines from..to did not make (outside.append(x)). */
static int changes_outside(const struct model *m, const struct code_fact *f, long from, long to)
{
	static const char *const mutators[] = { "append", "extend", "insert", "pop", "remove", "clear", "update",
						"add", "discard", "setdefault", "popitem", "sort", "reverse", NULL };
	const char *last = code_callee_last(f->name);

	for (const char *const *p = mutators; last != f->name && *p; p++)
		if (!strcmp(last, *p))
			return !bound_in(m, f->path, f->name, strcspn(f->name, ".["), from, to);
	return 0;
}

/* What else stops a trace of the body lines from..to of file (the obstacles aside): its why, and the fact. */
static const char *wrap_obstacle(const struct model *m, const char *file, long from, long to,
				 const struct code_fact **at)
{
	static const char *const to_python[] = { "int", "float", "bool", "str", "complex", NULL };
	const struct code_fact *f;

	for (f = NULL; (f = facts_next(m, f, file, "call"));) {
		*at = f;
		for (const char *const *p = to_python; f->line >= from && f->line <= to && *p; p++)
			if (!strcmp(f->name, *p))
				return "makes a Python value, which fails on a traced tensor";
		if (f->line >= from && f->line <= to && changes_outside(m, f, from, to))
			return "changes a Python object from outside the function, once, when traced";
	}
	for (f = NULL; (f = facts_next(m, f, file, "store"));)
		if ((*at = f)->line >= from && f->line <= to && !strcmp(f->detail, "item") &&
		    !bound_in(m, file, f->name, strcspn(f->name, ".["), from, to))
			return "changes a Python object from outside the function, once, when traced";
	for (f = NULL; (f = facts_next(m, f, file, "block"));)
		if ((*at = f)->line >= from && f->line <= to && !strcmp(f->name, "try"))
			return "catches exceptions, which a graph raises when it runs, past the try";
	for (f = NULL; (f = facts_next(m, f, file, "yield"));)
		if ((*at = f)->line >= from && f->line <= to)
			return "makes the function a generator (or coroutine), which tf.function cannot trace";
	return NULL;
}

/* Whether the call fact at span's start is TF.constant(...) or TF.convert_to_tensor(...) and the whole span. */
static int tensor_made_here(const struct model *m, const char *file, const struct code_span *sp, const char *tf)
{
	struct code_call call;
	const char *name, *last;
	size_t n = strlen(tf);

	if (facts_call_starting(m, file, sp->line, sp->col, &call) || call.span.end_line != sp->end_line ||
	    call.span.end_col != sp->end_col)
		return 0;
	name = call.call->name;
	last = code_callee_last(name);
	return !strncmp(name, tf, n) && name[n] == '.' && last == name + n + 1 &&
	       (!strcmp(last, "constant") || !strcmp(last, "convert_to_tensor"));
}

/*
 * Whether every use of func in file is a call passing tensors made on the
 * spot, or nothing (its defaults, the same at every call), with one call at
 * least; else why not, into why.
 */
static int called_with_tensors_facts(const struct model *m, const char *file, const char *func, const char *tf,
				     char *why, size_t cap)
{
	int calls = 0;

	for (const struct code_fact *f = NULL; (f = facts_next(m, f, file, "ref"));)
		if (!strcmp(f->name, func))
			return snprintf(why, cap, "line %d passes %s as a value, to be called with what the recording"
					" does not show", f->line, func), 0;
	for (const struct code_fact *f = NULL; (f = facts_next(m, f, file, "call-span"));) {
		struct code_call call;

		if (strcmp(f->name, func))
			continue;
		if (facts_call_of(m, f, &call))
			return snprintf(why, cap, "the call of %s at line %d has more arguments than agprof reads", func,
					f->line), 0;
		for (int i = 0; i < call.nargs; i++)
			if (call.args[i].name[0] == '*' || !tensor_made_here(m, file, &call.args[i].value, tf))
				return snprintf(why, cap, "the call at line %d passes an argument that is not a tensor made"
						" there (%s.constant(...)): a Python number retraces per value",
						call.span.line, tf), 0;
		calls++;
	}
	if (!calls)
		snprintf(why, cap, "the parser shows no call of %s in the file", func);
	return calls > 0;
}

/* Why @tf.function on func (its function fact fn, def line def) is not written, into why; 0 when nothing stops it. */
static int wrap_refused_facts(const struct fixctx *c, const struct loaded *l, const char *file, const char *func,
			      long def, long end, const char *tf, char *why, size_t cap)
{
	const struct code_fact *fn = code_fact_around(c->m, "function", file, (int)def), *at = NULL;
	struct code_obstacle ob;
	struct fix_param ps[FIX_MAX_ARGS];
	const char *w;

	if (!fn || strcmp(fn->name, func) || fn->col || fn->detail[0] != ';')
		return snprintf(why, cap, "%s is not an undecorated def at the module's top level", func), -1;
	if (fix_params_of(c, l, file, def, func, ps) < 0)
		return snprintf(why, cap, "%s takes *args, **kwargs or keyword-only parameters", func), -1;
	if (code_obstacles(c->m, file, (int)def + 1, (int)end, &ob, 1)) {
		struct strbuf sb = STRBUF_INIT;

		facts_obstacle_text(&sb, c->m, &ob);
		snprintf(why, cap, "%s", sb.buf ? sb.buf : "");
		strbuf_release(&sb);
		return -1;
	}
	if ((w = wrap_obstacle(c->m, file, def + 1, end, &at)))
		return snprintf(why, cap, "line %d: %s%s %s", at->line, at->name, !strcmp(at->kind, "call") ? "()" : "",
				w), -1;
	return called_with_tensors_facts(c->m, file, func, tf, why, cap) ? 0 : -1;
}

/* ---- legacy: a file without the parser's facts, read as lines --------------- */

/* Whether s holds name as an identifier (not an attribute, not part of a longer name) at or after from: its index, or -1. */
static long find_ident(const char *s, const char *name, size_t from)
{
	size_t n = strlen(name);

	for (const char *p = strstr(s + from, name); p; p = strstr(p + 1, name)) {
		size_t at = (size_t)(p - s);

		if ((at == 0 || (!text_ident_char((unsigned char)s[at - 1]) && s[at - 1] != '.')) &&
		    !text_ident_char((unsigned char)p[n]))
			return (long)at;
	}
	return -1;
}

static int count_triple_quotes(const char *s)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, "\"\"\"")); p += 3)
		n++;
	for (const char *p = s; (p = strstr(p, "'''")); p += 3)
		n++;
	return n;
}

/* Whether s[at] is inside a one-line string or after a comment's '#'. */
static int in_string_or_comment(const char *s, size_t at)
{
	char quote = 0;

	for (size_t i = 0; i < at; i++) {
		if (quote) {
			if (s[i] == '\\' && s[i + 1])
				i++;
			else if (s[i] == quote)
				quote = 0;
		} else if (s[i] == '"' || s[i] == '\'') {
			quote = s[i];
		} else if (s[i] == '#') {
			return 1;
		}
	}
	return quote != 0;
}

/*
 * Whether name is used in l only as calls whose every argument is a tensor
 * made on the spot (tf.constant(...), tf.convert_to_tensor(...)), or that
 * pass none (run_chain(): the def's defaults, the same at every call),
 * apart from its def at line def: then a tf.function of it sees one
 * signature per dtype and shape, never a Python number that would retrace
 * per value.
 */
static int called_with_tensors(const struct loaded *l, const char *name, const char *tf, long def)
{
	char want[2][96];
	int calls = 0;

	snprintf(want[0], sizeof(want[0]), "%s.constant(", tf);
	snprintf(want[1], sizeof(want[1]), "%s.convert_to_tensor(", tf);
	int doc = 0;

	for (long n = 1; n <= (long)l->sf.nlines; n++) {
		const char *s = srcfile_line(&l->sf, n);
		int triple = count_triple_quotes(s);

		/* docstrings and other triple-quoted text: a line in one, or opening or closing one, is no code */
		doc ^= triple & 1;
		if (doc || triple)
			continue;
		for (long at = 0; n != def && (at = find_ident(s, name, (size_t)at)) >= 0; at++) {
			if (in_string_or_comment(s, (size_t)at))
				continue;
			struct text_arg args[FIX_MAX_ARGS];
			size_t open = (size_t)at + strlen(name);
			long close = s[open] == '(' ? text_match_close(s, open) : -1;
			int na = close < 0 ? -1 : text_split_args(s, open, (size_t)close, args);

			if (na < 0)
				return 0;   /* passed around, or called over several lines */
			for (int i = 0; i < na; i++)
				if ((strncmp(s + args[i].value, want[0], strlen(want[0])) &&
				     strncmp(s + args[i].value, want[1], strlen(want[1]))) ||
				    text_match_close(s, args[i].value + strcspn(s + args[i].value, "(")) + 1 != (long)args[i].end)
					return 0;
			calls++;
		}
	}
	return calls > 0;
}

/*
 * Whether lines from..to do something a tf.function would run once, at
 * tracing, instead of per call, or that tracing cannot do (a tensor made a
 * Python number).  Text marks, not a parse: any doubt means no edit.
 */
static int python_side_effects(const struct loaded *l, long from, long to)
{
	/* side effects, and conversions of a tensor to a Python value, which a graph cannot do */
	/* a lambda is no mark: it runs nothing by itself, and its body is on these lines, scanned too */
	static const char *const marks[] = { "print(", "global ", "nonlocal ", "yield", ".append(", ".numpy(", "open(",
					     "time.", "random.", "np.", "input(", "logging.", ".write(", "del ",
					     "def ", "class ", "import ", "try:", "int(", "float(", "bool(",
					     "str(", ".item(", ".tolist(", NULL };

	for (long n = from; n <= to; n++) {
		const char *s = srcfile_line(&l->sf, n);

		for (const char *const *p = marks; s && *p; p++)
			if (strstr(s, *p))
				return 1;
	}
	return 0;
}

/* What the user must know before decorating func (def on line def): its arguments' kinds only when it takes any. */
static const char *wrap_condition(const struct fixctx *c, const struct loaded *l, const char *file, const char *func,
				  long def)
{
	struct fix_param ps[FIX_MAX_ARGS];

	return fix_params_of(c, l, file, def, func, ps) == 0
		       ? "once you know that it has no Python side effects"
		       : "once you know that its arguments are tensors (a Python number retraces per value) and that it"
			 " has no Python side effects";
}

/* Legacy: whether the text of l lets @tf.function on func (def line def, body to end) be written. */
static int wrap_allowed_text(const struct fixctx *c, const struct loaded *l, const char *file, const char *func,
			     long def, long end, const char *tf)
{
	struct fix_param ps[FIX_MAX_ARGS];

	return !text_indent(srcfile_line(&l->sf, def)) && (def == 1 || srcfile_line(&l->sf, def - 1)[0] != '@') &&
	       fix_params_of(c, l, file, def, func, ps) >= 0 && !python_side_effects(l, def + 1, end) &&
	       called_with_tensors(l, func, tf, def);
}

/*
 * eager-hotspot: @tf.function on the function holding the busiest line,
 * when that is safe to say from the file and the recording: a module-level
 * def with plain parameters (or none) and no decorator, a body a trace
 * runs as the eager code does, every call passing tensors made on the spot
 * or no arguments, and a forecast saving (saving.c) above zero.  Returns 0
 * when the edit is stored (or, for a file changed since the recording, the
 * reason there is none); -1 with why (cap bytes) saying what stops it, or
 * empty.
 */
static int edit_wrap(struct fixctx *c, struct finding *f, const char *func, long def, long end, char *why, size_t cap)
{
	struct edit e = { .after = STRBUF_INIT };
	const struct loaded *l = fix_load(c, f->loc.file);
	char tf[64];

	why[0] = '\0';
	if (l && l->changed)
		return fix_no_edit(c, f, "'%s' changed since the recording: decorate %s with @tf.function by hand, %s",
				   f->loc.file, func, wrap_condition(c, l, f->loc.file, func, def)), 0;
	if ((f->forecasts ? f->forecast_ns : f->saving_ns) <= 0 || !l || !fix_edit_path(c, l, f->loc.file) ||
	    !fix_tf_alias(l, tf, sizeof(tf)))
		return -1;
	switch (fix_reader(c, l, f->loc.file)) {
	case FIX_FACTS:
		if (wrap_refused_facts(c, l, f->loc.file, func, def, end, tf, why, cap))
			return -1;
		break;
	case FIX_OLD_FACTS:
		snprintf(why, cap, "the recording's code facts predate the ones this edit is checked with: record the"
			 " run again for the edit");
		return -1;
	case FIX_LEGACY_TEXT:
		if (!wrap_allowed_text(c, l, f->loc.file, func, def, end, tf))
			return -1;
		break;
	}
	/* the def line the parser (or the legacy reader) gives, at the module's top level: the decorator goes above it */
	strbuf_addf(&e.after, "@%s.function\n%s\n", tf, srcfile_line(&l->sf, def));
	fix_store_line_edit(c, f, l, f->loc.file, def, &e);
	return 0;
}

/* The def line and last line of func, the function holding f's line: from the facts, else (legacy) the text; 0 or -1. */
static int def_extent(const struct fixctx *c, const struct loaded *l, const struct finding *f, const char *func,
		      long *def, long *end)
{
	const struct code_fact *fn;
	size_t ind;

	if (fix_reader(c, l, f->loc.file) != FIX_LEGACY_TEXT) {
		fn = code_fact_around(c->m, "function", f->loc.file, f->loc.line);
		if (!fn || strcmp(fn->name, func) || !(*def = facts_def_line(c->m, f->loc.file, fn->line, func)))
			return -1;
		*end = fn->end_line;
		return 0;
	}
	for (*def = f->loc.line; *def >= 1; (*def)--) {
		const char *s = srcfile_line(&l->sf, *def);
		const char *p = s ? s + text_indent(s) : NULL;

		if (p && !strncmp(p, "def ", 4) && !strncmp(p + 4, func, strlen(func)) && p[4 + strlen(func)] == '(')
			break;
	}
	if (*def < 1)
		return -1;
	ind = text_indent(srcfile_line(&l->sf, *def));
	for (*end = *def + 1; srcfile_line(&l->sf, *end + 1); (*end)++) {
		const char *s = srcfile_line(&l->sf, *end + 1);

		if (!text_blank(s) && text_indent(s) <= ind)
			break;
	}
	while (*end > *def + 1 && text_blank(srcfile_line(&l->sf, *end)))
		(*end)--;  /* the blank lines before the next statement are not the function's */
	return 0;
}

/*
 * A tf.function call costs its caller about as much as this many eager ops
 * (argument binding, the cache lookup, the call op): the collector's thread
 * CPU prices on 2 cores, a warm call of a one-op tf.function 127-130 us
 * against 10-19 us for _EagerConst, Identity and AddV2, 7 to 13 of them.
 * A function of fewer ops a call, decorated and called in a loop, saves
 * little or runs slower (samples/eager_heavy.py's step, 4 ops, 25,000
 * calls: 4x slower, its loop in one graph much faster).
 */
#define WRAP_CALL_OPS 10

/*
 * About how many times func ran, and its recorded eager ops (*ops): a line
 * of its body runs once a call, more in a loop, less in a branch, so the
 * fewest ops at one of its lines outside its loops stands for its calls (at
 * most them: the ops a call are then at least what they are).  0 when no
 * such line recorded: a function whose ops all run in its own loop (a
 * layer loop's) gives no count of its calls.  Without the code facts every
 * line counts.
 */
static int64_t wrap_calls(const struct model *m, const char *file, const char *func, long def, long end,
			  int64_t *ops)
{
	int known = code_facts_known(m, file);
	int64_t calls = 0;

	*ops = 0;
	for (size_t i = 0; i < m->nsites; i++) {
		const struct model_eager_site *s = &m->sites[i];
		const struct code_fact *loop;

		if (!s->loc.file || !s->func || strcmp(s->loc.file, file) || strcmp(s->func, func) || s->loc.line < def ||
		    s->loc.line > end || s->count <= 0)
			continue;
		*ops += s->count;
		loop = known ? code_fact_around(m, "loop", file, s->loc.line) : NULL;
		if (loop && loop->line > def && loop->line <= end)
			continue;  /* runs once an iteration, not once a call */
		if (!calls || s->count < calls)
			calls = s->count;
	}
	return calls;
}

/* Whether func runs too few ops a call for a tf.function of its own to pay: then its caller's loop is the unit. */
static int wrap_too_small(struct fixctx *c, const struct finding *f, const char *func, long def, long end,
			  int64_t *calls, int64_t *ops)
{
	*calls = wrap_calls(c->m, f->loc.file, func, def, end, ops);
	return *calls > 1 && *ops < (int64_t)WRAP_CALL_OPS * *calls;
}

/* The advice on func (lines def..end), when the facts named nothing in the way: the edit, or what to do by hand. */
static void wrap_advice(struct fixctx *c, struct finding *f, const struct loaded *l, const char *func, long def,
			long end, const char *vars)
{
	char why[1024];  /* an obstacle found through calls names each (facts_obstacle_text) */
	int64_t calls, ops;

	if (!strcmp(func, "main") || !strcmp(func, "run") || !strcmp(func, "train"))
		fix_no_edit(c, f, "the busiest line is in %s (lines %ld-%ld), which holds the loop itself: move the loop's"
			    " body into a function decorated with @tf.function%s%s", func, def, end,
			    *vars ? "; it closes over " : "", vars);
	else if (wrap_too_small(c, f, func, def, end, &calls, &ops)) {
		/* no edit: which loop calls it, and whether that loop can be traced, the recording does not say */
		fix_no_edit(c, f, "%s runs about %.1f eager ops a call over about %lld calls, and a tf.function call"
			    " costs about as much as %d eager ops: decorated alone it would save little or run slower;"
			    " put the loop that calls it in a function decorated with @tf.function (tf.range for its"
			    " counter), %s%s%s", func, (double)ops / (double)calls, (long long)calls, WRAP_CALL_OPS,
			    wrap_condition(c, l, f->loc.file, func, def), *vars ? "; it closes over " : "", vars);
		f->recommendation = model_strf(c->m, "Put the loop calling %s (lines %ld-%ld) in a tf.function, not %s"
					       " alone: at about %.1f ops a call, each call of a tf.function would cost"
					       " about what its ops save; the loop's ops then run as one graph call.",
					       func, def, end, func, (double)ops / (double)calls);
	} else if (edit_wrap(c, f, func, def, end, why, sizeof(why))) {
		fix_no_edit(c, f, "decorate %s (lines %ld-%ld) with @tf.function, or the loop calling it, %s%s%s%s%s",
			    func, def, end, wrap_condition(c, l, f->loc.file, func, def), *vars ? "; it closes over " : "",
			    vars, *why ? "; no edit is written: " : "", why);
		/* the unit is the function holding the line, not a loop around it (there may be none) */
		f->recommendation = model_strf(c->m, "Decorate %s (lines %ld-%ld) with @tf.function, or put the loop"
					       " calling it in one: its ops then run as one graph call instead of one"
					       " Python dispatch each.", func, def, end);
	} else  /* the advice says what the edit does: the loop may be a library's (sample_chain's), not the user's */
		f->recommendation = model_strf(c->m, "Decorate %s (line %ld) with @tf.function: its ops then run as one graph"
					       " call instead of one Python dispatch each.", func, def);
}

/*
 * eager-hotspot: the eager switch's edit; else quote the function holding
 * the busiest line, name it and what it closes over, and advise the facts'
 * smallest unit (facts_eager_advice), or @tf.function on it (edit_wrap).
 */
void fix_eager_advice(struct fixctx *c, struct finding *f)
{
	const struct code_fact *call = NULL;
	const char *func;
	const struct loaded *l;
	struct strbuf code = STRBUF_INIT, vars = STRBUF_INIT;
	long def = 0, end = 0;
	int by_facts;

	if (fix_eager_switch(c, f) == 0)
		return;
	func = model_finding_site_function(c->m, f);
	/* the facts say what stands in the way: their advice, and the function quoted below */
	by_facts = facts_eager_advice(c->m, f, func, &call);
	if (by_facts && call) {  /* the model call alone in a graph, as advised: an edit to try */
		const char *unit = f->no_edit;

		if (!fix_model_wrap(c, f, call))
			return;
		f->no_edit = model_strf(c->m, "%s; the model call is not wrapped by an edit: %s", unit, f->no_edit);
	}
	if (!func || !(l = fix_load(c, f->loc.file)) || func[0] == '<') {
		if (!by_facts)
			fix_no_edit(c, f, "the busiest line is not inside a function of its own: move the loop's body into a function and decorate it with @tf.function");
		return;
	}
	if (def_extent(c, l, f, func, &def, &end)) {
		if (!by_facts)
			fix_no_edit(c, f, "the def of %s is not found above line %d", func, f->loc.line);
		return;
	}
	fix_quote_lines(&code, l, def, end < def + 15 ? end : def + 15);
	if (l->changed)
		strbuf_addstr(&code, "(the file changed since the recording: these are its lines now)\n");
	f->code = model_strdup(c->m, code.buf);
	closed_over(l, def + 1, end, &vars);
	if (!by_facts)
		wrap_advice(c, f, l, func, def, end, vars.buf ? vars.buf : "");
	strbuf_release(&code);
	strbuf_release(&vars);
}
