/* functiondef.c - see functiondef.h.  Field numbers from tensorflow's .proto files. */
#include "functiondef.h"
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pb {
	const unsigned char *p, *end;
};

struct pb_field {
	uint32_t num;
	uint32_t wire;
	uint64_t varint;     /* wire 0, also fixed32/64 raw bits */
	struct pb sub;       /* wire 2 */
};

static int pb_varint(struct pb *b, uint64_t *v)
{
	int shift = 0;

	*v = 0;
	while (b->p < b->end && shift < 64) {
		unsigned char c = *b->p++;

		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
		shift += 7;
	}
	return -1;
}

/* Next field of b; 1 when one was read, 0 at the end, -1 when malformed. */
static int pb_next(struct pb *b, struct pb_field *f)
{
	uint64_t key, len;

	if (b->p >= b->end)
		return 0;
	if (pb_varint(b, &key) != 0)
		return -1;
	f->num = (uint32_t)(key >> 3);
	f->wire = (uint32_t)(key & 7);
	switch (f->wire) {
	case 0:
		return pb_varint(b, &f->varint) == 0 ? 1 : -1;
	case 1:
		if (b->end - b->p < 8)
			return -1;
		memcpy(&f->varint, b->p, 8);
		b->p += 8;
		return 1;
	case 5:
		if (b->end - b->p < 4)
			return -1;
		f->varint = 0;
		memcpy(&f->varint, b->p, 4);
		b->p += 4;
		return 1;
	case 2:
		if (pb_varint(b, &len) != 0 || len > (uint64_t)(b->end - b->p))
			return -1;
		f->sub.p = b->p;
		f->sub.end = b->p + len;
		b->p += len;
		return 1;
	default:
		return -1;
	}
}

static char *pb_strdup(const struct pb *s)
{
	size_t n = (size_t)(s->end - s->p);
	char *out = malloc(n + 1);

	if (out) {
		memcpy(out, s->p, n);
		out[n] = '\0';
	}
	return out;
}

static int pb_streq(const struct pb *s, const char *lit)
{
	size_t n = strlen(lit);

	return (size_t)(s->end - s->p) == n && memcmp(s->p, lit, n) == 0;
}

const char *functiondef_dtype_name(int64_t dt)
{
	static const char *const names[] = {
		[1] = "float32", [2] = "float64", [3] = "int32", [4] = "uint8", [5] = "int16",
		[6] = "int8", [7] = "string", [8] = "complex64", [9] = "int64", [10] = "bool",
		[14] = "bfloat16", [17] = "uint16", [18] = "complex128", [19] = "float16",
		[20] = "resource", [21] = "variant", [22] = "uint32", [23] = "uint64",
	};

	if (dt > 100)
		dt -= 100;  /* reference types */
	if (dt <= 0 || dt >= (int64_t)(sizeof(names) / sizeof(names[0])))
		return NULL;
	return names[dt];
}

/* TensorShapeProto -> "[64,20]" / "?" */
static char *shape_text(struct pb s)
{
	struct strbuf sb = STRBUF_INIT;
	struct pb_field f;
	int rc, ndims = 0, unknown = 0;

	strbuf_addch(&sb, '[');
	while ((rc = pb_next(&s, &f)) > 0) {
		if (f.num == 3 && f.wire == 0 && f.varint)
			unknown = 1;
		if (f.num == 2 && f.wire == 2) {
			struct pb d = f.sub;
			struct pb_field df;
			int64_t size = 0;

			while (pb_next(&d, &df) > 0)
				if (df.num == 1 && df.wire == 0)
					size = (int64_t)df.varint;
			if (ndims++)
				strbuf_addch(&sb, ',');
			if (size < 0)
				strbuf_addstr(&sb, "None");
			else
				strbuf_addf(&sb, "%lld", (long long)size);
		}
	}
	strbuf_addch(&sb, ']');
	if (rc < 0 || unknown) {
		strbuf_release(&sb);
		return strdup("?");
	}
	return strbuf_detach(&sb);
}

/*
 * float_val (5) or double_val (6): packed (wire 2) or single values (fixed32
 * for float, fixed64 for double); a packed run shorter than one value is
 * malformed.  1 when buf holds the first value.
 */
