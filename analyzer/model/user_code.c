/*
 * user_code.c - what the recording keeps of the user's code.
 *
 * Notebook cells (table notebook_cells, docs/schema.md): in a notebook a
 * cell's code is compiled under a made-up file name
 * (/tmp/ipykernel_PID/HASH.py, <ipython-input-N-HASH>) that no reader can
 * open afterwards.  The %%agprof magic writes each such name with the
 * cell's label and text, so that locations read "In [3], line 4" and edits
 * can be written against the cell.  The rows are untrusted input: a label
 * must be short printable text, the source at most SRCFILE_MAX_BYTES, and
 * at most MAX_CELLS rows are read.
 *
 * The code facts (table code_facts, code_facts.h): what CPython's ast read
 * in the user's files at record time.  Untrusted too: kinds and names are
 * compared, never printed unescaped (the printers escape), lines bounded,
 * and at most MAX_FACTS rows read.
 */
#include "code_facts.h"
#include "model.h"
#include "db.h"
#include "srcfile.h"
#include "checked.h"
#include "recording.h"
#include "util.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#define MAX_CELLS 4096
#define MAX_LABEL 40

static int printable_label(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (!n || n > MAX_LABEL)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

static int cmp_cells(const void *a, const void *b)
{
	return strcmp(((const struct model_cell *)a)->path, ((const struct model_cell *)b)->path);
}

int model_load_cells(struct model *m)
{
	sqlite3_stmt *s;
	size_t cap = 0;

	if (!m->rec || !db_has_table(m->rec->db, "notebook_cells"))
		return 0;
	if (!(s = db_prepare(m->rec->db, "SELECT path, label, first_line, source FROM notebook_cells"
				       " WHERE length(source) <= ?1 ORDER BY path LIMIT ?2")))
		return -1;
	sqlite3_bind_int64(s, 1, SRCFILE_MAX_BYTES);
	sqlite3_bind_int(s, 2, MAX_CELLS);
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *path = db_col_text(s, 0), *label = db_col_text(s, 1), *source = db_col_text(s, 3);
		sqlite3_int64 first = sqlite3_column_int64(s, 2);
		struct model_cell *c;

		if (!path || !*path || !source || !printable_label(label) || first < 1 || first > 100000)
			continue;
		if (ARRAY_GROW(m->cells, m->ncells, cap)) {
			sqlite3_finalize(s);
			return -1;
		}
		c = &m->cells[m->ncells++];
		c->path = model_strdup(m, path);
		c->label = model_strdup(m, label);
		c->source = model_strdup(m, source);
		c->first_line = (int)first;
		if (!c->path || !c->label || !c->source) {
			sqlite3_finalize(s);
			return -1;
		}
	}
	sqlite3_finalize(s);
	sort_array(m->cells, m->ncells, sizeof(*m->cells), cmp_cells);  /* SQLite's order may differ from strcmp's */
	return 0;
}

const struct model_cell *model_cell(const struct model *m, const char *file)
{
	struct model_cell key = { .path = file };

	if (!file || !m->ncells)
		return NULL;
	return bsearch(&key, m->cells, m->ncells, sizeof(*m->cells), cmp_cells);
}

/* ---- code facts ---------------------------------------------------------- */

#define MAX_FACTS 500000
#define MAX_LINE 10000000

int model_load_code_facts(struct model *m)
{
	sqlite3_stmt *s;
	size_t cap = 0, rows = 0;

	if (!m->rec || !db_has_table(m->rec->db, "code_facts"))
		return 0;
	if (!(s = db_prepare(m->rec->db, "SELECT path, kind, line, col, end_line, name, detail FROM code_facts"
				       " ORDER BY path, line, col LIMIT ?1")))
		return -1;
	sqlite3_bind_int(s, 1, MAX_FACTS);
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *path = db_col_text(s, 0), *kind = db_col_text(s, 1);
		sqlite3_int64 line = sqlite3_column_int64(s, 2), end = sqlite3_column_int64(s, 4);
		struct code_fact *f;

		rows++;
		if (!path || !kind || line < 0 || line > MAX_LINE || end < line || end > MAX_LINE)
			continue;
		if (ARRAY_GROW(m->facts, m->nfacts, cap)) {
			sqlite3_finalize(s);
			return -1;
		}
		f = &m->facts[m->nfacts++];
		f->path = model_strdup(m, path);
		f->kind = model_strdup(m, kind);
		f->line = (int)line;
		f->end_line = (int)end;
		f->col = (int)sqlite3_column_int64(s, 3);
		f->name = model_strdup(m, db_col_text_or(s, 5, ""));
		f->detail = model_strdup(m, db_col_text_or(s, 6, ""));
	}
	sqlite3_finalize(s);
	/* cut at the bound: the last file's facts are partial, and a partial file's facts would be trusted whole */
	for (const char *last = rows == MAX_FACTS && m->nfacts ? m->facts[m->nfacts - 1].path : NULL;
	     last && m->nfacts && !strcmp(m->facts[m->nfacts - 1].path, last);)
		m->nfacts--;
	return 0;
}

