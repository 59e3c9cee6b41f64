/*
 * links.c - the links between rows that only the whole recording tells
 * (kernels to calls and nodes, calls and graph functions to their traces),
 * made at the run's finish, or by the keeper from what was committed; see
 * links.h.
 */
#include "links.h"
#include "db.h"

/*
 * The writer's link tables: what it learns while the run goes on and the
 * links read at the finish.  In the recording, not TEMP: committed with
 * the rows they link, so that the keeper of a killed launcher links as the
 * finish does; both drop them once linked (links_drop_sql).
 */
const char links_tables_sql[] =
	"CREATE TABLE IF NOT EXISTS link_ref(pid INTEGER, parent_id INTEGER, child_name_id INTEGER);"
	"CREATE TABLE IF NOT EXISTS link_trace(gf_id INTEGER, pid INTEGER, trace_seq INTEGER);"
	"CREATE TABLE IF NOT EXISTS link_name(gf_id INTEGER, pid INTEGER, user_name TEXT);"
	"CREATE TABLE IF NOT EXISTS link_trace_seq(pid INTEGER, seq INTEGER, trace_id INTEGER, PRIMARY KEY (pid, seq));"
	"CREATE TABLE IF NOT EXISTS link_kernel_cut(pid INTEGER, seq INTEGER, PRIMARY KEY (pid, seq));"
	"CREATE TABLE IF NOT EXISTS link_node_src(pid INTEGER, trace_seq INTEGER, name TEXT, file_id INTEGER, line INTEGER);";

/* Before the late indexes: they take the pages back. */
static const char links_drop_sql[] =
	"DROP TABLE IF EXISTS link_ref; DROP TABLE IF EXISTS link_trace; DROP TABLE IF EXISTS link_name;"
	"DROP TABLE IF EXISTS link_trace_seq; DROP TABLE IF EXISTS link_kernel_cut; DROP TABLE IF EXISTS link_node_src;";

