/* rule_advice.c - the names of the fix: and saving: keys; see rule_advice.h. */
#include "rule_advice.h"

#include <string.h>

static const char *const fix_names[] = {
	[FIX_NONE] = "none",
	[FIX_RETRACE] = "retrace",
	[FIX_EAGER_LOOP] = "eager-loop",
	[FIX_INPUT_PIPELINE] = "input-pipeline",
	[FIX_SEE_RETRACING] = "see-retracing",
	[FIX_PAD_SHAPES] = "pad-shapes",
	[FIX_BUILD_ONCE] = "build-once",
	[FIX_PY_FUNCTION] = "py-function-body",
	[FIX_JIT_COMPILE] = "jit-compile",
};
_Static_assert(sizeof(fix_names) / sizeof(fix_names[0]) == FIX_NKINDS, "a fix kind without its name");

static const char *const saving_names[] = {
	[SAVING_COST] = "cost",
	[SAVING_RETRACES] = "retraces",
	[SAVING_ALL_RETRACES] = "all-retraces",
	[SAVING_EAGER_LOOP] = "eager-loop",
	[SAVING_INPUT_OVERLAP] = "input-overlap",
	[SAVING_RECOMPILES] = "recompiles",
	[SAVING_EXPERIMENT] = "experiment",
};
_Static_assert(sizeof(saving_names) / sizeof(saving_names[0]) == SAVING_NKINDS, "a saving kind without its name");

static int parse(const char *const *names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return i;
	return -1;
}

int fix_kind_parse(const char *name)
{
	return parse(fix_names, FIX_NKINDS, name);
}

int saving_kind_parse(const char *name)
{
	return parse(saving_names, SAVING_NKINDS, name);
}

const char *fix_kind_name(int kind)
{
	return fix_names[kind >= 0 && kind < FIX_NKINDS ? kind : FIX_NONE];
}

const char *saving_kind_name(int kind)
{
	return saving_names[kind >= 0 && kind < SAVING_NKINDS ? kind : SAVING_COST];
}