int code_facts_known(const struct model *m, const char *file)
{
	for (size_t i = 0; i < m->nfacts; i++)
		if (code_fact_in(&m->facts[i], file))
			return strcmp(m->facts[i].kind, "error") != 0;
	return 0;
}

const struct code_fact *code_fact_around(const struct model *m, const char *kind, const char *file, int line)
{
	const struct code_fact *best = NULL;

	for (size_t i = 0; i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];

		/* innermost: the latest start among those that hold the line */
		if (code_fact_in(f, file) && !strcmp(f->kind, kind) && f->line <= line && line <= f->end_line &&
		    (!best || f->line >= best->line))
			best = f;
	}
	return best;
}

/* Eager ops the recording saw at lines from..to of file. */
static long long eager_ops_in(const struct model *m, const char *file, int from, int to)
{
	long long n = 0;

	for (size_t i = 0; i < m->nsites; i++)
		if (m->sites[i].loc.file && !strcmp(m->sites[i].loc.file, file) && m->sites[i].loc.line >= from &&
		    m->sites[i].loc.line <= to)
			n += m->sites[i].count;
	return n;
}

/* Eager ops the recording saw at file:line (a call that did TensorFlow work there). */
static long long eager_ops_at(const struct model *m, const char *file, int line)
{
	return eager_ops_in(m, file, line, line);
}

const char *code_callee_last(const char *name)
{
	const char *dot = strrchr(name, '.');

	return dot ? dot + 1 : name;
}

/* The user's function (any file) that call f names, by its last name part, or NULL. */
static const struct code_fact *callee_def(const struct model *m, const struct code_fact *call)
{
	const char *name = code_callee_last(call->name);

	for (size_t i = 0; i < m->nfacts; i++)
		if (!strcmp(m->facts[i].kind, "function") && !strcmp(m->facts[i].name, name))
			return &m->facts[i];
	return NULL;
}

/*
 * Whether call did TensorFlow work: eager ops at its line, or in the body
 * of the user's function it calls (the recording names the innermost user
 * line only); 0 when not, -1 when nothing says (a plain name that is no
 * function of the user's: a constructor, an import).
 */
static int does_tf_work(const struct model *m, const struct code_fact *call)
{
	const struct code_fact *def = callee_def(m, call);

	if (eager_ops_at(m, call->path, call->line))
		return 1;
	if (def)
		return eager_ops_in(m, def->path, def->line, def->end_line) > 0;
	return strchr(call->name, '.') ? 0 : -1;
}

/* Python's own functions that a trace runs as it would run them eagerly, on Python values. */
static int harmless_builtin(const char *name)
{
	static const char *const names[] = { "range", "len", "enumerate", "zip", "min", "max", "abs", "isinstance",
					     "list", "tuple", "dict", "set", "sorted", "reversed", "super", "getattr",
					     "hasattr", "map", "sum", "any", "all", "round", "str", "type", NULL };

	for (const char *const *p = names; *p; p++)
		if (!strcmp(name, *p))
			return 1;
	return 0;
}

