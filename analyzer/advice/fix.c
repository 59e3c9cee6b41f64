/*
 * fix.c - edits of the user's code per finding (fix.h).
 *
 * Where an edit goes comes from CPython's parser: the code facts recorded
 * with the run (fix_facts.h: a call's and each argument's span, a def's
 * decorators and parameters), and the edit replaces or inserts at exactly
 * those byte positions, so a call over several lines, a string holding
 * brackets or commas, a lambda or a comment in the arguments read right.
 * When the facts exist and do not show the call, argument or decorator,
 * there is no edit (no_edit, with the reason), never a guess from the text.
 * Only a file without position facts (a recording made before them, a file
 * that did not parse, a notebook cell) is read as lines: each edit then
 * recognises one narrow form of line and gives up on anything else.  A
 * wrong edit is worse than none.
 */
#include "fix.h"
#include "fix_facts.h"
#include "graph_dtype.h"
#include "pathdisp.h"
#include "graph_ops.h"
#include "json.h"
#include "model.h"
#include "model_internal.h"
#include "recording.h"
#include "rule_advice.h"
#include "srcfile.h"
#include "verdicts.h"

#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILES 16
#define MAX_ARGS 32
#define DIFF_CONTEXT 3

struct loaded {
	const char *path;       /* as recorded */
	struct srcfile sf;
	int ok;                 /* 1: read */
	int changed;            /* 1: its hash differs from the recorded one */
	const struct model_cell *cell; /* a notebook cell's code (its lines from the cell's first_line) */
	const struct model *m;
};

struct fixctx {
	struct model *m;
	const char *cwd;
	struct loaded files[MAX_FILES];
	size_t nfiles;
};

/* A cell's code: its text from line first_line on (what the file name was compiled from). */
static int cell_code(struct srcfile *sf, const struct model_cell *cell)
{
	const char *p = cell->source;

	for (int n = 1; n < cell->first_line && p; n++)
		p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
	return srcfile_from_text(sf, p ? p : "", p ? strlen(p) : 0);
}

/* The file as it is now, or the notebook cell the recording keeps (cached); NULL when it cannot be read. */
static struct loaded *load(struct fixctx *c, const char *path)
{
	const struct model_cell *cell = model_cell(c->m, path);
	struct loaded *l;
	char hash[17];

	if (!path || (path[0] == '<' && !cell))
		return NULL;
	for (size_t i = 0; i < c->nfiles; i++)
		if (!strcmp(c->files[i].path, path))
			return c->files[i].ok ? &c->files[i] : NULL;
	if (c->nfiles == MAX_FILES)
		return NULL;
	l = &c->files[c->nfiles++];
	l->path = path;
	l->m = c->m;
	if ((l->cell = cell))  /* the cell as it ran: never changed since */
		return (l->ok = cell_code(&l->sf, cell) == 0) ? l : NULL;
	l->ok = srcfile_load(&l->sf, path, c->cwd) == 0;
	if (l->ok && c->m->rec && srcfile_recorded_hash(c->m->rec->db, path, hash) == 0)
		l->changed = strcmp(hash, l->sf.hash) != 0;
	return l->ok ? l : NULL;
}

/* path relative to the recording's working directory, or NULL when not under it. */
static const char *under_cwd(const char *cwd, const char *path)
{
	size_t n = cwd ? strlen(cwd) : 0;

	if (!path || !n)
		return NULL;
	if (path[0] != '/')
		return path;
	if (!strncmp(path, cwd, n) && path[n] == '/')
		return path + n + 1;
	return NULL;
}

/* The path an edit of l names: a cell's own, else relative to cwd (NULL when not under it). */
static const char *edit_path(const struct fixctx *c, const struct loaded *l, const char *path)
{
	return l && l->cell ? path : under_cwd(c->cwd, path);
}

static size_t indent_of(const char *s)
{
	size_t n = strspn(s, " \t");

	return n;
}

static int blank(const char *s)
{
	s += strspn(s, " \t");
	return !*s || *s == '#';
}

/* "  12 | code\n" for lines from..to of l (a cell's lines numbered as the cell's). */
static void quote_lines(struct strbuf *sb, const struct loaded *l, long from, long to)
{
	for (long n = from; n <= to; n++) {
		const char *s = srcfile_line(&l->sf, n);

		if (s)
			strbuf_addf(sb, "%5ld | %s\n", n + (l->cell ? l->cell->first_line - 1 : 0), s);
	}
}

static size_t ident_len(const char *s)
{
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_0123456789");
}

/*
 * In a top-level "import a as b, tensorflow as tf, c" (s after "import "),
 * the name tensorflow is bound to, copied to buf; NULL when it is not one of
 * the modules (or the line is more than plain names, e.g. a continuation).
 */
static const char *tf_in_import(const char *s, char *buf, size_t cap)
{
	for (;;) {
		size_t n, an = 0;
		const char *mod, *alias;

		s += strspn(s, " \t");
		mod = s;
		while ((n = ident_len(s)) && s[n] == '.')
			s += n + 1;  /* a dotted module: its last part */
		s += ident_len(s);
		n = (size_t)(s - mod);
		alias = mod;
		an = n;
		s += strspn(s, " \t");
		if (!strncmp(s, "as", 2) && (s[2] == ' ' || s[2] == '\t')) {
			s += 2 + strspn(s + 2, " \t");
			alias = s;
			an = ident_len(s);
			s += an;
			s += strspn(s, " \t");
		}
		if (!n || !an)
			return NULL;
		if (n == 10 && !memcmp(mod, "tensorflow", 10) && an < cap) {
			memcpy(buf, alias, an);
			buf[an] = '\0';
			return buf;
		}
		if (*s != ',')
			return NULL;
		s++;
	}
}

static const char *tf_alias_in(const struct srcfile *sf, char *buf, size_t cap)
{
	for (size_t i = 0; i < sf->nlines; i++) {
		const char *s = sf->lines[i];

		if (!strncmp(s, "import ", 7) && tf_in_import(s + 7, buf, cap))
			return buf;
	}
	return NULL;
}

/* The module name TensorFlow is imported as in l ("tf"), or NULL.  A cell: in it, else in the notebook's other cells. */
static const char *tf_alias(const struct loaded *l, char *buf, size_t cap)
{
	const char *alias = tf_alias_in(&l->sf, buf, cap);

	for (size_t i = 0; !alias && l->cell && i < l->m->ncells; i++) {
		struct srcfile sf;

		if (cell_code(&sf, &l->m->cells[i]))
			continue;
		alias = tf_alias_in(&sf, buf, cap);
		srcfile_release(&sf);
	}
	return alias;
}

/* --- a tiny reader of one Python line: calls and their arguments --- */

static int ident_char(int ch)
{
	return isalnum(ch) || ch == '_';
}

/* Index of the bracket closing the one at open, or -1 (strings are skipped). */
static long match_close(const char *s, size_t open)
{
	int depth = 0;
	char quote = 0;

	for (size_t i = open; s[i]; i++) {
		char ch = s[i];

		if (quote) {
			if (ch == '\\' && s[i + 1])
				i++;
			else if (ch == quote)
				quote = 0;
			continue;
		}
		if (ch == '"' || ch == '\'')
			quote = ch;
		else if (ch == '#')
			return -1;
		else if (ch == '(' || ch == '[' || ch == '{')
			depth++;
		else if (ch == ')' || ch == ']' || ch == '}') {
			if (--depth == 0)
				return (long)i;
		}
	}
	return -1;
}

struct arg {
	size_t start, end;      /* the argument's text, trimmed */
	size_t kw_len;          /* length of "name" in "name=value", 0 when positional */
	size_t value;           /* where the value starts */
};

/* Split the arguments between s[open] '(' and s[close] ')'. Returns their number, -1 when too many. */
static int split_args(const char *s, size_t open, size_t close, struct arg *args)
{
	int n = 0;
	size_t i = open + 1;

	while (i < close) {
		size_t a = i, e;
		int depth = 0;
		char quote = 0;

		for (; i < close; i++) {
			char ch = s[i];

			if (quote) {
				if (ch == '\\')
					i++;
				else if (ch == quote)
					quote = 0;
			} else if (ch == '"' || ch == '\'') {
				quote = ch;
			} else if (ch == '(' || ch == '[' || ch == '{') {
				depth++;
			} else if (ch == ')' || ch == ']' || ch == '}') {
				depth--;
			} else if (ch == ',' && depth == 0) {
				break;
			}
		}
		e = i;
		while (a < e && isspace((unsigned char)s[a]))
			a++;
		while (e > a && isspace((unsigned char)s[e - 1]))
			e--;
		if (e > a) {
			size_t k = a;

			if (n == MAX_ARGS)
				return -1;
			while (k < e && ident_char((unsigned char)s[k]))
				k++;
			args[n].start = a;
			args[n].end = e;
			args[n].kw_len = 0;
			args[n].value = a;
			if (k > a && k < e && s[k] == '=' && s[k + 1] != '=') {
				args[n].kw_len = k - a;
				args[n].value = k + 1 + strspn(s + k + 1, " ");
			}
			n++;
		}
		i++;
	}
	return n;
}

/* Position of the first "name(" call in s at or after from whose callee is name (after '.' or a non-identifier). */
static long find_call(const char *s, const char *name, size_t from)
{
	size_t n = strlen(name);

	for (const char *p = strstr(s + from, name); p; p = strstr(p + 1, name)) {
		size_t at = (size_t)(p - s);

		if (at > 0 && ident_char((unsigned char)s[at - 1]))
			continue;
		if (p[n] == '(')
			return (long)(at + n);
	}
	return -1;
}

/* --- edits --- */

struct edit {
	const char *file;       /* recorded path */
	long line, nlines;
	struct strbuf after;
	int pins_signature;     /* finding_fix.pins_signature */
};

