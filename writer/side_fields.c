/* side_fields.c - see side_fields.h. */
#include "side_fields.h"

#include <stdlib.h>
#include <string.h>

void fields_parse(struct fields *fs, const char *p, size_t len)
{
	const char *end = p + len;

	memset(fs, 0, sizeof(*fs));
	while ((size_t)(end - p) >= sizeof(struct agp_field)) {
		const struct agp_field *f = (const void *)p;
		size_t padded = ((size_t)f->len + 7) & ~(size_t)7;

		if (padded > (size_t)(end - p) - sizeof(*f))
			break;
		if (f->tag < FIELD_TAGS) {
			fs->f[f->tag] = f;
			fs->v[f->tag] = p + sizeof(*f);
		}
		p += sizeof(*f) + padded;
	}
}

int64_t fields_int(const struct fields *fs, int tag)
{
	int64_t v = 0;

	if (fs->f[tag] && fs->f[tag]->len == 8)
		memcpy(&v, fs->v[tag], 8);
	return v;
}

char *fields_text(const struct fields *fs, int tag)
{
	char *out;

	if (!fs->f[tag])
		return NULL;
	out = malloc(fs->f[tag]->len + 1);
	if (out) {
		memcpy(out, fs->v[tag], fs->f[tag]->len);
		out[fs->f[tag]->len] = '\0';
	}
	return out;
}