/* Why fact f (in a range to be traced) stops the trace or runs once at tracing; NULL when it does not. */
static const char *obstacle(const struct model *m, const struct code_fact *f)
{
	static const struct {
		const char *kind, *detail, *why;
	} table[] = {
		{ "call", "to-python", "makes a tensor a NumPy or Python value, which a graph cannot do" },
		{ "call", "numpy-random", "draws NumPy randomness, which a trace would freeze into the graph as a constant" },
		{ "call", "python-random", "draws Python randomness, which a trace would freeze into the graph as a constant" },
		{ "call", "numpy-io", "reads or writes a file through NumPy, once, when traced" },
		{ "call", "io", "does Python I/O, once, when traced" },
		{ "call", "time", "reads the clock in Python, once, when traced" },
		{ "global", "", "rebinds a global, once, when traced" },
		{ "store", "attribute", "sets Python state, once, when traced" },
	};

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		if (!strcmp(f->kind, table[i].kind) && !strcmp(f->detail, table[i].detail))
			return table[i].why;
	if (!strcmp(f->kind, "call") && !strcmp(f->detail, "numpy") && !eager_ops_at(m, f->path, f->line))
		return "computes in NumPy, which a graph cannot run (on a traced tensor it fails; on Python values it runs once, when traced)";
	/* another Python object's method, or a function of the user's, that did no TensorFlow work: an environment */
	if (!strcmp(f->kind, "call") && !strcmp(f->detail, "other") && !harmless_builtin(f->name) &&
	    does_tf_work(m, f) == 0)
		return "calls Python code that did no TensorFlow work in the recorded run";
	return NULL;
}

/* ---- the user's function a call names ----------------------------------------- */

/*
 * Which of the user's own functions a call names, from the code
 * facts alone (no import runs): f() defined in the file, in a function
 * around the call (a nested def) or in a notebook's other cell; f()
 * imported from a user file; mod.f() with mod a user file; self.f() a
 * method of the caller's class; obj.f() with obj = C(...) bound once in the
 * caller's function or the module, C a class of the user's.  What Python
 * resolves at run time (a base class's method, obj passed in, a rebound
 * name) is not guessed: NULL.  code_obstacles() below follows these.
 */

/* Whether bind fact f's how starts with "import " (its module into *mod, *n its length). */
static int bind_import(const struct code_fact *f, const char **mod, size_t *n)
{
	if (strcmp(f->kind, "bind") || strncmp(f->detail, "import ", 7))
		return 0;
	*mod = f->detail + 7;
	*n = strcspn(*mod, ";");
	return 1;
}

/* The function fact name at the top level of file (col 0), or NULL. */
static const struct code_fact *module_function(const struct model *m, const char *file, const char *name, size_t n)
{
	for (size_t i = 0; file && i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];

		if (code_fact_in(f, file) && !strcmp(f->kind, "function") && !f->col && strlen(f->name) == n &&
		    !strncmp(f->name, name, n))
			return f;
	}
	return NULL;
}

/* The user's file whose module is mod[0..n) ("pkg.steps" -> a file steps.py the facts name), or NULL. */
static const char *module_file(const struct model *m, const char *mod, size_t n)
{
	const char *last = mod;

	for (size_t i = 0; i < n; i++)
		if (mod[i] == '.')
			last = mod + i + 1;
	n -= (size_t)(last - mod);
	for (size_t i = 0; n && i < m->nfacts; i++) {
		const char *p = m->facts[i].path, *base = strrchr(p, '/');

		base = base ? base + 1 : p;
		if (!strncmp(base, last, n) && !strcmp(base + n, ".py"))
			return p;
	}
	return NULL;
}

const struct code_fact *code_def_bind(const struct model *m, const struct code_fact *fn)
{
	for (size_t i = 0; i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];

		if (code_fact_in(f, fn->path) && code_bind_is(f, "def") && f->col == fn->col && !strcmp(f->name, fn->name) &&
		    f->line >= fn->line && f->line <= fn->end_line)
			return f;
	}
	return NULL;
}

/* The def of the method name in file's class whose methods' scope is "class LINE", or NULL. */
static const struct code_fact *class_method(const struct model *m, const char *file, const char *scope,
					    const char *name)
{
	for (size_t i = 0; i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];

		if (code_fact_in(f, file) && code_bind_is(f, "def") && !strcmp(f->name, name) &&
		    !strcmp(code_bind_scope(f), scope))
			return code_fact_around(m, "function", f->path, f->line);
	}
	return NULL;
}

/* The method name of the class whose method caller is (self.name()), or NULL. */
static const struct code_fact *method_of(const struct model *m, const struct code_fact *caller, const char *name)
{
	const struct code_fact *b = caller ? code_def_bind(m, caller) : NULL;
	const char *scope = b ? code_bind_scope(b) : "";

	return strncmp(scope, "class ", 6) ? NULL : class_method(m, caller->path, scope, name);
}