static const char link_sql[] =
	/*
	 * graph functions built by a trace (the first of the name), with its
	 * function.  Each statement writes only the rows it links: a row holds
	 * its FunctionDef, and rewriting every row at every statement was half
	 * of these statements' time on a Keras fit (460 functions, 2.3 MB).
	 */
	"UPDATE graph_functions SET trace_id = t.id, function_id = t.function_id FROM (SELECT pid, tf_name_id,"
	"  min(id) AS id, function_id FROM traces GROUP BY pid, tf_name_id) t"
	"  WHERE graph_functions.trace_id IS NULL AND t.pid = graph_functions.pid AND t.tf_name_id = graph_functions.name_id;"
	"UPDATE graph_functions SET function_id = t.function_id FROM traces t WHERE t.id = graph_functions.trace_id"
	"  AND graph_functions.function_id IS NOT t.function_id;"
	/* forward/backward pairs, by the user function's name (latest definition) */
	"UPDATE graph_functions SET function_id = (SELECT f.id FROM link_name l JOIN strings s"
	"  ON s.text = l.user_name JOIN functions f ON f.name_id = s.id AND f.pid = l.pid"
	"  WHERE l.gf_id = graph_functions.id ORDER BY f.id DESC LIMIT 1) WHERE function_id IS NULL;"
	/* functions referenced by another function's nodes (cond/while branches) */
	"UPDATE graph_functions SET parent_id = l.parent_id FROM (SELECT pid, child_name_id, parent_id FROM link_ref"
	"  WHERE rowid IN (SELECT min(rowid) FROM link_ref GROUP BY pid, child_name_id)) l"
	"  WHERE graph_functions.parent_id IS NULL AND l.pid = graph_functions.pid AND l.child_name_id = graph_functions.name_id;"
	/* functions registered while a trace was being built */
	"UPDATE graph_functions SET function_id = (SELECT t.function_id FROM link_trace l"
	"  JOIN link_trace_seq q ON q.pid = l.pid AND q.seq = l.trace_seq JOIN traces t ON t.id = q.trace_id"
	"  WHERE l.gf_id = graph_functions.id) WHERE function_id IS NULL;"
	"UPDATE graph_functions SET role = 'branch' WHERE role = 'other' AND parent_id IS NOT NULL;"
	/* trace events written before their trace (a failed trace closes late) */
	"UPDATE trace_events SET trace_id = (SELECT q.trace_id FROM link_trace_seq q"
	"  WHERE q.pid = trace_events.pid AND q.seq = trace_events.trace_seq) WHERE trace_id IS NULL;"
	/* an __inference_ function no trace of this process built was loaded (SavedModel) */
	"UPDATE graph_functions SET role = 'loaded' WHERE role = 'inference' AND trace_id IS NULL"
	"  AND function_id IS NULL AND id NOT IN (SELECT gf_id FROM link_trace);"
	"UPDATE function_calls SET graph_function_id = (SELECT g.id FROM graph_functions g"
	"  WHERE g.pid = function_calls.pid AND g.name_id = function_calls.name_id);"
	"UPDATE function_call_buckets SET graph_function_id = (SELECT g.id FROM graph_functions g"
	"  WHERE g.pid = function_call_buckets.pid AND g.name_id = function_call_buckets.name_id);"
	/* aggregated black-box runs as the rows (schema 7), by token, else by the one node of their name */
	"UPDATE blackbox_buckets SET blackbox_node_id = (SELECT n.id FROM blackbox_nodes n"
	"  JOIN graph_functions g ON g.id = n.graph_function_id"
	"  WHERE g.pid = blackbox_buckets.pid AND n.token = blackbox_buckets.token LIMIT 1) WHERE token IS NOT NULL;"
	"UPDATE blackbox_buckets SET blackbox_node_id = (SELECT CASE WHEN count(DISTINCT n.graph_function_id) = 1"
	"  THEN min(n.id) END FROM blackbox_nodes n"
	"  JOIN graph_functions g ON g.id = n.graph_function_id JOIN strings s ON s.id = blackbox_buckets.node_id"
	"  WHERE g.pid = blackbox_buckets.pid AND n.node_name = s.text) WHERE blackbox_node_id IS NULL;"
	/* each black-box run to its node (tokens are unique per process) */
	"UPDATE blackbox_execs SET blackbox_node_id = (SELECT n.id FROM blackbox_nodes n"
	"  JOIN graph_functions g ON g.id = n.graph_function_id"
	"  WHERE g.pid = blackbox_execs.pid AND n.token = blackbox_execs.token LIMIT 1) WHERE token IS NOT NULL;"
	/* a run whose kernel token was not read: by node name, only when one node has it */
	"UPDATE blackbox_execs SET blackbox_node_id = (SELECT CASE WHEN count(DISTINCT n.graph_function_id) = 1"
	"  THEN min(n.id) END FROM blackbox_nodes n"
	"  JOIN graph_functions g ON g.id = n.graph_function_id JOIN strings s ON s.id = blackbox_execs.node_id"
	"  WHERE g.pid = blackbox_execs.pid AND n.node_name = s.text) WHERE blackbox_node_id IS NULL;"
	/* threads that ran a tf.data function's black box are tf.data threads */
	"UPDATE threads SET role = 'tf-data' WHERE role NOT IN ('main', 'tf-data') AND EXISTS"
	"  (SELECT 1 FROM blackbox_execs b JOIN blackbox_nodes n ON n.id = b.blackbox_node_id"
	"   JOIN graph_functions g ON g.id = n.graph_function_id JOIN strings s ON s.id = g.name_id"
	"   WHERE b.pid = threads.pid AND b.tid = threads.tid AND s.text LIKE '%Dataset%');"
	"UPDATE threads SET role = 'tf-data' WHERE role NOT IN ('main', 'tf-data') AND EXISTS"
	"  (SELECT 1 FROM blackbox_buckets b JOIN blackbox_nodes n ON n.id = b.blackbox_node_id"
	"   JOIN graph_functions g ON g.id = n.graph_function_id JOIN strings s ON s.id = g.name_id"
	"   WHERE b.pid = threads.pid AND b.tid = threads.tid AND s.text LIKE '%Dataset%');"
	"UPDATE threads SET role = 'python-main' WHERE role = 'main' AND pid IN"
	"  (SELECT pid FROM processes WHERE python_version IS NOT NULL);"
	"UPDATE threads SET role = 'other' WHERE role = 'main';";