static void set_no_edit(struct fixctx *c, struct finding *f, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void set_no_edit(struct fixctx *c, struct finding *f, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	f->no_edit = model_vstrf(c->m, fmt, ap);
	va_end(ap);
}

/* A cell's edit: the whole cell as it reads with e applied, to run in its place. */
static void corrected_cell(struct fixctx *c, struct finding *f, const struct loaded *l, const struct edit *e)
{
	const char *src = l->cell->source, *p = src;
	struct strbuf sb = STRBUF_INIT;
	size_t len = strlen(src);

	for (int n = 1; n < l->cell->first_line && p; n++)  /* the lines before the code: %%agprof's */
		p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
	strbuf_add(&sb, src, p ? (size_t)(p - src) : len);
	for (long n = 1; n <= (long)l->sf.nlines; n++) {
		if (n == e->line)
			strbuf_addstr(&sb, e->after.buf ? e->after.buf : "");
		if (n < e->line || n >= e->line + e->nlines)
			strbuf_addf(&sb, "%s\n", srcfile_line(&l->sf, n));
	}
	if (len && src[len - 1] != '\n' && sb.len && sb.buf[sb.len - 1] == '\n')
		sb.buf[--sb.len] = '\0';
	f->fix.cell = l->cell->label;
	f->fix.cell_line = (int)e->line + l->cell->first_line - 1;
	f->fix.cell_after = model_strdup(c->m, sb.buf ? sb.buf : "");
	strbuf_release(&sb);
}

/* Store e as f's edit (before = the file's lines now); returns 0. */
static int store_edit(struct fixctx *c, struct finding *f, const struct loaded *l, struct edit *e)
{
	struct strbuf before = STRBUF_INIT;

	for (long n = e->line; n < e->line + e->nlines; n++) {
		strbuf_addstr(&before, srcfile_line(&l->sf, n));
		strbuf_addch(&before, '\n');
	}
	f->fix.file = model_strdup(c->m, edit_path(c, l, e->file));
	if (l->cell)
		corrected_cell(c, f, l, e);
	f->fix.line = (int)e->line;
	f->fix.nlines = (int)e->nlines;
	f->fix.before = model_strdup(c->m, before.buf ? before.buf : "");
	f->fix.after = model_strdup(c->m, e->after.buf ? e->after.buf : "");
	f->fix.pins_signature = e->pins_signature;
	strbuf_release(&before);
	return 0;
}

/* Store e, an edit of the one line `line` of file, and free its text. */
static void store_line_edit(struct fixctx *c, struct finding *f, const struct loaded *l, const char *file, long line,
			    struct edit *e)
{
	e->file = file;
	e->line = line;
	e->nlines = 1;
	store_edit(c, f, l, e);
	strbuf_release(&e->after);
}

/* Whether the parser's position facts hold for l's file: else the edits read its text. */
static int positions_from_facts(const struct fixctx *c, const struct loaded *l, const char *file)
{
	return !l->cell && facts_positions_known(c->m, file);
}

/*
 * Whether span lies in l's lines as they are: both lines exist and each
 * column is within its line (the facts are untrusted: a column past its
 * line's end means no edit, never a read past it).
 */
static int span_in(const struct loaded *l, const struct code_span *sp)
{
	const char *a = srcfile_line(&l->sf, sp->line), *b = srcfile_line(&l->sf, sp->end_line);

	return a && b && sp->col >= 0 && sp->end_col >= 0 && (size_t)sp->col <= strlen(a) &&
	       (size_t)sp->end_col <= strlen(b) && (sp->line < sp->end_line || (sp->line == sp->end_line &&
										 sp->col <= sp->end_col));
}

/* The source text of span (checked by span_in), its lines joined by '\n', appended to sb. */
static void span_text(const struct loaded *l, const struct code_span *sp, struct strbuf *sb)
{
	for (int n = sp->line; n <= sp->end_line; n++) {
		const char *s = srcfile_line(&l->sf, n);
		size_t from = n == sp->line ? (size_t)sp->col : 0, to = n == sp->end_line ? (size_t)sp->end_col : strlen(s);

		if (n > sp->line)
			strbuf_addch(sb, '\n');
		strbuf_add(sb, s + from, to - from);
	}
}

/* e: the lines of span (checked by span_in) with the span's text replaced by text. */
static void splice_edit(const struct loaded *l, const struct code_span *sp, const char *text, struct edit *e)
{
	const char *first = srcfile_line(&l->sf, sp->line), *last = srcfile_line(&l->sf, sp->end_line);

	strbuf_add(&e->after, first, (size_t)sp->col);
	strbuf_addstr(&e->after, text);
	strbuf_addf(&e->after, "%s\n", last + sp->end_col);
	e->line = sp->line;
	e->nlines = sp->end_line - sp->line + 1;
}

/* How a reason names file: a notebook cell by its label ("In [3]"). */
static const char *shown(const struct fixctx *c, const char *file)
{
	const struct model_cell *cell = model_cell(c->m, file);

	return cell ? cell->label : file;
}

/* Checks shared by every edit of file: readable, unchanged, under cwd, TensorFlow imported. */
static const struct loaded *editable(struct fixctx *c, struct finding *f, const char *file, char *alias, size_t cap)
{
	const struct loaded *l = load(c, file);

	if (!file)
		return set_no_edit(c, f, "the source line is not known"), NULL;
	if (!l)
		return set_no_edit(c, f, "'%s' cannot be read now", shown(c, file)), NULL;
	if (l->changed)
		return set_no_edit(c, f, "'%s' changed since the recording", shown(c, file)), NULL;
	if (!edit_path(c, l, file))
		return set_no_edit(c, f, "'%s' is outside the recording's working directory", shown(c, file)), NULL;
	if (!tf_alias(l, alias, cap))
		return set_no_edit(c, f, "'%s' does not `import tensorflow` at the top level", shown(c, file)), NULL;
	return l;
}

struct param {
	char name[64];
};

/* Parameters of "def name(a, b=1):" on line s; -1 when not one line or not plain names. */
static int def_params(const char *s, const char *name, struct param *ps)
{
	struct arg args[MAX_ARGS];
	const char *p = s + indent_of(s);
	long open, close;
	int n, k = 0;

	if (!strncmp(p, "async ", 6))
		p += 6;
	if (strncmp(p, "def ", 4))
		return -1;
	p += 4 + strspn(p + 4, " ");
	if (strncmp(p, name, strlen(name)) || p[strlen(name)] != '(')
		return -1;
	open = (long)(p - s) + (long)strlen(name);
	if ((close = match_close(s, (size_t)open)) < 0)
		return -1;
	if ((n = split_args(s, (size_t)open, (size_t)close, args)) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		size_t len = ident_len(s + args[i].start);

		if (!len || len >= sizeof(ps[0].name))
			return -1;   /* *args, **kw, or odd */
		if (i == 0 && ((len == 4 && !strncmp(s + args[i].start, "self", 4)) ||
			       (len == 3 && !strncmp(s + args[i].start, "cls", 3))))
			continue;
		memcpy(ps[k].name, s + args[i].start, len);
		ps[k].name[len] = '\0';
		k++;
	}
	return k;
}

/*
 * The parameters of the def of name at line def, self or cls first left
 * out: from the parser's facts (any layout; *args, **kw or keyword-only
 * ones refused), else from the def's one line of text; -1 when refused.
 */
static int params_of(const struct fixctx *c, const struct loaded *l, const char *file, long def, const char *name,
		     struct param *ps)
{
	const char *names[MAX_ARGS], *kinds[MAX_ARGS];
	int n, k = 0;

	if (!positions_from_facts(c, l, file))
		return def_params(srcfile_line(&l->sf, def), name, ps);  /* no position facts: the def line's text */
	if ((n = facts_params(c->m, file, (int)def, names, kinds, MAX_ARGS)) < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		if (strncmp(kinds[i], "arg", 3) && strncmp(kinds[i], "posonly", 7))
			return -1;
		if (i == 0 && (!strcmp(names[i], "self") || !strcmp(names[i], "cls")))
			continue;
		if (strlen(names[i]) >= sizeof(ps[0].name))
			return -1;
		snprintf(ps[k++].name, sizeof(ps[0].name), "%s", names[i]);
	}
	return k;
}

/*
 * The first traced trace of fn, when every traced input of every trace is a
 * tensor named as the def's parameters ps[0..np); else NULL.
 */
static const struct model_trace *plain_tensor_traces(const struct model_function *fn, const struct param *ps, int np)
{
	const struct model_trace *t0 = NULL;

	for (size_t i = 0; i < fn->ntraces; i++) {
		const struct model_trace *t = &fn->traces[i];

		if (!t->ok)
			continue;
		if ((int)t->ninputs != np)
			return NULL;
		for (int a = 0; a < np; a++)
			if (!t->inputs[a].name || strcmp(t->inputs[a].name, ps[a].name) ||
			    strcmp(t->inputs[a].kind, "tensor") || !t->inputs[a].dtype || !t->inputs[a].shape)
				return NULL;
		if (!t0)
			t0 = t;
	}
	return t0;
}

/*
 * Merge shape "[32,10]" into dims[0..*rank): with *rank < 0 the dims are
 * taken as they are, else a dim that differs becomes None.  0, or -1 when
 * not a shape of that rank.
 */
static int merge_dims(const char *p, char dims[][24], int *rank)
{
	int r = 0;

	if (*p++ != '[')
		return -1;
	while (*p && *p != ']') {
		size_t len = strcspn(p, ",]");

		if (r == MAX_ARGS || len == 0 || len >= sizeof(dims[0]) || (*rank >= 0 && r >= *rank))
			return -1;
		if (*rank < 0) {
			memcpy(dims[r], p, len);
			dims[r][len] = '\0';
		} else if (strlen(dims[r]) != len || strncmp(dims[r], p, len)) {
			snprintf(dims[r], sizeof(dims[r]), "None");
		}
		r++;
		p += len + (p[len] == ',');
	}
	if (*rank >= 0 && r != *rank)
		return -1;
	*rank = r;
	return 0;
}

/* Does every traced shape of argument a parse ("[..]" or "?"), with more than one rank among them? */
static int rank_changes(const struct model_function *fn, int a)
{
	int first = -2, changes = 0;

	for (size_t i = 0; i < fn->ntraces; i++) {
		const struct model_trace *t = &fn->traces[i];
		char dims[MAX_ARGS][24];
		int rank = -1;

		if (!t->ok)
			continue;
		if (strcmp(t->inputs[a].shape, "?") && merge_dims(t->inputs[a].shape, dims, &rank))
			return 0;
		if (first != -2 && rank != first)
			changes = 1;
		first = rank;
	}
	return changes;
}

/*
 * input_signature of f from its traces: one TensorSpec per parameter, None
 * in every dimension that differed, shape=None for a parameter whose rank
 * changed (reduce_retracing would trace again for a new rank; one spec of
 * unknown rank serves them all); 0, or -1 when one cannot be written
 * (non-tensor or nested arguments, names that are not the def's, dtypes
 * that differ).
 */
static int build_signature(const struct model_function *fn, const struct param *ps, int np, const char *tf,
			   struct strbuf *sig)
{
	const struct model_trace *t0 = plain_tensor_traces(fn, ps, np);

	if (!t0)
		return -1;
	strbuf_addf(sig, "input_signature=[");
	for (int a = 0; a < np; a++) {
		char dims[MAX_ARGS][24];
		int rank = -1, any_rank = rank_changes(fn, a);

		if (!any_rank && merge_dims(t0->inputs[a].shape, dims, &rank))
			return -1;
		for (size_t i = 0; i < fn->ntraces; i++) {
			const struct model_trace *t = &fn->traces[i];

			if (t->ok && (strcmp(t->inputs[a].dtype, t0->inputs[a].dtype) ||
				      (!any_rank && merge_dims(t->inputs[a].shape, dims, &rank))))
				return -1;
		}
		strbuf_addf(sig, "%s%s.TensorSpec(shape=", a ? ", " : "", tf);
		if (any_rank)
			strbuf_addstr(sig, "None");
		else
			strbuf_addch(sig, '[');
		for (int d = 0; d < rank; d++)
			strbuf_addf(sig, "%s%s", d ? ", " : "", dims[d]);
		strbuf_addf(sig, "%s, dtype=%s.%s, name='%s')", any_rank ? "" : "]", tf, t0->inputs[a].dtype, ps[a].name);
	}
	strbuf_addch(sig, ']');
	return 0;
}

/* The @tf.function line above def line def_line, or 0. */
static long find_decorator(const struct loaded *l, long def_line, const char *tf)
{
	size_t ind = indent_of(srcfile_line(&l->sf, def_line));
	char want[80];

	snprintf(want, sizeof(want), "@%s.function", tf);
	for (long n = def_line - 1; n >= 1; n--) {
		const char *s = srcfile_line(&l->sf, n);

		if (indent_of(s) != ind || s[ind] != '@')
			return 0;
		if (!strncmp(s + ind, want, strlen(want)) && !ident_char((unsigned char)s[ind + strlen(want)]))
			return n;
	}
	return 0;
}

/* fn_decorator from the parser's facts: the def line, and the decorator's span (*span, checked); l or NULL. */
static const struct loaded *fn_decorator_at_facts(struct fixctx *c, struct finding *f, const struct model_function *fn,
						  const struct loaded *l, const char *tf, long *def,
						  struct code_span *span)
{
	char want[80];

	snprintf(want, sizeof(want), "%s.function", tf);
	if (!(*def = facts_def_line(c->m, fn->def.file, fn->def.line, fn->name))) {
		set_no_edit(c, f, "the parser shows no def of %s at line %d of '%s'", fn->name, fn->def.line,
			    fn->def.file);
		return NULL;
	}
	if (facts_decorator(c->m, fn->def.file, (int)*def, want, span) || !span_in(l, span)) {
		set_no_edit(c, f, "%s is not decorated with @%s.function at its def", fn->name, tf);
		return NULL;
	}
	return l;
}

/*
 * fn's file (editable), its def line into *def and its @tf.function line
 * into *dec (from the text), or 0 with the decorator's span in *span (from
 * the parser's facts); NULL after set_no_edit() when there is none.
 */
static const struct loaded *fn_decorator(struct fixctx *c, struct finding *f, const struct model_function *fn,
					 char *tf, size_t cap, long *def, long *dec, struct code_span *span)
{
	const struct loaded *l;
	const char *dl;

	if (fn->library) {  /* a library's def is never the user's to edit, even inside the working directory */
		set_no_edit(c, f, "%s is a library's function ('%s'): agprof writes no edit in a library's code",
			    fn->name, fn->def.file ? path_display(fn->def.file, c->m->session.cwd) : "?");
		return NULL;
	}
	if (!(l = editable(c, f, fn->def.file, tf, cap)))
		return NULL;
	*dec = 0;
	if (positions_from_facts(c, l, fn->def.file))
		return fn_decorator_at_facts(c, f, fn, l, tf, def, span);
	/* no position facts for the file: the lines above the def, read as text */
	/* co_firstlineno is the first decorator's line: the def follows the decorators */
	for (*def = fn->def.line; (dl = srcfile_line(&l->sf, *def)) && dl[indent_of(dl)] == '@' && *def < fn->def.line + 8;)
		(*def)++;
	if (!dl || strncmp(dl + indent_of(dl), "def ", 4)) {
		set_no_edit(c, f, "line %ld of '%s' is not the def of %s", *def, fn->def.file, fn->name);
		return NULL;
	}
	if (!(*dec = find_decorator(l, *def, tf))) {
		set_no_edit(c, f, "%s is not decorated with @%s.function at its def", fn->name, tf);
		return NULL;
	}
	return l;
}

/*
 * The start of a new decorator line dec (`@TF.function...`): its
 * indentation and "@TF.function(" into after; returns what follows
 * ".function" on the line (nothing, or the arguments).
 */
static const char *decorator_open(const struct loaded *l, long dec, const char *tf, struct strbuf *after)
{
	const char *s = srcfile_line(&l->sf, dec);
	size_t ind = indent_of(s);

	strbuf_add(after, s, ind);
	strbuf_addf(after, "@%s.function(", tf);
	return s + ind + 1 + strlen(tf) + strlen(".function");
}

/* What decorator_at_facts adds to a @tf.function decorator. */
struct decorator_option {
	const char *text;       /* "jit_compile=True", "input_signature=[...]" */
	const char *key;        /* the keyword that means it is there already */
	const char *relaxed;    /* a keyword the option replaces when its value is True (reduce_retracing), or NULL */
	const char *already;    /* the reason when key (or relaxed, not to be replaced) is there */
};

/* Where in the decorator call the option goes, into *at: before the first argument, or in empty brackets; 0 or -1. */
static int option_place(struct fixctx *c, struct finding *f, const struct model_function *fn, const struct loaded *l,
			const struct code_call *call, const struct decorator_option *o, struct code_span *at)
{
	for (int i = 0; i < call->nargs; i++) {
		const char *name = call->args[i].name;

		if (!strcmp(name, o->key) || (o->relaxed && !strcmp(name, o->relaxed)))
			return set_no_edit(c, f, "the decorator of %s %s", fn->name, o->already), -1;
		if (name[0] == '#' || name[0] == '*')
			return set_no_edit(c, f, "the decorator of %s passes arguments the parser cannot name",
					   fn->name), -1;
	}
	if (call->nargs)
		*at = (struct code_span){ call->args[0].line, call->args[0].col, call->args[0].line, call->args[0].col };
	else
		*at = (struct code_span){ call->span.end_line, call->span.end_col - 1, call->span.end_line,
					  call->span.end_col - 1 };
	if (!span_in(l, at) || (!call->nargs && srcfile_line(&l->sf, at->line)[at->col] != ')'))
		return set_no_edit(c, f, "the decorator of %s is not where the parser put it", fn->name), -1;
	return 0;
}

/* An option the relaxed keyword (reduce_retracing=True) of call gives way to: its span into *at; 0, or -1 when none. */
static int relaxed_place(const struct loaded *l, const struct code_call *call, const struct decorator_option *o,
			 struct code_span *at)
{
	struct strbuf v = STRBUF_INIT;
	int rc = -1;

	for (int i = 0; o->relaxed && i < call->nargs; i++) {
		const struct code_arg *a = &call->args[i];

		if (strcmp(a->name, o->relaxed) || !span_in(l, &a->value))
			continue;
		span_text(l, &a->value, &v);
		*at = (struct code_span){ a->line, a->col, a->value.end_line, a->value.end_col };
		rc = v.buf && !strcmp(v.buf, "True") && span_in(l, at) ? 0 : -1;
	}
	strbuf_release(&v);
	return rc;
}

/*
 * Option o added to fn's @tf.function decorator at span, at the parser's
 * positions: a bare decorator becomes TF.function(OPTION); a call gets it
 * before its first (keyword) argument or in its empty brackets, wherever
 * its lines and comments are.  0 with f's edit stored, or -1 with no_edit.
 */
static int decorator_at_facts(struct fixctx *c, struct finding *f, const struct model_function *fn,
			      const struct loaded *l, const char *tf, const struct code_span *span,
			      const struct decorator_option *o, int pins_signature)
{
	struct code_call call;
	struct code_span at = *span;
	struct strbuf text = STRBUF_INIT;
	struct edit e = { .after = STRBUF_INIT, .file = fn->def.file, .pins_signature = pins_signature };

	if (facts_call_starting(c->m, fn->def.file, span->line, span->col, &call)) {
		strbuf_addf(&text, "%s.function(%s)", tf, o->text);  /* @tf.function, no brackets */
	} else if (pins_signature && relaxed_place(l, &call, o, &at) == 0) {
		strbuf_addstr(&text, o->text);  /* reduce_retracing=True did not stop the retraces */
	} else if (option_place(c, f, fn, l, &call, o, &at) == 0) {
		strbuf_addf(&text, "%s%s", o->text, call.nargs ? ", " : "");
	} else {
		return -1;
	}
	splice_edit(l, &at, text.buf, &e);
	store_edit(c, f, l, &e);
	strbuf_release(&e.after);
	strbuf_release(&text);
	return 0;
}

/*
 * jit-compile: jit_compile=True added to fn's @tf.function line (the
 * decorator without arguments, or with them on that one line).
 */
static void edit_jit(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	static const struct decorator_option jit = { "jit_compile=True", "jit_compile", NULL,
						     "already sets jit_compile" };
	struct code_span span;
	struct edit e = { .after = STRBUF_INIT };
	char tf[64];
	const struct loaded *l;
	const char *rest;
	long dec, def, close;

	if (!(l = fn_decorator(c, f, fn, tf, sizeof(tf), &def, &dec, &span)))
		return;
	if (!dec) {
		decorator_at_facts(c, f, fn, l, tf, &span, &jit, 0);
		return;
	}
	rest = decorator_open(l, dec, tf, &e.after);
	strbuf_addstr(&e.after, "jit_compile=True");
	if (blank(rest)) {
		strbuf_addf(&e.after, ")%s\n", rest);
	} else if (rest[0] == '(' && !strstr(rest, "jit_compile") && (close = match_close(rest, 0)) > 0) {
		strbuf_addf(&e.after, "%s%s\n", close > 1 ? ", " : "", rest + 1);
	} else {
		set_no_edit(c, f, "the decorator of %s %s", fn->name, strstr(rest, "jit_compile") ? "already sets jit_compile"
			    : "spans several lines");
		strbuf_release(&e.after);
		return;
	}
	store_line_edit(c, f, l, fn->def.file, dec, &e);
}

/* retracing by shape: an input_signature (or reduce_retracing) on the decorator. */
static void edit_signature(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	struct param ps[MAX_ARGS];
	struct strbuf sig = STRBUF_INIT;
	struct edit e = { .after = STRBUF_INIT };
	char tf[64];
	const struct loaded *l;
	const char *rest, *relax;
	struct code_span span;
	long dec, def;
	int np;

	if (!(l = fn_decorator(c, f, fn, tf, sizeof(tf), &def, &dec, &span)))
		return;
	if ((np = params_of(c, l, fn->def.file, def, fn->name, ps)) < 0) {
		set_no_edit(c, f, "line %ld of '%s' is not a `def %s(...)` of plain parameters", def, fn->def.file,
			    fn->name);
		return;
	}
	e.pins_signature = !build_signature(fn, ps, np, tf, &sig);
	if (!e.pins_signature) {
		strbuf_reset(&sig);
		strbuf_addstr(&sig, "reduce_retracing=True");
	}
	if (!dec) {
		struct decorator_option o = { sig.buf, "input_signature", "reduce_retracing",
					      "already pins or relaxes its inputs" };

		decorator_at_facts(c, f, fn, l, tf, &span, &o, e.pins_signature);
		goto cleanup;
	}
	rest = decorator_open(l, dec, tf, &e.after);
	if (blank(rest)) {
		strbuf_addf(&e.after, "%s)%s\n", sig.buf, rest);
	} else if (e.pins_signature && rest[0] == '(' && (relax = strstr(rest, "reduce_retracing=True")) &&
		   !strstr(rest, "input_signature")) {
		/* reduce_retracing did not stop the retraces: the signature replaces it */
		strbuf_add(&e.after, rest + 1, (size_t)(relax - rest - 1));
		strbuf_addf(&e.after, "%s%s\n", sig.buf, relax + strlen("reduce_retracing=True"));
	} else if (rest[0] == '(' && !strstr(rest, "input_signature") && !strstr(rest, "reduce_retracing")) {
		long close = match_close(rest, 0);

		if (close < 0) {
			set_no_edit(c, f, "the decorator of %s spans several lines", fn->name);
			goto cleanup;
		}
		strbuf_addf(&e.after, "%s%s%s\n", sig.buf, close > 1 ? ", " : "", rest + 1);
	} else {
		set_no_edit(c, f, "the decorator of %s already pins or relaxes its inputs", fn->name);
		goto cleanup;
	}
	e.file = fn->def.file;
	e.line = dec;
	e.nlines = 1;
	store_edit(c, f, l, &e);
cleanup:
	strbuf_release(&sig);
	strbuf_release(&e.after);
}

/* The first retrace of fn with cause (not a follow-up). */
static const struct model_trace *first_retrace(const struct model_function *fn, enum retrace_cause cause)
{
	for (size_t i = 1; i < fn->ntraces; i++)
		if (fn->traces[i].why.cause == cause && !fn->traces[i].why.followup)
			return &fn->traces[i];
	return NULL;
}

/* Python float literal (repr of a float)? */
static int is_float_repr(const char *v)
{
	char *end;

	if (!v || !*v || !strpbrk(v, ".eE") || strpbrk(v, "'\"[("))
		return 0;
	strtod(v, &end);
	return *end == '\0';
}

/* Python int literal (repr of an int, not a bool)? */
static int is_int_repr(const char *v)
{
	size_t n = v ? (v[0] == '-') : 0;

	return v && v[n] && strspn(v + n, "0123456789") == strlen(v + n);
}

/* The arguments of the call that made trace t: its inputs' top-level names (seed[0] and seed[1] are one). */
static size_t top_inputs(const struct model_trace *t)
{
	size_t n = 0, prevlen = 0;
	const char *prev = NULL;

	for (size_t i = 0; i < t->ninputs; i++) {
		const char *x = t->inputs[i].name ? t->inputs[i].name : "";
		size_t xl = strcspn(x, "[.");

		if (!prev || xl != prevlen || strncmp(prev, x, xl))
			n++;
		prev = x;
		prevlen = xl;
	}
	return n;
}

/* The repr of a Python str ('text', with its quotes; a repr over 200 characters ends in "...")? */
static int is_str_repr(const char *v)
{
	size_t n = v ? strlen(v) : 0;

	return n >= 2 && (v[0] == '\'' || v[0] == '"') && (v[n - 1] == v[0] || (n > 3 && !strcmp(v + n - 3, "...")));
}

/*
 * A flat list argument of Python numbers or strings in trace t (inputs
 * name[0], name[1], ...: TFP's seed=[i, 1], a batch of sentences), of
 * which leaf is one: its name, its position among the call's arguments,
 * and the dtype tf.constant gives the list (int32 for ints, float32 for
 * floats, string for str; mixed is refused); 0 or -1.
 */
static int value_list_arg(const struct model_trace *t, const char *leaf, char *name, size_t cap, int *pos,
			  char *dtype, size_t dcap)
{
	size_t n = strcspn(leaf, "[."), prevlen = 0;
	const char *prev = NULL;
	int floats = 0, strs = 0, leaves = 0, params = 0;

	if (leaf[n] != '[' || !n || n >= cap)
		return -1;
	memcpy(name, leaf, n);
	name[n] = '\0';
	for (size_t i = 0; i < t->ninputs; i++) {
		const struct model_trace_input *x = &t->inputs[i];
		size_t xl = x->name ? strcspn(x->name, "[.") : 0;
		char *end;

		if (!x->name)
			return -1;
		if (!prev || xl != prevlen || strncmp(prev, x->name, xl))
			params++;  /* the next top-level argument */
		prev = x->name;
		prevlen = xl;
		if (xl != n || strncmp(x->name, name, n))
			continue;
		*pos = params - 1;
		if (x->name[n] != '[' || (strtol(x->name + n + 1, &end, 10), end == x->name + n + 1) || strcmp(end, "]") ||
		    !x->kind || strcmp(x->kind, "python"))
			return -1;  /* nested deeper, or not a Python value */
		floats += is_float_repr(x->value);
		strs += is_str_repr(x->value);
		if (!is_float_repr(x->value) && !is_int_repr(x->value) && !is_str_repr(x->value))
			return -1;
		leaves++;
	}
	if (!leaves || (floats && floats != leaves) || (strs && strs != leaves))
		return -1;
	snprintf(dtype, dcap, "%s", strs ? "string" : floats ? "float32" : "int32");
	return 0;
}

/*
 * The dtype to wrap the retraced argument in: the one every recorded graph
 * computes it with (graph_dtype.h: a python-value's graph constant, a dtype
 * argument's Cast), never another; and its input in trace t.  0, or -1
 * with f's no_edit set.
 */
static int call_arg_dtype(struct fixctx *c, struct finding *f, const struct model_function *fn,
			  const struct model_trace *t, const struct model_trace_input **in, char *dtype, size_t cap)
{
	char why[512];
	int rc;

	*in = NULL;
	for (size_t i = 0; i < t->ninputs; i++)
		if (t->inputs[i].name && !strcmp(t->inputs[i].name, t->why.argument))
			*in = &t->inputs[i];
	if (!*in || strpbrk(t->why.argument, "[."))
		return set_no_edit(c, f, "%s is part of a nested argument (not a flat list of Python numbers or strings)",
				   t->why.argument), -1;
	rc = f->cause == CAUSE_PYTHON_VALUE
		     ? graph_value_dtype(c->m, fn, t->why.argument, dtype, cap, why, sizeof(why))
		     : graph_arg_dtype(c->m, fn, t->why.argument, dtype, cap, why, sizeof(why));
	if (rc)
		set_no_edit(c, f, "%s", why);
	return rc;
}

/*
 * The call of fn on line s: by its name first, else (called through another
 * name: step = tf.function(f); step(x)) the only call with nargs arguments.
 * Sets *open and *close to its brackets; -1 when there is none.
 */
static int find_fn_call(const char *s, const char *name, size_t nargs, long *open, long *close)
{
	struct arg args[MAX_ARGS];
	int found = 0;

	for (long at = 0; (*open = find_call(s, name, (size_t)at)) >= 0; at = *open + 1)
		if ((*close = match_close(s, (size_t)*open)) >= 0)
			return 0;
	for (size_t i = 0; s[i]; i++) {
		long cl;

		if (s[i] != '(' || !i || !ident_char((unsigned char)s[i - 1]) || (cl = match_close(s, i)) < 0)
			continue;
		if (split_args(s, i, (size_t)cl, args) == (int)nargs) {
			found++;
			*open = (long)i;
			*close = cl;
		}
	}
	return found == 1 ? 0 : -1;
}

/* Index among args[0..n) of the argument named name or at position pos, or -1 when the line's call does not show it. */
static int pick_arg(const char *s, const struct arg *args, int n, const char *name, int pos)
{
	int pick = -1;

	for (int i = 0; i < n; i++)
		if (s[args[i].start] == '*')
			return -1;  /* f(*batch): positions are not the line's */
	for (int i = 0; i < n; i++)
		if (args[i].kw_len == strlen(name) && !strncmp(s + args[i].start, name, args[i].kw_len))
			pick = i;
	if (pick >= 0)
		return pick;
	if (pos >= n || args[pos].kw_len)
		return -1;
	for (int i = 0; i < pos; i++)
		if (args[i].start != args[i].value)
			return -1;  /* a keyword before it: positions no longer line up */
	return pos;
}

/* The argument of call named name or at position pos, or NULL when the call does not show it. */
static const struct code_arg *fact_arg(const struct code_call *call, const char *name, int pos)
{
	char want[16];

	for (int i = 0; i < call->nargs; i++)
		if (!strcmp(call->args[i].name, name))
			return &call->args[i];
	snprintf(want, sizeof(want), "#%d", pos);
	for (int i = 0; i < call->nargs; i++) {
		if (!strcmp(call->args[i].name, "*"))
			return NULL;  /* f(*batch): positions are not the call's */
		if (!strcmp(call->args[i].name, want))
			return &call->args[i];
	}
	return NULL;
}

/*
 * edit_call_arg at the parser's positions: the argument's exact span
 * becomes TF.WRAP(<its text>, TF.DTYPE), whatever the call's layout.
 */
static void call_arg_at_facts(struct fixctx *c, struct finding *f, const struct model_function *fn,
			      const struct model_trace *t, const struct loaded *l, const char *tf, const char *dtype,
			      const char *argname, int pos)
{
	struct code_call call;
	const struct code_arg *a = NULL;
	struct strbuf text = STRBUF_INIT;
	struct edit e = { .after = STRBUF_INIT };

	if (facts_call_at(c->m, t->callsite.file, t->callsite.line, fn->name, top_inputs(t), &call) ||
	    !(a = fact_arg(&call, argname, pos)) || !span_in(l, &a->value)) {
		set_no_edit(c, f, "the parser shows no one call of %s at %s:%d with %s in it", fn->name,
			    t->callsite.file, t->callsite.line, argname);
		return;
	}
	strbuf_addf(&text, "%s.%s(", tf, f->cause == CAUSE_PYTHON_VALUE ? "constant" : "cast");
	span_text(l, &a->value, &text);
	strbuf_addf(&text, ", %s.%s)", tf, dtype);
	splice_edit(l, &a->value, text.buf, &e);
	e.file = t->callsite.file;
	store_edit(c, f, l, &e);
	strbuf_release(&e.after);
	strbuf_release(&text);
}

/* python-value / dtype: wrap the argument at the call site (tf.constant / tf.cast). */
static void edit_call_arg(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	const struct model_trace *t = first_retrace(fn, f->cause);
	const struct model_trace_input *in;
	struct arg args[MAX_ARGS];
	struct edit e = { .after = STRBUF_INIT };
	char tf[64], dtype[32], name[64];
	const struct loaded *l;
	const char *s, *argname;
	long open, close;
	int pick = -1, pos = 0;

	if (!t || !t->why.argument) {
		set_no_edit(c, f, "the retrace's argument is not known");
		return;
	}
	if (t->why.library_passes) {
		set_no_edit(c, f, "the library passes %s to %s itself (%s:%d), not your call: nothing in your code to edit",
			    t->why.argument, fn->name, t->callsite.lib_file ? t->callsite.lib_file : t->callsite.file,
			    t->callsite.library_only ? t->callsite.line : t->callsite.lib_line);
		return;
	}
	if (t->callsite.library_only || t->callsite.lib_file) {
		set_no_edit(c, f, "%s is called from library code (%s:%d)", fn->name,
			    t->callsite.lib_file ? t->callsite.lib_file : t->callsite.file, t->callsite.lib_line);
		return;
	}
	if (f->cause == CAUSE_PYTHON_VALUE &&
	    value_list_arg(t, t->why.argument, name, sizeof(name), &pos, dtype, sizeof(dtype)) == 0) {
		argname = name;  /* the whole list becomes one tensor: tf.constant([i, 1], tf.int32) */
		f->recommendation = model_strf(c->m, "Pass %s, a list of Python values that change (%s: %s -> %s), as"
					       " one tensor (tf.constant(%s, tf.%s)) so that its values are an input of"
					       " the graph instead of constants baked into it.", name, t->why.argument,
					       t->why.before ? t->why.before : "?", t->why.after ? t->why.after : "?",
					       name, dtype);
	} else if (call_arg_dtype(c, f, fn, t, &in, dtype, sizeof(dtype)) == 0) {
		argname = t->why.argument;
		pos = in->position;
	} else {
		return;
	}
	if (!(l = editable(c, f, t->callsite.file, tf, sizeof(tf))))
		return;
	if (positions_from_facts(c, l, t->callsite.file)) {
		call_arg_at_facts(c, f, fn, t, l, tf, dtype, argname, pos);
		return;
	}
	/* no position facts for the file: the one line's text, read as the narrow forms below */
	if (!(s = srcfile_line(&l->sf, t->callsite.line))) {
		set_no_edit(c, f, "'%s' has no line %d now", t->callsite.file, t->callsite.line);
		return;
	}
	if (find_fn_call(s, fn->name, top_inputs(t), &open, &close) == 0)
		pick = pick_arg(s, args, split_args(s, (size_t)open, (size_t)close, args), argname, pos);
	if (pick < 0) {
		set_no_edit(c, f, "the call of %s at %s:%d is not one call with %s in it", fn->name,
			    t->callsite.file, t->callsite.line, argname);
		return;
	}
	strbuf_add(&e.after, s, args[pick].value);
	strbuf_addf(&e.after, "%s.%s(", tf, f->cause == CAUSE_PYTHON_VALUE ? "constant" : "cast");
	strbuf_add(&e.after, s + args[pick].value, args[pick].end - args[pick].value);
	strbuf_addf(&e.after, ", %s.%s)%s\n", tf, dtype, s + args[pick].end);
	store_line_edit(c, f, l, t->callsite.file, t->callsite.line, &e);
}

/* Identifiers of s[a..b) other than the allowed ones (keyword names excluded)? */
static int only_idents(const char *s, size_t a, size_t b, const char *const *allowed)
{
	for (size_t i = a; i < b;) {
		size_t n = 0, j;
		int ok = 0;

		if (s[i] == '"' || s[i] == '\'')
			return 0;
		if (!isalpha((unsigned char)s[i]) && s[i] != '_') {
			i++;
			continue;
		}
		if (i > a && (ident_char((unsigned char)s[i - 1]) || s[i - 1] == '.')) {
			while (i < b && ident_char((unsigned char)s[i]))
				i++;
			continue;
		}
		while (i + n < b && ident_char((unsigned char)s[i + n]))
			n++;
		j = i + n + strspn(s + i + n, " ");
		if (s[j] == '=' && s[j + 1] != '=')
			ok = 1;  /* keyword name */
		for (const char *const *p = allowed; !ok && *p; p++)
			ok = strlen(*p) == n && !strncmp(*p, s + i, n);
		if (!ok)
			return 0;
		i += n;
	}
	return 1;
}

/* The `... = tf.function(name...)` line at or above line `from`, in the same def; 0 when none. */
static long find_build_line(const struct loaded *l, long from, const char *want, const char *name)
{
	for (long n = from; n >= 1 && n > from - 50; n--) {
		const char *s = srcfile_line(&l->sf, n);

		if (!s)
			break;
		if (blank(s))
			continue;
		if (!strncmp(s + indent_of(s), "def ", 4))
			break;
		if (strstr(s, want) && strstr(s, name) && strchr(s, '='))
			return n;
	}
	return 0;
}

/* The `for`/`while` line that directly holds line n's block, or 0. */
static long enclosing_loop(const struct loaded *l, long n)
{
	size_t ind = indent_of(srcfile_line(&l->sf, n));

	while (--n >= 1) {
		const char *p = srcfile_line(&l->sf, n);

		if (blank(p) || indent_of(p) >= ind)
			continue;
		p += indent_of(p);
		return !strncmp(p, "for ", 4) || !strncmp(p, "while ", 6) ? n : 0;
	}
	return 0;
}

/* new-function-object: move `step = tf.function(f)` out of the loop that evaluates it. */
static void edit_hoist(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	const struct model_trace *t = first_retrace(fn, CAUSE_NEW_FUNCTION_OBJECT);
	struct edit e = { .after = STRBUF_INIT };
	char tf[64], want[80];
	const char *allowed[] = { fn->name, tf, "True", "False", "None", NULL };
	const struct loaded *l;
	long build, loop, close;
	const char *s, *open, *lp;

	if (!t) {
		set_no_edit(c, f, "the retrace is not known");
		return;
	}
	if (t->callsite.library_only || t->callsite.lib_file) {
		set_no_edit(c, f, "a library builds the tf.function of %s (%s:%d): call it less often, or keep what it builds",
			    fn->name, t->callsite.lib_file ? t->callsite.lib_file : t->callsite.file,
			    t->callsite.lib_line);
		return;
	}
	if (!(l = editable(c, f, t->callsite.file, tf, sizeof(tf))))
		return;
	snprintf(want, sizeof(want), "%s.function(", tf);
	if (!(build = find_build_line(l, t->callsite.line, want, fn->name))) {
		set_no_edit(c, f, "no `... = %s.function(%s)` line above the call at %s:%d", tf, fn->name,
			    t->callsite.file, t->callsite.line);
		return;
	}
	if (!(loop = enclosing_loop(l, build))) {
		set_no_edit(c, f, "the tf.function of %s is not built directly inside a loop", fn->name);
		return;
	}
	s = srcfile_line(&l->sf, build);
	open = strstr(s, want) + strlen(want) - 1;
	if ((close = match_close(open, 0)) < 0 || !only_idents(open, 1, (size_t)close, allowed)) {
		set_no_edit(c, f, "the arguments of %s.function at line %ld may depend on the loop", tf, build);
		return;
	}
	lp = srcfile_line(&l->sf, loop);
	strbuf_add(&e.after, lp, indent_of(lp));
	strbuf_addf(&e.after, "%s\n", s + indent_of(s));
	for (long n = loop; n < build; n++)
		strbuf_addf(&e.after, "%s\n", srcfile_line(&l->sf, n));
	e.file = t->callsite.file;
	e.line = loop;
	e.nlines = build - loop + 1;
	/* the line to change is where the object is made in the loop, not the call that traced it */
	if (f->loc.file && !strcmp(f->loc.file, t->callsite.file) && f->loc.line == t->callsite.line)
		f->loc.line = (int)build;
	store_edit(c, f, l, &e);
	strbuf_release(&e.after);
}

/* Whether s[0..n) is an identifier assigned at module level in l ("w = tf.Variable(...)"). */
static int module_global(const struct loaded *l, const char *s, size_t n)
{
	for (size_t i = 0; i < l->sf.nlines; i++) {
		const char *p = l->sf.lines[i];

		if (!strncmp(p, s, n) && !ident_char((unsigned char)p[n])) {
			p += n + strspn(p + n, " ");
			if (p[0] == '=' && p[1] != '=')
				return 1;
		}
	}
	return 0;
}

/* The module-level names the body lines from..to use: what a tf.function of it closes over. */
static void closed_over(const struct loaded *l, long from, long to, struct strbuf *out)
{
	for (long n = from; n <= to; n++) {
		const char *s = srcfile_line(&l->sf, n);

		for (size_t i = 0; s && s[i] && s[i] != '#';) {
			size_t k = 0;

			if (!isalpha((unsigned char)s[i]) && s[i] != '_') {
				i++;
				continue;
			}
			while (ident_char((unsigned char)s[i + k]))
				k++;
			if ((i == 0 || s[i - 1] != '.') && module_global(l, s + i, k)) {
				struct strbuf name = STRBUF_INIT;

				strbuf_add(&name, s + i, k);
				if (!out->buf || !strstr(out->buf, name.buf))
					strbuf_addf(out, "%s%s", out->len ? ", " : "", name.buf);
				strbuf_release(&name);
			}
			i += k;
		}
	}
}

/* Whether s holds name as an identifier (not an attribute, not part of a longer name) at or after from: its index, or -1. */
static long find_ident(const char *s, const char *name, size_t from)
{
	size_t n = strlen(name);

	for (const char *p = strstr(s + from, name); p; p = strstr(p + 1, name)) {
		size_t at = (size_t)(p - s);

		if ((at == 0 || (!ident_char((unsigned char)s[at - 1]) && s[at - 1] != '.')) &&
		    !ident_char((unsigned char)p[n]))
			return (long)at;
	}
	return -1;
}

static int count_triple_quotes(const char *s)
{
	int n = 0;

	for (const char *p = s; (p = strstr(p, "\"\"\"")); p += 3)
		n++;
	for (const char *p = s; (p = strstr(p, "'''")); p += 3)
		n++;
	return n;
}

/* Whether s[at] is inside a one-line string or after a comment's '#'. */
static int in_string_or_comment(const char *s, size_t at)
{
	char quote = 0;

	for (size_t i = 0; i < at; i++) {
		if (quote) {
			if (s[i] == '\\' && s[i + 1])
				i++;
			else if (s[i] == quote)
				quote = 0;
		} else if (s[i] == '"' || s[i] == '\'') {
			quote = s[i];
		} else if (s[i] == '#') {
			return 1;
		}
	}
	return quote != 0;
}

/*
 * Whether name is used in l only as calls whose every argument is a tensor
 * made on the spot (tf.constant(...), tf.convert_to_tensor(...)), or that
 * pass none (run_chain(): the def's defaults, the same at every call),
 * apart from its def at line def: then a tf.function of it sees one
 * signature per dtype and shape, never a Python number that would retrace
 * per value.
 */
static int called_with_tensors(const struct loaded *l, const char *name, const char *tf, long def)
{
	char want[2][96];
	int calls = 0;

	snprintf(want[0], sizeof(want[0]), "%s.constant(", tf);
	snprintf(want[1], sizeof(want[1]), "%s.convert_to_tensor(", tf);
	int doc = 0;

	for (long n = 1; n <= (long)l->sf.nlines; n++) {
		const char *s = srcfile_line(&l->sf, n);
		int triple = count_triple_quotes(s);

		/* docstrings and other triple-quoted text: a line in one, or opening or closing one, is no code */
		doc ^= triple & 1;
		if (doc || triple)
			continue;
		for (long at = 0; n != def && (at = find_ident(s, name, (size_t)at)) >= 0; at++) {
			if (in_string_or_comment(s, (size_t)at))
				continue;
			struct arg args[MAX_ARGS];
			size_t open = (size_t)at + strlen(name);
			long close = s[open] == '(' ? match_close(s, open) : -1;
			int na = close < 0 ? -1 : split_args(s, open, (size_t)close, args);

			if (na < 0)
				return 0;   /* passed around, or called over several lines */
			for (int i = 0; i < na; i++)
				if ((strncmp(s + args[i].value, want[0], strlen(want[0])) &&
				     strncmp(s + args[i].value, want[1], strlen(want[1]))) ||
				    match_close(s, args[i].value + strcspn(s + args[i].value, "(")) + 1 != (long)args[i].end)
					return 0;
			calls++;
		}
	}
	return calls > 0;
}

/*
 * Whether lines from..to do something a tf.function would run once, at
 * tracing, instead of per call, or that tracing cannot do (a tensor made a
 * Python number).  Text marks, not a parse: any doubt means no edit.
 */
static int python_side_effects(const struct loaded *l, long from, long to)
{
	/* side effects, and conversions of a tensor to a Python value, which a graph cannot do */
	/* a lambda is no mark: it runs nothing by itself, and its body is on these lines, scanned too */
	static const char *const marks[] = { "print(", "global ", "nonlocal ", "yield", ".append(", ".numpy(", "open(",
					     "time.", "random.", "np.", "input(", "logging.", ".write(", "del ",
					     "def ", "class ", "import ", "try:", "int(", "float(", "bool(",
					     "str(", ".item(", ".tolist(", NULL };

	for (long n = from; n <= to; n++) {
		const char *s = srcfile_line(&l->sf, n);

		for (const char *const *p = marks; s && *p; p++)
			if (strstr(s, *p))
				return 1;
	}
	return 0;
}

/* What the user must know before decorating func (def on line def): its arguments' kinds only when it takes any. */
static const char *wrap_condition(const struct loaded *l, const char *func, long def)
{
	struct param ps[MAX_ARGS];

	return def_params(srcfile_line(&l->sf, def), func, ps) == 0
		       ? "once you know that it has no Python side effects"
		       : "once you know that its arguments are tensors (a Python number retraces per value) and that it"
			 " has no Python side effects";
}

/*
 * eager-hotspot: @tf.function on the function holding the busiest line,
 * when that is safe to say from the file and the recording: a module-level
 * one-line def with plain parameters (or none) and no decorator, a body
 * without Python side effects, every call passing tensors made on the spot
 * or no arguments, and a forecast saving (saving.c) above zero.  Returns 0 when the edit is stored
 * (or, for a file changed since the recording, the reason there is none).
 */
static int edit_wrap(struct fixctx *c, struct finding *f, const char *func, long def, long end)
{
	struct param ps[MAX_ARGS];
	struct edit e = { .after = STRBUF_INIT };
	const struct loaded *l = load(c, f->loc.file);
	char tf[64];
	const char *dl;

	if (l && l->changed)
		return set_no_edit(c, f, "'%s' changed since the recording: decorate %s with @tf.function by hand, %s",
				   f->loc.file, func, wrap_condition(l, func, def)), 0;
	if ((f->forecasts ? f->forecast_ns : f->saving_ns) <= 0 || !l || !edit_path(c, l, f->loc.file) ||
	    !tf_alias(l, tf, sizeof(tf)))
		return -1;
	dl = srcfile_line(&l->sf, def);
	if (indent_of(dl) || (def > 1 && srcfile_line(&l->sf, def - 1)[0] == '@') ||
	    params_of(c, l, f->loc.file, def, func, ps) < 0 ||
	    python_side_effects(l, def + 1, end) || !called_with_tensors(l, func, tf, def))
		return -1;
	strbuf_addf(&e.after, "@%s.function\n%s\n", tf, dl);
	store_line_edit(c, f, l, f->loc.file, def, &e);
	return 0;
}

/* Column of the one "run_eagerly=True" / "run_functions_eagerly(True)" in s before a comment, else -1. */
static long eager_switch_at(const char *s, const char **which)
{
	static const char *const forms[] = { "run_eagerly=True", "run_eagerly = True", "run_functions_eagerly(True)" };
	size_t code = strcspn(s, "#");
	long at = -1;

	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		const char *hit = strstr(s, forms[i]);

		if (!hit || (size_t)(hit - s) >= code || (hit > s && ident_char((unsigned char)hit[-1])))
			continue;
		if (at >= 0 || strstr(hit + 1, forms[i]))
			return -2;  /* several: not one narrow form */
		at = (long)(strstr(hit, "True") - s);
		*which = forms[i];
	}
	return at;
}