/*
 * The function name[0..n) defined in a function around call (a nested def,
 * which Python finds before the module's), the innermost, or NULL.
 */
static const struct code_fact *nested_function(const struct model *m, const struct code_fact *call, const char *name,
					       size_t n)
{
	const struct code_fact *best = NULL;
	int best_line = 0;

	for (size_t i = 0; i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i], *outer;
		const char *scope = code_bind_scope(f);
		int line;

		if (!code_fact_in(f, call->path) || !code_bind_is(f, "def") || strlen(f->name) != n ||
		    strncmp(f->name, name, n) || sscanf(scope, "function %d", &line) != 1 || line <= best_line)
			continue;
		/* the function its scope names holds the call: the def is visible there */
		outer = code_fact_around(m, "function", call->path, line);
		if (outer && outer->line == line && call->line >= line && call->line <= outer->end_line) {
			best = code_fact_around(m, "function", f->path, f->line);
			best_line = line;
		}
	}
	return best;
}

/* The module a name is imported from in file (`from M import name`: "M.name"; `import M as name`: "M"), or NULL. */
static const char *imported_as(const struct model *m, const char *file, const char *name, size_t n, size_t *len)
{
	for (size_t i = 0; i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];
		const char *mod;

		if (code_fact_in(f, file) && strlen(f->name) == n && !strncmp(f->name, name, n) && bind_import(f, &mod, len))
			return mod;
	}
	return NULL;
}

/* The class bind of name[0..n) in file (`class C:`), or one a user file of file's imports defines, or NULL. */
static const struct code_fact *user_class(const struct model *m, const char *file, const char *name, size_t n)
{
	const char *mod;
	size_t len, head;

	for (int pass = 0; pass < 2 && file; pass++) {
		for (size_t i = 0; i < m->nfacts; i++) {
			const struct code_fact *f = &m->facts[i];

			if (code_fact_in(f, file) && code_bind_is(f, "class") && strlen(f->name) == n &&
			    !strncmp(f->name, name, n))
				return f;
		}
		/* from agents import C: the class C of agents.py */
		if (pass || !(mod = imported_as(m, file, name, n, &len)))
			return NULL;
		for (head = len; head && mod[head - 1] != '.'; head--)
			;
		if (!head)
			return NULL;
		file = module_file(m, mod, head - 1);
		name = mod + head;
		n = len - head;
	}
	return NULL;
}

/*
 * The class bind of the class that obj[0..n) is an instance of where call
 * is: obj bound once in the caller's function (or, not there, in the
 * module), by `obj = C(...)` with C a class of the user's; or NULL.
 */
static const struct code_fact *instance_class(const struct model *m, const struct code_fact *call, const char *obj,
					      size_t n)
{
	const struct code_fact *caller = code_fact_around(m, "function", call->path, call->line), *cls = NULL;
	char name[128], where[32];
	int last = 0, bound, vline, vcol;

	if (n >= sizeof(name))
		return NULL;
	memcpy(name, obj, n);
	name[n] = 0;
	snprintf(where, sizeof(where), "function %d", caller ? caller->line : 0);
	if (!(bound = caller ? code_bindings(m, call->path, name, where, &last) : 0))
		bound = code_bindings(m, call->path, name, "module", &last);
	for (size_t i = 0; bound == 1 && i < m->nfacts && !cls; i++) {
		const struct code_fact *a = &m->facts[i];

		if (!code_fact_in(a, call->path) || strcmp(a->kind, "assign") || a->line > last || a->end_line < last ||
		    strcmp(a->name, name) || sscanf(a->detail, "%*d %d %d", &vline, &vcol) != 2)
			continue;
		/* its value a call of a class: obj = C(...) */
		for (size_t j = 0; j < m->nfacts && !cls; j++) {
			const struct code_fact *c = &m->facts[j];

			if (code_fact_in(c, call->path) && !strcmp(c->kind, "call") && c->line == vline && c->col == vcol &&
			    !strchr(c->name, '.'))
				cls = user_class(m, call->path, c->name, strlen(c->name));
		}
	}
	return cls;
}