static int scalar_float(const struct pb_field *f, char *buf, size_t len)
{
	size_t width = f->num == 5 ? 4 : 8;
	const unsigned char *p = f->wire == 2 ? f->sub.p : (const unsigned char *)&f->varint;

	if (f->wire == 2 ? (size_t)(f->sub.end - f->sub.p) < width : f->wire != (f->num == 5 ? 5u : 1u))
		return 0;
	if (f->num == 5) {
		float v;
		memcpy(&v, p, 4);
		snprintf(buf, len, "%.9g", (double)v);
	} else {
		double v;
		memcpy(&v, p, 8);
		snprintf(buf, len, "%.17g", v);
	}
	return 1;
}

/* int_val (7), int64_val (10) or bool_val (11), single or packed.  1 when buf holds the first value. */
static int scalar_int(const struct pb_field *f, char *buf, size_t len)
{
	uint64_t v = f->varint;

	if (f->wire != 0 && f->wire != 2)
		return 0;
	if (f->wire == 2) {
		struct pb q = f->sub;
		if (pb_varint(&q, &v) != 0)
			return 0;
	}
	if (f->num == 11)
		snprintf(buf, len, "%s", v ? "True" : "False");
	else if (f->num == 7)
		snprintf(buf, len, "%d", (int32_t)v);
	else
		snprintf(buf, len, "%lld", (long long)v);
	return 1;
}

/* tensor_content (4) of one float, double, int32 or int64.  1 when buf holds it. */
static int scalar_content(int64_t dtype, const struct pb_field *f, char *buf, size_t len)
{
	size_t n = (size_t)(f->sub.end - f->sub.p);

	if (dtype == 1 && n == 4) {
		float v;
		memcpy(&v, f->sub.p, 4);
		snprintf(buf, len, "%.9g", (double)v);
	} else if (dtype == 2 && n == 8) {
		double v;
		memcpy(&v, f->sub.p, 8);
		snprintf(buf, len, "%.17g", v);
	} else if ((dtype == 3 && n == 4) || (dtype == 9 && n == 8)) {
		int64_t v = 0;
		memcpy(&v, f->sub.p, n);
		snprintf(buf, len, "%lld", (long long)(n == 4 ? (int32_t)v : v));
	} else {
		return 0;
	}
	return 1;
}

/* A scalar TensorProto's value as text, or NULL when not a scalar. */
static char *scalar_tensor(struct pb s, char **dtype_out)
{
	struct pb_field f;
	int64_t dtype = 0;
	int rank = 0, have = 0;
	char buf[64];

	*dtype_out = NULL;
	while (pb_next(&s, &f) > 0) {
		if (f.num == 1 && f.wire == 0) {
			dtype = (int64_t)f.varint;
		} else if (f.num == 2 && f.wire == 2) {
			struct pb d = f.sub;
			struct pb_field df;

			while (pb_next(&d, &df) > 0)
				if (df.num == 2)
					rank++;
		} else if (!have && (f.num == 5 || f.num == 6)) {
			have = scalar_float(&f, buf, sizeof(buf));
		} else if (!have && (f.num == 7 || f.num == 10 || f.num == 11)) {
			have = scalar_int(&f, buf, sizeof(buf));
		} else if (!have && f.num == 4 && f.wire == 2) {
			have = scalar_content(dtype, &f, buf, sizeof(buf));
		}
	}
	if (rank != 0 || !functiondef_dtype_name(dtype))
		return NULL;
	if (!have)
		snprintf(buf, sizeof(buf), "%s", dtype == 10 ? "False" : "0");  /* proto3 default */
	*dtype_out = strdup(functiondef_dtype_name(dtype));
	if (!*dtype_out)
		return NULL;
	return strdup(buf);
}

static void add_ref(struct functiondef *fd, const struct pb *name)
{
	char **nr = realloc(fd->refs, (fd->nrefs + 1) * sizeof(*nr));
	char *copy;

	if (!nr)
		return;
	fd->refs = nr;
	if ((copy = pb_strdup(name)))
		fd->refs[fd->nrefs++] = copy;
}

/* NameAttrList: field 1 is the function name. */
static void collect_func(struct functiondef *fd, struct pb s)
{
	struct pb_field f;

	while (pb_next(&s, &f) > 0)
		if (f.num == 1 && f.wire == 2)
			add_ref(fd, &f.sub);
}

