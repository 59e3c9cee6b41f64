/*
 * side_fields.h - a side record's tagged fields (common/agp_protocol.h:
 * struct agp_field, its bytes, padded to 8), as the workload wrote them:
 * untrusted, so every reader is bounded by the record's length
 * (tests/fuzz/fuzz_ring.c).
 */
#ifndef AGPROF_SIDE_FIELDS_H
#define AGPROF_SIDE_FIELDS_H

#include "agp_protocol.h"

#include <stddef.h>
#include <stdint.h>

#define FIELD_TAGS 256  /* tags 150-179 are in use (common/agp_protocol.h) */
struct fields {
	const struct agp_field *f[FIELD_TAGS];
	const char *v[FIELD_TAGS];
};

/* The fields of the len bytes at p (the last of each tag wins); a torn one ends them. */
void fields_parse(struct fields *fs, const char *p, size_t len);

/* An 8-byte field's value, 0 when absent or of another size. */
int64_t fields_int(const struct fields *fs, int tag);

/* malloc'd NUL-terminated copy of a text field, or NULL. */
char *fields_text(const struct fields *fs, int tag);

#endif
