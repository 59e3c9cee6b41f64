/* rules.c - rule files, expressions, templates; see rules.h and docs/rules.md. */
#include "rules.h"
#include "duration.h"
#include "model_internal.h"
#include "recording.h"
#include "rule_advice.h"
#include "sql_rows.h"
#include "strbuf.h"
#include "util.h"

#include <ctype.h>
#include <stdarg.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

/* Expressions */

enum node_kind { N_NUM, N_STR, N_IDENT, N_NEG, N_NOT, N_AND, N_OR, N_BIN };

struct node {
	enum node_kind kind;
	int op;             /* N_BIN: '+', '-', '*', '/', '<', '>', 'l' (<=), 'g' (>=), '=', '!' */
	double num;
	char *text;         /* N_STR, N_IDENT */
	struct node *a, *b;
	int depth;          /* levels of the tree below and including this node */
};

/*
 * Rule files are input too: nesting ("((((...", "not not ...", "- - ...")
 * and operator chains ("a + a + ...") are capped, so that neither the
 * recursive parser nor the recursive evaluator can run out of stack.
 */
#define MAX_EXPR_DEPTH 100

static void node_free(struct node *n)
{
	if (!n)
		return;
	node_free(n->a);
	node_free(n->b);
	free(n->text);
	free(n);
}

struct parser {
	const char *s, *p;
	int depth;          /* recursion depth of the parse functions */
	char err[160];
};

static void skip_ws(struct parser *ps)
{
	while (isspace((unsigned char)*ps->p))
		ps->p++;
}

static struct node *new_node(enum node_kind k)
{
	struct node *n = calloc(1, sizeof(*n));

	if (n)
		n->kind = k;
	return n;
}

static int parse_fail(struct parser *ps, const char *msg)
{
	if (!ps->err[0])
		snprintf(ps->err, sizeof(ps->err), "%s at column %d", msg, (int)(ps->p - ps->s) + 1);
	return -1;
}

/* Whether the next token is keyword kw (a whole word). */
static int accept_word(struct parser *ps, const char *kw)
{
	size_t n = strlen(kw);

	skip_ws(ps);
	if (strncmp(ps->p, kw, n) || isalnum((unsigned char)ps->p[n]) || ps->p[n] == '_')
		return 0;
	ps->p += n;
	return 1;
}

static struct node *parse_or(struct parser *ps);

/* Enter one more level of recursion; -1 (error set) past MAX_EXPR_DEPTH. */
static int enter(struct parser *ps)
{
	if (++ps->depth > MAX_EXPR_DEPTH)
		return parse_fail(ps, "expression nested too deeply (more than 100 levels)");
	return 0;
}

/* A node of kind over a (and b, may be NULL); frees them and returns NULL on failure. */
static struct node *join(struct parser *ps, enum node_kind kind, int op, struct node *a, struct node *b)
{
	struct node *n;
	int depth = 1 + (a ? a->depth : 0);

	if (b && 1 + b->depth > depth)
		depth = 1 + b->depth;
	if (!a || (kind >= N_AND && !b) || depth > MAX_EXPR_DEPTH || !(n = new_node(kind))) {
		if (depth > MAX_EXPR_DEPTH)
			parse_fail(ps, "expression too deep (more than 100 levels of operators)");
		node_free(a);
		node_free(b);
		return NULL;
	}
	n->op = op;
	n->a = a;
	n->b = b;
	n->depth = depth;
	return n;
}

/* A number with an optional unit: ns us ms s (to nanoseconds), % (to a share). */
static double parse_number_unit(const char *s, char **end)
{
	double v = strtod(s, end);
	const char *p = *end;

	if (p == s)
		return v;
	if (!strncmp(p, "ns", 2) && !isalnum((unsigned char)p[2]))
		*end += 2;
	else if (!strncmp(p, "us", 2) && !isalnum((unsigned char)p[2]))
		v *= 1e3, *end += 2;
	else if (!strncmp(p, "ms", 2) && !isalnum((unsigned char)p[2]))
		v *= 1e6, *end += 2;
	else if (p[0] == 's' && !isalnum((unsigned char)p[1]))
		v *= 1e9, *end += 1;
	else if (p[0] == '%')
		v /= 100, *end += 1;
	return v;
}

static struct node *parse_primary(struct parser *ps)
{
	struct node *n;

	skip_ws(ps);
	if (*ps->p == '(') {
		ps->p++;
		if (enter(ps))
			return NULL;
		n = parse_or(ps);
		ps->depth--;
		skip_ws(ps);
		if (!n || *ps->p != ')') {
			node_free(n);
			parse_fail(ps, "expected ')'");
			return NULL;
		}
		ps->p++;
		return n;
	}
	if (isdigit((unsigned char)*ps->p) || (*ps->p == '.' && isdigit((unsigned char)ps->p[1]))) {
		char *end;

		if (!(n = new_node(N_NUM)))
			return NULL;
		n->num = parse_number_unit(ps->p, &end);
		ps->p = end;
		return n;
	}
	if (*ps->p == '"' || *ps->p == '\'') {
		char q = *ps->p++;
		const char *start = ps->p;

		while (*ps->p && *ps->p != q)
			ps->p++;
		if (!*ps->p) {
			parse_fail(ps, "unterminated string");
			return NULL;
		}
		if (!(n = new_node(N_STR)))
			return NULL;
		n->text = strndup(start, (size_t)(ps->p - start));
		ps->p++;
		return n;
	}
	if (isalpha((unsigned char)*ps->p) || *ps->p == '_') {
		const char *start = ps->p;

		while (isalnum((unsigned char)*ps->p) || *ps->p == '_')
			ps->p++;
		if (!(n = new_node(N_IDENT)))
			return NULL;
		n->text = strndup(start, (size_t)(ps->p - start));
		return n;
	}
	parse_fail(ps, *ps->p ? "unexpected character" : "unexpected end of expression");
	return NULL;
}

