/*
 * pitfalls.c - what the collector saw inside traces (trace_events, written
 * by collector/pywatch.c) and the graphs each function keeps, as metric
 * sources for the rules (rules/trace-side-effect.rule, trace-print.rule,
 * unrolled-loop.rule, autograph-fallback.rule, trace-error.rule,
 * serving-signature.rule, graph-memory.rule).  model_load() calls
 * pitfalls_register() after the built-in sources.  Sources:
 *   trace_effects        one row per Python side effect (function, kind, line)
 *   trace_errors         one row per exception that made traces fail
 *   autograph_fallbacks  one row per function AutoGraph ran unconverted
 *   unrolled             per function, the line that created most nodes of its largest graph (and its
 *                        top line inside a loop, when another)
 *   saves                per exported entry point lacking a serving signature, or jit_compile
 *   graph_memory         per function, the graphs (concrete functions) it keeps
 * A recording older than schema 3 has no trace_events (an empty one, compat.c): the sources are empty.
 *
 * All rows are one generic table (numbers and texts by field name), so a
 * source is its SQL, its field names and how a row points at code.
 */
#include "pitfalls.h"
#include "checked.h"
#include "recording.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { PT_NUM = 8, PT_TEXT = 6 };

struct pt_row {
	double num[PT_NUM];
	const char *text[PT_TEXT];  /* pooled in the model */
	const char *function;
	const struct model_function *fn; /* the model's function, or NULL */
	struct source_loc loc;
	int64_t start_ns, end_ns;
};

struct pt_table {
	const char *const *nums;    /* field names of num[], NULL-terminated */
	const char *const *texts;
	struct pt_row *rows;
	size_t n, cap;
};

static struct pt_row *pt_add(struct pt_table *t)
{
	if (ARRAY_GROW(t->rows, t->n, t->cap))
		return NULL;
	memset(&t->rows[t->n], 0, sizeof(t->rows[0]));
	return &t->rows[t->n++];
}

static size_t pt_count(const struct model *m, void *data)
{
	(void)m;
	return ((struct pt_table *)data)->n;
}

static int pt_get(const struct model *m, void *data, size_t row, const char *field, struct metric_value *out)
{
	const struct pt_table *t = data;
	const struct pt_row *r = &t->rows[row];

	(void)m;
	for (size_t i = 0; t->nums[i]; i++)
		if (!strcmp(field, t->nums[i])) {
			out->type = METRIC_NUM;
			out->num = r->num[i];
			return 0;
		}
	for (size_t i = 0; t->texts[i]; i++)
		if (!strcmp(field, t->texts[i])) {
			out->type = r->text[i] ? METRIC_TEXT : METRIC_NONE;
			out->text = r->text[i];
			return 0;
		}
	if (!strcmp(field, "function")) {
		out->type = r->function ? METRIC_TEXT : METRIC_NONE;
		out->text = r->function;
		return 0;
	}
	if (!strcmp(field, "file")) {
		out->type = r->loc.file ? METRIC_TEXT : METRIC_NONE;
		out->text = r->loc.file;
		return 0;
	}
	if (!strcmp(field, "line")) {
		out->type = METRIC_NUM;
		out->num = r->loc.line;
		return 0;
	}
	return -1;
}

static void pt_anchor(const struct model *m, void *data, size_t row, struct metric_anchor *a)
{
	const struct pt_row *r = &((struct pt_table *)data)->rows[row];

	(void)m;
	a->function = r->function;
	a->fn = r->fn;
	a->loc = r->loc;
	a->start_ns = r->start_ns;
	a->end_ns = r->end_ns;
}

static void pt_release(void *data)
{
	struct pt_table *t = data;

	free(t->rows);
	free(t);
}

/* The model's function with this name and def, or NULL. */
static const struct model_function *find_function(const struct model *m, const char *name, const char *file,
						  int line)
{
	for (size_t i = 0; name && i < m->nfunctions; i++) {
		const struct model_function *f = &m->functions[i];

		if (f->name && !strcmp(f->name, name) && f->def.line == line &&
		    (f->def.file == file || (f->def.file && file && !strcmp(f->def.file, file))))
			return f;
	}
	return NULL;
}