/* The triple quotes (docstring delimiters) on a line. */
static int triple_quotes(const char *s)
{
	int n = 0;

	for (const char *p = s; (p = strpbrk(p, "\"'")); ) {
		if (p[1] == p[0] && p[2] == p[0]) {
			n++;
			p += 3;
		} else {
			p++;
		}
	}
	return n;
}

/* Whether the line calls one of the Keras methods that run_eagerly governs. */
static int calls_keras_loop(const char *s)
{
	static const char *const calls[] = { ".fit(", ".evaluate(", ".predict(", ".train_on_batch(",
					     ".test_on_batch(", ".predict_on_batch(" };

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		if (strstr(s, calls[i]))
			return 1;
	return 0;
}

/*
 * eager-hotspot whose eager ops run because eager execution was switched
 * on: tf.config.run_functions_eagerly(True) anywhere in the file, or
 * Keras's run_eagerly=True (compile or the attribute) when the busiest line
 * runs a Keras loop (fit, evaluate, ...).  The edit sets it to False: the
 * program's tf.functions (Keras's own train step) are graphs again.  0, or
 * -1 when the file has no single such switch.
 */
static int edit_eager_switch(struct fixctx *c, struct finding *f)
{
	const struct loaded *l = load(c, f->loc.file);
	const char *busiest = l ? srcfile_line(&l->sf, f->loc.line) : NULL, *which = NULL, *form = NULL;
	struct edit e = { .after = STRBUF_INIT };
	long line = 0, col = -1;
	char tf[64];

	if (!busiest || !edit_path(c, l, f->loc.file))
		return -1;
	for (long n = 1, in_doc = 0; srcfile_line(&l->sf, n); n++) {
		const char *s = srcfile_line(&l->sf, n);
		int quotes = triple_quotes(s);
		long at = in_doc || quotes ? -1 : eager_switch_at(s, &form);  /* a docstring's words are no code */

		in_doc ^= quotes & 1;
		if (at == -2 || (at >= 0 && line))
			return -1;
		if (at >= 0) {
			line = n;
			col = at;
			which = form;
		}
	}
	if (!line || (strstr(which, "run_eagerly") == which && !calls_keras_loop(busiest)) ||
	    (strstr(which, "functions") && !tf_alias(l, tf, sizeof(tf))))
		return -1;
	f->recommendation = strstr(which, "functions")
		? model_strf(c->m, "%s at line %ld makes every tf.function run op by op: remove it (or pass False) so that"
			     " they run as graphs again.", which, line)
		: model_strf(c->m, "%s at line %ld makes Keras run the model's steps op by op: set it to False (the default)"
			     " so that Keras runs each step as one graph call.", which, line);
	if (l->changed)
		return set_no_edit(c, f, "'%s' changed since the recording: set %s at line %ld to False by hand",
				   f->loc.file, which, line), 0;
	strbuf_add(&e.after, srcfile_line(&l->sf, line), (size_t)col);
	strbuf_addf(&e.after, "False%s\n", srcfile_line(&l->sf, line) + col + 4);
	store_line_edit(c, f, l, f->loc.file, line, &e);
	return 0;
}

