/*
 * json_read.c - a bounded JSON reader (json_read.h).  Recursive descent
 * over the whole grammar; the nodes come from one block sized by the text
 * (a node takes at least one byte of it) and the decoded strings from
 * another (a string decodes to at most its quoted length).
 */
#include "json_read.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct jp {
	const char *p, *end;
	struct jnode *nodes;
	size_t nnodes, cap;
	char *out;              /* next free byte of the strings' block */
	const char *why;        /* first error, sticky */
};

static int jp_fail(struct jp *r, const char *why)
{
	if (!r->why)
		r->why = why;
	return -1;
}

static void jp_space(struct jp *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

static struct jnode *jp_node(struct jp *r, enum jtype t)
{
	struct jnode *n;

	if (r->nnodes >= r->cap)
		return jp_fail(r, "too many values"), NULL;
	n = &r->nodes[r->nnodes++];
	memset(n, 0, sizeof(*n));
	n->type = t;
	return n;
}

/* UTF-8 of code point v (no surrogates, no NUL) at *o. */
static int put_utf8(struct jp *r, unsigned v, char **o)
{
	if (!v || (v >= 0xd800 && v <= 0xdfff))
		return jp_fail(r, "a NUL or surrogate escape");
	if (v < 0x80) {
		*(*o)++ = (char)v;
	} else if (v < 0x800) {
		*(*o)++ = (char)(0xc0 | (v >> 6));
		*(*o)++ = (char)(0x80 | (v & 0x3f));
	} else {
		*(*o)++ = (char)(0xe0 | (v >> 12));
		*(*o)++ = (char)(0x80 | ((v >> 6) & 0x3f));
		*(*o)++ = (char)(0x80 | (v & 0x3f));
	}
	return 0;
}

/* A string at r->p (its opening quote): decoded into the strings' block; its start, or NULL. */
static const char *jp_string(struct jp *r)
{
	char *start = r->out, *o = r->out;
	static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";

	for (r->p++; r->p < r->end && *r->p != '"'; r->p++) {
		const char *e;
		unsigned v = 0;

		if ((unsigned char)*r->p < 0x20 || o - start >= JSON_READ_MAX_STRING)
			return jp_fail(r, (unsigned char)*r->p < 0x20 ? "a control byte in a string" : "a string too long"), NULL;
		if (*r->p != '\\') {
			*o++ = *r->p;
			continue;
		}
		if (++r->p >= r->end)
			break;
		if ((e = strchr(from, *r->p)) && *r->p) {
			*o++ = to[e - from];
			continue;
		}
		if (*r->p != 'u' || r->end - r->p < 5)
			return jp_fail(r, "a bad escape"), NULL;
		for (int i = 1; i <= 4; i++) {
			char c = r->p[i];

			v = v * 16 + (unsigned)(c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
						: c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99);
			if (v > 0xffff)
				return jp_fail(r, "a bad escape"), NULL;
		}
		r->p += 4;
		if (put_utf8(r, v, &o))
			return NULL;
	}
	if (r->p >= r->end)
		return jp_fail(r, "truncated"), NULL;
	r->p++;
	*o++ = '\0';
	r->out = o;
	return start;
}

static struct jnode *jp_value(struct jp *r, int depth);

/* The members of an array or object after its opening byte, up to close. */
static int jp_members(struct jp *r, struct jnode *parent, char close, int depth)
{
	struct jnode **tail = &parent->child;

	r->p++;
	jp_space(r);
	if (r->p < r->end && *r->p == close)
		return r->p++, 0;
	for (;;) {
		const char *key = NULL;
		struct jnode *n;

		jp_space(r);
		if (close == '}') {
			if (r->p >= r->end || *r->p != '"' || !(key = jp_string(r)))
				return jp_fail(r, r->p >= r->end ? "truncated" : "a member without a name");
			jp_space(r);
			if (r->p >= r->end || *r->p++ != ':')
				return jp_fail(r, r->p >= r->end ? "truncated" : "a member without ':'");
		}
		if (!(n = jp_value(r, depth + 1)))
			return -1;
		n->key = key;
		*tail = n;
		tail = &n->next;
		jp_space(r);
		if (r->p >= r->end)
			return jp_fail(r, "truncated");
		if (*r->p == close)
			return r->p++, 0;
		if (*r->p++ != ',')
			return jp_fail(r, "a missing ','");
	}
}

static struct jnode *jp_value(struct jp *r, int depth)
{
	struct jnode *n;
	char *end;

	jp_space(r);
	if (r->p >= r->end)
		return jp_fail(r, "truncated"), NULL;
	if (depth > JSON_READ_MAX_DEPTH)
		return jp_fail(r, "too deep"), NULL;
	if (*r->p == '{' || *r->p == '[') {
		if (!(n = jp_node(r, *r->p == '{' ? J_OBJ : J_ARR)) || jp_members(r, n, *r->p == '{' ? '}' : ']', depth))
			return NULL;
		return n;
	}
	if (*r->p == '"') {
		if (!(n = jp_node(r, J_STR)) || !(n->str = jp_string(r)))
			return NULL;
		return n;
	}
	for (int i = 0; i < 3; i++) {
		static const char *const words[] = { "null", "true", "false" };
		size_t len = strlen(words[i]);

		if ((size_t)(r->end - r->p) >= len && !memcmp(r->p, words[i], len)) {
			if (!(n = jp_node(r, i ? J_BOOL : J_NULL)))
				return NULL;
			n->num = i == 1;
			r->p += len;
			return n;
		}
	}
	if (!(n = jp_node(r, J_NUM)))
		return NULL;
	/* the text ends with a NUL (json_read() copies it), so strtod stops inside it */
	n->num = strtod(r->p, &end);
	if (end == r->p || end > r->end || !isfinite(n->num))
		return jp_fail(r, "a bad value"), NULL;
	r->p = end;
	return n;
}

int json_read(struct json_doc *doc, const char *text, size_t len, const char **why)
{
	struct jp r = { 0 };
	char *copy;

	memset(doc, 0, sizeof(*doc));
	*why = NULL;
	if (len > JSON_READ_MAX_BYTES)
		return *why = "too large", -1;
	r.cap = len + 1 < JSON_READ_MAX_NODES ? len + 1 : JSON_READ_MAX_NODES;
	doc->nodes = r.nodes = calloc(r.cap, sizeof(*r.nodes));
	doc->text = r.out = malloc(len + 1);
	copy = malloc(len + 1);
	if (!r.nodes || !r.out || !copy) {
		free(copy);
		json_doc_release(doc);
		return *why = "out of memory", -1;
	}
	memcpy(copy, text, len);
	copy[len] = '\0';
	r.p = copy;
	r.end = copy + len;
	doc->root = jp_value(&r, 0);
	jp_space(&r);
	if (doc->root && r.p != r.end)
		jp_fail(&r, "text after the value");
	free(copy);
	if (r.why) {
		*why = r.why;
		json_doc_release(doc);
		return -1;
	}
	return 0;
}

void json_doc_release(struct json_doc *doc)
{
	free(doc->nodes);
	free(doc->text);
	memset(doc, 0, sizeof(*doc));
}

const struct jnode *json_get(const struct jnode *o, const char *key)
{
	for (const struct jnode *n = o && o->type == J_OBJ ? o->child : NULL; n; n = n->next)
		if (n->key && !strcmp(n->key, key))
			return n;
	return NULL;
}

const char *json_get_str(const struct jnode *o, const char *key)
{
	const struct jnode *n = json_get(o, key);

	return n && n->type == J_STR ? n->str : NULL;
}

double json_get_num(const struct jnode *o, const char *key, double dflt)
{
	const struct jnode *n = json_get(o, key);

	return n && n->type == J_NUM ? n->num : dflt;
}