static const char *col_text(struct model *m, sqlite3_stmt *s, int col)
{
	const unsigned char *t = sqlite3_column_text(s, col);

	return t ? model_strdup(m, (const char *)t) : NULL;
}

/*
 * Run sql and hand each row to fill(); the first columns of every query
 * are function, function_file, function_line, file, line.
 */
typedef void (*pt_fill)(struct model *m, struct pt_table *t, sqlite3_stmt *s, const struct model_function *f);

static int pt_query(struct model *m, struct pt_table *t, const char *sql, pt_fill fill)
{
	sqlite3_stmt *s;
	int rc;

	if (sqlite3_prepare_v2(m->rec->db, sql, -1, &s, NULL) != SQLITE_OK) {
		fprintf(stderr, "error: cannot read trace events of '%s': %s\n", m->rec->path,
			sqlite3_errmsg(m->rec->db));
		return -1;
	}
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		const char *fname = (const char *)sqlite3_column_text(s, 0);
		const char *ffile = (const char *)sqlite3_column_text(s, 1);
		const struct model_function *f = find_function(m, fname, ffile, sqlite3_column_int(s, 2));
		struct pt_row *r = pt_add(t);

		if (!r)
			break;
		r->function = col_text(m, s, 0);
		r->loc.file = col_text(m, s, 3);
		r->loc.line = sqlite3_column_int(s, 4);
		if (!r->loc.file && f)
			r->loc = model_function_user_loc(f);
		r->fn = f;
		if (f) {
			r->start_ns = f->first_ns;
			r->end_ns = f->last_ns;
		}
		fill(m, t, s, f);
	}
	sqlite3_finalize(s);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -1;
}

/* ---- trace_effects ---------------------------------------------------- */

static const char *const effect_nums[] = { "runs", "count", "traces", "calls", NULL };
static const char *const effect_texts[] = { "kind", "what", "detail", "effect", "fix", NULL };
static const char *const effect_fields[] = {
	"kind: print, list-append, global-store, attr-store, random, time (text)",
	"what: print, list.append, the variable or attribute stored, the random/time function (text)",
	"function, file, line: the traced function and the user's line of the side effect",
	"runs: traces in which it ran (it runs once per trace, not per call)",
	"count: times it ran over all traces",
	"traces, calls: traces and graph calls of the function",
	"detail: list-append: where the tensor was appended (text)",
	"effect, fix: what goes wrong and the graph-friendly replacement (text)",
	NULL,
};

