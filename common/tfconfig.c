/*
 * tfconfig.c - read TF_CONFIG's task and cluster (see tfconfig.h).
 *
 * A recursive-descent walker over the whole JSON grammar, so that any
 * well-formed TF_CONFIG is accepted whatever else it holds ("environment",
 * "rpc_layer", ...), but only task.type, task.index and the number of
 * addresses under cluster.* are kept.  Depth and length are bounded: the
 * variable is user input.
 */
#include "tfconfig.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct jr {
	const char *p, *end;
	const char *fault;  /* first error, sticky */
	struct tf_config *tc;
};

enum where { W_OTHER, W_TOP, W_TASK, W_CLUSTER, W_CLUSTER_LIST };

static int jr_fail(struct jr *r, const char *why)
{
	if (!r->fault)
		r->fault = why;
	return -1;
}

static void jr_space(struct jr *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r'))
		r->p++;
}

/* A string; its raw bytes (escapes kept as written) into out[outlen] when out. */
static int jr_string(struct jr *r, char *out, size_t outlen)
{
	size_t n = 0;

	if (r->p >= r->end || *r->p != '"')
		return jr_fail(r, "a string was expected");
	for (r->p++; r->p < r->end && *r->p != '"'; r->p++) {
		if (*r->p == '\\' && ++r->p >= r->end)
			break;
		if ((unsigned char)*r->p < 0x20)
			return jr_fail(r, "control character in a string");
		if (out && n + 1 < outlen)
			out[n++] = *r->p;
	}
	if (r->p >= r->end)
		return jr_fail(r, "unterminated string");
	r->p++;
	if (out)
		out[n] = '\0';
	return 0;
}

static int jr_number(struct jr *r, long *out)
{
	const char *start = r->p;
	char buf[32];

	while (r->p < r->end && strchr("+-0123456789.eE", *r->p))
		r->p++;
	if (r->p == start || r->p - start >= (long)sizeof(buf))
		return jr_fail(r, "bad number");
	memcpy(buf, start, (size_t)(r->p - start));
	buf[r->p - start] = '\0';
	if (out)
		*out = strtol(buf, NULL, 10);
	return 0;
}

static int jr_value(struct jr *r, enum where w, const char *key, int depth);

/* Object or array members; w says whose, so the fields we keep are seen. */
static int jr_container(struct jr *r, char close, enum where w, int depth)
{
	int first = 1;

	if (depth > TF_CONFIG_MAX_DEPTH)
		return jr_fail(r, "nested too deeply");
	for (r->p++;; first = 0) {
		char key[64] = "";

		jr_space(r);
		if (r->p < r->end && *r->p == close && first) {
			r->p++;
			return 0;
		}
		if (close == '}') {
			if (jr_string(r, key, sizeof(key)))
				return -1;
			jr_space(r);
			if (r->p >= r->end || *r->p++ != ':')
				return jr_fail(r, "':' was expected");
		}
		if (w == W_CLUSTER_LIST)
			r->tc->cluster_size++;
		if (jr_value(r, w, key, depth + 1))
			return -1;
		jr_space(r);
		if (r->p < r->end && *r->p == ',') {
			r->p++;
			continue;
		}
		if (r->p < r->end && *r->p == close) {
			r->p++;
			return 0;
		}
		return jr_fail(r, close == '}' ? "',' or '}' was expected" : "',' or ']' was expected");
	}
}

/* The container kind a value at key inside w is, for the fields we keep. */
static enum where child_where(enum where w, const char *key)
{
	if (w == W_TOP && !strcmp(key, "task"))
		return W_TASK;
	if (w == W_TOP && !strcmp(key, "cluster"))
		return W_CLUSTER;
	if (w == W_CLUSTER)
		return W_CLUSTER_LIST;
	return W_OTHER;
}

static int jr_value(struct jr *r, enum where w, const char *key, int depth)
{
	struct tf_config *tc = r->tc;

	jr_space(r);
	if (r->p >= r->end)
		return jr_fail(r, "unexpected end");
	switch (*r->p) {
	case '{':
		return jr_container(r, '}', child_where(w, key), depth);
	case '[':
		return jr_container(r, ']', child_where(w, key), depth);
	case '"':
		if (w == W_TASK && !strcmp(key, "type"))
			return jr_string(r, tc->task_type, sizeof(tc->task_type));
		return jr_string(r, NULL, 0);
	default:
		break;
	}
	if (!strncmp(r->p, "true", 4) || !strncmp(r->p, "null", 4)) {
		r->p += 4;
		return 0;
	}
	if (!strncmp(r->p, "false", 5)) {
		r->p += 5;
		return 0;
	}
	return jr_number(r, w == W_TASK && !strcmp(key, "index") ? &tc->task_index : NULL);
}

int tf_config_parse(const char *json, struct tf_config *tc, char *err, size_t errlen)
{
	size_t len = strnlen(json, TF_CONFIG_MAX_LEN + 1);
	struct jr r = { json, json + len, NULL, tc };

	memset(tc, 0, sizeof(*tc));
	tc->task_index = -1;
	if (len > TF_CONFIG_MAX_LEN) {
		snprintf(err, errlen, "longer than %d bytes", TF_CONFIG_MAX_LEN);
		return -1;
	}
	jr_space(&r);
	if (r.p >= r.end || *r.p != '{')
		jr_fail(&r, "not a JSON object");
	else if (jr_container(&r, '}', W_TOP, 0) == 0) {
		jr_space(&r);
		if (r.p != r.end)
			jr_fail(&r, "text after the object");
	}
	if (!r.fault && tc->task_index < -1)
		jr_fail(&r, "negative task index");
	if (r.fault) {
		snprintf(err, errlen, "%s at byte %ld", r.fault, (long)(r.p - json));
		return -1;
	}
	return 0;
}