/* AttrValue: record function references (func = 10, list.func = 1/9). */
static void collect_attr_refs(struct functiondef *fd, struct pb v)
{
	struct pb_field f;

	while (pb_next(&v, &f) > 0) {
		if (f.num == 10 && f.wire == 2) {
			collect_func(fd, f.sub);
		} else if (f.num == 1 && f.wire == 2) {
			struct pb l = f.sub;
			struct pb_field lf;

			while (pb_next(&l, &lf) > 0)
				if (lf.num == 9 && lf.wire == 2)
					collect_func(fd, lf.sub);
		}
	}
}

/* Map entry (key = 1, value = 2). */
static int map_entry(struct pb e, struct pb *key, struct pb *value)
{
	struct pb_field f;
	int seen = 0;

	while (pb_next(&e, &f) > 0) {
		if (f.num == 1 && f.wire == 2)
			*key = f.sub, seen |= 1;
		else if (f.num == 2 && f.wire == 2)
			*value = f.sub, seen |= 2;
	}
	return seen == 3 ? 0 : -1;
}

static void add_input(struct fdef_node *n, const struct pb *name)
{
	char **ni = realloc(n->inputs, (n->ninputs + 1) * sizeof(*ni));
	char *copy;

	if (!ni)
		return;
	n->inputs = ni;
	if ((copy = pb_strdup(name)))
		n->inputs[n->ninputs++] = copy;
}

/* AttrValue.type (6) as a dtype name, or NULL. */
static char *attr_type(struct pb v)
{
	struct pb_field f;

	while (pb_next(&v, &f) > 0)
		if (f.num == 6 && f.wire == 0 && functiondef_dtype_name((int64_t)f.varint))
			return strdup(functiondef_dtype_name((int64_t)f.varint));
	return NULL;
}

/* The attributes agprof reads from a node: token, Const value, DstT. */
static void node_attr(struct functiondef *fd, struct fdef_node *n, struct pb key, struct pb value)
{
	collect_attr_refs(fd, value);
	if (pb_streq(&key, "token")) {
		struct pb v = value;
		struct pb_field vf;

		while (pb_next(&v, &vf) > 0)
			if (vf.num == 2 && vf.wire == 2 && !n->token)
				n->token = pb_strdup(&vf.sub);
	} else if (pb_streq(&key, "value") && n->op && !strcmp(n->op, "Const")) {
		struct pb v = value;
		struct pb_field vf;

		while (pb_next(&v, &vf) > 0)
			if (vf.num == 8 && vf.wire == 2 && !n->const_value) {
				free(n->const_dtype);
				n->const_value = scalar_tensor(vf.sub, &n->const_dtype);
			}
	} else if (pb_streq(&key, "DstT") && !n->dst_type) {
		n->dst_type = attr_type(value);
	}
}

static int parse_node(struct functiondef *fd, struct pb s)
{
	struct fdef_node *n, *nn = realloc(fd->nodes, (fd->nnodes + 1) * sizeof(*nn));
	struct pb_field f;
	int rc;

	if (!nn)
		return -1;
	fd->nodes = nn;
	n = &fd->nodes[fd->nnodes++];
	memset(n, 0, sizeof(*n));
	while ((rc = pb_next(&s, &f)) > 0) {
		struct pb key = { NULL, NULL }, value = { NULL, NULL };

		if (f.wire != 2)
			continue;
		if (f.num == 1 && !n->name)
			n->name = pb_strdup(&f.sub);
		else if (f.num == 2 && !n->op)
			n->op = pb_strdup(&f.sub);
		else if (f.num == 3)
			add_input(n, &f.sub);
		else if (f.num == 5 && map_entry(f.sub, &key, &value) == 0)
			node_attr(fd, n, key, value);
	}
	return rc;
}