static const char *effect_text(const char *kind, int fix)
{
	static const char *const t[][3] = {
		{ "print", "prints only while tracing", "use tf.print, which prints on every call" },
		{ "list-append", "appends a symbolic tensor to a Python list while tracing",
		  "accumulate with tf.TensorArray (ta = ta.write(i, x); ta.stack())" },
		{ "global-store", "assigns a global variable only while tracing",
		  "keep state in a tf.Variable (v.assign(...)) or return the value" },
		{ "attr-store", "sets an attribute of a Python object only while tracing",
		  "keep state in a tf.Variable created once outside the function, or return the value" },
		{ "random", "draws a Python random number once per trace: the value is frozen into the graph",
		  "use tf.random (tf.random.uniform, a tf.random.Generator) so every call draws anew" },
		{ "time", "reads the clock once per trace: the value is frozen into the graph",
		  "use tf.timestamp(), or read the time outside the tf.function and pass it as a tensor" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (kind && !strcmp(kind, t[i][0]))
			return t[i][fix ? 2 : 1];
	return NULL;
}

static void effect_fill(struct model *m, struct pt_table *t, sqlite3_stmt *s, const struct model_function *f)
{
	struct pt_row *r = &t->rows[t->n - 1];

	(void)m;
	r->text[0] = col_text(m, s, 5);
	r->text[1] = col_text(m, s, 6);
	r->text[2] = col_text(m, s, 9);
	r->text[3] = effect_text(r->text[0], 0);
	if (r->text[0] && !strcmp(r->text[0], "list-append"))
		r->text[3] = r->text[2] && strstr(r->text[2], "while_loop")
			? "appends a symbolic tensor to a Python list inside a tf.while_loop or tf.cond body: it runs once per trace, not once per iteration"
			: "appends a symbolic tensor to a Python list that outlives the trace: the list grows once per trace and holds graph tensors";
	r->text[4] = effect_text(r->text[0], 1);
	r->num[0] = sqlite3_column_double(s, 7);
	r->num[1] = sqlite3_column_double(s, 8);
	r->num[2] = f ? (double)f->ntraces : r->num[0];
	r->num[3] = f ? (double)f->calls : 0;
}

/* ---- trace_errors ----------------------------------------------------- */

static const char *const error_nums[] = { "failures", "traces", "calls", NULL };
static const char *const error_texts[] = { "exception", "message", "fix", NULL };
static const char *const error_fields[] = {
	"exception: the exception type, e.g. OperatorNotAllowedInGraphError (text)",
	"message: its message, TensorFlow's cause when AutoGraph wrapped it (text)",
	"function, file, line: the traced function and the user's line that raised",
	"failures: traces that failed with it (a trace tree of a function calling itself once)",
	"traces, calls: the calls that traced (failed ones included; a trace tree, or a first trace and its"
	" follow-up after creating variables, once) and graph calls of the function",
	"fix: the article's fix for this kind of failure (text)",
	NULL,
};

/* The article's fix, by what failed. */
static const char *error_fix(const char *type, const char *message)
{
	if (message && strstr(message, "unhashable"))
		return "Do not key a Python dict by tensors: key it by Python values, by tensor.ref(), or use a "
		       "tf.lookup.StaticHashTable when the keys are data";
	if ((type && strstr(type, "RecursionError")) || (message && strstr(message, "RecursionError")))
		return "Do not call a tf.function from inside itself: tracing follows the call again at every level, "
		       "with no tensor value to stop on, until Python's recursion limit. Write the recursion as a loop "
		       "(a Python while on the tensor, which AutoGraph converts to tf.while_loop)";
	if ((type && strstr(type, "OperatorNotAllowedInGraph")) || (message && strstr(message, "as a Python `bool`")))
		return "Keep the tensor condition a tensor expression that AutoGraph converts: a Python if/while "
		       "directly on the tensor inside the tf.function (AutoGraph on, no Python value mixed into the "
		       "condition), or write it with tf.cond / tf.where";
	return "Fix the Python code that raised while tracing: inside a tf.function, tensors are symbolic and "
	       "have no value; use tf.cond, tf.where and tf.while_loop (or let AutoGraph convert if/while) "
	       "for decisions on tensor values";
}

static void error_fill(struct model *m, struct pt_table *t, sqlite3_stmt *s, const struct model_function *f)
{
	struct pt_row *r = &t->rows[t->n - 1];

	r->text[0] = col_text(m, s, 5);
	r->text[1] = col_text(m, s, 6);
	r->text[2] = error_fix(r->text[0], r->text[1]);
	r->num[0] = sqlite3_column_double(s, 7);
	r->num[1] = f ? (double)(f->ntraces - f->followups) : r->num[0];  /* its calls that traced */
	r->num[2] = f ? (double)f->calls : 0;
}

/* ---- autograph_fallbacks ---------------------------------------------- */

static const char *const fallback_nums[] = { "traces", NULL };
static const char *const fallback_texts[] = { "converted", "reason", NULL };
static const char *const fallback_fields[] = {
	"converted: the function AutoGraph could not convert and ran as-is (text)",
	"reason: TensorFlow's cause (text)",
	"function: the traced function that called it; file, line: the unconverted function's def",
	"traces: traces in which it happened",
	NULL,
};

static void fallback_fill(struct model *m, struct pt_table *t, sqlite3_stmt *s, const struct model_function *f)
{
	struct pt_row *r = &t->rows[t->n - 1];

	(void)f;
	r->text[0] = col_text(m, s, 5);
	r->text[1] = col_text(m, s, 6);
	r->num[0] = sqlite3_column_double(s, 7);
}

/* ---- unrolled --------------------------------------------------------- */

static const char *const unrolled_nums[] = { "line_nodes", "graph_nodes", "share", "repeats", "loop_line",
					     "trace_ns", "traces", "body_line", NULL };
static const char *const unrolled_texts[] = { NULL };
static const char *const unrolled_fields[] = {
	"function: the traced function; file, line: its loop (the line that created the nodes when no loop frame was seen)",
	"body_line: the line inside the loop that created the nodes",
	"line_nodes: nodes that line created in the function's largest graph",
	"graph_nodes, share: that graph's node count, and the line's share of it",
	"repeats: times the line's body ran (fewest nodes of one op type it created)",
	"loop_line: the enclosing Python loop's line, 0 when none was seen",
	"trace_ns: time tracing that graph",
	"traces: traces of the function",
	NULL,
};

static void unrolled_fill(struct model *m, struct pt_table *t, sqlite3_stmt *s, const struct model_function *f)
{
	struct pt_row *r = &t->rows[t->n - 1];
	double nodes = sqlite3_column_double(s, 6), graph = sqlite3_column_double(s, 5);

	(void)m;
	r->num[0] = nodes;
	r->num[1] = graph;
	r->num[2] = graph > 0 ? nodes / graph : 0;
	r->num[3] = sqlite3_column_double(s, 7);
	r->num[4] = sqlite3_column_double(s, 8);
	r->num[5] = sqlite3_column_double(s, 9);
	r->num[6] = f ? (double)f->ntraces : 1;
	r->num[7] = r->loc.line;
	if (r->num[4] > 0 && r->num[4] <= INT_MAX) /* a line: a hostile one does not fit an int */
		r->loc.line = (int)r->num[4];
}

/* ---- saves ------------------------------------------------------------ */

static const char *const save_nums[] = { "jit_compile", "jit_shapes", "calls", "signatures_given",
					 "dynamic_shape", NULL };
static const char *const save_texts[] = { "problem", "entry", "effect", "fix", NULL };
static const char *const save_fields[] = {
	"problem: no-input-signature or jit-compile (text)",
	"entry: Module.function exported (text)",
	"function: the tf.function's Python function; file, line: the save call",
	"jit_compile: 1 for jit-compile rows; jit_shapes: distinct input signatures it was compiled for",
	"calls: graph calls of the function before the save",
	"signatures_given: 1 when save() had a signatures argument (no-input-signature rows)",
	"dynamic_shape: 1 when a jit-compile entry's input_signature leaves a dimension open (None)",
	"effect, fix: what goes wrong in serving, and what to change (text)",
	NULL,
};

static void save_fill(struct model *m, struct pt_table *t, sqlite3_stmt *s, const struct model_function *f)
{
	struct pt_row *r = &t->rows[t->n - 1];
	const char *kind = (const char *)sqlite3_column_text(s, 5);
	const char *detail = (const char *)sqlite3_column_text(s, 7);

	r->text[0] = kind && !strcmp(kind, "save-jit") ? "jit-compile" : "no-input-signature";
	r->text[1] = col_text(m, s, 6);
	r->num[0] = kind && !strcmp(kind, "save-jit");
	r->num[1] = f ? (double)f->jit_shapes : 0;
	r->num[2] = f ? (double)f->calls : 0;
	r->num[3] = !r->num[0] && detail != NULL;
	r->num[4] = r->num[0] && detail && !strcmp(detail, "dynamic");
	if (r->num[0]) {
		r->text[2] = r->num[1] > 1 ? "compiled with XLA (jit_compile=True) although it was called with varying "
					     "input shapes: in serving, every new batch size compiles again (latency spikes)"
					   : "compiled with XLA (jit_compile=True) with an open batch dimension (None) in "
					     "its input_signature: in serving, every new batch size compiles again (latency spikes)";
		r->text[3] = "Export a version without jit_compile for online serving, or pad batches to a few "
			     "fixed sizes and give it an input_signature with those shapes";
	} else {
		r->text[2] = "without an input_signature: it is exported only for the shapes it happened to be "
			     "traced with, and it is no serving signature";
		r->text[3] = "Give it an input_signature (tf.TensorSpec with None for the batch dimension), or pass "
			     "signatures={'serving_default': f.get_concrete_function(tf.TensorSpec(...))} to the save call";
	}
}

/* ---- graph_memory ----------------------------------------------------- */

static const char *const memory_nums[] = { "graphs", "nodes", "def_bytes", "largest_nodes", "traces", NULL };
static const char *const memory_texts[] = { NULL };
static const char *const memory_fields[] = {
	"function, file, line: the traced function and its def",
	"graphs: graph functions it keeps (one per trace, plus forward/backward and branch functions)",
	"nodes: their nodes; largest_nodes: the largest one's",
	"def_bytes: their FunctionDef bytes",
	"traces: its traces (concrete functions)",
	NULL,
};

static void memory_fill(struct model *m, struct pt_table *t, sqlite3_stmt *s, const struct model_function *f)
{
	struct pt_row *r = &t->rows[t->n - 1];

	(void)m;
	r->num[0] = sqlite3_column_double(s, 5);
	r->num[1] = sqlite3_column_double(s, 6);
	r->num[2] = sqlite3_column_double(s, 7);
	r->num[3] = sqlite3_column_double(s, 8);
	r->num[4] = f ? (double)f->ntraces : 0;
	if (f)
		r->loc = model_function_user_loc(f);
}

/* ---- registration ----------------------------------------------------- */

#define EV_KEY "e.function, e.function_file, e.function_line"

static const struct pt_spec {
	const char *name;
	const char *const *fields, *const *nums, *const *texts;
	const char *sql;
	pt_fill fill;
} specs[] = {
	{ "trace_effects", effect_fields, effect_nums, effect_texts,
	  "SELECT " EV_KEY ", e.file, e.line, e.kind, e.name, count(DISTINCT e.pid || ':' || e.trace_seq),"
	  " sum(e.count), max(e.detail) FROM trace_events e"
	  " WHERE e.kind IN ('print', 'list-append', 'global-store', 'attr-store', 'random', 'time')"
	  " GROUP BY " EV_KEY ", e.file, e.line, e.kind, e.name ORDER BY " EV_KEY ", e.line",
	  effect_fill },
	/* a trace inside another of the same function on its thread (it calls itself) fails with it: one failure */
	{ "trace_errors", error_fields, error_nums, error_texts,
	  "SELECT " EV_KEY ", e.file, e.line, e.name, max(e.detail), sum(NOT EXISTS (SELECT 1 FROM traces o"
	  "   WHERE o.function_id = t.function_id AND o.pid = t.pid AND o.tid = t.tid AND o.id != t.id"
	  "   AND o.start_ns <= t.start_ns AND o.end_ns >= t.end_ns))"
	  " FROM trace_events e LEFT JOIN traces t ON t.id = e.trace_id"
	  " WHERE e.kind = 'exception' GROUP BY " EV_KEY ", e.file, e.line, e.name ORDER BY min(e.id)",
	  error_fill },
	{ "autograph_fallbacks", fallback_fields, fallback_nums, fallback_texts,
	  "SELECT " EV_KEY ", e.file, e.line, e.name, max(e.detail), count(DISTINCT e.pid || ':' || e.trace_seq)"
	  " FROM trace_events e WHERE e.kind = 'autograph-fallback'"
	  " GROUP BY " EV_KEY ", e.file, e.line, e.name ORDER BY min(e.id)",
	  fallback_fill },
	/*
	 * Per function, its largest graph's top node line, and its top line
	 * inside a Python loop when that is another (window functions: one
	 * pass, no correlated scan).  A graph whose trace created variables
	 * is taken only when no other is there: a layer makes its variables
	 * on the loop's first pass, so one pass creates op types the others
	 * do not and the fewest-per-op-type count (repeats) reads 1.  The
	 * loop line counts apart: the gradient of an unrolled loop, made at
	 * the tape.gradient line outside it, can create more nodes than the
	 * loop's body.
	 */
	{ "unrolled", unrolled_fields, unrolled_nums, unrolled_texts,
	  "WITH best AS (SELECT e.*, row_number() OVER (PARTITION BY " EV_KEY
	  "   ORDER BY coalesce(v.variables_created, 0) > 0, e.count DESC, e.id) AS r"
	  "   FROM trace_events e LEFT JOIN traces v ON v.id = e.trace_id WHERE e.kind = 'nodes'),"
	  " top AS (SELECT l.*, row_number() OVER (PARTITION BY l.pid, l.trace_seq ORDER BY l.count DESC, l.id) AS r,"
	  "   row_number() OVER (PARTITION BY l.pid, l.trace_seq, l.loop_line > 0 ORDER BY l.count DESC, l.id) AS rl"
	  "   FROM trace_events l WHERE l.kind = 'node-line')"
	  " SELECT e.function, e.function_file, e.function_line, l.file, l.line, e.count, l.count, l.repeats,"
	  " l.loop_line, coalesce(t.end_ns - t.start_ns, 0) FROM best e"
	  " JOIN top l ON l.pid = e.pid AND l.trace_seq = e.trace_seq AND (l.r = 1 OR (l.rl = 1 AND l.loop_line > 0))"
	  " LEFT JOIN traces t ON t.id = e.trace_id WHERE e.r = 1 ORDER BY e.id, l.r",
	  unrolled_fill },
	{ "saves", save_fields, save_nums, save_texts,
	  "SELECT " EV_KEY ", e.file, e.line, e.kind, e.name, max(e.detail) FROM trace_events e"
	  " WHERE e.kind IN ('save-no-signature', 'save-jit')"
	  " GROUP BY " EV_KEY ", e.file, e.line, e.kind, e.name ORDER BY min(e.id)",
	  save_fill },
	{ "graph_memory", memory_fields, memory_nums, memory_texts,
	  /* summed per function first: three look-ups per graph function were 5% of a million-trace report */
	  "SELECT n.text, fs.text, f.line, NULL, 0, g.cnt, g.nodes, g.bytes, g.most FROM (SELECT function_id,"
	  " count(*) AS cnt, sum(node_count) AS nodes, sum(length(function_def)) AS bytes, max(node_count) AS most"
	  " FROM graph_functions GROUP BY function_id) g JOIN functions f ON f.id = g.function_id"
	  " JOIN strings n ON n.id = f.name_id LEFT JOIN strings fs ON fs.id = f.file_id"
	  /* a library's functions (path_is_installed): a new object per user call, freed with it (library-call) */
	  " WHERE coalesce(fs.text, '') NOT LIKE '%/site-packages/%' AND coalesce(fs.text, '') NOT LIKE '%/dist-packages/%'"
	  " ORDER BY g.bytes DESC, f.id",
	  memory_fill },
};

int pitfalls_register(struct model *m)
{
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		const struct pt_spec *sp = &specs[i];
		struct pt_table *t = calloc(1, sizeof(*t));
		struct metric_source src = { sp->name, sp->fields, pt_count, pt_get, pt_anchor, pt_release, t };

		if (!t)
			return -1;
		t->nums = sp->nums;
		t->texts = sp->texts;
		if (m->rec && m->rec->db && pt_query(m, t, sp->sql, sp->fill)) {
			pt_release(t);
			return -1;
		}
		if (model_add_source(m, &src)) {
			pt_release(t);
			return -1;
		}
	}
	return 0;
}
