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
 * Positions where the fix engine edits (fix_*.c), from the parser's facts
 * (kinds call-span, arg, def, decorator, param, assign: docs/schema.md):
 * never a position found by scanning the text.  Columns are CPython's,
 * UTF-8 byte offsets in the line; they are untrusted, so every span is
 * checked against the file's lines (fix_span_in) before an edit cuts there.
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
	const struct code_fact *call;   /* its call-span fact */
	struct code_span span;
	struct code_arg args[FACTS_MAX_ARGS];
	int nargs;
	int chained;                /* its result used by its expression (x.f().g, x.f()[0]); -1: not told */
};

/*
 * What a recording's facts of a file hold (docs/schema.md, code_facts):
 * 0 none (a recording made before them, a file that did not parse), 1 the
 * positions of calls, arguments and defs (the first facts), FACTS_VERSION
 * with every kind of this agprof (a `facts` fact names it; a file whose
 * facts were cut at the parser's bound has none, and reads as 1).
 */
#define FACTS_VERSION 2
int facts_version(const struct model *m, const char *file);
/*
 * Whether file has position facts (a recording since they were written,
 * and a file that parsed): 0 means edits fall back to reading the text.
 */
int facts_positions_known(const struct model *m, const char *file);
/* The next fact of kind in file after *after (NULL: the first), or NULL: facts_next(m, NULL, ...) loops. */
const struct code_fact *facts_next(const struct model *m, const struct code_fact *after, const char *file,
				   const char *kind);
/* The name TensorFlow is bound to by a module-level import of file (bind facts), or NULL. */
const char *facts_tf_alias(const struct model *m, const char *file);

/* An assignment (kind assign): `targets = value`. */
struct code_assign {
	const struct code_fact *fact;
	struct code_span stmt, value;   /* the whole statement, its value */
	int alone;                      /* the only statement of its block */
	int multiline_string;           /* a string in the value spans lines */
	const char *targets;            /* "step", "a,b", "self.fn", "?" */
	const char *reads;              /* the names the value reads, "a,b"; "-" none; "*" too many to list */
};

/* a filled from assign fact f; 0, or -1 when its detail is not one. */
int facts_assign_of(const struct code_fact *f, struct code_assign *a);
/* Whether the comma-separated list names has name (a "*" list has every name). */
int facts_list_has(const char *names, const char *name);
/*
 * The call of name (the callee's last part) whose lines hold line; else,
 * where none is named so (called through another name), the only call
 * there with nargs arguments.  0 with *out filled, -1 when there is none,
 * several, or more arguments than FACTS_MAX_ARGS.
 */
int facts_call_at(const struct model *m, const char *file, int line, const char *name, size_t nargs,
		  struct code_call *out);
/* The call (with its arguments) of call-span fact f; 0 or -1. */
int facts_call_of(const struct model *m, const struct code_fact *f, struct code_call *out);
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