/*
 * The method name that class cls (its class bind) defines, or NULL.  Its
 * methods' scope is "class L", L its first line (a decorator's, at or above
 * the class bind's): the nearest such L with no other class between.
 */
static const struct code_fact *class_method_of(const struct model *m, const struct code_fact *cls, const char *name)
{
	const struct code_fact *best = NULL;
	int best_line = 0, line;

	for (size_t i = 0; i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];

		if (code_fact_in(f, cls->path) && code_bind_is(f, "def") && !strcmp(f->name, name) &&
		    sscanf(code_bind_scope(f), "class %d", &line) == 1 && line <= cls->line && line > best_line) {
			best = f;
			best_line = line;
		}
	}
	for (size_t i = 0; best && i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];

		if (f != cls && code_fact_in(f, cls->path) && code_bind_is(f, "class") && f->line >= best_line &&
		    f->line <= cls->line)
			return NULL;  /* an earlier class's method */
	}
	return best ? code_fact_around(m, "function", best->path, best->line) : NULL;
}

/*
 * The user's function that call names, or NULL: f() defined in a function
 * around the call, at the top of its file (or of a notebook's cell) or
 * imported from a user file (from steps import f), mod.f() with mod a user
 * file imported, self.f() a method of the caller's class, obj.f() a method
 * of obj's class (instance_class()).
 */
const struct code_fact *code_callee_function(const struct model *m, const struct code_fact *call)
{
	const char *name = call->name, *dot = strchr(name, '.'), *mod;
	const struct code_fact *cls;
	size_t len, head = dot ? (size_t)(dot - name) : strlen(name);

	if (strstr(name, "()") || strstr(name, "[]") || (dot && strchr(dot + 1, '.')))
		return NULL;
	if (dot && head == 4 && !strncmp(name, "self", 4))
		return method_of(m, code_fact_around(m, "function", call->path, call->line), dot + 1);
	if (!dot) {
		const struct code_fact *f = nested_function(m, call, name, head);

		if (!f)
			f = module_function(m, call->path, name, head);
		/* a notebook's cells share one namespace: a def in another cell */
		for (size_t i = 0; !f && model_cell(m, call->path) && i < m->ncells; i++)
			f = module_function(m, m->cells[i].path, name, head);
		if (f || !(mod = imported_as(m, call->path, name, head, &len)))
			return f;
		/* "pkg.steps.f": the function f of the file of pkg.steps */
		for (head = len; head && mod[head - 1] != '.'; head--)
			;
		return head ? module_function(m, module_file(m, mod, head - 1), mod + head, len - head) : NULL;
	}
	if ((mod = imported_as(m, call->path, name, head, &len)))
		return module_function(m, module_file(m, mod, len), dot + 1, strlen(dot + 1));
	cls = instance_class(m, call, name, head);
	return cls ? class_method_of(m, cls, dot + 1) : NULL;
}

/* ---- following calls into the user's own functions ---------------------------- */

#define FOLLOW_BUDGET 64  /* functions entered a question: each costs a pass over the facts */

/* Whether fn is decorated with tf.function (any "....function"): its body is traced already. */
static int traced_already(const struct code_fact *fn)
{
	size_t n = strcspn(fn->detail, ";");

	for (const char *p = fn->detail; p < fn->detail + n; p += strcspn(p, ",;"), p += *p == ',') {
		size_t k = strcspn(p, ",;");

		if (k >= 8 && !strncmp(p + k - 8, "function", 8))
			return 1;
	}
	return 0;
}

struct follow {
	const struct code_fact *chain[CODE_FOLLOW_DEPTH];   /* the calls followed, outermost first */
	const struct code_fact *fns[CODE_FOLLOW_DEPTH];     /* the functions they entered (a cycle stops) */
	int depth, budget;
};

static size_t obstacles_in(const struct model *m, struct follow *fw, const char *file, int from, int to,
			   struct code_obstacle *out, size_t max);

