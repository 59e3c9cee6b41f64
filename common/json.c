/* json.c - see json.h. */
#include "json.h"

#include <assert.h>
#include <math.h>
#include <string.h>

void json_init(struct json *j, struct strbuf *out)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
}

void json_set_sink(struct json *j, FILE *f)
{
	j->sink = f;
}

/* Out's text to the sink (errors stay in ferror), out emptied; a failed strbuf's is left for its owner to report. */
static void drain(struct json *j)
{
	if (strbuf_failed(j->out))
		return;
	fwrite(j->out->buf, 1, j->out->len, j->sink);
	strbuf_reset(j->out);
}

/*
 * s as a JSON string.  Plain printable ASCII (keys, names, most paths) is
 * copied as it is; anything else takes strbuf_add_json_string's escaping.
 */
static void add_string(struct strbuf *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
		p++;
	if (*p) {
		strbuf_add_json_string(sb, s);
		return;
	}
	strbuf_addch(sb, '"');
	strbuf_add(sb, s, (size_t)(p - (const unsigned char *)s));
	strbuf_addch(sb, '"');
}

/* Before any value or key: the comma (and line break) that separates it from the previous member. */
static void separate(struct json *j)
{
	if (j->sink && j->out->len >= JSON_SINK_BYTES)
		drain(j);
	if (j->after_key) {
		j->after_key = 0;
		return;
	}
	if (j->depth > 0) {
		if (j->used[j->depth - 1])
			strbuf_addch(j->out, ',');
		if (j->lines[j->depth - 1])
			strbuf_addch(j->out, '\n');
		j->used[j->depth - 1] = 1;
	}
}

static void open_container(struct json *j, char c, int lines)
{
	separate(j);
	assert(j->depth < JSON_MAX_DEPTH);
	strbuf_addch(j->out, c);
	j->used[j->depth] = 0;
	j->lines[j->depth] = (unsigned char)lines;
	j->depth++;
}

static void close_container(struct json *j, char c)
{
	assert(j->depth > 0 && !j->after_key);
	j->depth--;
	strbuf_addch(j->out, c);
}

void json_begin_object(struct json *j)
{
	open_container(j, '{', 0);
}

void json_end_object(struct json *j)
{
	close_container(j, '}');
}

void json_begin_array(struct json *j, int flags)
{
	open_container(j, '[', flags & JSON_LINES);
}

void json_end_array(struct json *j)
{
	close_container(j, ']');
}

void json_key(struct json *j, const char *key)
{
	separate(j);
	add_string(j->out, key);
	strbuf_addch(j->out, ':');
	j->after_key = 1;
}

void json_str(struct json *j, const char *s)
{
	separate(j);
	if (s)
		add_string(j->out, s);
	else
		strbuf_addstr(j->out, "null");
}

void json_int(struct json *j, long long v)
{
	/* by hand: printf's machinery was a tenth of a million-trace report */
	char buf[24], *p = buf + sizeof(buf);
	unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v : (unsigned long long)v;

	separate(j);
	do
		*--p = (char)('0' + u % 10);
	while (u /= 10);
	if (v < 0)
		*--p = '-';
	strbuf_add(j->out, p, (size_t)(buf + sizeof(buf) - p));
}

void json_num(struct json *j, double v)
{
	separate(j);
	if (isfinite(v))
		strbuf_addf(j->out, "%.6g", v);
	else
		strbuf_addstr(j->out, "null");
}

void json_fixed(struct json *j, double v, int decimals)
{
	separate(j);
	if (isfinite(v))
		strbuf_addf(j->out, "%.*f", decimals, v);
	else
		strbuf_addstr(j->out, "null");
}

void json_bool(struct json *j, int v)
{
	separate(j);
	strbuf_addstr(j->out, v ? "true" : "false");
}

void json_null(struct json *j)
{
	separate(j);
	strbuf_addstr(j->out, "null");
}

void strbuf_add_uri_path(struct strbuf *sb, const char *path)
{
	static const char hex[] = "0123456789ABCDEF";

	for (const unsigned char *p = (const unsigned char *)path; p && *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~/", *p)) {
			strbuf_addch(sb, (char)*p);
		} else {
			strbuf_addch(sb, '%');
			strbuf_addch(sb, hex[*p >> 4]);
			strbuf_addch(sb, hex[*p & 15]);
		}
	}
}

/* A URI (ASCII by construction) as a JSON string. */
static void uri_value(struct json *j, const char *scheme, const char *path, int dir)
{
	struct strbuf u = STRBUF_INIT;

	strbuf_addstr(&u, scheme);
	strbuf_add_uri_path(&u, path);
	if (dir && (!u.len || u.buf[u.len - 1] != '/'))
		strbuf_addch(&u, '/');
	json_str(j, u.buf ? u.buf : "");
	strbuf_release(&u);
}

void json_file_uri(struct json *j, const char *path, int dir)
{
	uri_value(j, "file://", path, dir);
}

void json_path_uri(struct json *j, const char *path)
{
	uri_value(j, "", path, 0);
}

void json_kv_str(struct json *j, const char *key, const char *s)
{
	json_key(j, key);
	json_str(j, s);
}

void json_kv_int(struct json *j, const char *key, long long v)
{
	json_key(j, key);
	json_int(j, v);
}

void json_kv_num(struct json *j, const char *key, double v)
{
	json_key(j, key);
	json_num(j, v);
}

void json_kv_bool(struct json *j, const char *key, int v)
{
	json_key(j, key);
	json_bool(j, v);
}