static int parse_signature(struct functiondef *fd, struct pb s)
{
	struct pb_field f;
	int rc;

	while ((rc = pb_next(&s, &f)) > 0) {
		if (f.num == 1 && f.wire == 2 && !fd->name) {
			fd->name = pb_strdup(&f.sub);
		} else if (f.num == 2 && f.wire == 2) {
			struct fdef_input *ni = realloc(fd->inputs, (fd->ninputs + 1) * sizeof(*ni));
			struct pb a = f.sub;
			struct pb_field af;

			if (!ni)
				return -1;
			fd->inputs = ni;
			memset(&ni[fd->ninputs], 0, sizeof(*ni));
			while (pb_next(&a, &af) > 0) {
				if (af.num == 1 && af.wire == 2 && !ni[fd->ninputs].name)
					ni[fd->ninputs].name = pb_strdup(&af.sub);
				else if (af.num == 3 && af.wire == 0 && functiondef_dtype_name((int64_t)af.varint) &&
					 !ni[fd->ninputs].dtype)
					ni[fd->ninputs].dtype = strdup(functiondef_dtype_name((int64_t)af.varint));
			}
			fd->ninputs++;
		}
	}
	return rc;
}

/* arg_attr entry: key = arg index, value = ArgAttrs{attr map}; take _output_shapes. */
static void parse_arg_attr(struct functiondef *fd, struct pb e)
{
	struct pb_field f;
	uint64_t index = UINT64_MAX;
	struct pb attrs = { NULL, NULL };

	while (pb_next(&e, &f) > 0) {
		if (f.num == 1 && f.wire == 0)
			index = f.varint;
		else if (f.num == 2 && f.wire == 2)
			attrs = f.sub;
	}
	if (index >= fd->ninputs || !attrs.p)
		return;
	while (pb_next(&attrs, &f) > 0) {
		struct pb key, value;

		if (f.num != 1 || f.wire != 2 || map_entry(f.sub, &key, &value) != 0 ||
		    !pb_streq(&key, "_output_shapes"))
			continue;
		/* AttrValue.list (1) -> shape (7), first one */
		struct pb_field vf;
		while (pb_next(&value, &vf) > 0) {
			if (vf.num == 1 && vf.wire == 2) {
				struct pb l = vf.sub;
				struct pb_field lf;

				while (pb_next(&l, &lf) > 0)
					if (lf.num == 7 && lf.wire == 2 && !fd->inputs[index].shape)
						fd->inputs[index].shape = shape_text(lf.sub);
			}
		}
	}
}

int functiondef_parse(struct functiondef *fd, const void *data, size_t len)
{
	struct pb b = { data, (const unsigned char *)data + len };
	struct pb_field f;
	int rc;

	memset(fd, 0, sizeof(*fd));
	while ((rc = pb_next(&b, &f)) > 0) {
		struct pb key, value;

		if (f.wire != 2)
			continue;
		switch (f.num) {
		case 1:
			rc = parse_signature(fd, f.sub);
			break;
		case 3:
			rc = parse_node(fd, f.sub);
			break;
		case 5:
			if (map_entry(f.sub, &key, &value) == 0 && pb_streq(&key, "_XlaMustCompile")) {
				struct pb_field vf;

				while (pb_next(&value, &vf) > 0)
					if (vf.num == 5 && vf.wire == 0)
						fd->jit_compile = vf.varint != 0;
			}
			rc = 0;
			break;
		case 7:
			parse_arg_attr(fd, f.sub);
			rc = 0;
			break;
		default:
			rc = 0;
		}
		if (rc < 0)
			break;
	}
	if (rc < 0 || !fd->name) {
		functiondef_release(fd);
		return -1;
	}
	return 0;
}

void functiondef_release(struct functiondef *fd)
{
	for (size_t i = 0; i < fd->ninputs; i++) {
		free(fd->inputs[i].name);
		free(fd->inputs[i].dtype);
		free(fd->inputs[i].shape);
	}
	for (size_t i = 0; i < fd->nnodes; i++) {
		free(fd->nodes[i].name);
		free(fd->nodes[i].op);
		free(fd->nodes[i].token);
		free(fd->nodes[i].const_dtype);
		free(fd->nodes[i].const_value);
		free(fd->nodes[i].dst_type);
		for (size_t k = 0; k < fd->nodes[i].ninputs; k++)
			free(fd->nodes[i].inputs[k]);
		free(fd->nodes[i].inputs);
	}
	for (size_t i = 0; i < fd->nrefs; i++)
		free(fd->refs[i]);
	free(fd->inputs);
	free(fd->nodes);
	free(fd->refs);
	free(fd->name);
	memset(fd, 0, sizeof(*fd));
}
