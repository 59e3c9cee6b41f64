/*
 * metric_fields.h - the two lines every metric source's get() is made of
 * (analyzer/model/sources.c, analyzer/gpu/gpu_metrics.c): "if the field is this name,
 * the value is this expression".  Used inside
 *   int get(..., const char *field, struct metric_value *out)
 * which they return from.
 */
#ifndef AGPROF_METRIC_FIELDS_H
#define AGPROF_METRIC_FIELDS_H

#include "model.h"

#include <string.h>

/* A number field. */
#define NUM(fname, expr) \
	if (!strcmp(field, fname)) { out->type = METRIC_NUM; out->num = (double)(expr); return 0; }
/* A text field: METRIC_NONE when the expression is NULL. */
#define TEXT(fname, expr) \
	if (!strcmp(field, fname)) { const char *t_ = (expr); out->type = t_ ? METRIC_TEXT : METRIC_NONE; \
		out->text = t_; return 0; }

#endif
