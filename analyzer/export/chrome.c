/* chrome.c - Chrome trace-event export; see chrome.h. */
#include "chrome.h"
#include "checked.h"
#include "db.h"
#include "recording.h"
#include "strbuf.h"
#include "json.h"
#include "kinds.h"
#include "util.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* GPU streams are shown as threads with these ids (real tids are below 2^22 on Linux). */
#define GPU_TID_BASE 1000000000LL

struct chrome {
	struct recording *rec;
	FILE *out;
	int64_t t0;
	struct strbuf sb;  /* the events not written yet */
	struct json j;     /* writes into sb; inside traceEvents between events */
};

/* Write the events built so far: memory stays one event, however long the recording. */
static void emit(struct chrome *c)
{
	fwrite(c->sb.buf, 1, c->sb.len, c->out);
	strbuf_reset(&c->sb);
}

/* One "X" event: name, category, pid, tid, start, end; the caller adds "args" and closes it. */
static void begin_x(struct chrome *c, const char *name, const char *cat, int64_t pid, int64_t tid, int64_t start,
		    int64_t end)
{
	struct json *j = &c->j;

	json_begin_object(j);
	json_kv_str(j, "name", name);
	json_kv_str(j, "cat", cat);
	json_kv_str(j, "ph", "X");
	json_kv_int(j, "pid", (long long)pid);
	json_kv_int(j, "tid", (long long)tid);
	json_key(j, "ts");
	json_fixed(j, (double)(ts_clamp(start) - c->t0) / 1e3, 3);
	json_key(j, "dur");
	json_fixed(j, (double)span_ns(ts_clamp(start), ts_clamp(end)) / 1e3, 3);
	json_key(j, "args");
	json_begin_object(j);
}

/* Close the args and the event begin_x opened. */
static void end_x(struct chrome *c)
{
	json_end_object(&c->j);
	json_end_object(&c->j);
}

/* "key": "file:line" when the row has a file. */
static void arg_loc(struct chrome *c, const char *key, sqlite3_stmt *s, int file_col, int line_col)
{
	struct strbuf loc = STRBUF_INIT;

	if (sqlite3_column_type(s, file_col) == SQLITE_NULL)
		return;
	strbuf_addf(&loc, "%s:%d", db_col_text_or(s, file_col, ""), sqlite3_column_int(s, line_col));
	json_kv_str(&c->j, key, loc.buf);
	strbuf_release(&loc);
}

/* A metadata event naming a process or a thread. */
static void name_event(struct chrome *c, const char *what, int64_t pid, int64_t tid, const char *name)
{
	struct json *j = &c->j;

	json_begin_object(j);
	json_kv_str(j, "name", what);
	json_kv_str(j, "ph", "M");
	json_kv_int(j, "pid", (long long)pid);
	json_kv_int(j, "tid", (long long)tid);
	json_key(j, "args");
	json_begin_object(j);
	json_kv_str(j, "name", name);
	json_end_object(j);
	json_end_object(j);
}

typedef void (*row_fn)(struct chrome *c, sqlite3_stmt *s);

static int each_row(struct chrome *c, const char *sql, row_fn fn)
{
	sqlite3_stmt *s = db_prepare(c->rec->db, sql);
	int rc;

	if (!s)
		return -1;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		fn(c, s);
		emit(c);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE)
		return error("cannot read '%s': %s", c->rec->path, sqlite3_errmsg(c->rec->db));
	return 0;
}

static void process_row(struct chrome *c, sqlite3_stmt *s)
{
	struct strbuf n = STRBUF_INIT;

	strbuf_addf(&n, "%s (pid %lld)", db_col_text_or(s, 1, ""), (long long)sqlite3_column_int64(s, 0));
	name_event(c, "process_name", sqlite3_column_int64(s, 0), 0, n.buf);
	strbuf_release(&n);
}

static void thread_row(struct chrome *c, sqlite3_stmt *s)
{
	struct strbuf n = STRBUF_INIT;

	strbuf_addf(&n, "%s (%s)", db_col_text_or(s, 2, ""), db_col_text_or(s, 3, ""));
	name_event(c, "thread_name", sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1), n.buf);
	strbuf_release(&n);
}

/* The args of the kind being written (kinds.h: agp_chrome.args), from column 5 on. */
static void add_args(struct chrome *c, sqlite3_stmt *s, const char *args)
{
	int col = 5;

	for (const char *p = args; *p;) {
		const char *colon = strchr(p, ':'), *end = strchr(p, ' ');
		char key[32];

		if (!end)
			end = p + strlen(p);
		if (!colon || colon > end || (size_t)(colon - p) >= sizeof(key))
			break;  /* the catalog is ours: check_kinds.py checks its spelling */
		snprintf(key, sizeof(key), "%.*s", (int)(colon - p), p);
		switch (end - colon == 4 ? 'o' : colon[1]) {  /* "loc" is 'o' */
		case 's': json_kv_str(&c->j, key, db_col_text_or(s, col, "")); break;
		case 'i': json_kv_int(&c->j, key, sqlite3_column_int(s, col)); break;
		case 'l': json_kv_int(&c->j, key, (long long)sqlite3_column_int64(s, col)); break;
		case 'L':
			if (sqlite3_column_type(s, col) != SQLITE_NULL)
				json_kv_int(&c->j, key, (long long)sqlite3_column_int64(s, col));
			break;
		case 'n':
			if (sqlite3_column_int(s, col))
				json_kv_int(&c->j, key, 1);
			break;
		default:  /* 'o', loc: file and line */
			arg_loc(c, key, s, col, col + 1);
			col++;
		}
		col++;
		p = *end ? end + 1 : end;
	}
}