static struct node *parse_unary(struct parser *ps)
{
	skip_ws(ps);
	if (*ps->p == '-') {
		struct node *a;

		ps->p++;
		if (enter(ps))
			return NULL;
		a = parse_unary(ps);
		ps->depth--;
		return join(ps, N_NEG, 0, a, NULL);
	}
	return parse_primary(ps);
}

static struct node *parse_product(struct parser *ps)
{
	struct node *n = parse_unary(ps);

	while (n) {
		skip_ws(ps);
		if (*ps->p != '*' && *ps->p != '/')
			break;
		int op = *ps->p++;
		n = join(ps, N_BIN, op, n, parse_unary(ps));
	}
	return n;
}

static struct node *parse_sum(struct parser *ps)
{
	struct node *n = parse_product(ps);

	while (n) {
		skip_ws(ps);
		if (*ps->p != '+' && *ps->p != '-')
			break;
		int op = *ps->p++;
		n = join(ps, N_BIN, op, n, parse_product(ps));
	}
	return n;
}

static struct node *parse_cmp(struct parser *ps)
{
	struct node *n = parse_sum(ps);
	int op = 0;

	if (!n)
		return NULL;
	skip_ws(ps);
	if (!strncmp(ps->p, ">=", 2))
		op = 'g', ps->p += 2;
	else if (!strncmp(ps->p, "<=", 2))
		op = 'l', ps->p += 2;
	else if (!strncmp(ps->p, "==", 2))
		op = '=', ps->p += 2;
	else if (!strncmp(ps->p, "!=", 2))
		op = '!', ps->p += 2;
	else if (*ps->p == '>' || *ps->p == '<')
		op = *ps->p++;
	if (!op)
		return n;
	return join(ps, N_BIN, op, n, parse_sum(ps));
}

static struct node *parse_not(struct parser *ps)
{
	if (accept_word(ps, "not")) {
		struct node *a;

		if (enter(ps))
			return NULL;
		a = parse_not(ps);
		ps->depth--;
		return join(ps, N_NOT, 0, a, NULL);
	}
	return parse_cmp(ps);
}

static struct node *parse_and(struct parser *ps)
{
	struct node *n = parse_not(ps);

	while (n && accept_word(ps, "and")) {
		n = join(ps, N_AND, 0, n, parse_not(ps));
	}
	return n;
}

static struct node *parse_or(struct parser *ps)
{
	struct node *n = parse_and(ps);

	while (n && accept_word(ps, "or")) {
		n = join(ps, N_OR, 0, n, parse_and(ps));
	}
	return n;
}

/* Parse a whole expression; NULL with ps->err set on error. */
static struct node *parse_expr(struct parser *ps, const char *text)
{
	struct node *n;

	ps->s = ps->p = text;
	ps->depth = 0;
	ps->err[0] = '\0';
	n = parse_or(ps);
	skip_ws(ps);
	if (n && *ps->p) {
		parse_fail(ps, "unexpected text");
		node_free(n);
		return NULL;
	}
	if (!n && !ps->err[0])
		snprintf(ps->err, sizeof(ps->err), "out of memory");
	return n;
}

/* Rules */

struct threshold {
	char *name;
	double value;
	char *text;         /* as written, for docs and listings */
	char *doc;
};

/*
 * The texts used for one kind of row: named by a retrace cause, or by a
 * case of the rule's own (case[NAME]: a condition; the first case that
 * holds, in the order the names first appear, picks its texts).
 */
struct variant {
	char *cause;        /* its name; NULL: the default */
	char *message, *recommendation, *before, *after;
	struct node *when;  /* case[NAME]'s condition; NULL: not a case */
	int line, line_when;
};

struct rule {
	char *path;
	char *id, *title, *select, *message, *query;
	enum severity severity;
	int skip_missing_source;
	struct node *when, *escalate, *info_when;
	struct node *f_function, *f_file, *f_line, *f_cost, *f_cause;
	int line_when, line_escalate, line_info_when, line_message, line_select, line_anchor;
	struct threshold *th;
	size_t nth;
	struct variant *var;
	size_t nvar;
	long limit;
	int fix, saving;              /* enum fix_kind, enum saving_kind (rule_advice.h) */
	int line_fix, line_saving;    /* 0: not given (a rule replacing a built-in one keeps its) */
};

static void rule_free(struct rule *r)
{
	if (!r)
		return;
	free(r->path);
	free(r->id);
	free(r->title);
	free(r->select);
	free(r->message);
	free(r->query);
	node_free(r->when);
	node_free(r->escalate);
	node_free(r->info_when);
	node_free(r->f_function);
	node_free(r->f_file);
	node_free(r->f_line);
	node_free(r->f_cost);
	node_free(r->f_cause);
	for (size_t i = 0; i < r->nth; i++) {
		free(r->th[i].name);
		free(r->th[i].text);
		free(r->th[i].doc);
	}
	free(r->th);
	for (size_t i = 0; i < r->nvar; i++) {
		free(r->var[i].cause);
		free(r->var[i].message);
		node_free(r->var[i].when);
		free(r->var[i].recommendation);
		free(r->var[i].before);
		free(r->var[i].after);
	}
	free(r->var);
	free(r);
}

void ruleset_init(struct ruleset *rs)
{
	memset(rs, 0, sizeof(*rs));
}

void ruleset_release(struct ruleset *rs)
{
	for (size_t i = 0; i < rs->nrules; i++)
		rule_free(rs->rules[i]);
	free(rs->rules);
	memset(rs, 0, sizeof(*rs));
}

