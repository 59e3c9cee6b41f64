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

/* Node inputs and a Cast's DstT: what graph_dtype.c reads to see the dtype a graph computes an argument with. */
Test(functiondef, node_inputs_and_cast_target)
{
	size_t len;
	unsigned char *buf = load("cast.pb", &len);
	struct functiondef fd;
	const struct fdef_node *cast, *mul;

	cr_assert_eq(functiondef_parse(&fd, buf, len), 0);
	cr_assert_str_eq(fd.inputs[0].name, "a");
	cr_assert_str_eq(fd.inputs[0].dtype, "int32");
	cast = node_by_op(&fd, "Cast");
	mul = node_by_op(&fd, "Mul");
	cr_assert(cast && mul);
	cr_assert_eq(cast->ninputs, 1);
	cr_assert_str_eq(cast->inputs[0], "a");
	cr_assert_str_eq(cast->dst_type, "int64");
	cr_assert_eq(mul->ninputs, 2);
	cr_assert_str_eq(mul->inputs[0], "Cast:y:0");
	cr_assert_str_eq(mul->inputs[1], "mul/y:output:0");
	cr_assert_null(mul->dst_type);
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

/* Protobuf writing for hand-made inputs: field num with wire type 2 (bytes). */
static size_t put_bytes(unsigned char *out, unsigned num, const void *data, size_t len)
{
	out[0] = (unsigned char)(num << 3 | 2);
	out[1] = (unsigned char)len; /* the test messages stay under 128 bytes */
	memcpy(out + 2, data, len);
	return len + 2;
}

/*
 * A FunctionDef "f" with one Const node whose TensorProto (dtype dt) ends
 * with field num (5 float_val, 6 double_val) packed, holding n bytes: the
 * value is the last bytes of the buffer, so a read past it is out of bounds.
 */
static unsigned char *const_def(int dt, unsigned num, size_t n, size_t *len)
{
	unsigned char tensor[64], attr[80], entry[96], node[128], sig[16], fdef[160], zeros[16] = { 0 };
	size_t t = 0, a, e = 0, nd = 0, s, f = 0;
	unsigned char *out;

	tensor[t++] = 0x08, tensor[t++] = (unsigned char)dt; /* dtype */
	t += put_bytes(tensor + t, num, zeros, n);
	a = put_bytes(attr, 8, tensor, t);                  /* AttrValue.tensor */
	e += put_bytes(entry + e, 1, "value", 5);
	e += put_bytes(entry + e, 2, attr, a);
	nd += put_bytes(node + nd, 1, "c", 1);
	nd += put_bytes(node + nd, 2, "Const", 5);
	nd += put_bytes(node + nd, 5, entry, e);
	s = put_bytes(sig, 1, "f", 1);                      /* OpDef.name */
	f += put_bytes(fdef + f, 1, sig, s);
	f += put_bytes(fdef + f, 3, node, nd);
	out = malloc(f);
	memcpy(out, fdef, f);
	*len = f;
	return out;
}

/* Regression: packed float/double values shorter than their width were read past the buffer. */
Test(functiondef, short_packed_floats_are_not_read_past_the_end)
{
	static const struct { int dtype; unsigned num; size_t n; const char *value; } cases[] = {
		{ 1, 5, 0, "0" }, { 1, 5, 1, "0" }, { 1, 5, 3, "0" }, { 1, 5, 4, "0" },
		{ 2, 6, 1, "0" }, { 2, 6, 7, "0" }, { 2, 6, 8, "0" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t len;
		unsigned char *buf = const_def(cases[i].dtype, cases[i].num, cases[i].n, &len);
		struct functiondef fd;

		cr_assert_eq(functiondef_parse(&fd, buf, len), 0, "case %zu", i);
		cr_assert_eq(fd.nnodes, 1);
		cr_assert_str_eq(fd.nodes[0].op, "Const");
		cr_assert_str_eq(fd.nodes[0].const_value, cases[i].value, "case %zu: %s", i, fd.nodes[0].const_value);
		functiondef_release(&fd);
		free(buf);
	}
}