/*
 * The map from a process's call seq (kernels.call_id holds -seq) to its
 * row, from the rows themselves (function_calls.seq): those of sampled
 * calls (their kernels, cuts and budget) and those kernel totals name.
 * The latest row of a seq wins (seqs are 32 bits).
 */
static const char call_seq_sql[] =
	"CREATE TEMP TABLE IF NOT EXISTS call_seq(pid INTEGER, seq INTEGER, call_id INTEGER, PRIMARY KEY (pid, seq));"
	"INSERT OR REPLACE INTO temp.call_seq(pid, seq, call_id) SELECT pid, seq, id FROM function_calls"
	"  WHERE seq IS NOT NULL AND (kernel_detail OR seq IN (SELECT -call_id FROM kernel_totals WHERE call_id < 0))"
	"  ORDER BY id;";

/* The rows of calls the collector cut (kernel_call_cut): none kept, the call not detailed. */
static const char cut_calls_sql[] =
	"DELETE FROM kernels WHERE call_id < 0 AND EXISTS (SELECT 1 FROM link_kernel_cut c"
	"  WHERE c.pid = kernels.pid AND c.seq = -kernels.call_id);"
	"UPDATE function_calls SET kernel_detail = 0 WHERE id IN (SELECT q.call_id FROM temp.call_seq q"
	"  JOIN link_kernel_cut c ON c.pid = q.pid AND c.seq = q.seq);";

/*
 * Kernels and kernel totals: each to its call (by the call's seq), and each
 * from its (name, type) node to the node of that name in the call's graph
 * function, else in the one graph function of the process that has it (a
 * nested function's body).  After link_sql, which gives the calls their
 * graph functions, and before kernels_call, a late index (schema.sql), is
 * built.  A kernel's call and node in one pass over the rows: a pass for
 * each was a quarter of the finish on a Keras fit (27,000 kernel rows).
 * The nodes get their creation lines.
 */