static int rule_error(const char *path, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* "error: PATH:LINE: message" through the one error function. */
static int rule_error(const char *path, int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return error("%s:%d: %s", path, line, msg);
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

static struct variant *variant_for(struct rule *r, const char *cause, int line)
{
	struct variant *v;

	for (size_t i = 0; i < r->nvar; i++)
		if ((!cause && !r->var[i].cause) || (cause && r->var[i].cause && !strcmp(cause, r->var[i].cause)))
			return &r->var[i];
	v = realloc(r->var, (r->nvar + 1) * sizeof(*v));
	if (!v)
		return NULL;
	r->var = v;
	v = &r->var[r->nvar++];
	memset(v, 0, sizeof(*v));
	v->cause = cause ? strdup(cause) : NULL;
	v->line = line;
	return v;
}

static int set_expr(struct rule *r, struct node **slot, const char *value, int line)
{
	struct parser ps;

	node_free(*slot);
	*slot = parse_expr(&ps, value);
	if (!*slot)
		return rule_error(r->path, line, "%s in '%.60s%s'", ps.err, value, strlen(value) > 60 ? "..." : "");
	return 0;
}

static int add_threshold(struct rule *r, char *value, int line)
{
	/* NAME = NUMBER[unit]  description */
	char *eq = strchr(value, '='), *name, *num, *end;
	struct threshold *t;
	double v;

	if (!eq)
		return rule_error(r->path, line, "threshold must read 'NAME = VALUE description'");
	*eq = '\0';
	name = trim(value);
	num = eq + 1;
	while (isspace((unsigned char)*num))
		num++;
	v = parse_number_unit(num, &end);
	if (end == num || !*name)
		return rule_error(r->path, line, "threshold must read 'NAME = VALUE description'");
	for (const char *c = name; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '_')
			return rule_error(r->path, line, "bad threshold name '%s'", name);
	t = realloc(r->th, (r->nth + 1) * sizeof(*t));
	if (!t)
		return rule_error(r->path, line, "out of memory");
	r->th = t;
	t = &r->th[r->nth++];
	t->name = strdup(name);
	t->value = v;
	t->text = strndup(num, (size_t)(end - num));
	t->doc = strdup(trim(end));
	return 0;
}

/*
 * The keys of a rule file, one handler each.  slot is the offset of the
 * field a key sets (in struct rule, or struct variant for the keys that take
 * a [cause] variant); line_slot that of the int that remembers its line.
 */
struct rule_key;
typedef int rule_key_handler(struct rule *r, const struct rule_key *k, const char *variant, char *value, int line);

struct rule_key {
	const char *name;
	rule_key_handler *set;
	size_t slot;
	ptrdiff_t line_slot;   /* -1: none */
	int per_variant;       /* takes key[NAME] */
};

#define FIELD(r, k, type) ((type *)((char *)(r) + (k)->slot))

static int set_text(struct rule *r, const struct rule_key *k, const char *variant, char *value, int line)
{
	char **slot = FIELD(r, k, char *);

	(void)variant, (void)line;
	free(*slot);
	*slot = strdup(value);
	return *slot ? 0 : rule_error(r->path, line, "out of memory");
}

static int set_expression(struct rule *r, const struct rule_key *k, const char *variant, char *value, int line)
{
	(void)variant;
	return set_expr(r, FIELD(r, k, struct node *), value, line);
}

static int set_severity(struct rule *r, const struct rule_key *k, const char *variant, char *value, int line)
{
	int sev = severity_parse(value);

	(void)k, (void)variant;
	if (sev < 0)
		return rule_error(r->path, line, "severity must be info, warning or error, not '%s'", value);
	r->severity = (enum severity)sev;
	return 0;
}

static int set_if_missing(struct rule *r, const struct rule_key *k, const char *variant, char *value, int line)
{
	(void)k, (void)variant;
	if (strcmp(value, "skip") && strcmp(value, "error"))
		return rule_error(r->path, line, "if-missing must be skip or error");
	r->skip_missing_source = !strcmp(value, "skip");
	return 0;
}

static int set_limit(struct rule *r, const struct rule_key *k, const char *variant, char *value, int line)
{
	char *end;

	(void)k, (void)variant;
	r->limit = strtol(value, &end, 10);
	if (*end || r->limit < 1)
		return rule_error(r->path, line, "limit must be a positive number");
	return 0;
}

static int set_threshold(struct rule *r, const struct rule_key *k, const char *variant, char *value, int line)
{
	(void)k, (void)variant;
	return add_threshold(r, value, line);
}

/* fix: and saving: name an entry of analyzer/advice's tables (rule_advice.h). */
static int set_fix(struct rule *r, const struct rule_key *k, const char *variant, char *value, int line)
{
	(void)k, (void)variant;
	if ((r->fix = fix_kind_parse(value)) < 0)
		return rule_error(r->path, line, "unknown fix '%s' (docs/rules.md lists them)", value);
	return 0;
}

static int set_saving(struct rule *r, const struct rule_key *k, const char *variant, char *value, int line)
{
	(void)k, (void)variant;
	if ((r->saving = saving_kind_parse(value)) < 0)
		return rule_error(r->path, line, "unknown saving '%s' (docs/rules.md lists them)", value);
	return 0;
}

/* The variant named NAME ("default" or none: the default); NULL when out of memory. */
static struct variant *named_variant(struct rule *r, const char *name, int line)
{
	return variant_for(r, name && strcmp(name, "default") ? name : NULL, line);
}

/* recommendation, before, after: per variant (rule_check checks the names). */
static int set_variant_text(struct rule *r, const struct rule_key *k, const char *variant, char *value, int line)
{
	struct variant *v;
	char **slot;

	if (!(v = named_variant(r, variant, line)))
		return rule_error(r->path, line, "out of memory");
	slot = FIELD(v, k, char *);
	free(*slot);
	*slot = strdup(value);
	return *slot ? 0 : rule_error(r->path, line, "out of memory");
}

/* message: the rule's own; message[NAME]: that variant's. */
static int set_message(struct rule *r, const struct rule_key *k, const char *variant, char *value, int line)
{
	struct variant *v;

	if (!variant)
		return set_text(r, k, variant, value, line);
	if (!(v = named_variant(r, variant, line)))
		return rule_error(r->path, line, "out of memory");
	free(v->message);
	v->message = strdup(value);
	return v->message ? 0 : rule_error(r->path, line, "out of memory");
}

/* case[NAME]: EXPR, the condition that picks NAME's texts. */
static int set_case(struct rule *r, const struct rule_key *k, const char *variant, char *value, int line)
{
	struct variant *v;

	(void)k;
	if (!variant || !strcmp(variant, "default"))
		return rule_error(r->path, line, "'case' needs a name: case[NAME]: CONDITION");
	if (!(v = named_variant(r, variant, line)))
		return rule_error(r->path, line, "out of memory");
	v->line_when = line;
	return set_expr(r, &v->when, value, line);
}

#define RULE_TEXT(name, field) { name, set_text, offsetof(struct rule, field), -1, 0 }
#define RULE_TEXT_AT(name, field, line) { name, set_text, offsetof(struct rule, field), offsetof(struct rule, line), 0 }
#define RULE_EXPR(name, field, line) { name, set_expression, offsetof(struct rule, field), offsetof(struct rule, line), 0 }
#define RULE_VARIANT(name, field) { name, set_variant_text, offsetof(struct variant, field), -1, 1 }

static const struct rule_key rule_keys[] = {
	RULE_TEXT("id", id),
	RULE_TEXT("title", title),
	{ "severity", set_severity, 0, -1, 0 },
	RULE_TEXT_AT("select", select, line_select),
	RULE_TEXT("query", query),
	{ "if-missing", set_if_missing, 0, -1, 0 },
	{ "limit", set_limit, 0, -1, 0 },
	{ "threshold", set_threshold, 0, -1, 0 },
	RULE_EXPR("when", when, line_when),
	RULE_EXPR("escalate", escalate, line_escalate),
	RULE_EXPR("info-when", info_when, line_info_when),
	RULE_EXPR("function", f_function, line_anchor),
	RULE_EXPR("file", f_file, line_anchor),
	RULE_EXPR("line", f_line, line_anchor),
	RULE_EXPR("cost", f_cost, line_anchor),
	RULE_EXPR("cause", f_cause, line_anchor),
	{ "case", set_case, 0, -1, 1 },
	{ "message", set_message, offsetof(struct rule, message), offsetof(struct rule, line_message), 1 },
	RULE_VARIANT("recommendation", recommendation),
	RULE_VARIANT("before", before),
	RULE_VARIANT("after", after),
	{ "fix", set_fix, 0, offsetof(struct rule, line_fix), 0 },
	{ "saving", set_saving, 0, offsetof(struct rule, line_saving), 0 },
};

/* Apply one "key[variant]: value" line of a rule file. */
static int rule_set_key(struct rule *r, const char *key, const char *variant, char *value, int line)
{
	for (size_t i = 0; i < sizeof(rule_keys) / sizeof(rule_keys[0]); i++) {
		const struct rule_key *k = &rule_keys[i];

		if (strcmp(key, k->name))
			continue;
		if (variant && !k->per_variant)
			return rule_error(r->path, line, "'%s' takes no [variant]", key);
		if (k->line_slot >= 0 && !variant)
			*(int *)((char *)r + k->line_slot) = line;
		return k->set(r, k, variant, value, line);
	}
	return rule_error(r->path, line, "unknown key '%s'", key);
}

/*
 * The block after "key: |": the following lines that are empty or
 * indented, dedented, trailing empty lines dropped.  *next moves past it;
 * *lineno counts its lines.  NULL when out of memory.
 */
static char *read_block(char **next, int *lineno)
{
	struct strbuf out = STRBUF_INIT;
	size_t indent = (size_t)-1;
	char *start = *next, *p;

	while (*next && (**next == '\n' || **next == ' ' || **next == '\t')) {
		char *nl = strchr(*next, '\n');
		size_t lead = strspn(*next, " \t");

		if ((*next)[lead] && (*next)[lead] != '\n' && lead < indent)
			indent = lead;
		*next = nl ? nl + 1 : NULL;
		(*lineno)++;
	}
	for (p = start; p && p != *next && *p;) {
		char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (len > indent && indent != (size_t)-1)
			strbuf_add(&out, p + indent, len - indent);
		strbuf_addch(&out, '\n');
		p = nl ? nl + 1 : NULL;
	}
	while (out.len && out.buf[out.len - 1] == '\n')
		out.buf[--out.len] = '\0';
	if (strbuf_failed(&out)) {
		strbuf_release(&out);
		return NULL;
	}
	return strbuf_detach(&out);
}

/* Split "key[variant]: value" in place; 0, or -1 after an error. */
static int split_key_line(const char *path, int lineno, char *line, char **key, char **variant, char **value)
{
	char *colon = strchr(line, ':'), *br;

	if (isspace((unsigned char)*line))
		return rule_error(path, lineno, "indented line outside a block");
	if (!colon)
		return rule_error(path, lineno, "expected 'key: value'");
	*colon = '\0';
	*key = trim(line);
	*value = trim(colon + 1);
	*variant = NULL;
	if ((br = strchr(*key, '['))) {
		char *close = strchr(br, ']');

		if (!close || close[1])
			return rule_error(path, lineno, "bad key '%s'", *key);
		*br = '\0';
		*close = '\0';
		*variant = br + 1;
	}
	return 0;
}

/* The lines of a rule file's text, applied to r; 0, or -1 after the first error. */
static int rule_parse_lines(struct rule *r, char *text)
{
	int lineno = 0;

	for (char *line = text, *next; line; line = next) {
		char *key = NULL, *variant = NULL, *value = NULL, *block;
		int keyline, bad;

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		keyline = ++lineno;
		if (!*trim(line) || *trim(line) == '#')
			continue;
		if (split_key_line(r->path, lineno, line, &key, &variant, &value))
			return -1;
		if (strcmp(value, "|")) {
			bad = rule_set_key(r, key, variant, value, keyline);
		} else if ((block = read_block(&next, &lineno))) {
			bad = rule_set_key(r, key, variant, block, keyline);
			free(block);
		} else {
			bad = rule_error(r->path, keyline, "out of memory");
		}
		if (bad)
			return -1;
	}
	return 0;
}

/* Variant names: the rule's cases when it has any, else retrace causes. */
static int check_variants(const struct rule *r)
{
	int cases = 0;

	for (size_t i = 0; i < r->nvar; i++)
		cases |= r->var[i].when != NULL;
	for (size_t i = 0; i < r->nvar; i++) {
		const struct variant *v = &r->var[i];

		if (!v->cause)
			continue;
		if (cases && !v->when)
			return rule_error(r->path, v->line, "'%s' has no case[%s]: CONDITION", v->cause, v->cause);
		if (!cases && retrace_cause_parse(v->cause) == CAUSE_NONE)
			return rule_error(r->path, v->line, "unknown cause '%s'", v->cause);
	}
	return 0;
}

/* What every rule needs, once its file is read; 0, or -1 after an error. */
static int rule_check(const struct rule *r)
{
	if (!r->id)
		return rule_error(r->path, 1, "rule has no 'id'");
	if (!r->select)
		return rule_error(r->path, 1, "rule '%s' has no 'select'", r->id);
	if (!r->when)
		return rule_error(r->path, 1, "rule '%s' has no 'when'", r->id);
	if (!r->message)
		return rule_error(r->path, 1, "rule '%s' has no 'message'", r->id);
	if (!strcmp(r->select, "sql") && !r->query)
		return rule_error(r->path, r->line_select, "rule '%s' selects sql but has no 'query'", r->id);
	for (const char *c = r->id; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '-' && *c != '_')
			return rule_error(r->path, 1, "bad rule id '%s'", r->id);
	return check_variants(r);
}

/*
 * Parse a rule file's text: "key: value" lines; "key: |" starts a block of
 * the following indented (or empty) lines, dedented; '#' starts a comment
 * line.  Returns the rule or NULL after printing the first error.
 */
static struct rule *rule_parse(const char *path, const char *text)
{
	struct rule *r = calloc(1, sizeof(*r));
	char *copy = strdup(text);

	if (!r || !copy || !(r->path = strdup(path))) {
		free(copy);
		rule_free(r);
		error("out of memory");
		return NULL;
	}
	r->severity = SEV_WARNING;
	if (rule_parse_lines(r, copy) || rule_check(r) || (!r->title && !(r->title = strdup(r->id)))) {
		free(copy);
		rule_free(r);
		return NULL;
	}
	free(copy);
	return r;
}

static int ruleset_add(struct ruleset *rs, struct rule *r)
{
	for (size_t i = 0; i < rs->nrules; i++)
		if (!strcmp(rs->rules[i]->id, r->id)) {
			/* a user's rule that changes a built-in one's texts or thresholds keeps its edit and saving */
			if (!r->line_fix)
				r->fix = rs->rules[i]->fix;
			if (!r->line_saving)
				r->saving = rs->rules[i]->saving;
			rule_free(rs->rules[i]);
			rs->rules[i] = r;
			return 0;
		}
	if (ARRAY_GROW(rs->rules, rs->nrules, rs->cap)) {
		rule_free(r);
		return error("out of memory");
	}
	rs->rules[rs->nrules++] = r;
	return 0;
}

int ruleset_load_text(struct ruleset *rs, const char *name, const char *text)
{
	struct rule *r = rule_parse(name, text);

	if (!r) {
		rs->errors++;
		return -1;
	}
	return ruleset_add(rs, r);
}

int ruleset_load_file(struct ruleset *rs, const char *path)
{
	FILE *f = fopen(path, "r");
	struct strbuf sb = STRBUF_INIT;
	char buf[4096];
	size_t n;
	int ret;

	if (!f) {
		rs->errors++;
		return error("cannot open rule file '%s': %s", path, strerror(errno));
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		strbuf_add(&sb, buf, n);
	fclose(f);
	ret = ruleset_load_text(rs, path, sb.buf ? sb.buf : "");
	strbuf_release(&sb);
	return ret;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ruleset_load_dir(struct ruleset *rs, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char **names = NULL;
	size_t n = 0, cap = 0;
	int bad = 0;

	if (!d)
		return error("cannot read rules directory '%s': %s", dir, strerror(errno));
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);

		if (len < 6 || strcmp(e->d_name + len - 5, ".rule") || e->d_name[0] == '.')
			continue;
		if (ARRAY_GROW(names, n, cap))
			break;
		names[n++] = strdup(e->d_name);
	}
	closedir(d);
	if (n > 1)
		qsort(names, n, sizeof(*names), cmp_names);
	for (size_t i = 0; i < n; i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		bad += ruleset_load_file(rs, path) != 0;
		free(names[i]);
	}
	free(names);
	return bad;
}

/* Whether dir holds at least one rule file. */
static int has_rules(const char *dir)
{
	DIR *d = dir ? opendir(dir) : NULL;
	struct dirent *e;
	int found = 0;

	while (d && !found && (e = readdir(d))) {
		size_t len = strlen(e->d_name);

		found = len > 5 && !strcmp(e->d_name + len - 5, ".rule");
	}
	if (d)
		closedir(d);
	return found;
}

int ruleset_load_default(struct ruleset *rs, const char *user_dir)
{
	char *dir = agprof_rules_dir();
	int ret = 0;

	if (!dir || !has_rules(dir)) {
		error("cannot find the built-in rules%s%s%s (set AGPROF_RULES_DIR)", dir ? " in '" : "",
		      dir ? dir : "", dir ? "'" : "");
		free(dir);
		return -1;
	}
	if (ruleset_load_dir(rs, dir) < 0)
		ret = -1;
	free(dir);
	if (!ret && user_dir && ruleset_load_dir(rs, user_dir) < 0)
		ret = -1;
	return ret;
}

static struct rule *find_rule(const struct ruleset *rs, const char *id)
{
	for (size_t i = 0; i < rs->nrules; i++)
		if (!strcmp(rs->rules[i]->id, id))
			return rs->rules[i];
	return NULL;
}

int ruleset_has(const struct ruleset *rs, const char *id)
{
	return find_rule(rs, id) != NULL;
}

size_t ruleset_count(const struct ruleset *rs)
{
	return rs->nrules;
}

const char *ruleset_rule_id(const struct ruleset *rs, size_t i)
{
	return i < rs->nrules ? rs->rules[i]->id : NULL;
}

const char *ruleset_rule_title(const struct ruleset *rs, size_t i)
{
	return i < rs->nrules ? rs->rules[i]->title : NULL;
}

int ruleset_set(struct ruleset *rs, const char *assignment)
{
	const char *dot = strchr(assignment, '.'), *eq = strchr(assignment, '=');
	char id[128], name[128], *end;
	struct rule *r;
	double v;

	if (!dot || !eq || eq < dot || (size_t)(dot - assignment) >= sizeof(id) || (size_t)(eq - dot) > sizeof(name))
		return error("'%s' is not RULE.THRESHOLD=VALUE", assignment);
	snprintf(id, sizeof(id), "%.*s", (int)(dot - assignment), assignment);
	snprintf(name, sizeof(name), "%.*s", (int)(eq - dot - 1), dot + 1);
	v = parse_number_unit(eq + 1, &end);
	if (end == eq + 1 || *end)
		return error("bad value in '%s'", assignment);
	if (!(r = find_rule(rs, id)))
		return error("no rule '%s'", id);
	for (size_t i = 0; i < r->nth; i++)
		if (!strcmp(r->th[i].name, name)) {
			r->th[i].value = v;
			free(r->th[i].text);
			r->th[i].text = strdup(eq + 1);
			return 0;
		}
	return error("rule '%s' has no threshold '%s'", id, name);
}

/* Evaluation */

struct eval {
	const struct rule *r;
	const struct model *m;
	const struct metric_source *src;
	size_t row;
	const char *bad_field; /* first unknown identifier */
};

static int lookup(struct eval *ev, const char *name, struct metric_value *out)
{
	for (size_t i = 0; i < ev->r->nth; i++)
		if (!strcmp(ev->r->th[i].name, name)) {
			out->type = METRIC_NUM;
			out->num = ev->r->th[i].value;
			return 0;
		}
	memset(out, 0, sizeof(*out));
	if (ev->src->get(ev->m, ev->src->data, ev->row, name, out)) {
		if (!ev->bad_field)
			ev->bad_field = name;
		return -1;
	}
	out->field = name;
	return 0;
}

/* One standard error of v, read from its field's FIELD_se when the source has one; 0 otherwise. */
static double field_se(struct eval *ev, const struct metric_value *v)
{
	char name[80];
	struct metric_value se;

	if (!v->field || v->type != METRIC_NUM || (size_t)snprintf(name, sizeof(name), "%s_se", v->field) >= sizeof(name))
		return 0;
	memset(&se, 0, sizeof(se));
	if (ev->src->get(ev->m, ev->src->data, ev->row, name, &se) || se.type != METRIC_NUM || !(se.num > 0))
		return 0;
	return se.num;
}

/*
 * An order comparison of a measured field with a threshold is left open
 * (borderline) when the two differ by no more than BORDERLINE_SE standard
 * errors of the field: two recordings of one program then agree on it
 * (docs/rules.md, "Borderline").  Only near the threshold is the error
 * read (it may take a query): within half of the threshold's value.
 */
#define BORDERLINE_SE 2.0

static void compare_uncertain(struct eval *ev, const struct metric_value *a, const struct metric_value *b,
			      struct metric_value *out)
{
	double gap = fabs(a->num - b->num), scale = fmax(fabs(a->num), fabs(b->num)), se;

	if (gap > 0.5 * scale)
		return;
	se = hypot(field_se(ev, a), field_se(ev, b));
	out->borderline = se > 0 && gap <= BORDERLINE_SE * se;
}

static int truthy(const struct metric_value *v)
{
	return v->type == METRIC_NUM ? v->num != 0 : v->type == METRIC_TEXT ? v->text && *v->text : 0;
}

static void set_num(struct metric_value *v, double x)
{
	v->type = METRIC_NUM;
	v->num = x;
	v->text = NULL;
}

/* a OP b: equality on any type; arithmetic and order on numbers only. */
static void eval_binary(int op, const struct metric_value *a, const struct metric_value *b, struct metric_value *out)
{
	if (op == '=' || op == '!') {
		int same;

		if (a->type == METRIC_TEXT && b->type == METRIC_TEXT)
			same = !strcmp(a->text, b->text);
		else if (a->type == METRIC_NUM && b->type == METRIC_NUM)
			same = a->num == b->num;
		else
			same = a->type == b->type;
		set_num(out, op == '=' ? same : !same);
		return;
	}
	if (a->type != METRIC_NUM || b->type != METRIC_NUM) {
		/* Arithmetic or order on text or a missing value: false. */
		if (strchr("<>lg", op))
			set_num(out, 0);
		return;
	}
	switch (op) {
	case '+': set_num(out, a->num + b->num); break;
	case '-': set_num(out, a->num - b->num); break;
	case '*': set_num(out, a->num * b->num); break;
	case '/': set_num(out, b->num != 0 ? a->num / b->num : 0); break;
	case '<': set_num(out, a->num < b->num); break;
	case '>': set_num(out, a->num > b->num); break;
	case 'l': set_num(out, a->num <= b->num); break;
	case 'g': set_num(out, a->num >= b->num); break;
	}
}

static void eval_node(struct eval *ev, const struct node *n, struct metric_value *out)
{
	struct metric_value a, b;

	memset(out, 0, sizeof(*out));
	switch (n->kind) {
	case N_NUM:
		set_num(out, n->num);
		return;
	case N_STR:
		out->type = METRIC_TEXT;
		out->text = n->text;
		return;
	case N_IDENT:
		lookup(ev, n->text, out);
		return;
	case N_NEG:
		eval_node(ev, n->a, &a);
		if (a.type == METRIC_NUM)
			set_num(out, -a.num);
		return;
	case N_NOT:
		eval_node(ev, n->a, &a);
		set_num(out, !truthy(&a));
		out->borderline = a.borderline;
		return;
	case N_AND:
	case N_OR:
		/* short-circuit: the right side only when the left decides for certain */
		eval_node(ev, n->a, &a);
		if (truthy(&a) == (n->kind == N_OR) && !a.borderline) {
			set_num(out, n->kind == N_OR);
			return;
		}
		eval_node(ev, n->b, &b);
		if (truthy(&b) == (n->kind == N_OR) && !b.borderline) {
			set_num(out, n->kind == N_OR);
			return;
		}
		/* neither side decides for certain: open when either is */
		set_num(out, n->kind == N_OR ? truthy(&a) || truthy(&b) : truthy(&a) && truthy(&b));
		out->borderline = a.borderline || b.borderline;
		return;
	case N_BIN:
		eval_node(ev, n->a, &a);
		eval_node(ev, n->b, &b);
		eval_binary(n->op, &a, &b, out);
		if (strchr("<>lg", n->op) && a.type == METRIC_NUM && b.type == METRIC_NUM)
			compare_uncertain(ev, &a, &b, out);
		return;
	}
}

static void format_value(struct strbuf *sb, const struct metric_value *v, const char *fmt)
{
	if (v->type == METRIC_TEXT) {
		strbuf_addstr(sb, v->text);
		return;
	}
	if (v->type != METRIC_NUM) {
		strbuf_addch(sb, '-');
		return;
	}
	/* "ms" and "s" are older names of "time": every duration reads the same way. */
	if (fmt && (!strcmp(fmt, "time") || !strcmp(fmt, "ms") || !strcmp(fmt, "s")))
		strbuf_add_duration(sb, (int64_t)v->num);
	else if (fmt && !strcmp(fmt, "pct"))
		strbuf_addf(sb, "%.1f%%", v->num * 100);
	else if (v->num == floor(v->num) && fabs(v->num) < 1e15)
		strbuf_addf(sb, "%lld", (long long)v->num);
	else
		strbuf_addf(sb, "%.3g", v->num);
}

/* Expand {field} and {field:fmt} in tmpl; {{ and }} are literal braces.  0 or -1. */
static int render(struct eval *ev, const char *tmpl, struct strbuf *out)
{
	for (const char *p = tmpl; p && *p; p++) {
		const char *close, *colon;
		char name[64], fmt[16] = "";
		struct metric_value v;

		if ((p[0] == '{' && p[1] == '{') || (p[0] == '}' && p[1] == '}')) {
			strbuf_addch(out, *p++);
			continue;
		}
		if (*p != '{') {
			strbuf_addch(out, *p);
			continue;
		}
		close = strchr(p, '}');
		if (!close || close - p - 1 >= (long)sizeof(name)) {
			strbuf_addch(out, *p);
			continue;
		}
		snprintf(name, sizeof(name), "%.*s", (int)(close - p - 1), p + 1);
		if ((colon = strchr(name, ':'))) {
			snprintf(fmt, sizeof(fmt), "%s", colon + 1);
			name[colon - name] = '\0';
		}
		if (lookup(ev, name, &v))
			return -1;
		format_value(out, &v, fmt[0] ? fmt : NULL);
		p = close;
	}
	return 0;
}

static int sql_source(const struct rule *r, struct model *m, struct metric_source *out)
{
	char err[512];

	if (sql_rows_source(m->rec->db, r->query, "sql", out, err, sizeof(err)) != 0)
		return rule_error(r->path, r->line_select, "%s", err);
	return 0;
}

/* Evaluate an anchor override expression. */
static int eval_anchor(struct eval *ev, const struct node *n, struct metric_value *v)
{
	if (!n)
		return 0;
	eval_node(ev, n, v);
	return ev->bad_field ? -1 : 1;
}

/* A field the rule names is not in its source: said once, with the line. */
static int bad_field_error(const struct eval *ev, int line)
{
	return rule_error(ev->r->path, line, "'%s' is neither a threshold nor a field of '%s'", ev->bad_field,
			  ev->r->select);
}

/* Where the finding of ev's row points: the source's anchor, then the rule's own. */
static int rule_anchor(struct eval *ev, struct metric_anchor *a)
{
	const struct rule *r = ev->r;
	struct metric_value v;

	memset(a, 0, sizeof(*a));
	if (ev->src->anchor)
		ev->src->anchor(ev->m, ev->src->data, ev->row, a);
	if (eval_anchor(ev, r->f_function, &v) > 0) {
		a->function = v.type == METRIC_TEXT ? v.text : NULL;
		a->fn = NULL;  /* a name of the rule's own: which function of that name is not known */
	}
	if (eval_anchor(ev, r->f_file, &v) > 0) {
		/* a file of the rule's own: the source's library frame is not its */
		memset(&a->loc, 0, sizeof(a->loc));
		a->loc.file = v.type == METRIC_TEXT ? v.text : NULL;
	}
	if (eval_anchor(ev, r->f_line, &v) > 0)
		a->loc.line = v.type == METRIC_NUM ? (int)v.num : 0;
	if (eval_anchor(ev, r->f_cost, &v) > 0)
		a->cost_ns = v.type == METRIC_NUM ? (int64_t)v.num : 0;
	if (eval_anchor(ev, r->f_cause, &v) > 0)
		a->cause = v.type == METRIC_TEXT ? retrace_cause_parse(v.text) : CAUSE_NONE;
	return ev->bad_field ? bad_field_error(ev, r->line_anchor) : 0;
}

/* Evaluate expression n on ev's row: 1 true, 0 false, -1 after an error. */
/* rule_test(): 0 false, 1 true, TEST_OPEN when the measures' uncertainty leaves it open; -1 after an error. */
#define TEST_OPEN 2

static int rule_test(struct eval *ev, const struct node *n, int line)
{
	struct metric_value v;

	ev->bad_field = NULL;
	eval_node(ev, n, &v);
	if (ev->bad_field)
		return bad_field_error(ev, line);
	return v.borderline ? TEST_OPEN : truthy(&v);
}

/* The default variant, or NULL. */
static const struct variant *default_variant(const struct rule *r)
{
	for (size_t i = 0; i < r->nvar; i++)
		if (!r->var[i].cause)
			return &r->var[i];
	return NULL;
}

/* The text at offset off of var, else of the default variant, with its line; NULL when neither has one. */
static const char *variant_text(const struct rule *r, const struct variant *var, size_t off, int *line)
{
	const struct variant *from[2] = { var, default_variant(r) };

	for (size_t i = 0; i < 2; i++) {
		const char *t = from[i] ? *(char *const *)((const char *)from[i] + off) : NULL;

		if (t) {
			*line = from[i]->line;
			return t;
		}
	}
	return NULL;
}

/*
 * The texts for ev's row in *out: the first case of the rule that holds,
 * else the variant of the row's retrace cause, else the default (maybe
 * NULL).  0, or -1 after an error.
 */
static int pick_variant(struct eval *ev, enum retrace_cause cause, const struct variant **out)
{
	const struct rule *r = ev->r;
	const char *name = retrace_cause_name(cause);

	*out = default_variant(r);
	for (size_t i = 0; i < r->nvar; i++) {
		const struct variant *v = &r->var[i];
		int hit;

		if (v->when) {
			if ((hit = rule_test(ev, v->when, v->line_when)) < 0)
				return -1;
			if (hit) {
				*out = v;
				return 0;
			}
		} else if (v->cause && name && !strcmp(v->cause, name)) {
			*out = v;
			return 0;
		}
	}
	return 0;
}

/*
 * The finding of ev's row into f (its texts in msg and rec): 1 when the
 * rule fires, 0 when not, -1 after an error.
 */
static int rule_finding(struct eval *ev, struct finding *f, struct strbuf *msg, struct strbuf *rec)
{
	const struct rule *r = ev->r;
	const struct variant *var;
	struct metric_anchor a;
	const char *text;
	int hit = rule_test(ev, r->when, r->line_when), worse = 0, minor = 0, line;

	if (hit <= 0 || (r->escalate && (worse = rule_test(ev, r->escalate, r->line_escalate)) < 0) ||
	    (!worse && r->info_when && (minor = rule_test(ev, r->info_when, r->line_info_when)) < 0) ||
	    rule_anchor(ev, &a))
		return hit <= 0 ? hit : -1;
	memset(f, 0, sizeof(*f));
	f->rule = r->id;
	f->title = r->title;
	/* open: the condition, info (said borderline); the escalation, the rule's severity; info-when, info */
	f->severity = worse == 1 ? SEV_ERROR : minor || hit == TEST_OPEN ? SEV_INFO : r->severity;
	f->borderline = hit == TEST_OPEN ? BORDERLINE_FIRES : worse == TEST_OPEN ? BORDERLINE_ESCALATES : 0;
	f->function = a.function;
	f->fn = a.fn;
	f->cause = a.cause;
	f->loc = a.loc;
	if (!f->loc.file)
		f->loc.line = 0;
	f->cost_ns = a.cost_ns;
	f->start_ns = a.start_ns;
	f->end_ns = a.end_ns;
	f->thread = a.thread;
	f->fix_kind = r->fix;
	f->saving_kind = r->saving;
	if (pick_variant(ev, f->cause, &var))
		return -1;
	strbuf_reset(msg);
	if (!(text = variant_text(r, var, offsetof(struct variant, message), &line))) {
		text = r->message;
		line = r->line_message;
	}
	if (render(ev, text, msg))
		return bad_field_error(ev, line);
	if (f->borderline)
		strbuf_addf(msg, "; borderline%s: the measure is within %g standard errors (its spread within this run)"
			    " of the rule's threshold, so it is %s", f->borderline == BORDERLINE_FIRES ? "" : " for error",
			    BORDERLINE_SE, f->borderline == BORDERLINE_FIRES ? "info" : "not an error");
	f->message = msg->buf ? msg->buf : "";
	strbuf_reset(rec);
	text = variant_text(r, var, offsetof(struct variant, recommendation), &line);
	if (text && render(ev, text, rec))
		return bad_field_error(ev, line);
	f->recommendation = rec->buf ? rec->buf : "";
	f->example_before = variant_text(r, var, offsetof(struct variant, before), &line);
	f->example_after = variant_text(r, var, offsetof(struct variant, after), &line);
	return 1;
}

static int rule_run(struct rule *r, struct model *m, size_t *added)
{
	struct metric_source sqlsrc;
	struct eval ev = { .r = r, .m = m };
	struct strbuf msg = STRBUF_INIT, rec = STRBUF_INIT;
	size_t n, fired = 0;
	int ret = 0;

	memset(&sqlsrc, 0, sizeof(sqlsrc));
	if (!strcmp(r->select, "sql")) {
		if (sql_source(r, m, &sqlsrc))
			return -1;
		ev.src = &sqlsrc;
	} else if (!(ev.src = model_find_source(m, r->select))) {
		if (r->skip_missing_source)
			return 0;
		return rule_error(r->path, r->line_select, "unknown source '%s'", r->select);
	}
	n = ev.src->count(m, ev.src->data);
	for (ev.row = 0; ev.row < n; ev.row++) {
		struct finding f;
		int hit = rule_finding(&ev, &f, &msg, &rec);

		if (hit < 0 || (hit && !model_add_finding(m, &f))) {
			ret = hit < 0 ? -1 : error("out of memory");
			break;
		}
		*added += (size_t)hit;
		if (hit && r->limit && (long)++fired >= r->limit)
			break;
	}
	strbuf_release(&msg);
	strbuf_release(&rec);
	if (sqlsrc.release)
		sqlsrc.release(sqlsrc.data);
	return ret;
}

size_t rules_run(struct ruleset *rs, struct model *m)
{
	size_t added = 0;

	for (size_t i = 0; i < rs->nrules; i++)
		if (rule_run(rs->rules[i], m, &added))
			rs->errors++;
	model_sort_findings(m);
	return added;
}
