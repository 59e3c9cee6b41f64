/* fix_facts.c - see fix_facts.h. */
#include "fix_facts.h"
#include "code_facts.h"
#include "model.h"
#include "model_internal.h"
#include "strbuf.h"

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
	const char *dot = strrchr(call->name, '.'), *base = dot ? dot + 1 : call->name;

	strbuf_addf(sb, " Put only the model call in a graph: %s() at line %d did the TensorFlow work; wrap it once,"
		    " where it is made and not in the loop (%s_fn = tf.function(%s)), and call %s_fn(...) at line %d"
		    " instead, with tensors or arrays of one shape and dtype (another shape traces it again). The"
		    " lines named stay in Python, as they are.", call->name, call->line, base, call->name, base,
		    call->line);
}

int facts_eager_advice(struct model *m, struct finding *f, const char *func)
{
	struct code_obstacle ob[MAX_NAMED];
	struct strbuf unit = STRBUF_INIT, sb = STRBUF_INIT;
	const struct code_fact *u, *call;
	size_t total;
	int body;

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
