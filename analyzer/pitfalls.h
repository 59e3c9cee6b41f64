/*
 * pitfalls.h - metric sources for what happened inside traces (side
 * effects, failed traces, AutoGraph fallbacks, unrolled loops, SavedModel
 * exports without a serving signature) and the graphs each function keeps.
 * Defined by analyzer/pitfalls.c; docs/rules.md lists the sources' fields.
 */
#ifndef AGPROF_PITFALLS_H
#define AGPROF_PITFALLS_H

#include "model.h"

/* Register the sources (model_load() calls it after the built-in ones).  0 or -1. */
int pitfalls_register(struct model *m);

/*
 * Graph functions f keeps, their nodes and FunctionDef bytes (the
 * graph_memory source's row); 0 when f has none recorded.
 */
int pitfalls_graph_memory(const struct model *m, const struct model_function *f, int64_t *graphs, int64_t *nodes,
			  int64_t *def_bytes);

#endif
