/*
 * json.h - the one JSON writer: `report --format json`, its GPU section,
 * SARIF and the Chrome trace export all write through it.
 *
 * Owns: commas, nesting and escaping.  Output streams into a strbuf (no
 * tree is built: a report of a 10M-event recording writes as it goes), and
 * is always valid JSON: strings are escaped by strbuf_add_json_string
 * (controls as \uXXXX, bytes that are not UTF-8 as \ufffd), a NULL string
 * is null, a number that is not finite is null.  file:// URIs are
 * percent-encoded (json_add_file_uri).
 *
 * An in-tree writer rather than jansson/json-c/cJSON: those build a tree in
 * memory, then print it; agprof only ever writes, in order, and the
 * escaping it needs (recordings hold any bytes) is already in common/.
 *
 * How to emit an object field (the common case):
 *
 *     struct json j;
 *     json_init(&j, out);
 *     json_begin_object(&j);
 *     json_kv_str(&j, "rule", f->rule);        // "rule":"..." or "rule":null
 *     json_kv_int(&j, "cost_ns", f->cost_ns);  // also json_kv_num, json_kv_bool
 *     json_key(&j, "location");                // any value after a key:
 *     json_begin_object(&j); ... json_end_object(&j);
 *     json_end_object(&j);
 *
 * Commas are the writer's business: never write one by hand.  A nesting
 * deeper than JSON_MAX_DEPTH is a programming error (asserted).
 */
#ifndef AGPROF_JSON_H
#define AGPROF_JSON_H

#include "strbuf.h"

#include <stdio.h>

#define JSON_MAX_DEPTH 32

/* json_begin_array flag: each element starts on a line of its own (long lists stay diffable). */
#define JSON_LINES 1

struct json {
	struct strbuf *out;
	FILE *sink;        /* json_set_sink: out is written there and emptied as it fills */
	int depth;
	int after_key;                        /* a key was written: its value comes next, no comma */
	unsigned char used[JSON_MAX_DEPTH];   /* the container at that depth has a member */
	unsigned char lines[JSON_MAX_DEPTH];  /* JSON_LINES of the array at that depth */
};

void json_init(struct json *j, struct strbuf *out);
/*
 * Stream to f: between two values, once out holds JSON_SINK_BYTES, its text
 * is written to f and out emptied, so that a report of a million traces
 * (600 MB of JSON) never holds more than that.  What is left in out at the
 * end is the caller's to write; ferror(f) says whether a write failed.
 */
#define JSON_SINK_BYTES ((size_t)1 << 20)
void json_set_sink(struct json *j, FILE *f);

void json_begin_object(struct json *j);
void json_end_object(struct json *j);
void json_begin_array(struct json *j, int flags);
void json_end_array(struct json *j);

/* "key": inside an object; the next value written is its value. */
void json_key(struct json *j, const char *key);

/* Values (array elements, or after json_key). */
void json_str(struct json *j, const char *s);  /* NULL: null */
void json_int(struct json *j, long long v);
void json_num(struct json *j, double v);       /* %.6g; NaN and infinities: null */
/* v with a fixed number of decimals ("%.*f"), e.g. microseconds to the ns; not finite: null. */
void json_fixed(struct json *j, double v, int decimals);
void json_bool(struct json *j, int v);
void json_null(struct json *j);
/* A file:// URI of an absolute path, percent-encoded (dir: with a trailing '/'). */
void json_file_uri(struct json *j, const char *path, int dir);
/* A relative URI reference of path, percent-encoded. */
void json_path_uri(struct json *j, const char *path);

/* key and value in one call. */
void json_kv_str(struct json *j, const char *key, const char *s);
void json_kv_int(struct json *j, const char *key, long long v);
void json_kv_num(struct json *j, const char *key, double v);
void json_kv_bool(struct json *j, const char *key, int v);

/*
 * Append path to sb percent-encoded as a URI path (RFC 3986): letters,
 * digits, "-._~/" stay, every other byte becomes %XX.
 */
void strbuf_add_uri_path(struct strbuf *sb, const char *path);

#endif
