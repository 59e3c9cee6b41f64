/* fuzz_functiondef.c - the FunctionDef decoder (common/functiondef.c) on any bytes. */
#include "fuzz.h"
#include "functiondef.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* an exact-size copy: a read past the input is a read past the allocation */
	uint8_t *copy = malloc(size ? size : 1);
	struct functiondef fd;

	memcpy(copy, data, size);
	if (functiondef_parse(&fd, copy, size) == 0) {
		fuzz_check(fd.name != NULL, "a parsed FunctionDef has a name");
		for (size_t i = 0; i < fd.nrefs; i++)
			fuzz_check(fd.refs[i] != NULL, "references are never NULL");
		for (size_t i = 0; i < fd.nnodes; i++)
			fuzz_check(!fd.nodes[i].const_value || fd.nodes[i].const_dtype, "a constant has a dtype");
		functiondef_release(&fd);
	}
	free(copy);
	return 0;
}
