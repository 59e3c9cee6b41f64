/*
 * fuzz_ring.c - the launcher's side-record decoding (cmd/agprof/run_writer.c)
 * on any bytes: the framing of a side file (struct agp_side_hdr records)
 * and each record's tagged fields (fields_parse(), fint(), ftext()).
 *
 * The decoder is static in run_writer.c, so the file is included here
 * rather than changed to export it; the parts that need a live recording
 * (the ring drain, the SQL) are not reached.
 */
#include "fuzz.h"
#include "../../cmd/agprof/run_writer.c"
#include "../../cmd/agprof/checkpointer.c"
#include "../../cmd/agprof/capture_log.c"
#include "../../cmd/agprof/eager_buckets.c"
#include "../../cmd/agprof/eager_keys.c"
#include "../../cmd/agprof/eager_blocks.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t off = 0;

	/* drain_side()'s framing: header, then len bytes of fields */
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
			char *t = ftext(&fs, tag);

			(void)fint(&fs, tag);
			free(t);
		}
		free(rec);
		off += sizeof(h) + h.len;
	}
	return 0;
}
