/*
 * kinds.c - the catalog of recorded kinds; see kinds.h.
 *
 * A table added to common/schema.sql gets one entry here (the unit test
 * check_kinds.py and merge_check_table_list() refuse a schema table
 * without one).  The order is the Chrome trace's: its events are written
 * table by table in this order.
 */
#include "kinds.h"

#include <string.h>

/* A lane's common slice columns: id, pid, tid, start_ns, end_ns (timeline.c lists the rest). */
/* colours: curses COLOR_RED 1, GREEN 2, YELLOW 3, BLUE 4, MAGENTA 5, CYAN 6 */
#define K(t, c, f, v) .table = (t), .columns = (c), .flags = (f), .since = (v)
#define SLICE "SELECT id, pid, tid, start_ns, end_ns, "
#define THREAD_LANE "pid = ?1 AND tid = ?2"
/* "file:line" of a call site's user line, joined as c and cf */
#define CALLSITE_JOIN " LEFT JOIN callsites c ON c.id = x.callsite_id LEFT JOIN strings cf ON cf.id = c.file_id"

const struct agp_kind agp_kinds[] = {
	{ K("meta", "", AGP_KIND_REQUIRED | AGP_KIND_MERGED_ELSEWHERE, 1) },
	{ K("strings", "", AGP_KIND_REQUIRED | AGP_KIND_MERGED_ELSEWHERE, 1) },
	{ K("processes", "pid:pid ppid:pid start_ns:time end_ns:time rank:rank", AGP_KIND_REQUIRED, 1) },
	{ K("threads", "pid:pid tid:tid", 0, 1) },
	{ K("callsites", "id:id file_id:strings func_id:strings parent_id:callsites", AGP_KIND_REQUIRED, 1) },
	{ K("functions", "id:id pid:pid name_id:strings file_id:strings", AGP_KIND_REQUIRED, 1) },
	{ K("traces", "id:id function_id:functions pid:pid tid:tid start_ns:time end_ns:time tf_name_id:strings"
		    " callsite_id:callsites", AGP_KIND_EVENT | AGP_KIND_REQUIRED, 1),
	  .scan = "SELECT id, pid, tid, start_ns, end_ns FROM traces WHERE id BETWEEN ?1 AND ?2",
	  .scan_lane = AGP_LANE_TRACE,
	  .lanes = { { "tracing", "trace", AGP_LANE_TRACE,
		       SLICE "function_id, -1, -1, status <> 'ok', 0 FROM traces", THREAD_LANE, "function_id",
		       /* options, variables and status only when they say something */
		       "SELECT t.object_trace_no, fs.text, t.signature, tn.text, cf.text || ':' || c.line,"
		       " t.function_object, trim(CASE WHEN t.jit_compile THEN 'jit_compile ' ELSE '' END ||"
		       " CASE WHEN t.reduce_retracing THEN 'reduce_retracing ' ELSE '' END ||"
		       " CASE WHEN t.has_input_signature THEN 'input_signature' ELSE '' END),"
		       " nullif(t.variables_created, 0), nullif(t.status, 'ok'), df.text || ':' || fn.line"
		       " FROM traces t JOIN functions fn ON fn.id = t.function_id"
		       " LEFT JOIN strings fs ON fs.id = fn.name_id LEFT JOIN strings tn ON tn.id = t.tf_name_id"
		       " LEFT JOIN callsites c ON c.id = t.callsite_id LEFT JOIN strings cf ON cf.id = c.file_id"
		       " LEFT JOIN strings df ON df.id = fn.file_id WHERE t.id = ?1",
		       { "trace #", "function", "signature", "tf function", "source", "tf.function id", "options",
			 "new variables", "status", "defined at" }, 5, 170 } },
	  /* the name's number as sqlite3_column_int() reads it: the low 32 bits */
	  .chrome = { .how = AGP_CHROME_SLICE, .cat = "tracing",
		      .sql = "SELECT t.pid, t.tid, t.start_ns, t.end_ns, 'trace ' || coalesce(s.text, '') || ' #'"
		      " || coalesce(t.object_trace_no << 32 >> 32, 0), coalesce(t.signature, ''), f.text, cs.line"
		      " FROM traces t JOIN functions fn ON fn.id = t.function_id JOIN strings s ON s.id = fn.name_id"
		      " LEFT JOIN callsites cs ON cs.id = t.callsite_id LEFT JOIN strings f ON f.id = cs.file_id"
		      " ORDER BY t.start_ns", .args = "signature:s called_at:loc" } },
	{ K("trace_inputs", "trace_id:traces", AGP_KIND_REQUIRED, 1) },
	{ K("graph_functions", "id:id pid:pid name_id:strings trace_id:traces function_id:functions"
			     " parent_id:graph_functions created_ns:time", AGP_KIND_REQUIRED, 1) },
	{ K("graph_inputs", "graph_function_id:graph_functions", 0, 1) },
	{ K("graph_constants", "graph_function_id:graph_functions", AGP_KIND_REQUIRED, 1) },
	{ K("blackbox_nodes", "id:id graph_function_id:graph_functions", AGP_KIND_REQUIRED, 1) },
	{ K("graph_nodes", "id:id pid:pid graph_function_id:graph_functions", 0, 4) },
	{ K("function_calls", "id:id pid:pid tid:tid start_ns:time end_ns:time graph_function_id:graph_functions"
			    " name_id:strings callsite_id:callsites", AGP_KIND_EVENT | AGP_KIND_REQUIRED, 1),
	  .scan = "SELECT id, pid, tid, start_ns, end_ns FROM function_calls WHERE id BETWEEN ?1 AND ?2",
	  .scan_lane = AGP_LANE_CALL,
	  .lanes = { { "call", "call", AGP_LANE_CALL,
		       SLICE "coalesce(graph_function_id, -1), name_id, -1, ok = 0, 0 FROM function_calls", THREAD_LANE,
		       "name_id",
		       "SELECT n.text, fs.text, g.role, cf.text || ':' || c.line,"
		       " CASE ok WHEN 1 THEN 'ok' ELSE 'failed' END, g.node_count"
		       " FROM function_calls x JOIN strings n ON n.id = x.name_id"
		       " LEFT JOIN graph_functions g ON g.id = x.graph_function_id"
		       " LEFT JOIN functions fn ON fn.id = g.function_id LEFT JOIN strings fs ON fs.id = fn.name_id"
		       CALLSITE_JOIN " WHERE x.id = ?1",
		       { "tf function", "function", "graph role", "source", "status", "graph nodes" }, 4, 33 } },
	  .chrome = { .how = AGP_CHROME_SLICE, .cat = "graph",
		      .sql = "SELECT c.pid, c.tid, c.start_ns, c.end_ns, n.text, coalesce(u.text, ''), c.ok, f.text, cs.line"
		      " FROM function_calls c JOIN strings n ON n.id = c.name_id"
		      " LEFT JOIN graph_functions g ON g.id = c.graph_function_id"
		      " LEFT JOIN functions fn ON fn.id = g.function_id LEFT JOIN strings u ON u.id = fn.name_id"
		      " LEFT JOIN callsites cs ON cs.id = c.callsite_id LEFT JOIN strings f ON f.id = cs.file_id",
		      .args = "function:s ok:i called_at:loc" } },
	/* schema 6: a view over eager_op_rows and eager_op_keys (an older input's table goes in through it) */
	{ K("eager_ops", "id:id pid:pid tid:tid start_ns:time end_ns:time op_id:strings device_id:strings"
		       " callsite_id:callsites", AGP_KIND_EVENT, 1), .view_over = "eager_op_rows",
	  .scan = "SELECT id, pid, tid, start_ns, end_ns FROM eager_ops WHERE id BETWEEN ?1 AND ?2",
	  .scan_lane = AGP_LANE_EAGER,
	  .lanes = { { "eager", "eager", AGP_LANE_EAGER, SLICE "-1, op_id, -1, ok = 0, 0 FROM eager_ops", THREAD_LANE,
		       "op_id",
		       "SELECT o.text, d.text, cf.text || ':' || c.line, cfn.text,"
		       " CASE slow_path WHEN 1 THEN 'slow (Python fallback)' ELSE 'fast (C)' END,"
		       " CASE ok WHEN 1 THEN 'ok' ELSE 'failed' END"
		       " FROM eager_ops x JOIN strings o ON o.id = x.op_id LEFT JOIN strings d ON d.id = x.device_id"
		       CALLSITE_JOIN " LEFT JOIN strings cfn ON cfn.id = c.func_id WHERE x.id = ?1",
		       { "op", "device", "source", "in function", "dispatch", "status" }, 2, 71 } },
	  .chrome = { .how = AGP_CHROME_SLICE, .cat = "eager",
		      .sql = "SELECT e.pid, e.tid, e.start_ns, e.end_ns, o.text, e.slow_path, f.text, cs.line"
		      " FROM eager_ops e JOIN strings o ON o.id = e.op_id"
		      " LEFT JOIN callsites cs ON cs.id = e.callsite_id LEFT JOIN strings f ON f.id = cs.file_id",
		      .args = "slow_path:i line:loc" } },
	/*
	 * Eager ops past the budget: in the Chrome trace a counter per thread and
	 * op type, grouped by the writer's own grid (CLOCK_MONOTONIC seconds),
	 * which merges a second's call sites.
	 */
	{ K("eager_op_buckets", "id:id pid:pid tid:tid start_ns:time end_ns:time op_id:strings device_id:strings"
			      " callsite_id:callsites", AGP_KIND_EVENT | AGP_KIND_AGGREGATE, 5),
	  .scan = "SELECT id, pid, tid, start_ns, end_ns, max(count, 0), max(total_ns, 0)"
		  " FROM eager_op_buckets WHERE id BETWEEN ?1 AND ?2",
	  .scan_lane = AGP_LANE_EAGER,
	  .chrome = { .how = AGP_CHROME_COUNTER, .cat = "eager-aggregate",
		      .sql = "SELECT b.pid, b.tid, o.text, b.start_ns / 1000000000, max(0, sum(b.count))"
		      " FROM eager_op_buckets b JOIN strings o ON o.id = b.op_id"
		      " GROUP BY b.pid, b.tid, b.op_id, b.start_ns / 1000000000 ORDER BY 4",
		      .args = "eager ops/s past the budget" } },
	{ K("blackbox_execs", "id:id pid:pid tid:tid start_ns:time end_ns:time node_id:strings op_type_id:strings"
			    " blackbox_node_id:blackbox_nodes", AGP_KIND_EVENT | AGP_KIND_REQUIRED, 1),
	  .scan = "SELECT id, pid, tid, start_ns, end_ns FROM blackbox_execs WHERE id BETWEEN ?1 AND ?2",
	  .scan_lane = AGP_LANE_BLACKBOX,
	  .lanes = { { "py_function", "pyfn", AGP_LANE_BLACKBOX,
		       SLICE "-1, node_id, -1, 0, 0 FROM blackbox_execs", THREAD_LANE, "node_id",
		       "SELECT n.text, o.text FROM blackbox_execs x JOIN strings n ON n.id = x.node_id"
		       " JOIN strings o ON o.id = x.op_type_id WHERE x.id = ?1",
		       { "node", "op type" }, 1, 167 } },
	  .chrome = { .how = AGP_CHROME_SLICE, .cat = "py_function",
		      .sql = "SELECT b.pid, b.tid, b.start_ns, b.end_ns, n.text, t.text FROM blackbox_execs b"
		      " JOIN strings n ON n.id = b.node_id JOIN strings t ON t.id = b.op_type_id", .args = "op_type:s" } },
	/* schema 4: every CPU kernel (or, from schema 5, the sampled calls' ones) */
	{ K("kernels", "id:id pid:pid tid:tid start_ns:time end_ns:time node_id:graph_nodes call_id:function_calls",
	  AGP_KIND_EVENT | AGP_KIND_NO_START_INDEX, 4),
	  .scan = "SELECT id, pid, tid, start_ns, end_ns FROM kernels WHERE id BETWEEN ?1 AND ?2",
	  .scan_lane = AGP_LANE_CPUK,
	  /*
	   * The lane filter and the range are answered by kernels_thread (pid,
	   * tid, start_ns).  The name is the node's (the op name); the graph
	   * function is the node's, the call is the function_calls row the
	   * kernel ran under.
	   */
	  .lanes = { { "cpu kernel", "cpuk", AGP_LANE_CPUK,
		       SLICE "coalesce(call_id, -1), coalesce(node_id, -1), -1, 0, 0 FROM kernels", THREAD_LANE, "node_id",
		       "SELECT n.op_type, n.file || ':' || n.line, gn.text, fs.text,"
		       " CASE WHEN x.call_id IS NULL THEN 'none (eager, Session.run or unknown)'"
		       " ELSE '#' || x.call_id || ' ' || coalesce(cn.text, '') END,"
		       " CASE x.async WHEN 1 THEN 'async (the span is the dispatch only)' END"
		       " FROM kernels x LEFT JOIN graph_nodes n ON n.id = x.node_id"
		       " LEFT JOIN graph_functions g ON g.id = n.graph_function_id LEFT JOIN strings gn ON gn.id = g.name_id"
		       " LEFT JOIN functions fn ON fn.id = g.function_id LEFT JOIN strings fs ON fs.id = fn.name_id"
		       " LEFT JOIN function_calls c ON c.id = x.call_id LEFT JOIN strings cn ON cn.id = c.name_id"
		       " WHERE x.id = ?1",
		       { "op type", "source", "graph function", "function", "call", "compute" }, 6, 73 } },
	  .chrome = { .how = AGP_CHROME_SLICE, .cat = "kernel",
		      .sql = "SELECT k.pid, k.tid, k.start_ns, k.end_ns, coalesce(n.name, '?'), coalesce(n.op_type, '?'),"
		      " n.file, n.line, k.call_id, k.async FROM kernels k LEFT JOIN graph_nodes n ON n.id = k.node_id",
		      .args = "op_type:s created_at:loc call:L async:n" } },
	/* GPU kernels and copies: one scan, two lanes per stream (tid is the stream) */
	{ K("gpu_activity", "id:id pid:pid name_id:strings start_ns:time end_ns:time", AGP_KIND_EVENT, 1),
	  .scan = "SELECT id, pid, coalesce(stream, -1), start_ns, end_ns, coalesce(device, 0), kind <> 'kernel'"
		  " FROM gpu_activity WHERE id BETWEEN ?1 AND ?2 AND kind IN ('kernel', 'memcpy', 'memset')",
	  .scan_lane = AGP_LANE_KERNEL,
	  .lanes = { { "kernel", "kern", AGP_LANE_KERNEL,
		       "SELECT id, pid, coalesce(stream, -1), start_ns, end_ns, -1, coalesce(name_id, -1),"
		       " coalesce(device, 0), 0, 0 FROM gpu_activity",
		       "kind = 'kernel' AND pid = ?1 AND coalesce(stream, -1) = ?2 AND coalesce(device, 0) = ?6",
		       "kind = 'kernel' AND name_id",
		       "SELECT n.text, x.device, x.stream, x.grid_x || 'x' || x.grid_y || 'x' || x.grid_z,"
		       " x.block_x || 'x' || x.block_y || 'x' || x.block_z, x.correlation_id"
		       " FROM gpu_activity x LEFT JOIN strings n ON n.id = x.name_id WHERE x.id = ?1",
		       { "kernel", "device", "stream", "grid", "block", "correlation" }, 6, 37 },
		     { "copy", "copy", AGP_LANE_COPY,
		       "SELECT id, pid, coalesce(stream, -1), start_ns, end_ns, -1, coalesce(name_id, -1),"
		       " coalesce(device, 0), 0, 1 FROM gpu_activity",
		       "kind IN ('memcpy', 'memset') AND pid = ?1 AND coalesce(stream, -1) = ?2 AND coalesce(device, 0) = ?6",
		       "kind IN ('memcpy', 'memset') AND name_id",
		       "SELECT x.kind, x.copy_kind, x.bytes, x.device, x.stream, x.correlation_id"
		       " FROM gpu_activity x WHERE x.id = ?1",
		       { "activity", "copy kind", "bytes", "device", "stream", "correlation" }, 3, 179 } },
	  .chrome = { .how = AGP_CHROME_GPU, .cat = "gpu",
		      .sql = "SELECT g.pid, coalesce(g.stream, 0), g.start_ns, g.end_ns, coalesce(n.text, g.kind, ''), g.kind,"
		      " coalesce(g.device, 0), coalesce(g.stream, 0) FROM gpu_activity g LEFT JOIN strings n ON n.id = g.name_id",
		      .args = "kind:s device:i stream:l" } },
	{ K("gpu_api_calls", "id:id pid:pid tid:tid name_id:strings start_ns:time end_ns:time", AGP_KIND_EVENT, 1) },
	{ K("gpu_external_ids", "pid:pid event_id:@event_table", 0, 1) },
	{ K("kernel_totals", "pid:pid tid:tid node_id:graph_nodes call_id:function_calls graph_function_id:graph_functions",
	  0, 5) },
	{ K("session_runs", "id:id pid:pid tid:tid start_ns:time end_ns:time callsite_id:callsites", AGP_KIND_EVENT, 2) },
	{ K("trace_events", "id:id pid:pid trace_id:traces", 0, 3) },
	{ K("capture_windows", "pid:pid start_ns:time end_ns:time", 0, 4) },
	{ K("collective_execs", "id:id pid:pid tid:tid op_id:strings start_ns:time end_ns:time", AGP_KIND_EVENT, 5) },
	/* schema 7: graph calls and black-box runs past the budget, drawn as density */
	{ K("function_call_buckets", "id:id pid:pid tid:tid start_ns:time end_ns:time graph_function_id:graph_functions"
				   " name_id:strings callsite_id:callsites", AGP_KIND_EVENT | AGP_KIND_AGGREGATE, 7),
	  .scan = "SELECT id, pid, tid, start_ns, end_ns, max(count, 0), max(total_ns, 0)"
		  " FROM function_call_buckets WHERE id BETWEEN ?1 AND ?2",
	  .scan_lane = AGP_LANE_CALL },
	{ K("blackbox_buckets", "id:id pid:pid tid:tid start_ns:time end_ns:time node_id:strings op_type_id:strings"
			      " blackbox_node_id:blackbox_nodes", AGP_KIND_EVENT | AGP_KIND_AGGREGATE, 7),
	  .scan = "SELECT id, pid, tid, start_ns, end_ns, max(count, 0), max(total_ns, 0)"
		  " FROM blackbox_buckets WHERE id BETWEEN ?1 AND ?2",
	  .scan_lane = AGP_LANE_BLACKBOX },
	/* schema 8: tf.data ops with their handles */
	{ K("dataset_ops", "id:id pid:pid tid:tid op_id:strings start_ns:time end_ns:time", AGP_KIND_EVENT, 8) },
	/* schema 6: the eager ops' tables under the eager_ops view */
	{ K("eager_op_keys", "id:id pid:pid tid:tid op_id:strings device_id:strings callsite_id:callsites base_ns:time",
	  AGP_KIND_STORAGE, 6) },
	{ K("eager_op_rows", "id:id key:eager_op_keys", AGP_KIND_STORAGE, 6) },
	{ K("eager_op_blocks", "id:id pid:pid tid:tid first_id:eager_op_rows last_id:eager_op_rows min_start_ns:time"
			     " max_start_ns:time", AGP_KIND_STORAGE, 6) },
	{ K("source_files", "", AGP_KIND_OR_IGNORE, 3) },
	{ K("notebook_cells", "", AGP_KIND_OR_IGNORE, 8) },  /* optional in 8: a recording made in IPython */
	{ K("code_facts", "", AGP_KIND_OR_IGNORE, 9) },      /* optional in 9: written since stop 45 */
	{ K("cpu_samples", "pid:pid t_ns:time", 0, 9) },      /* optional in 9: the threads' run-queue wait */
	{ K("thread_samples", "pid:pid tid:tid from_ns:time t_ns:time", 0, 9) }, /* optional in 9: an eager thread's own */
	{ K("op_prices", "pid:pid tid:tid op_id:strings", 0, 9) }, /* optional in 9: op types' CPU prices, timed at the first trace */
	{ K("ranks", "", AGP_KIND_MERGED_ELSEWHERE, 4) },
};
const size_t agp_nkinds = sizeof(agp_kinds) / sizeof(agp_kinds[0]);

