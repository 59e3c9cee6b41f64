/*
 * pitfalls.h - metric sources for what happened inside traces (side
 * effects, failed traces, AutoGraph fallbacks, unrolled loops, SavedModel
 * exports without a serving signature) and the graphs each function keeps.
 * Defined by analyzer/model/pitfalls.c; docs/rules.md lists the sources' fields.
 */
#ifndef AGPROF_PITFALLS_H
#define AGPROF_PITFALLS_H

#include "model.h"

/* Register the sources (model_load() calls it after the built-in ones).  0 or -1. */
int pitfalls_register(struct model *m);

#endif
