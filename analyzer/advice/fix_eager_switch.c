/*
 * fix_eager_switch.c - eager execution switched on (fix_edit.h):
 * tf.config.run_functions_eagerly(True), or Keras's run_eagerly=True, set
 * to False.
 *
 * The switch is found with the parser's facts: a call of TensorFlow's
 * run_functions_eagerly whose first argument is True, a run_eagerly=True
 * keyword argument, or `X.run_eagerly = True` (an assign fact); and the
 * busiest line's Keras loop is a call fact (fit, evaluate, ...) whose
 * lines hold it.  Words in strings, comments and docstrings are no code to
 * the parser.  A file without facts is read as lines (switch_in_text).
 */
#include "fix_edit.h"
#include "model_internal.h"

#include <string.h>

/* The switch found, and the True it sets. */
struct eager_switch {
	int line;
	const char *which;              /* its form, as the advice names it */
	struct code_span value;         /* the `True` the edit replaces */
};

static const char *const keras_loops[] = { "fit", "evaluate", "predict", "train_on_batch", "test_on_batch",
					   "predict_on_batch", NULL };

/* Whether a call of file whose lines hold line is one of the Keras methods that run_eagerly governs. */
static int facts_keras_loop_at(const struct model *m, const char *file, int line)
{
	for (const struct code_fact *f = NULL; (f = facts_next(m, f, file, "call"));)
		for (const char *const *k = keras_loops; f->line <= line && line <= f->end_line && *k; k++)
			if (!strcmp(code_callee_last(f->name), *k) && strchr(f->name, '.'))
				return 1;
	return 0;
}

/* Whether span (checked) is the text True. */
static int is_true(const struct loaded *l, const struct code_span *sp)
{
	return fix_span_in(l, sp) && sp->line == sp->end_line && sp->end_col - sp->col == 4 &&
	       !strncmp(srcfile_line(&l->sf, sp->line) + sp->col, "True", 4);
}

/* One more switch found (sw filled on the first); the count so far. */
static int found(struct eager_switch *sw, int n, const char *which, const struct code_span *value)
{
	if (!n) {
		sw->line = value->line;
		sw->which = which;
		sw->value = *value;
	}
	return n + 1;
}

/* run_functions_eagerly(True) calls and run_eagerly=True arguments of file: their count, the first into sw. */
static int switches_in_calls(const struct fixctx *c, const struct loaded *l, const char *file, struct eager_switch *sw,
			     int n)
{
	for (const struct code_fact *f = NULL; (f = facts_next(c->m, f, file, "call-span"));) {
		int functions = !strcmp(code_callee_last(f->name), "run_functions_eagerly");
		struct code_call call;

		if (facts_call_of(c->m, f, &call))
			continue;
		/* tf.config.run_functions_eagerly(True) (its parameter is named run_eagerly too), compile(run_eagerly=True) */
		for (int i = 0; i < call.nargs; i++) {
			const struct code_arg *a = &call.args[i];

			if (!is_true(l, &a->value))
				continue;
			if (functions && (!strcmp(a->name, "#0") || !strcmp(a->name, "run_eagerly")))
				n = found(sw, n, "run_functions_eagerly(True)", &a->value);
			else if (!functions && !strcmp(a->name, "run_eagerly"))
				n = found(sw, n, "run_eagerly=True", &a->value);
		}
	}
	return n;
}

/*
 * The one switch of file from its facts into sw: 0, or -1 when none,
 * several, not TensorFlow's, or run_eagerly where the busiest line runs no
 * Keras loop.
 */
static int switch_in_facts(const struct fixctx *c, const struct loaded *l, const char *file, int busiest,
			   struct eager_switch *sw)
{
	int n = switches_in_calls(c, l, file, sw, 0);
	char tf[64];

	for (const struct code_fact *f = NULL; (f = facts_next(c->m, f, file, "assign"));) {
		struct code_assign a;
		size_t len = strlen(f->name);

		/* model.run_eagerly = True (assign facts: a recording with the current facts only) */
		if (!facts_assign_of(f, &a) && len > 12 && !strcmp(f->name + len - 12, ".run_eagerly") &&
		    is_true(l, &a.value))
			n = found(sw, n, "run_eagerly = True", &a.value);
	}
	return n == 1 && (strstr(sw->which, "functions") ? fix_tf_alias(l, tf, sizeof(tf)) != NULL
			  : facts_keras_loop_at(c->m, file, busiest)) ? 0 : -1;
}

/* ---- legacy: a file without the parser's facts, read as lines --------------- */