/*
 * eager-hotspot: quote the function holding the busiest line, name it and
 * what it closes over.  No edit: whether its arguments are tensors (a
 * Python number would retrace per value) and whether it has Python side
 * effects is not in the recording, and for a few tiny ops a graph call can
 * cost more than the eager ops it replaces.
 */
static void eager_advice(struct fixctx *c, struct finding *f)
{
	const char *func = NULL;
	const struct loaded *l;
	struct strbuf code = STRBUF_INIT, vars = STRBUF_INIT;
	long def = 0, end;
	size_t ind;
	int by_facts;

	if (edit_eager_switch(c, f) == 0)
		return;
	for (size_t i = 0; i < c->m->nsites; i++)
		if (c->m->sites[i].loc.file && f->loc.file && !strcmp(c->m->sites[i].loc.file, f->loc.file) &&
		    c->m->sites[i].loc.line == f->loc.line)
			func = c->m->sites[i].func;
	/* the facts say what stands in the way: their advice, and the function quoted below */
	by_facts = facts_eager_advice(c->m, f, func);
	if (!func || !(l = load(c, f->loc.file)) || func[0] == '<') {
		if (!by_facts)
			set_no_edit(c, f, "the busiest line is not inside a function of its own: move the loop's body into a function and decorate it with @tf.function");
		return;
	}
	for (long n = f->loc.line; n >= 1; n--) {
		const char *s = srcfile_line(&l->sf, n);
		const char *p = s ? s + indent_of(s) : NULL;

		if (p && !strncmp(p, "def ", 4) && !strncmp(p + 4, func, strlen(func)) && p[4 + strlen(func)] == '(') {
			def = n;
			break;
		}
	}
	if (!def) {
		if (!by_facts)
			set_no_edit(c, f, "the def of %s is not found above line %d", func, f->loc.line);
		return;
	}
	ind = indent_of(srcfile_line(&l->sf, def));
	for (end = def + 1; srcfile_line(&l->sf, end + 1); end++) {
		const char *s = srcfile_line(&l->sf, end + 1);

		if (!blank(s) && indent_of(s) <= ind)
			break;
	}
	while (end > def + 1 && blank(srcfile_line(&l->sf, end)))
		end--;  /* the blank lines before the next statement are not the function's */
	quote_lines(&code, l, def, end < def + 15 ? end : def + 15);
	if (l->changed)
		strbuf_addstr(&code, "(the file changed since the recording: these are its lines now)\n");
	f->code = model_strdup(c->m, code.buf);
	closed_over(l, def + 1, end, &vars);
	if (by_facts)
		;
	else if (!strcmp(func, "main") || !strcmp(func, "run") || !strcmp(func, "train"))
		set_no_edit(c, f, "the busiest line is in %s (lines %ld-%ld), which holds the loop itself: move the loop's body into a function decorated with @tf.function%s%s",
			    func, def, end, vars.len ? "; it closes over " : "", vars.len ? vars.buf : "");
	else if (edit_wrap(c, f, func, def, end)) {
		set_no_edit(c, f, "decorate %s (lines %ld-%ld) with @tf.function, or the loop calling it, %s%s%s",
			    func, def, end, wrap_condition(l, func, def), vars.len ? "; it closes over " : "", vars.len ? vars.buf : "");
		/* the unit is the function holding the line, not a loop around it (there may be none) */
		f->recommendation = model_strf(c->m, "Decorate %s (lines %ld-%ld) with @tf.function, or put the loop"
					       " calling it in one: its ops then run as one graph call instead of one"
					       " Python dispatch each.", func, def, end);
	} else  /* the advice says what the edit does: the loop may be a library's (sample_chain's), not the user's */
		f->recommendation = model_strf(c->m, "Decorate %s (line %ld) with @tf.function: its ops then run as one graph"
					       " call instead of one Python dispatch each.", func, def);
	strbuf_release(&code);
	strbuf_release(&vars);
}