static const char link_kernels_sql[] =
	"CREATE TEMP TABLE kmap(u INTEGER, gf INTEGER, n INTEGER, PRIMARY KEY (u, gf));"
	"INSERT OR IGNORE INTO temp.kmap(u, gf) SELECT DISTINCT k.node_id, c.graph_function_id FROM kernels k"
	"  JOIN temp.call_seq q ON q.pid = k.pid AND q.seq = -k.call_id JOIN function_calls c ON c.id = q.call_id"
	"  WHERE k.call_id < 0 AND k.node_id IS NOT NULL AND c.graph_function_id IS NOT NULL;"
	/* a total names its call by seq, or by the row of an aggregated call (run_writer.c) */
	"UPDATE kernel_totals SET call_id = (SELECT q.call_id FROM temp.call_seq q"
	"  WHERE q.pid = kernel_totals.pid AND q.seq = -kernel_totals.call_id) WHERE call_id < 0;"
	"INSERT OR IGNORE INTO temp.kmap(u, gf) SELECT DISTINCT k.node_id, c.graph_function_id FROM kernel_totals k"
	"  JOIN function_calls c ON c.id = k.call_id WHERE k.node_id IS NOT NULL AND c.graph_function_id IS NOT NULL;"
	"UPDATE temp.kmap SET n = (SELECT n.id FROM graph_nodes u JOIN graph_nodes n ON n.graph_function_id = kmap.gf"
	"  AND n.name = u.name WHERE u.id = kmap.u LIMIT 1);"
	/*
	 * by name in the process, for the names not found in the call's function:
	 * one lookup per node (a scan of graph_nodes per node took minutes on
	 * TFP's HMC), counted for those names only
	 */
	"CREATE TEMP TABLE kname(pid INTEGER, name TEXT, nodes INTEGER, id INTEGER, PRIMARY KEY (pid, name));"
	"INSERT INTO temp.kname SELECT pid, name, count(*), min(id) FROM graph_nodes"
	"  WHERE graph_function_id IS NOT NULL AND name IN (SELECT u.name FROM temp.kmap m JOIN graph_nodes u"
	"  ON u.id = m.u WHERE m.n IS NULL) GROUP BY pid, name;"
	"UPDATE temp.kmap SET n = (SELECT CASE WHEN k.nodes = 1 THEN k.id END FROM graph_nodes u JOIN temp.kname k"
	"  ON k.pid = u.pid AND k.name = u.name WHERE u.id = kmap.u) WHERE n IS NULL;"
	"UPDATE kernels SET call_id = q.call_id, node_id = coalesce((SELECT m.n FROM temp.kmap m"
	"  WHERE m.u = kernels.node_id AND m.gf = c.graph_function_id), kernels.node_id)"
	"  FROM temp.call_seq q JOIN function_calls c ON c.id = q.call_id"
	"  WHERE kernels.call_id < 0 AND q.pid = kernels.pid AND q.seq = -kernels.call_id;"
	"UPDATE kernel_totals SET graph_function_id = c.graph_function_id, node_id = coalesce((SELECT m.n"
	"  FROM temp.kmap m WHERE m.u = kernel_totals.node_id AND m.gf = c.graph_function_id), kernel_totals.node_id)"
	"  FROM function_calls c WHERE c.id = kernel_totals.call_id;"
	"UPDATE kernels SET call_id = NULL WHERE call_id < 0;"  /* a seq no row has: the call was not recorded */
	/*
	 * A kernel on another thread while one call was in flight was given that
	 * call; if its node is of another top-level function (a tf.data map's, a
	 * variable initializer's) it ran beside the call, not in it: a sequential
	 * map's py_function was "95% of the train step's kernel time".  A thread
	 * that ran a tf.data function's kernels is a tf.data thread (the
	 * collector could not tell from its stack), and none of its kernels is
	 * another thread's call's: a map's Cast is no Cast of the step.  The
	 * threads in one pass over the kernels: an EXISTS per thread scanned
	 * them all for each (no index on the thread yet: it comes late), 129 ms
	 * of a 0.3 s finish on a Keras fit of 25,000 kernel rows.
	 */
	"UPDATE threads SET role = 'tf-data' WHERE role NOT IN ('python-main', 'tf-data') AND (pid, tid) IN (SELECT"
	"  k.pid, k.tid FROM kernels k JOIN graph_nodes n ON n.id = k.node_id JOIN graph_functions g"
	"  ON g.id = n.graph_function_id JOIN strings s ON s.id = g.name_id"
	"  WHERE g.parent_id IS NULL AND s.text LIKE '%!_Dataset!_%' ESCAPE '!');"
	"UPDATE kernels SET call_id = NULL WHERE call_id IS NOT NULL AND (pid, tid) IN (SELECT pid, tid FROM threads"
	"  WHERE role = 'tf-data') AND EXISTS (SELECT 1 FROM function_calls c WHERE c.id = kernels.call_id"
	"  AND c.tid != kernels.tid);"
	"UPDATE kernel_totals SET call_id = NULL, graph_function_id = NULL WHERE call_id IS NOT NULL AND (pid, tid) IN"
	"  (SELECT pid, tid FROM threads WHERE role = 'tf-data') AND EXISTS (SELECT 1 FROM function_calls c"
	"  WHERE c.id = kernel_totals.call_id AND c.tid != kernel_totals.tid);"
	/*
	 * a node of another top-level function came from the process-wide
	 * lookup (kmap's n; the others are their call's function's): the scans
	 * below test those nodes only, a quarter of the finish's kernel time
	 * when every kernel was looked up
	 */
	"CREATE TEMP TABLE kbeside(n INTEGER PRIMARY KEY);"
	"INSERT OR IGNORE INTO temp.kbeside SELECT m.n FROM temp.kmap m JOIN graph_nodes n ON n.id = m.n"
	"  JOIN graph_functions g ON g.id = n.graph_function_id WHERE g.parent_id IS NULL AND g.id IS NOT m.gf;"
	"UPDATE kernels SET call_id = NULL WHERE call_id IS NOT NULL AND node_id IN temp.kbeside AND EXISTS"
	"  (SELECT 1 FROM graph_nodes n JOIN graph_functions g ON g.id = n.graph_function_id JOIN function_calls c"
	"  ON c.id = kernels.call_id WHERE n.id = kernels.node_id AND g.parent_id IS NULL AND g.id IS NOT c.graph_function_id);"
	"UPDATE kernel_totals SET call_id = NULL, graph_function_id = NULL WHERE call_id IS NOT NULL"
	"  AND node_id IN temp.kbeside AND EXISTS (SELECT 1 FROM graph_nodes n JOIN graph_functions g"
	"  ON g.id = n.graph_function_id WHERE n.id = kernel_totals.node_id AND g.parent_id IS NULL"
	"  AND g.id IS NOT kernel_totals.graph_function_id);"
	"UPDATE graph_nodes SET file = f.text, line = s.line FROM link_node_src s"
	"  JOIN link_trace_seq q ON q.pid = s.pid AND q.seq = s.trace_seq JOIN graph_functions g ON g.trace_id = q.trace_id"
	"  JOIN strings f ON f.id = s.file_id WHERE g.id = graph_nodes.graph_function_id AND s.name = graph_nodes.name;";

