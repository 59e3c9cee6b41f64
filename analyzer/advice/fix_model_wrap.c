/*
 * fix_model_wrap.c - eager-hotspot whose unit cannot be traced but whose
 * model call can (fix_facts.c's advice): `N_fn = tf.function(N)` once,
 * before the loop or the module-level def that holds the call
 * (facts_wrap_line), and the call made through N_fn.  A graph move: an
 * experiment (fix --verify) tells whether it pays.
 */
#include "fix_edit.h"

#include <string.h>

/* The first line of the edit: `N_fn = tf.function(N)` at line ins's indent, and what follows it. */
static void wrap_line(struct strbuf *sb, const char *at, const char *name, const char *tf)
{
	strbuf_add(sb, at, text_indent(at));
	/* above a module-level def: the two blank lines PEP 8 keeps between them */
	strbuf_addf(sb, "%s_fn = %s.function(%s)\n%s", name, tf, name,
		    at[0] == '@' || !strncmp(at, "def ", 4) || !strncmp(at, "async def ", 10) ? "\n\n" : "");
}

int fix_model_wrap(struct fixctx *c, struct finding *f, const struct code_fact *call)
{
	struct edit e = { .after = STRBUF_INIT };
	const struct loaded *l;
	const char *s, *why = NULL;
	size_t n = strlen(call->name);
	enum fix_reader reader;
	char tf[64];
	int ins;

	if (!(l = fix_editable(c, f, call->path, tf, sizeof(tf))))
		return -1;
	if ((reader = fix_reader(c, l, call->path)) != FIX_FACTS) {
		if (reader == FIX_OLD_FACTS)
			fix_old_facts(c, f, call->path, "bindings");
		else
			fix_no_edit(c, f, "the parser's facts of %s are not in the recording", fix_shown(c, call->path));
		return -1;
	}
	if (!(ins = facts_wrap_line(c->m, call, &why))) {
		fix_no_edit(c, f, "%s", why ? why : "no line to build the tf.function on");
		return -1;
	}
	s = srcfile_line(&l->sf, call->line);
	if (!s || call->col < 0 || (size_t)call->col + n > strlen(s) || strncmp(s + call->col, call->name, n) ||
	    text_ident_char((unsigned char)s[call->col + n]) || !srcfile_line(&l->sf, ins) || ins > call->line) {
		fix_no_edit(c, f, "the call of %s is not at line %d as the parser saw it", call->name, call->line);
		return -1;
	}
	wrap_line(&e.after, srcfile_line(&l->sf, ins), call->name, tf);
	for (long k = ins; k < call->line; k++)
		strbuf_addf(&e.after, "%s\n", srcfile_line(&l->sf, k));
	strbuf_add(&e.after, s, (size_t)call->col + n);
	strbuf_addf(&e.after, "_fn%s\n", s + call->col + n);
	e.file = call->path;
	e.line = ins;
	e.nlines = call->line - ins + 1;
	fix_store_edit(c, f, l, &e);
	strbuf_release(&e.after);
	f->no_edit = NULL;
	return 0;
}