/* --- input-bound: parallel maps and a prefetch on the pipeline's own lines --- */

/*
 * s with num_parallel_calls=<tf>.data.AUTOTUNE added to its one
 * `.map(fn...)` call, into out; -1 when the line has no such call, several,
 * or one that already sets it.
 */
static int add_parallel_map(const char *s, const char *fn, const char *tf, struct strbuf *out)
{
	struct arg args[MAX_ARGS];
	long open, close = -1, pick = -1;
	int found = 0;

	for (long at = 0; (open = find_call(s, "map", (size_t)at)) >= 0; at = open + 1) {
		long cl = match_close(s, (size_t)open);
		int n = cl < 0 ? -1 : split_args(s, (size_t)open, (size_t)cl, args);

		if (n < 1 || open < 4 || s[open - 4] != '.')
			continue;
		if (args[0].end - args[0].start != strlen(fn) || strncmp(s + args[0].start, fn, strlen(fn)))
			continue;
		for (int i = 0; i < n; i++)
			if (s[args[i].start] == '*' || strstr(s + args[i].start, "num_parallel_calls") == s + args[i].start)
				return -1;
		found++;
		pick = open;
		close = cl;
	}
	if (found != 1 || s[close - 1] == ',')
		return -1;
	(void)pick;
	strbuf_add(out, s, (size_t)close);
	strbuf_addf(out, ", num_parallel_calls=%s.data.AUTOTUNE%s", tf, s + close);
	return 0;
}