/* The first obstacle in the body of the user's function that call names, into *out; 1, or 0 when none. */
static int followed(const struct model *m, struct follow *fw, const struct code_fact *call, struct code_obstacle *out)
{
	const struct code_fact *fn = code_callee_function(m, call), *b;
	size_t found;
	int body;

	if (!fn || fw->depth >= CODE_FOLLOW_DEPTH || fw->budget <= 0 || traced_already(fn))
		return 0;
	for (int i = 0; i < fw->depth; i++)
		if (fw->fns[i] == fn)
			return 0;
	fw->budget--;
	b = code_def_bind(m, fn);
	body = b ? b->line : fn->line;
	body += fn->end_line > body;  /* the lines after the def's; a one-line def's own */
	fw->chain[fw->depth] = call;
	fw->fns[fw->depth++] = fn;
	found = obstacles_in(m, fw, fn->path, body, fn->end_line, out, 1);
	fw->depth--;
	return found > 0;
}

static size_t obstacles_in(const struct model *m, struct follow *fw, const char *file, int from, int to,
			   struct code_obstacle *out, size_t max)
{
	size_t n = 0;

	for (size_t i = 0; i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];
		struct code_obstacle ob = { .fact = f };

		if (!code_fact_in(f, file) || f->line < from || f->line > to)
			continue;
		/* a call of the user's own function: what its body holds is the call's */
		if (!(!strcmp(f->kind, "call") && !strcmp(f->detail, "other") && followed(m, fw, f, &ob))) {
			if (!(ob.why = obstacle(m, f)))
				continue;
			ob.nvia = fw->depth;
			memcpy(ob.via, fw->chain, sizeof(ob.via));
		}
		if (n < max)
			out[n] = ob;
		n++;
	}
	return n;
}

size_t code_obstacles(const struct model *m, const char *file, int from, int to, struct code_obstacle *out,
		      size_t max)
{
	struct follow fw = { .budget = FOLLOW_BUDGET };

	return obstacles_in(m, &fw, file, from, to, out, max);
}

const struct code_fact *code_model_call(const struct model *m, const char *file, int from, int to)
{
	const struct code_fact *best = NULL;
	long long most = 0;

	for (size_t i = 0; i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];
		long long ops;

		if (!code_fact_in(f, file) || strcmp(f->kind, "call") || strcmp(f->detail, "other") || f->line < from ||
		    f->line > to || harmless_builtin(f->name) || (ops = eager_ops_at(m, file, f->line)) <= most)
			continue;
		best = f;
		most = ops;
	}
	return best;
}

/* Whether a global fact's names ("a,b") hold name. */
static int names_hold(const char *names, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = names; p && *p; p += strcspn(p, ","), p += *p == ',')
		if (strcspn(p, ",") == n && !strncmp(p, name, n))
			return 1;
	return 0;
}

const char *code_bind_scope(const struct code_fact *f)
{
	const char *semi = strchr(f->detail, ';');

	return semi ? semi + 1 : "";
}

int code_bind_is(const struct code_fact *f, const char *how)
{
	size_t n = strcspn(f->detail, ";");

	return !strcmp(f->kind, "bind") && strlen(how) == n && !strncmp(f->detail, how, n);
}

int code_bindings(const struct model *m, const char *file, const char *name, const char *scope, int *last)
{
	int n = 0;

	*last = 0;
	for (size_t i = 0; name && i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];

		if (!code_fact_in(f, file))
			continue;
		if (!strcmp(f->kind, "global") && names_hold(f->name, name))
			return -1;
		if (!strcmp(f->kind, "bind") && !strcmp(f->name, name) && (!scope || !strcmp(code_bind_scope(f), scope))) {
			n++;
			*last = f->line > *last ? f->line : *last;
		}
	}
	return n;
}

int code_call_passes_keyword(const struct model *m, const char *file, int line, const char *name)
{
	int known = 0;

	for (size_t i = 0; name && i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];
		int end_col, call_line;

		if (!code_fact_in(f, file) || strcmp(f->kind, "arg"))
			continue;
		known = 1;
		/* detail: the value's end column, then the line and column of the call it belongs to */
		if (sscanf(f->detail, "%d %d", &end_col, &call_line) == 2 && call_line == line && !strcmp(f->name, name))
			return 1;
	}
	return known ? 0 : -1;
}

const struct code_fact *code_numpy_use(const struct model *m, const char *file, int line)
{
	for (size_t i = 0; i < m->nfacts; i++)
		if (code_fact_in(&m->facts[i], file) && m->facts[i].line == line && !strcmp(m->facts[i].kind, "numpy-use"))
			return &m->facts[i];
	return NULL;
}

