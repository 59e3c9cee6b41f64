/*
 * json_read.h - a bounded JSON reader for files agprof reads back (the
 * experiments' sidecar, REC.verify.json): the text is parsed whole into a
 * tree of nodes in one block, or refused with one reason.  The input is
 * untrusted: its length, depth, node count and string lengths are bounded
 * here, where it is read, so no value of it sizes an allocation.
 */
#ifndef AGPROF_JSON_READ_H
#define AGPROF_JSON_READ_H

#include <stddef.h>

enum jtype { J_NULL, J_BOOL, J_NUM, J_STR, J_ARR, J_OBJ };

struct jnode {
	enum jtype type;
	const char *key;        /* a member's name in an object, else NULL */
	const char *str;        /* J_STR: the decoded text (NUL-free, NUL-terminated) */
	double num;             /* J_NUM; J_BOOL: 0 or 1 */
	struct jnode *child;    /* J_ARR, J_OBJ: the first member */
	struct jnode *next;     /* the next member of the parent */
};

#define JSON_READ_MAX_BYTES (1 << 20)
#define JSON_READ_MAX_NODES 20000
#define JSON_READ_MAX_DEPTH 16
#define JSON_READ_MAX_STRING 4096

struct json_doc {
	struct jnode *root;     /* NULL when the text was refused */
	struct jnode *nodes;    /* owned */
	char *text;             /* owned: the strings' bytes */
};

/*
 * Parse text[0..len) into doc.  0, or -1 with doc empty and why (a static
 * phrase: "truncated", "too deep", ...) in *why.
 */
int json_read(struct json_doc *doc, const char *text, size_t len, const char **why);
void json_doc_release(struct json_doc *doc);

/* The member key of object o, or NULL (also when o is no object). */
const struct jnode *json_get(const struct jnode *o, const char *key);
/* Member key of o as a string (NULL when absent or not one), or as a number (dflt when not). */
const char *json_get_str(const struct jnode *o, const char *key);
double json_get_num(const struct jnode *o, const char *key, double dflt);

#endif
