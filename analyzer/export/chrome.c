/* chrome.c - Chrome trace-event export; see chrome.h. */
#include "chrome.h"
#include "checked.h"
#include "db.h"
#include "recording.h"
#include "strbuf.h"
#include "json.h"
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

static void trace_row(struct chrome *c, sqlite3_stmt *s)
{
	struct strbuf n = STRBUF_INIT;

	strbuf_addf(&n, "trace %s #%d", db_col_text_or(s, 4, ""), sqlite3_column_int(s, 6));
	begin_x(c, n.buf, "tracing", sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
		sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3));
	strbuf_release(&n);
	json_kv_str(&c->j, "signature", db_col_text_or(s, 5, ""));
	arg_loc(c, "called_at", s, 7, 8);
	end_x(c);
}

static void call_row(struct chrome *c, sqlite3_stmt *s)
{
	begin_x(c, db_col_text_or(s, 4, ""), "graph", sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
		sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3));
	json_kv_str(&c->j, "function", db_col_text_or(s, 5, ""));
	json_kv_int(&c->j, "ok", sqlite3_column_int(s, 8));
	arg_loc(c, "called_at", s, 6, 7);
	end_x(c);
}

static void eager_row(struct chrome *c, sqlite3_stmt *s)
{
	begin_x(c, db_col_text_or(s, 4, ""), "eager", sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
		sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3));
	json_kv_int(&c->j, "slow_path", sqlite3_column_int(s, 7));
	arg_loc(c, "line", s, 5, 6);
	end_x(c);
}

static void blackbox_row(struct chrome *c, sqlite3_stmt *s)
{
	begin_x(c, db_col_text_or(s, 4, ""), "py_function", sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
		sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3));
	json_kv_str(&c->j, "op_type", db_col_text_or(s, 5, ""));
	end_x(c);
}

/*
 * Eager ops past the budget are per-second aggregates (eager_op_buckets):
 * a counter per thread and op type, the ops of each second, set at the
 * second's start and back to 0 at its end (a counter holds its value
 * until the next event).  Rows are grouped by the writer's own grid
 * (CLOCK_MONOTONIC seconds), which merges a second's call sites.
 */
static void counter_event(struct chrome *c, int64_t pid, const char *name, int64_t ts, const char *series, int64_t v)
{
	struct json *j = &c->j;

	json_begin_object(j);
	json_kv_str(j, "name", name);
	json_kv_str(j, "cat", "eager-aggregate");
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

	strbuf_addf(&name, "eager ops/s past the budget, tid %lld", (long long)sqlite3_column_int64(s, 1));
	counter_event(c, sqlite3_column_int64(s, 0), name.buf, start, db_col_text_or(s, 2, "?"),
		      sqlite3_column_int64(s, 4));
	counter_event(c, sqlite3_column_int64(s, 0), name.buf, sat_add64(start, 999999999), db_col_text_or(s, 2, "?"), 0);
	strbuf_release(&name);
}

/* One CPU kernel (schema v4): node name, type, the line that created it, its call. */
static void kernel_row(struct chrome *c, sqlite3_stmt *s)
{
	begin_x(c, db_col_text_or(s, 4, "?"), "kernel", sqlite3_column_int64(s, 0), sqlite3_column_int64(s, 1),
		sqlite3_column_int64(s, 2), sqlite3_column_int64(s, 3));
	json_kv_str(&c->j, "op_type", db_col_text_or(s, 5, "?"));
	arg_loc(c, "created_at", s, 6, 7);
	if (sqlite3_column_type(s, 8) != SQLITE_NULL)
		json_kv_int(&c->j, "call", (long long)sqlite3_column_int64(s, 8));
	if (sqlite3_column_int(s, 9))
		json_kv_int(&c->j, "async", 1);
	end_x(c);
}