static const struct agp_kind *cur_kind;  /* the kind each_row is writing: chrome_export's loop sets it */

/* One event of a SLICE or GPU kind: pid, tid (GPU: stream), start, end, name, then its args. */
static void slice_row(struct chrome *c, sqlite3_stmt *s)
{
	int64_t tid = sqlite3_column_int64(s, 1);

	if (cur_kind->chrome.how == AGP_CHROME_GPU)
		tid = sat_add64(GPU_TID_BASE, tid);
	begin_x(c, db_col_text_or(s, 4, ""), cur_kind->chrome.cat, sqlite3_column_int64(s, 0), tid,
		sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3));
	add_args(c, s, cur_kind->chrome.args);
	end_x(c);
}

/*
 * Events past the budget are per-second aggregates (eager_op_buckets): a
 * counter per thread and op type, the events of each second, set at the
 * second's start and back to 0 at its end (a counter holds its value
 * until the next event).
 */
static void counter_event(struct chrome *c, int64_t pid, const char *name, int64_t ts, const char *series, int64_t v)
{
	struct json *j = &c->j;

	json_begin_object(j);
	json_kv_str(j, "name", name);
	json_kv_str(j, "cat", cur_kind->chrome.cat);
	json_kv_str(j, "ph", "C");
	json_kv_int(j, "pid", (long long)pid);
	json_key(j, "ts");
	json_fixed(j, (double)(ts_clamp(ts) - c->t0) / 1e3, 3);
	json_key(j, "args");
	json_begin_object(j);
	json_kv_int(j, series, (long long)v);
	json_end_object(j);
	json_end_object(j);
}

static void bucket_row(struct chrome *c, sqlite3_stmt *s)
{
	struct strbuf name = STRBUF_INIT;
	int64_t second = sqlite3_column_int64(s, 3);
	int64_t start = sat_mul64(second, 1000000000LL);

	strbuf_addf(&name, "%s, tid %lld", cur_kind->chrome.args, (long long)sqlite3_column_int64(s, 1));
	counter_event(c, sqlite3_column_int64(s, 0), name.buf, start, db_col_text_or(s, 2, "?"),
		      sqlite3_column_int64(s, 4));
	counter_event(c, sqlite3_column_int64(s, 0), name.buf, sat_add64(start, 999999999), db_col_text_or(s, 2, "?"), 0);
	strbuf_release(&name);
}

static void gpu_stream_row(struct chrome *c, sqlite3_stmt *s)
{
	struct strbuf n = STRBUF_INIT;

	strbuf_addf(&n, "GPU %d stream %lld", sqlite3_column_int(s, 2), (long long)sqlite3_column_int64(s, 1));
	name_event(c, "thread_name", sqlite3_column_int64(s, 0), sat_add64(GPU_TID_BASE, sqlite3_column_int64(s, 1)),
		   n.buf);
	strbuf_release(&n);
}

/* The events of every kind of the catalog that has them, kind by kind. */
static int export_kinds(struct chrome *c)
{
	for (size_t i = 0; i < agp_nkinds; i++) {
		const struct agp_kind *k = &agp_kinds[i];

		cur_kind = k;
		if (!k->chrome.how)  /* the tables older schemas lack are empty (compat.c) */
			continue;
		if (k->chrome.how == AGP_CHROME_GPU &&
		    each_row(c, "SELECT DISTINCT pid, coalesce(stream, 0), coalesce(device, 0) FROM gpu_activity",
			     gpu_stream_row))
			return -1;
		if (each_row(c, k->chrome.sql, k->chrome.how == AGP_CHROME_COUNTER ? bucket_row : slice_row))
			return -1;
	}
	return 0;
}

/* {"displayTimeUnit": ..., "otherData": ..., "traceEvents": [ (events one a line follow) */
static void begin_trace(struct chrome *c)
{
	struct json *j = &c->j;

	json_init(j, &c->sb);
	json_begin_object(j);
	json_kv_str(j, "displayTimeUnit", "ms");
	json_key(j, "otherData");
	json_begin_object(j);
	json_kv_str(j, "producer", "agprof");
	json_end_object(j);
	json_key(j, "traceEvents");
	json_begin_array(j, JSON_LINES);
	emit(c);
}

static void end_trace(struct chrome *c)
{
	strbuf_addch(&c->sb, '\n');
	json_end_array(&c->j);
	json_end_object(&c->j);
	strbuf_addch(&c->sb, '\n');
	emit(c);
}

int chrome_export(struct recording *rec, FILE *out)
{
	struct chrome c = { .rec = rec, .out = out };
	char *start = db_meta_get(rec->db, "start_ns");
	int ret = -1;

	c.t0 = ts_clamp(start ? strtoll(start, NULL, 10) : 0);
	free(start);
	begin_trace(&c);
	if (each_row(&c, "SELECT pid, coalesce(CASE WHEN json_valid(argv) THEN json_extract(argv, '$[0]') END, 'process')"
			 " FROM processes", process_row) ||
	    each_row(&c, "SELECT pid, tid, coalesce(name, ''), role FROM threads", thread_row) ||
	    export_kinds(&c))
		goto cleanup;
	end_trace(&c);
	if (fflush(out) || ferror(out)) {
		error("cannot write the trace: %s", strerror(errno));
		ret = CHROME_WRITE_FAILED;
		goto cleanup;
	}
	ret = 0;
cleanup:
	strbuf_release(&c.sb);
	return ret;
}