/* A callee that exports or saves a traced function: its traces are the export's. */
static int exports(const struct code_fact *f)
{
	static const char *const names[] = { "get_concrete_function", "export", "save", "save_model", NULL };
	const char *last = code_callee_last(f->name);
	size_t n = strlen(f->name);

	if (strcmp(f->kind, "call") || !strcmp(f->detail, "numpy-io") || !strcmp(f->detail, "io"))
		return 0;
	if (n >= 16 && !strcmp(f->name + n - 16, "saved_model.save"))
		return 1;
	for (const char *const *p = names; *p; p++)
		if (!strcmp(last, *p))
			return 1;
	return 0;
}

const struct code_fact *code_export_call(const struct model *m, const char *file, int line)
{
	for (size_t i = 0; file && i < m->nfacts; i++)
		if (code_fact_in(&m->facts[i], file) && m->facts[i].line <= line && line <= m->facts[i].end_line &&
		    exports(&m->facts[i]))
			return &m->facts[i];
	return NULL;
}

/* ---- calls by position, and the signatures they bind (library_passes) --- */

static const char *last_part(const char *dotted)
{
	const char *dot = strrchr(dotted, '.');

	return dot ? dot + 1 : dotted;
}

const struct code_fact *code_call_on(const struct model *m, const char *file, int line, const char *callee,
				     const char *alt)
{
	const struct code_fact *only = NULL;
	int calls = 0;

	for (size_t i = 0; file && i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];

		if (!code_fact_in(f, file) || strcmp(f->kind, "call") || f->line != line)
			continue;
		if ((callee && !strcmp(last_part(f->name), callee)) || (alt && !strcmp(last_part(f->name), alt)))
			return f;
		only = f;
		calls++;
	}
	return calls == 1 ? only : NULL;
}

const struct code_fact *code_call_arg(const struct model *m, const struct code_fact *call, const char *keyword,
				      int pos)
{
	const struct code_fact *star = NULL;
	char want[24];

	snprintf(want, sizeof(want), "#%d", pos);
	for (size_t i = 0; call && i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];
		int end_col, call_line, call_col;

		/* detail: the value's end column, then the line and column of the call it belongs to */
		if (strcmp(f->kind, "arg") || !code_fact_in(f, call->path) ||
		    sscanf(f->detail, "%d %d %d", &end_col, &call_line, &call_col) != 3 || call_line != call->line ||
		    call_col != call->col)
			continue;
		if ((keyword && !strcmp(f->name, keyword)) || (pos >= 0 && !strcmp(f->name, want)))
			return f;
		if ((pos >= 0 && !strcmp(f->name, "*")) || (keyword && !strcmp(f->name, "**")))
			star = f;
	}
	return star;
}

const struct code_fact *code_signature(const struct model *m, const char *file, const char *name, int line)
{
	const struct code_fact *best = NULL;

	for (size_t i = 0; file && name && i < m->nfacts; i++) {
		const struct code_fact *f = &m->facts[i];

		if (code_fact_in(f, file) && !strcmp(f->kind, "signature") && !strcmp(f->name, name) && f->line <= line &&
		    line <= f->end_line && (!best || f->line >= best->line))
			best = f;
	}
	return best;
}

int code_sig_position(const struct code_fact *sig, const char *param, int *star)
{
	const char *p = strchr(sig->detail, ';');
	size_t n = strlen(param);
	int i = 0, skip = 0;

	*star = 0;
	if (!p || !n)
		return -1;
	/* a method's self or cls is bound, not passed: not for a staticmethod */
	skip = (!strncmp(p + 1, "self:", 5) || !strncmp(p + 1, "cls:", 4)) &&
	       !strstr(sig->detail, "staticmethod") ? 1 : 0;
	for (p++; *p; i++) {
		const char *colon = strchr(p, ':'), *comma = strchr(p, ',');
		int positional = colon && (!strncmp(colon + 1, "arg", 3) || !strncmp(colon + 1, "posonly", 7));

		if (!colon || (comma && comma < colon))
			return -1;  /* not the shape codefacts.py writes */
		if (!strncmp(colon + 1, "vararg", 6))
			*star = 1;
		if ((size_t)(colon - p) == n && !strncmp(p, param, n))
			return positional && i >= skip ? i - skip : -1;
		if (!comma)
			break;
		p = comma + 1;
	}
	return -1;
}