/*
 * s with .prefetch(<tf>.data.AUTOTUNE) after its last `.method(...)` call,
 * into out, when nothing but a comment follows that call (the line ends the
 * pipeline's expression); -1 otherwise.
 */
static int add_prefetch(const char *s, const char *method, const char *tf, struct strbuf *out)
{
	size_t n = strlen(method);
	long open, close = -1;

	for (long at = 0; (open = find_call(s, method, (size_t)at)) >= 0; at = open + 1)
		if ((size_t)open > n && s[(size_t)open - n - 1] == '.' && match_close(s, (size_t)open) >= 0)
			close = match_close(s, (size_t)open);
	if (close < 0 || !blank(s + close + 1))
		return -1;
	strbuf_add(out, s, (size_t)close + 1);
	strbuf_addf(out, ".prefetch(%s.data.AUTOTUNE)%s", tf, s + close + 1);
	return 0;
}

/* The pipeline around f's line: the dataset ops its Python function built in its process, in order. */
struct pipeline {
	const struct model_dataset_op *ops[16];
	size_t n;
	int prefetch;
};

static int pipeline_of(const struct model *m, const struct finding *f, struct pipeline *p)
{
	const struct model_dataset_op *at = NULL;

	p->n = 0;
	p->prefetch = 0;
	for (size_t i = 0; i < m->ndatasets && !at; i++)
		if (m->datasets[i].loc.file && f->loc.file && !strcmp(m->datasets[i].loc.file, f->loc.file) &&
		    m->datasets[i].loc.line == f->loc.line && m->datasets[i].func)
			at = &m->datasets[i];
	for (size_t i = 0; at && i < m->ndatasets; i++) {
		const struct model_dataset_op *d = &m->datasets[i];

		if (d->pid != at->pid || !d->func || strcmp(d->func, at->func) || !d->loc.file || d->loc.line < 1 ||
		    strcmp(d->loc.file, at->loc.file) || (at->pipeline >= 0 && d->pipeline != at->pipeline))
			continue;
		if (p->n == sizeof(p->ops) / sizeof(p->ops[0]))
			return -1;
		p->ops[p->n++] = d;
		/* prefetched by the program, or by TensorFlow (inject_prefetch): another one does nothing */
		p->prefetch |= !strcmp(d->transformation, "prefetch") || d->prefetched;
	}
	return p->n ? 0 : -1;
}

