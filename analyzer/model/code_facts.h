/*
 * code_facts.h - what the user's code says at a line (table code_facts,
 * written at record time from CPython's ast: writer/codefacts.py): the
 * function and loop holding it, the calls in a range of lines and what each
 * callee is, and how a call's result is used on the next lines.  The
 * advice reads them to say only what fits the code: no "vectorize the loop"
 * where there is none, no tf.function around code that cannot be traced.
 *
 * A recording without facts for a file (older, or the parse failed) answers
 * "unknown" (code_facts_known() 0): callers then advise as before.
 */
#ifndef AGPROF_CODE_FACTS_MODEL_H
#define AGPROF_CODE_FACTS_MODEL_H

#include <stddef.h>
#include <string.h>

struct model;

struct code_fact {
	const char *path, *kind;     /* function, loop, call, store, global, numpy-use, assign, bind, ...: docs/schema.md */
	int line, col, end_line;
	const char *name, *detail;   /* see docs/schema.md, code_facts */
};

/* Calls followed into the user's own functions, at most (code_obstacles()). */
#define CODE_FOLLOW_DEPTH 4

/*
 * What stops a range of lines from being traced as it is, or runs once at
 * tracing: fact, in the range or in a function of the user's that the range
 * calls (through via[0..nvia): the calls followed, outermost first, via[0]
 * in the range).
 */
struct code_obstacle {
	const struct code_fact *fact;
	const char *why;             /* "converts a tensor to NumPy", ... */
	const struct code_fact *via[CODE_FOLLOW_DEPTH];
	int nvia;
};

/* The last part of a dotted callee as written ("ds.map" -> "map", "step" -> "step"). */
const char *code_callee_last(const char *name);
/* Read code_facts into the model (none without the table, or past a bound); 0 or -1. */
int model_load_code_facts(struct model *m);
/* Whether file has facts (it parsed). */
int code_facts_known(const struct model *m, const char *file);
/* The innermost fact of kind ("function", "loop") whose lines hold line, or NULL. */
const struct code_fact *code_fact_around(const struct model *m, const char *kind, const char *file, int line);
/*
 * What in lines from..to of file cannot be traced or would run once at
 * tracing: a tensor made NumPy or Python (.numpy(), .item()), NumPy or
 * Python randomness (frozen into the graph as a constant), I/O, time,
 * global statements, attribute stores, and calls into other Python objects
 * at lines where the recording saw no TensorFlow work (env.step()).  A
 * call of the user's own function (code_callee_function(): a def of the
 * file, nested or imported, a method on self or on an instance of the
 * user's class) is followed into that function's
 * body, CODE_FOLLOW_DEPTH calls deep, each function once a chain (cycles),
 * 64 functions a question at most: its first obstacle counts as the call's.
 * Up to max into out, in line order; the count found.
 */
size_t code_obstacles(const struct model *m, const char *file, int from, int to, struct code_obstacle *out,
		      size_t max);
/*
 * The call in from..to that did the most TensorFlow work (the eager ops at
 * its line): the model or layer call that can go in a graph alone, or NULL.
 */
const struct code_fact *code_model_call(const struct model *m, const char *file, int from, int to);
/*
 * The export at file:line (tf.saved_model.save, get_concrete_function, a
 * model's export or save), or NULL: the traces it makes are not retraces of
 * the user's calls.
 */
const struct code_fact *code_export_call(const struct model *m, const char *file, int line);
/*
 * Whether a call starting at file:line passes the keyword argument name
 * (its facts of kind "arg"): 1 or 0; -1 when the file has no such facts
 * (an older recording, a file that did not parse).
 */
int code_call_passes_keyword(const struct model *m, const char *file, int line, const char *name);
/*
 * Who passes a traced function's argument, the user's call or a library
 * (analyzer/model/model.c, library_passes): the call facts of the user's
 * line and of the library's lines in the recorded call chains, and the
 * `signature` facts of the library's functions.
 *
 * The call keyed at file:line (its start; a call chained inside another,
 * past its callee: the line a traceback names) whose callee's last name is
 * callee or alt (`minilosses.scaled` is "scaled"), else the line's only
 * call, else NULL.
 */
const struct code_fact *code_call_on(const struct model *m, const char *file, int line, const char *callee,
				     const char *alt);
/*
 * call's argument passed by keyword (NULL: none) or at position pos (from
 * 0; -1: none), else a starred one that could hold it (`*args` for a
 * position, `**kw` for a keyword), else NULL.
 */
const struct code_fact *code_call_arg(const struct model *m, const struct code_fact *call, const char *keyword,
				      int pos);
/* The `signature` fact of the function name whose lines in file hold line (the innermost), or NULL. */
const struct code_fact *code_signature(const struct model *m, const char *file, const char *name, int line);
/*
 * The position a call passes sig's parameter param at (from 0; a method's
 * self or cls, bound, not counted), -1 when param is none of its
 * positional parameters; *star 1 when sig takes *args.
 */
int code_sig_position(const struct code_fact *sig, const char *param, int *star);
/* Whether fact f is of file. */
static inline int code_fact_in(const struct code_fact *f, const char *file)
{
	return file && !strcmp(f->path, file);
}
/* A bind fact's scope (its detail after "HOW;"): "module", "function LINE", "class LINE". */
const char *code_bind_scope(const struct code_fact *f);
/* The bind fact of fn's def (its line, and its scope "class LINE" for a method), or NULL. */
const struct code_fact *code_def_bind(const struct model *m, const struct code_fact *fn);
/* The user's function that call (a call fact) names, or NULL (user_code.c says which). */
const struct code_fact *code_callee_function(const struct model *m, const struct code_fact *call);
/* Whether f is a bind fact of that how (its detail "HOW;SCOPE": "import tensorflow", "store", "param"). */
int code_bind_is(const struct code_fact *f, const char *how);
/*
 * How often name is bound in file (its facts of kind "bind": assigned,
 * imported, defined, a parameter, deleted) in scope ("module", "function
 * LINE" with LINE its function fact's line; NULL: anywhere), the last line
 * of those into *last (0 when none); -1 when a `global` or `nonlocal`
 * statement names it (any function may bind it then).
 */
int code_bindings(const struct model *m, const char *file, const char *name, const char *scope, int *last);
/* How the result of the call at file:line is used as NumPy on the next lines (".reshape", ...), or NULL. */
const struct code_fact *code_numpy_use(const struct model *m, const char *file, int line);

#endif