/* Column of the one "run_eagerly=True" / "run_functions_eagerly(True)" in s before a comment, else -1. */
static long eager_switch_at(const char *s, const char **which)
{
	static const char *const forms[] = { "run_eagerly=True", "run_eagerly = True", "run_functions_eagerly(True)" };
	size_t code = strcspn(s, "#");
	long at = -1;

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		const char *hit = strstr(s, forms[i]);

		if (!hit || (size_t)(hit - s) >= code || (hit > s && text_ident_char((unsigned char)hit[-1])))
			continue;
		if (at >= 0 || strstr(hit + 1, forms[i]))
			return -2;  /* several: not one narrow form */
		at = (long)(strstr(hit, "True") - s);
		*which = forms[i];
	}
	return at;
}

/* The triple quotes (docstring delimiters) on a line. */
static int triple_quotes(const char *s)
{
	int n = 0;

	for (const char *p = s; (p = strpbrk(p, "\"'")); ) {
		if (p[1] == p[0] && p[2] == p[0]) {
			n++;
			p += 3;
		} else {
			p++;
		}
	}
	return n;
}

/* Whether the line calls one of the Keras methods that run_eagerly governs. */
static int calls_keras_loop(const char *s)
{
	static const char *const calls[] = { ".fit(", ".evaluate(", ".predict(", ".train_on_batch(",
					     ".test_on_batch(", ".predict_on_batch(" };

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (strstr(s, calls[i]))
			return 1;
	return 0;
}

/* The one switch of l's text into sw (legacy): 0, or -1 when none, several, or not TensorFlow's. */
static int switch_in_text(const struct loaded *l, const char *busiest, struct eager_switch *sw)
{
	const char *form = NULL;
	char tf[64];

	sw->line = 0;
	for (long n = 1, in_doc = 0; srcfile_line(&l->sf, n); n++) {
		const char *s = srcfile_line(&l->sf, n);
		int quotes = triple_quotes(s);
		long at = in_doc || quotes ? -1 : eager_switch_at(s, &form);  /* a docstring's words are no code */

		in_doc ^= quotes & 1;
		if (at == -2 || (at >= 0 && sw->line))
			return -1;
		if (at >= 0) {
			sw->line = (int)n;
			sw->which = form;
			sw->value = (struct code_span){ (int)n, (int)at, (int)n, (int)at + 4 };
		}
	}
	if (!sw->line || (strstr(sw->which, "run_eagerly") == sw->which && !calls_keras_loop(busiest)) ||
	    (strstr(sw->which, "functions") && !fix_tf_alias(l, tf, sizeof(tf))))
		return -1;
	return 0;
}

/*
 * eager-hotspot whose eager ops run because eager execution was switched
 * on: tf.config.run_functions_eagerly(True) anywhere in the file, or
 * Keras's run_eagerly=True (compile or the attribute) when the busiest line
 * runs a Keras loop (fit, evaluate, ...).  The edit sets it to False: the
 * program's tf.functions (Keras's own train step) are graphs again.  0, or
 * -1 when the file has no single such switch.
 */
int fix_eager_switch(struct fixctx *c, struct finding *f)
{
	const struct loaded *l = fix_load(c, f->loc.file);
	const char *busiest = l ? srcfile_line(&l->sf, f->loc.line) : NULL;
	struct edit e = { .after = STRBUF_INIT, .file = f->loc.file };
	struct eager_switch sw;

	if (!busiest || !fix_edit_path(c, l, f->loc.file))
		return -1;
	if (fix_reader(c, l, f->loc.file) == FIX_LEGACY_TEXT ? switch_in_text(l, busiest, &sw)
	    : switch_in_facts(c, l, f->loc.file, f->loc.line, &sw))
		return -1;
	f->recommendation = strstr(sw.which, "functions")
		? model_strf(c->m, "%s at line %d makes every tf.function run op by op: remove it (or pass False) so that"
			     " they run as graphs again.", sw.which, sw.line)
		: model_strf(c->m, "%s at line %d makes Keras run the model's steps op by op: set it to False (the default)"
			     " so that Keras runs each step as one graph call.", sw.which, sw.line);
	if (l->changed)
		return fix_no_edit(c, f, "'%s' changed since the recording: set %s at line %d to False by hand",
				   f->loc.file, sw.which, sw.line), 0;
	if (!fix_span_in(l, &sw.value))
		return -1;
	fix_splice(l, &sw.value, "False", &e);
	fix_store_edit(c, f, l, &e);
	strbuf_release(&e.after);
	return 0;
}