static const char link_parents_sql[] =
	"UPDATE graph_functions SET function_id = (SELECT p.function_id FROM graph_functions p"
	"  WHERE p.id = graph_functions.parent_id) WHERE function_id IS NULL AND parent_id IS NOT NULL;";

int links_calls(sqlite3 *db, int cut_calls)
{
	return db_exec(db, call_seq_sql) != 0 || (cut_calls && db_exec(db, cut_calls_sql) != 0) ? -1 : 0;
}

int links_graph(sqlite3 *db)
{
	int rc = db_exec(db, link_sql) != 0 ? -1 : 0;

	for (int depth = 0; depth < 8; depth++)
		db_exec(db, link_parents_sql);
	if (db_exec(db, link_kernels_sql) != 0 || db_exec(db, links_drop_sql) != 0)
		rc = -1;
	return rc;
}

/* 1 when the query (SELECT EXISTS ...) answers 1. */
static int query_true(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *s = db_prepare(db, sql);
	int yes = s && sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int(s, 0);

	sqlite3_finalize(s);
	return yes;
}

int links_cut_short(sqlite3 *db)
{
	int rc;

	if (!db_has_column(db, "function_calls", "seq") ||
	    query_true(db, "SELECT EXISTS (SELECT 1 FROM meta WHERE key = 'end_ns')"))
		return 0;  /* killed before the schema was made, or the finish committed its links */
	if (db_exec(db, "BEGIN IMMEDIATE") != 0)
		return -1;
	rc = db_exec(db, links_tables_sql) != 0 ||
	     links_calls(db, query_true(db, "SELECT EXISTS (SELECT 1 FROM link_kernel_cut)")) != 0 ||
	     links_graph(db) != 0 ? -1 : 0;
	if (db_exec(db, rc ? "ROLLBACK" : "COMMIT") != 0)
		rc = -1;
	return rc;
}
