/*
 * callee.c - which of the user's own functions a call names, from the code
 * facts alone (no import runs): f() defined in the file, in a function
 * around the call (a nested def) or in a notebook's other cell; f()
 * imported from a user file; mod.f() with mod a user file; self.f() a
 * method of the caller's class; obj.f() with obj = C(...) bound once in the
 * caller's function or the module, C a class of the user's.  What Python
 * resolves at run time (a base class's method, obj passed in, a rebound
 * name) is not guessed: NULL.  code_obstacles() (user_code.c) follows these.
 */
#include "code_facts.h"
#include "model.h"

#include <stdio.h>
#include <string.h>

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