static void take(struct strbuf *cur, struct strbuf *next)
{
	strbuf_release(cur);
	*cur = *next;
	strbuf_init(next);
}

/* Line n of l as the pipeline edit leaves it, into out: 1 when changed. */
static int pipeline_line(const struct loaded *l, long n, const struct pipeline *p, const char *tf, struct strbuf *out)
{
	struct strbuf cur = STRBUF_INIT, next = STRBUF_INIT;
	const struct model_dataset_op *last = p->ops[p->n - 1];
	int changed = 0;

	strbuf_addstr(&cur, srcfile_line(&l->sf, n));
	if (!cur.buf)
		goto done;
	for (size_t i = 0; i < p->n; i++) {
		const struct model_dataset_op *d = p->ops[i];

		/* a Python black box holds the GIL: parallel calls do not help it, and may reorder its side effects */
		if (d->loc.line != n || strcmp(d->transformation, "map") || d->parallel || !d->function ||
		    d->blackbox_execs || add_parallel_map(cur.buf, d->function, tf, &next))
			continue;
		take(&cur, &next);
		changed = 1;
	}
	if (!p->prefetch && last->loc.line == n && !add_prefetch(cur.buf, last->transformation, tf, &next)) {
		take(&cur, &next);
		changed = 1;
	}
done:
	strbuf_addf(out, "%s\n", cur.buf ? cur.buf : "");
	strbuf_release(&cur);
	strbuf_release(&next);
	return changed;
}

/*
 * input-bound: num_parallel_calls=tf.data.AUTOTUNE on the pipeline's
 * sequential maps (not those running a py_function) and a prefetch after its
 * last transformation.  Neither changes the elements or their order
 * (tf.data keeps a parallel map deterministic unless told otherwise).
 */
static void edit_pipeline(struct fixctx *c, struct finding *f)
{
	struct pipeline p;
	struct edit e = { .after = STRBUF_INIT };
	struct strbuf lines[21];
	const struct loaded *l;
	char tf[64];
	long from = 0, to = 0, first = 0, last = 0;

	if (pipeline_of(c->m, f, &p)) {
		set_no_edit(c, f, "the lines that built the pipeline are not known");
		return;
	}
	if (!(l = editable(c, f, p.ops[0]->loc.file, tf, sizeof(tf))))
		return;
	for (size_t i = 0; i < p.n; i++) {
		from = !from || p.ops[i]->loc.line < from ? p.ops[i]->loc.line : from;
		to = p.ops[i]->loc.line > to ? p.ops[i]->loc.line : to;
	}
	if (to - from >= (long)(sizeof(lines) / sizeof(lines[0])) || !srcfile_line(&l->sf, to)) {
		set_no_edit(c, f, "the pipeline's lines %ld-%ld are not one short block", from, to);
		return;
	}
	/* the hunk: from the first changed line to the last */
	for (long n = from; n <= to; n++) {
		strbuf_init(&lines[n - from]);
		if (pipeline_line(l, n, &p, tf, &lines[n - from])) {
			first = first ? first : n;
			last = n;
		}
	}
	for (long n = first; first && n <= last; n++)
		strbuf_add(&e.after, lines[n - from].buf, lines[n - from].len);
	for (long n = from; n <= to; n++)
		strbuf_release(&lines[n - from]);
	if (!first && p.prefetch) {
		set_no_edit(c, f, "the pipeline is prefetched already (by the program or by TensorFlow's inject_prefetch)"
			    " and has no sequential map agprof can make parallel safely");
	} else if (!first) {
		set_no_edit(c, f, "the pipeline's lines %ld-%ld have no sequential map or last call agprof can edit safely"
			    " (a py_function in the map, a call spanning lines, code after it)", from, to);
	} else {
		e.file = p.ops[0]->loc.file;
		e.line = first;
		e.nlines = last - first + 1;
		store_edit(c, f, l, &e);
	}
	strbuf_release(&e.after);
}

/* The lines a finding is about, quoted: its line (the retraced call, the def, ...), else its function's def. */
static void add_code(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	struct strbuf sb = STRBUF_INIT;
	const struct loaded *l;
	int at_loc = f->loc.file && f->loc.line > 0 && !f->loc.library_only;
	const char *file = at_loc ? f->loc.file : fn && fn->def.file ? fn->def.file : NULL;
	long line = at_loc ? f->loc.line : fn ? fn->def.line : 0;

	if (f->fix.file || f->code || !file || line <= 0)
		return;
	if (!(l = load(c, file))) {
		set_no_edit(c, f, "the source '%s' cannot be read now", shown(c, file));
		return;
	}
	quote_lines(&sb, l, line > 1 ? line - 1 : line, line + 1);
	if (l->changed)
		strbuf_addstr(&sb, "(the file changed since the recording: these are its lines now)\n");
	f->code = model_strdup(c->m, sb.buf);
	strbuf_release(&sb);
}

/*
 * The advice in words of the fixes that need a decision the recording
 * cannot make (pad-shapes, build-once, py-function-body), and of the others
 * with no edit.
 */
static void fix_pad_shapes(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	set_no_edit(c, f, "an input_signature with None dimensions (the retracing finding's edit) removes the"
		    " retraces but not the compilations: XLA compiles %s once per concrete input shape."
		    " Pad or bucket its inputs to a few fixed shapes where they are made, or drop jit_compile=True;"
		    " which one keeps the results right is not in the recording",
		    fn ? fn->name : f->function ? f->function : "the function");
}

static void fix_build_once(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	set_no_edit(c, f, "%s creates its variables at the first trace of each new tf.function object%s:"
		    " build the object that owns it once, outside the loop, or create the variables in __init__."
		    " Whether the loop means to start from fresh variables each time is not in the recording",
		    fn ? fn->name : f->function ? f->function : "the function",
		    f->cause == CAUSE_NEW_FUNCTION_OBJECT ? " (a new object per call)" : "");
}

static void fix_py_function(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	if (f->function && !strcmp(f->function, "generator_next_fn"))  /* tf.data's from_generator body */
		set_no_edit(c, f, "from_generator calls the Python generator for every element, under the GIL: when the"
			    " elements fit in memory, build the dataset from tensors instead (tf.data.Dataset."
			    "from_tensor_slices, with tf.ragged.constant for sequences of different lengths); else keep"
			    " the generator light and let prefetch overlap it with the step. Which one fits the data"
			    " is not in the recording");
	else
		set_no_edit(c, f, "the body of a py_function is Python that TensorFlow runs under the GIL, one call at"
			    " a time: rewrite it with TensorFlow ops (or move it out of %s); no mechanical edit keeps"
			    " what it computes", fn ? fn->name : f->function ? f->function : "the function");
}