static void gpu_row(struct chrome *c, sqlite3_stmt *s)
{
	begin_x(c, sqlite3_column_type(s, 4) == SQLITE_NULL ? db_col_text_or(s, 5, "") : db_col_text_or(s, 4, ""), "gpu",
		sqlite3_column_int64(s, 0), sat_add64(GPU_TID_BASE, sqlite3_column_int64(s, 1)), sqlite3_column_int64(s, 2),
		sqlite3_column_int64(s, 3));
	json_kv_str(&c->j, "kind", db_col_text_or(s, 5, ""));
	json_kv_int(&c->j, "device", sqlite3_column_int(s, 6));
	json_kv_int(&c->j, "stream", (long long)sqlite3_column_int64(s, 1));
	end_x(c);
}

static void gpu_stream_row(struct chrome *c, sqlite3_stmt *s)
{
	struct strbuf n = STRBUF_INIT;

	strbuf_addf(&n, "GPU %d stream %lld", sqlite3_column_int(s, 2), (long long)sqlite3_column_int64(s, 1));
	name_event(c, "thread_name", sqlite3_column_int64(s, 0), sat_add64(GPU_TID_BASE, sqlite3_column_int64(s, 1)),
		   n.buf);
	strbuf_release(&n);
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
	    each_row(&c, "SELECT t.pid, t.tid, t.start_ns, t.end_ns, s.text, coalesce(t.signature, ''),"
			 " t.object_trace_no, f.text, cs.line FROM traces t JOIN functions fn ON fn.id = t.function_id"
			 " JOIN strings s ON s.id = fn.name_id LEFT JOIN callsites cs ON cs.id = t.callsite_id"
			 " LEFT JOIN strings f ON f.id = cs.file_id ORDER BY t.start_ns", trace_row) ||
	    each_row(&c, "SELECT c.pid, c.tid, c.start_ns, c.end_ns, n.text, coalesce(u.text, ''), f.text, cs.line, c.ok"
			 " FROM function_calls c JOIN strings n ON n.id = c.name_id"
			 " LEFT JOIN graph_functions g ON g.id = c.graph_function_id"
			 " LEFT JOIN functions fn ON fn.id = g.function_id LEFT JOIN strings u ON u.id = fn.name_id"
			 " LEFT JOIN callsites cs ON cs.id = c.callsite_id LEFT JOIN strings f ON f.id = cs.file_id",
		     call_row) ||
	    each_row(&c, "SELECT e.pid, e.tid, e.start_ns, e.end_ns, o.text, f.text, cs.line, e.slow_path"
			 " FROM eager_ops e JOIN strings o ON o.id = e.op_id"
			 " LEFT JOIN callsites cs ON cs.id = e.callsite_id LEFT JOIN strings f ON f.id = cs.file_id",
		     eager_row) ||
	    (db_has_table(rec->db, "eager_op_buckets") &&
	     each_row(&c, "SELECT b.pid, b.tid, o.text, b.start_ns / 1000000000, max(0, sum(b.count))"
			  " FROM eager_op_buckets b JOIN strings o ON o.id = b.op_id"
			  " GROUP BY b.pid, b.tid, b.op_id, b.start_ns / 1000000000 ORDER BY 4", bucket_row)) ||
	    each_row(&c, "SELECT b.pid, b.tid, b.start_ns, b.end_ns, n.text, t.text FROM blackbox_execs b"
			 " JOIN strings n ON n.id = b.node_id JOIN strings t ON t.id = b.op_type_id", blackbox_row) ||
	    (db_has_table(rec->db, "kernels") && db_has_table(rec->db, "graph_nodes") &&
	     each_row(&c, "SELECT k.pid, k.tid, k.start_ns, k.end_ns, n.name, n.op_type, n.file, n.line, k.call_id, k.async"
			  " FROM kernels k LEFT JOIN graph_nodes n ON n.id = k.node_id", kernel_row)) ||
	    each_row(&c, "SELECT DISTINCT pid, coalesce(stream, 0), coalesce(device, 0) FROM gpu_activity",
		     gpu_stream_row) ||
	    each_row(&c, "SELECT g.pid, coalesce(g.stream, 0), g.start_ns, g.end_ns, n.text, g.kind, coalesce(g.device, 0)"
			 " FROM gpu_activity g LEFT JOIN strings n ON n.id = g.name_id", gpu_row))
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
