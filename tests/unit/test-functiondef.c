/* test-functiondef.c - the FunctionDef reader on real TensorFlow 2.21 output. */
#include "functiondef.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char *load(const char *name, size_t *len)
{
	char path[1024];
	FILE *f;
	unsigned char *buf = malloc(1 << 20);

	snprintf(path, sizeof(path), "%s/tests/unit/fixtures/%s", getenv("AGPROF_SOURCE_ROOT"), name);
	f = fopen(path, "rb");
	cr_assert_not_null(f, "cannot open %s", path);
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

static const struct fdef_node *node_by_op(const struct functiondef *fd, const char *op)
{
	for (size_t i = 0; i < fd->nnodes; i++)
		if (fd->nodes[i].op && !strcmp(fd->nodes[i].op, op))
			return &fd->nodes[i];
	return NULL;
}

static int has_ref(const struct functiondef *fd, const char *name)
{
	for (size_t i = 0; i < fd->nrefs; i++)
		if (!strcmp(fd->refs[i], name))
			return 1;
	return 0;
}

Test(functiondef, jit_function_inputs_and_constants)
{
	size_t len;
	unsigned char *buf = load("jitted.pb", &len);
	struct functiondef fd;
	int consts = 0;

	cr_assert_eq(functiondef_parse(&fd, buf, len), 0);
	cr_assert_str_eq(fd.name, "__inference_jitted_11");
	cr_assert_eq(fd.jit_compile, 1);
	cr_assert_eq(fd.ninputs, 1);
	cr_assert_str_eq(fd.inputs[0].name, "x");
	cr_assert_str_eq(fd.inputs[0].dtype, "float32");
	cr_assert_str_eq(fd.inputs[0].shape, "[4]");
	for (size_t i = 0; i < fd.nnodes; i++) {
		if (!fd.nodes[i].const_value)
			continue;
		consts++;
		if (!strcmp(fd.nodes[i].name, "mul/y"))
			cr_expect_str_eq(fd.nodes[i].const_value, "0.25");
		if (!strcmp(fd.nodes[i].name, "add/y"))
			cr_expect_str_eq(fd.nodes[i].const_value, "3");
	}
	cr_assert_eq(consts, 2);
	functiondef_release(&fd);
	free(buf);
}

Test(functiondef, black_box_and_branch_references)
{
	size_t len;
	unsigned char *buf = load("branchy.pb", &len);
	struct functiondef fd;
	const struct fdef_node *py;

	cr_assert_eq(functiondef_parse(&fd, buf, len), 0);
	cr_assert_str_eq(fd.name, "__inference_branchy_73");
	cr_assert_eq(fd.jit_compile, 0);
	cr_assert_eq(fd.ninputs, 2);
	cr_assert_str_eq(fd.inputs[0].shape, "[2,3]");
	cr_assert_str_eq(fd.inputs[1].dtype, "int32");
	cr_assert_str_eq(fd.inputs[1].shape, "[]");
	py = node_by_op(&fd, "EagerPyFunc");
	cr_assert_not_null(py);
	cr_assert_str_eq(py->token, "pyfunc_0");
	cr_assert(has_ref(&fd, "cond_true_25"));
	cr_assert(has_ref(&fd, "cond_false_26"));
	cr_assert(has_ref(&fd, "while_cond_44"));
	cr_assert(has_ref(&fd, "while_body_45"));
	functiondef_release(&fd);
	free(buf);
}

Test(functiondef, every_truncation_is_rejected_or_consistent)
{
	size_t len;
	unsigned char *buf = load("while_body.pb", &len);
	struct functiondef fd;

	/* No prefix may crash the reader; the name field comes first, so short
	 * prefixes fail and longer ones parse with fewer nodes. */
	for (size_t cut = 0; cut < len; cut++) {
		unsigned char *copy = malloc(cut ? cut : 1);

		memcpy(copy, buf, cut);
		if (functiondef_parse(&fd, copy, cut) == 0) {
			cr_assert_not_null(fd.name);
			functiondef_release(&fd);
		}
		free(copy);
	}
	cr_assert_eq(functiondef_parse(&fd, buf, len), 0);
	cr_assert_str_eq(fd.name, "while_body_45");
	functiondef_release(&fd);
	free(buf);
}

Test(functiondef, garbage_is_rejected)
{
	const unsigned char junk[] = { 0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f, 0x01 };
	struct functiondef fd;

	cr_assert_eq(functiondef_parse(&fd, junk, sizeof(junk)), -1);
	cr_assert_eq(functiondef_parse(&fd, "", 0), -1);
	cr_assert_null(functiondef_dtype_name(0));
	cr_assert_str_eq(functiondef_dtype_name(101), "float32");
}