const struct agp_kind *agp_kind_find(const char *table, size_t len)
{
	for (size_t i = 0; i < agp_nkinds; i++)
		if (strlen(agp_kinds[i].table) == len && !strncmp(agp_kinds[i].table, table, len))
			return &agp_kinds[i];
	return NULL;
}

const struct agp_kind *agp_lane_table(int kind)
{
	for (size_t i = 0; i < agp_nkinds; i++)
		for (size_t l = 0; l < 2; l++)
			if (agp_kinds[i].lanes[l].long_name && agp_kinds[i].lanes[l].kind == kind)
				return &agp_kinds[i];
	return NULL;
}

const struct agp_lane *agp_lane_find(int kind)
{
	const struct agp_kind *k = agp_lane_table(kind);

	return !k ? NULL : k->lanes[0].kind == kind ? &k->lanes[0] : &k->lanes[1];
}

const char *agp_kind_role(const struct agp_kind *k, const char *col, size_t *len)
{
	size_t n = strlen(col);

	for (const char *p = k->columns; *p;) {
		const char *colon = strchr(p, ':'), *end = strchr(p, ' ');

		if (!end)
			end = p + strlen(p);
		if (colon && colon < end && (size_t)(colon - p) == n && !strncmp(p, col, n)) {
			*len = (size_t)(end - colon - 1);
			return colon + 1;
		}
		p = *end ? end + 1 : end;
	}
	return NULL;
}

_Static_assert(sizeof(agp_kinds) / sizeof(agp_kinds[0]) <= AGP_MAX_KINDS, "AGP_MAX_KINDS is too small");
