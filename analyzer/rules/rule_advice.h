/*
 * rule_advice.h - the names a rule file's `fix:` and `saving:` keys take
 * (docs/rules.md): which edit builder and which saving estimator of
 * analyzer/advice/ serve the rule's findings.  The rule loader rejects a
 * name not listed here; fix.c and saving.c hold one table each, indexed by
 * these enums, so a rule file (a user's too) reuses an entry by naming it.
 *
 * Owns: the names and their order.  A new entry: its enum and name here,
 * its builder in the advice table (the tables' sizes are checked at
 * compile time), a line in docs/rules.md.
 */
#ifndef AGPROF_RULE_ADVICE_H
#define AGPROF_RULE_ADVICE_H

/* The edit, or the advice in words when none can be written. */
enum fix_kind {
	FIX_NONE,            /* "none": no edit, the recommendation says what to change (the default) */
	FIX_RETRACE,         /* "retrace": by retrace cause: input_signature, call argument, hoisted tf.function */
	FIX_EAGER_LOOP,      /* "eager-loop": the hot eager loop moved into a tf.function */
	FIX_INPUT_PIPELINE,  /* "input-pipeline": the tf.data pipeline's slow stage */
	FIX_SEE_RETRACING,   /* "see-retracing": the edits are the retracing findings' */
	FIX_PAD_SHAPES,      /* "pad-shapes": XLA compiles per shape; in words */
	FIX_BUILD_ONCE,      /* "build-once": variables created per tf.function object; in words */
	FIX_PY_FUNCTION,     /* "py-function-body": a py_function or from_generator body; in words */
	FIX_JIT_COMPILE,     /* "jit-compile": jit_compile=True on the function's @tf.function, when its remedy is jit */
	FIX_NKINDS
};

/* How the saving of the fix is estimated (analyzer/advice/saving.c). */
enum saving_kind {
	SAVING_COST,            /* "cost": the finding's cost, an upper bound (the default) */
	SAVING_RETRACES,        /* "retraces": the function's retraces the fix of its cause removes */
	SAVING_ALL_RETRACES,    /* "all-retraces": every function's retraces */
	/*
	 * "eager-loop": the wrapped loop's eager ops less the same ops in a
	 * graph, a forecast (finding.forecast_ns): moving work into a graph is
	 * an experiment, so nothing is claimed, as for "experiment"
	 */
	SAVING_EAGER_LOOP,
	SAVING_INPUT_OVERLAP,   /* "input-overlap": the input waits overlapping input with compute hides */
	SAVING_RECOMPILES,      /* "recompiles": the function's extra XLA compilations */
	/*
	 * "experiment": no saving is claimed (0, ranked after every claimed
	 * one): the edit is an experiment, `agprof fix --verify` measures it on
	 * the program and its verdict (analyzer/advice/verdicts.h) claims what it measured
	 */
	SAVING_EXPERIMENT,
	SAVING_NKINDS
};

/* The kind named name, or -1. */
int fix_kind_parse(const char *name);
int saving_kind_parse(const char *name);
/* The name of a kind ("none" / "cost" for one out of range). */
const char *fix_kind_name(int kind);
const char *saving_kind_name(int kind);

#endif