static void fix_see_retracing(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	(void)fn;
	set_no_edit(c, f, "the edits are in the retracing findings of the functions that retrace");
}

static void fix_none(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	(void)fn;
	set_no_edit(c, f, "no edit is written for %s: the fix depends on code agprof did not record", f->rule);
}

/* jit-compile: only where the graph ops model advises XLA for the function (its remedy is jit). */
static void fix_jit_compile(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	const struct graph_ops_model *g = graph_ops_model(c->m);
	const char *remedy = NULL;

	for (size_t i = 0; g && i < g->nfns && !remedy; i++)
		if (g->fns[i].function_id == fn->id)
			remedy = graph_fn_remedy(c->m, &g->fns[i]);
	if (!remedy || strcmp(remedy, "jit"))
		set_no_edit(c, f, "the advice for %s is not jit_compile=True", fn->name);
	else
		edit_jit(c, f, fn);
}

/* retrace: the edit follows the cause of the function's retraces. */
static void fix_retrace(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	switch (f->cause) {
	case CAUSE_SHAPE:
		edit_signature(c, f, fn);
		break;
	case CAUSE_PYTHON_VALUE:
	case CAUSE_DTYPE:
		edit_call_arg(c, f, fn);
		break;
	case CAUSE_NEW_FUNCTION_OBJECT:
		edit_hoist(c, f, fn);
		break;
	case CAUSE_UNKNOWN:
		set_no_edit(c, f, "the cause of the retraces is unknown");
		break;
	default:
		set_no_edit(c, f, "a %s retrace has no edit agprof can write safely", retrace_cause_name(f->cause));
		break;
	}
}

static void fix_eager_loop(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	(void)fn;
	eager_advice(c, f);
}

static void fix_input_pipeline(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	(void)fn;
	edit_pipeline(c, f);
}

/*
 * The edit builders a rule names with `fix:` (rule_advice.h).  needs_function:
 * without the finding's function, none is written (fix_none).  after_saving:
 * the edit is offered only for a positive saving, so the saving comes first.
 * drop_unsaved: an edit that saves nothing (what it adds back costs as much
 * as it removes) is taken back.
 */
static const struct {
	void (*build)(struct fixctx *c, struct finding *f, const struct model_function *fn);
	unsigned needs_function : 1, after_saving : 1, drop_unsaved : 1;
} builders[] = {
	[FIX_NONE] = { fix_none, 0, 0, 0 },
	[FIX_RETRACE] = { fix_retrace, 1, 0, 1 },
	[FIX_EAGER_LOOP] = { fix_eager_loop, 0, 1, 0 },
	[FIX_INPUT_PIPELINE] = { fix_input_pipeline, 0, 0, 0 },
	[FIX_SEE_RETRACING] = { fix_see_retracing, 0, 0, 0 },
	[FIX_PAD_SHAPES] = { fix_pad_shapes, 0, 0, 0 },
	[FIX_BUILD_ONCE] = { fix_build_once, 0, 0, 0 },
	[FIX_PY_FUNCTION] = { fix_py_function, 0, 0, 0 },
	[FIX_JIT_COMPILE] = { fix_jit_compile, 1, 0, 0 },
};
_Static_assert(sizeof(builders) / sizeof(builders[0]) == FIX_NKINDS, "a fix kind without its builder");

static int fix_kind_of(const struct finding *f)
{
	return f->fix_kind >= 0 && f->fix_kind < FIX_NKINDS ? f->fix_kind : FIX_NONE;
}

static void annotate(struct fixctx *c, struct finding *f)
{
	const struct model_function *fn = model_finding_function(c->m, f);
	int kind = fix_kind_of(f);

	memset(&f->fix, 0, sizeof(f->fix));
	f->code = f->no_edit = NULL;
	if (builders[kind].needs_function && !fn)
		kind = FIX_NONE;
	builders[kind].build(c, f, fn);
	if (f->fix.file)
		f->no_edit = NULL;
	add_code(c, f, fn);
}

void fix_annotate(struct model *m)
{
	struct fixctx c = { .m = m, .cwd = m->session.cwd };

	for (size_t i = 0; i < m->nfindings; i++) {
		struct finding *f = &m->findings[i];

		/* user rules' examples stay theirs; built-in rules carry none.  A shape retrace's
		 * saving depends on the edit (signature or not), so most edits come first */
		if (builders[fix_kind_of(f)].after_saving) {
			saving_estimate(m, f);
			annotate(&c, f);
		} else {
			annotate(&c, f);
			saving_estimate(m, f);
			if (f->fix.file && f->saving_ns <= 0 && builders[fix_kind_of(f)].drop_unsaved) {
				memset(&f->fix, 0, sizeof(f->fix));
				set_no_edit(&c, f, "the edit saves nothing measurable (%s)", f->saving_method);
			}
		}
		model_bound_finding(m, f);
	}
	for (size_t i = 0; i < c.nfiles; i++)
		srcfile_release(&c.files[i].sf);
	model_sort_findings(m);
}

/* --- output --- */

static void hunk_lines(struct strbuf *out, char mark, const char *text)
{
	for (const char *p = text; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		strbuf_addch(out, mark);
		strbuf_add(out, p, len);
		strbuf_addch(out, '\n');
		p = nl ? nl + 1 : p + len;
	}
}

static int count_lines(const char *text)
{
	int n = 0;

	for (const char *p = text; p && *p; p++)
		n += *p == '\n';
	return n;
}

int fix_diff(struct strbuf *out, const struct model *m, const struct finding *f, int header)
{
	struct srcfile sf;
	long from, to, ctx_before, ctx_after;

	if (!f->fix.file)
		return -1;
	if (f->fix.cell) {  /* no file to patch: the corrected cell, to run in its place */
		strbuf_addf(out, "# %s, line %d (a notebook cell, no file to patch): run this corrected cell in its place\n%s%s"
			    "# end of %s\n", f->fix.cell, f->fix.cell_line, f->fix.cell_after,
			    count_lines(f->fix.cell_after) && f->fix.cell_after[strlen(f->fix.cell_after) - 1] == '\n'
				    ? "" : "\n", f->fix.cell);
		return 0;
	}
	/* 3 lines of context, as diff -u: git apply wants them */
	if (srcfile_load(&sf, f->fix.file, m->session.cwd))
		memset(&sf, 0, sizeof(sf));
	from = f->fix.line - DIFF_CONTEXT < 1 ? 1 : f->fix.line - DIFF_CONTEXT;
	to = f->fix.line + f->fix.nlines - 1 + DIFF_CONTEXT;
	if (to > (long)sf.nlines)
		to = (long)sf.nlines;
	ctx_before = sf.nlines ? f->fix.line - from : 0;
	ctx_after = sf.nlines && to >= f->fix.line + f->fix.nlines ? to - (f->fix.line + f->fix.nlines - 1) : 0;
	if (header)
		strbuf_addf(out, "--- a/%s\n+++ b/%s\n", f->fix.file, f->fix.file);
	strbuf_addf(out, "@@ -%ld,%ld +%ld,%ld @@ %s%s%s\n", f->fix.line - ctx_before,
		    f->fix.nlines + ctx_before + ctx_after, f->fix.line - ctx_before,
		    count_lines(f->fix.after) + ctx_before + ctx_after, f->rule, f->cause ? " " : "",
		    f->cause ? retrace_cause_name(f->cause) : "");
	for (long n = f->fix.line - ctx_before; n < f->fix.line; n++)
		strbuf_addf(out, " %s\n", srcfile_line(&sf, n));
	hunk_lines(out, '-', f->fix.before);
	hunk_lines(out, '+', f->fix.after);
	for (long n = f->fix.line + f->fix.nlines; n < f->fix.line + f->fix.nlines + ctx_after; n++)
		strbuf_addf(out, " %s\n", srcfile_line(&sf, n));
	srcfile_release(&sf);
	return 0;
}

void fix_json_members(struct json *j, const struct finding *f)
{
	json_kv_int(j, "saving_ns", f->saving_ns);
	json_key(j, "forecast_ns");
	if (f->forecasts)
		json_int(j, f->forecast_ns);
	else
		json_null(j);
	json_kv_str(j, "saving_method", f->saving_method);
	json_kv_str(j, "saving_summary", f->saving_summary);
	json_key(j, "fix");
	if (!f->fix.file) {
		json_null(j);
	} else {
		json_begin_object(j);
		json_kv_str(j, "file", f->fix.file);
		json_kv_int(j, "line", f->fix.line);
		json_kv_int(j, "lines", f->fix.nlines);
		json_kv_str(j, "before", f->fix.before);
		json_kv_str(j, "after", f->fix.after);
		json_kv_str(j, "cell", f->fix.cell);
		json_kv_int(j, "cell_line", f->fix.cell ? f->fix.cell_line : 0);
		json_kv_str(j, "cell_after", f->fix.cell_after);
		json_end_object(j);
	}
	json_kv_str(j, "code", f->code);
	json_kv_str(j, "no_edit", f->no_edit);
	json_kv_str(j, "experiment", f->experiment);
	json_key(j, "verdict");
	verdict_json(j, &f->verdict);
}

/* SARIF 2.1.0 "fixes": the edit as one replacement of whole lines. */
void fix_sarif_fixes(struct json *j, const struct finding *f)
{
	if (!f->fix.file || f->fix.cell)  /* a notebook cell is no artifact SARIF can name */
		return;
	json_key(j, "fixes");
	json_begin_array(j, 0);
	json_begin_object(j);
	json_key(j, "description");
	json_begin_object(j);
	json_kv_str(j, "text", f->recommendation ? f->recommendation : f->rule);
	json_end_object(j);
	json_key(j, "artifactChanges");
	json_begin_array(j, 0);
	json_begin_object(j);
	json_key(j, "artifactLocation");
	json_begin_object(j);
	json_kv_str(j, "uri", f->fix.file);
	json_kv_str(j, "uriBaseId", "SRCROOT");
	json_end_object(j);
	json_key(j, "replacements");
	json_begin_array(j, 0);
	json_begin_object(j);
	json_key(j, "deletedRegion");
	json_begin_object(j);
	json_kv_int(j, "startLine", f->fix.line);
	json_kv_int(j, "startColumn", 1);
	json_kv_int(j, "endLine", f->fix.line + f->fix.nlines);
	json_kv_int(j, "endColumn", 1);
	json_end_object(j);
	json_key(j, "insertedContent");
	json_begin_object(j);
	json_kv_str(j, "text", f->fix.after);
	json_end_object(j);
	json_end_object(j);
	json_end_array(j);
	json_end_object(j);
	json_end_array(j);
	json_end_object(j);
	json_end_array(j);
}
