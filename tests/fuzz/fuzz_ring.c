/*
 * fuzz_ring.c - the launcher's side-record decoding on any bytes: the
 * framing of a side file (struct agp_side_hdr records, as run_side_drain in
 * writer/run_side.c reads it) and each record's tagged fields
 * (writer/side_fields.c: fields_parse(), fields_int(), fields_text()).
 */
#include "fuzz.h"
#include "../../writer/side_fields.c"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;

	/* run_side_drain()'s framing: header, then len bytes of fields */
	while (size - off >= sizeof(struct agp_side_hdr)) {
		struct agp_side_hdr h;
		struct fields fs;
		uint64_t *rec;

		memcpy(&h, data + off, sizeof(h));
		if (size - off - sizeof(h) < h.len)
			break;
		/* aligned like the launcher's buffer, and exactly len long: reads past it are caught */
		rec = malloc(h.len ? h.len : 1);
		memcpy(rec, data + off + sizeof(h), h.len);
		fields_parse(&fs, (const char *)rec, h.len);
		for (int tag = 0; tag < 128; tag++) {
			char *t = fields_text(&fs, tag);

			(void)fields_int(&fs, tag);
			free(t);
		}
		free(rec);
		off += sizeof(h) + h.len;
	}
	return 0;
}
