/*
 * fix_facts.h - advice chosen with the code facts (analyzer/model/code_facts.h):
 * what stops the code at a finding's line from going into a tf.function,
 * and the smallest unit that can (the model call that did the work).
 */
#ifndef AGPROF_FIX_FACTS_H
#define AGPROF_FIX_FACTS_H

#include <stddef.h>

struct model;
struct finding;
struct code_fact;

/*
 * Positions where the fix engine edits (fix.c), from the parser's facts
 * (kinds call-span, arg, def, decorator, param: docs/schema.md): never a
 * position found by scanning the text.  Columns are CPython's, UTF-8 byte
 * offsets in the line; they are untrusted, so fix.c checks every span
 * against the file's lines before it cuts there.
 */
struct code_span {
	int line, col, end_line, end_col;   /* [line:col, end_line:end_col) */
};

struct code_arg {
	struct code_span value;     /* the value's text */
	int line, col;              /* where the argument starts: a keyword's name, else the value */
	const char *name;           /* keyword, "#N" (Nth positional), "*", "**" */
};

#define FACTS_MAX_ARGS 32

/* A call as the parser saw it: its span and its arguments in source order. */
struct code_call {
	const struct code_fact *call;
	struct code_span span;
	struct code_arg args[FACTS_MAX_ARGS];
	int nargs;
};

/*
 * Whether file has position facts (a recording since they were written,
 * and a file that parsed): 0 means edits fall back to reading the text.
 */
int facts_positions_known(const struct model *m, const char *file);
/*
 * The call of name (the callee's last part) whose lines hold line; else,
 * where none is named so (called through another name), the only call
 * there with nargs arguments.  0 with *out filled, -1 when there is none,
 * several, or more arguments than FACTS_MAX_ARGS.
 */
int facts_call_at(const struct model *m, const char *file, int line, const char *name, size_t nargs,
		  struct code_call *out);
/* The call (with its arguments) that starts at line:col, as a decorator's; 0 or -1. */
int facts_call_starting(const struct model *m, const char *file, int line, int col, struct code_call *out);
/* The def line of the function name first at line first (co_firstlineno), or 0. */
int facts_def_line(const struct model *m, const char *file, int first, const char *name);
/* The decorator of the def at def_line named name (dotted: "tf.function") into *span; 0 or -1. */
int facts_decorator(const struct model *m, const char *file, int def_line, const char *name,
		    struct code_span *span);
/*
 * The parameters of the def at def_line, in order, into names[0..max) and
 * their kinds ("arg", "kwonly default", ...) into kinds; the count, -1
 * when more than max.
 */
int facts_params(const struct model *m, const char *file, int def_line, const char **names, const char **kinds,
		 int max);

/*
 * eager-hotspot: when the function holding the busiest line (func, NULL or
 * "<module>": the loop around it) cannot be traced as it is, say what and
 * where, and advise the model call alone in a graph (*call: that call, else
 * NULL): f's recommendation and no_edit set, 1.  0 when the facts are
 * unknown or show nothing in the way (the advice stays as it was).
 */
int facts_eager_advice(struct model *m, struct finding *f, const char *func, const struct code_fact **call);
/*
 * Where `N_fn = tf.function(N)` goes for the model call `N(...)` (call, a
 * plain name): the line of the outermost loop holding the call in the
 * scope that binds N, or of the module-level def holding the call when N is
 * the module's; N bound in that scope only above that line, named by no
 * global statement, and N_fn bound nowhere in the file.  The line, or 0
 * with why set.
 */
int facts_wrap_line(const struct model *m, const struct code_fact *call, const char **why);

#endif
