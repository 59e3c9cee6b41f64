/*
 * functiondef.h - a reader for serialized tensorflow.FunctionDef protocol
 * buffers: just what agprof records (inputs, attributes, black-box nodes,
 * scalar constants, referenced functions, node inputs and Cast targets).  No protobuf library: the wire
 * format is walked directly, and malformed input is rejected, never trusted.
 */
#ifndef AGPROF_FUNCTIONDEF_H
#define AGPROF_FUNCTIONDEF_H

#include <stddef.h>
#include <stdint.h>

struct fdef_input {
	char *name;
	char *dtype;        /* "float32", ... or NULL */
	char *shape;        /* "[64,20]", "[None,20]", "?" or NULL */
};

struct fdef_node {
	char *name;
	char *op;
	char *token;        /* py_func nodes: the registry token */
	char *const_dtype;  /* scalar Const nodes: dtype and value as text */
	char *const_value;
	char *dst_type;     /* Cast nodes: attr DstT ("float32") */
	size_t ninputs;
	char **inputs;      /* "x" (an argument), "node:out:0", "^ctrl" */
};

struct functiondef {
	char *name;
	int jit_compile;    /* attr _XlaMustCompile */
	size_t ninputs, nnodes, nrefs;
	struct fdef_input *inputs;
	struct fdef_node *nodes;
	char **refs;        /* names of functions referenced by node attributes */
};

/* Parse data; 0 on success, -1 on malformed input (fd is then empty). */
int functiondef_parse(struct functiondef *fd, const void *data, size_t len);
void functiondef_release(struct functiondef *fd);

/* Name of a DataType enum value ("float32"), or NULL when unknown. */
const char *functiondef_dtype_name(int64_t dt);

#endif
