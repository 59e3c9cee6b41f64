/*
 * fix_files.c - the files the fix engine edits (fix_edit.h): read once per
 * annotation (a notebook cell from the recording), checked (unchanged since
 * the recording, under its working directory, importing TensorFlow), and
 * the edit stored on the finding, spliced at the parser's positions.
 */
#include "fix_edit.h"
#include "model_internal.h"
#include "recording.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A cell's code: its text from line first_line on (what the file name was compiled from). */
static int cell_code(struct srcfile *sf, const struct model_cell *cell)
{
	const char *p = cell->source;

	for (int n = 1; n < cell->first_line && p; n++)
		p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
	return srcfile_from_text(sf, p ? p : "", p ? strlen(p) : 0);
}

/* The file as it is now, or the notebook cell the recording keeps (cached); NULL when it cannot be read. */
struct loaded *fix_load(struct fixctx *c, const char *path)
{
	const struct model_cell *cell = model_cell(c->m, path);
	struct loaded *l;
	char hash[17];

	if (!path || (path[0] == '<' && !cell))
		return NULL;
	for (size_t i = 0; i < c->nfiles; i++)
		if (!strcmp(c->files[i].path, path))
			return c->files[i].ok ? &c->files[i] : NULL;
	if (c->nfiles == FIX_MAX_FILES)
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
const char *fix_edit_path(const struct fixctx *c, const struct loaded *l, const char *path)
{
	return l && l->cell ? path : under_cwd(c->cwd, path);
}

/* "  12 | code\n" for lines from..to of l (a cell's lines numbered as the cell's). */
void fix_quote_lines(struct strbuf *sb, const struct loaded *l, long from, long to)
{
	for (long n = from; n <= to; n++) {
		const char *s = srcfile_line(&l->sf, n);

		if (s)
			strbuf_addf(sb, "%5ld | %s\n", n + (l->cell ? l->cell->first_line - 1 : 0), s);
	}
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
		while ((n = text_ident_len(s)) && s[n] == '.')
			s += n + 1;  /* a dotted module: its last part */
		s += text_ident_len(s);
		n = (size_t)(s - mod);
		alias = mod;
		an = n;
		s += strspn(s, " \t");
		if (!strncmp(s, "as", 2) && (s[2] == ' ' || s[2] == '\t')) {
			s += 2 + strspn(s + 2, " \t");
			alias = s;
			an = text_ident_len(s);
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

/*
 * The module name TensorFlow is imported as in l ("tf"), or NULL: from the
 * parser's bind facts; a file without them (legacy) from its `import`
 * lines, a cell from its own, else from the notebook's other cells.
 */
const char *fix_tf_alias(const struct loaded *l, char *buf, size_t cap)
{
	const char *alias;

	if (!l->cell && facts_version(l->m, l->path) == FACTS_VERSION) {
		if (!(alias = facts_tf_alias(l->m, l->path)) || strlen(alias) >= cap)
			return NULL;
		return strcpy(buf, alias);
	}
	alias = tf_alias_in(&l->sf, buf, cap);

	for (size_t i = 0; !alias && l->cell && i < l->m->ncells; i++) {
		struct srcfile sf;

		if (cell_code(&sf, &l->m->cells[i]))
			continue;
		alias = tf_alias_in(&sf, buf, cap);
		srcfile_release(&sf);
	}
	return alias;
}

void fix_no_edit(struct fixctx *c, struct finding *f, const char *fmt, ...)
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
int fix_store_edit(struct fixctx *c, struct finding *f, const struct loaded *l, struct edit *e)
{
	struct strbuf before = STRBUF_INIT;

	for (long n = e->line; n < e->line + e->nlines; n++) {
		strbuf_addstr(&before, srcfile_line(&l->sf, n));
		strbuf_addch(&before, '\n');
	}
	f->fix.file = model_strdup(c->m, fix_edit_path(c, l, e->file));
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
void fix_store_line_edit(struct fixctx *c, struct finding *f, const struct loaded *l, const char *file, long line,
			    struct edit *e)
{
	e->file = file;
	e->line = line;
	e->nlines = 1;
	fix_store_edit(c, f, l, e);
	strbuf_release(&e->after);
}

/* Whether the parser's position facts hold for l's file: else the edits read its text. */
int fix_positions(const struct fixctx *c, const struct loaded *l, const char *file)
{
	return !l->cell && facts_positions_known(c->m, file);
}

enum fix_reader fix_reader(const struct fixctx *c, const struct loaded *l, const char *file)
{
	int v = l->cell ? 0 : facts_version(c->m, file);

	return v == FACTS_VERSION ? FIX_FACTS : v ? FIX_OLD_FACTS : FIX_LEGACY_TEXT;
}

void fix_old_facts(struct fixctx *c, struct finding *f, const char *file, const char *what)
{
	fix_no_edit(c, f, "the recording's code facts of '%s' predate the %s this edit is placed with (an older"
		    " agprof, or a file too large to read whole): record the run again for the edit", fix_shown(c, file),
		    what);
}

/*
 * Whether span lies in l's lines as they are: both lines exist and each
 * column is within its line (the facts are untrusted: a column past its
 * line's end means no edit, never a read past it).
 */
int fix_span_in(const struct loaded *l, const struct code_span *sp)
{
	const char *a = srcfile_line(&l->sf, sp->line), *b = srcfile_line(&l->sf, sp->end_line);

	return a && b && sp->col >= 0 && sp->end_col >= 0 && (size_t)sp->col <= strlen(a) &&
	       (size_t)sp->end_col <= strlen(b) && (sp->line < sp->end_line || (sp->line == sp->end_line &&
										 sp->col <= sp->end_col));
}

/* The source text of span (checked by span_in), its lines joined by '\n', appended to sb. */
void fix_span_text(const struct loaded *l, const struct code_span *sp, struct strbuf *sb)
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
void fix_splice(const struct loaded *l, const struct code_span *sp, const char *text, struct edit *e)
{
	const char *first = srcfile_line(&l->sf, sp->line), *last = srcfile_line(&l->sf, sp->end_line);

	strbuf_add(&e->after, first, (size_t)sp->col);
	strbuf_addstr(&e->after, text);
	strbuf_addf(&e->after, "%s\n", last + sp->end_col);
	e->line = sp->line;
	e->nlines = sp->end_line - sp->line + 1;
}

/* How a reason names file: a notebook cell by its label ("In [3]"). */
const char *fix_shown(const struct fixctx *c, const char *file)
{
	const struct model_cell *cell = model_cell(c->m, file);

	return cell ? cell->label : file;
}

/* Checks shared by every edit of file: readable, unchanged, under cwd, TensorFlow imported. */
const struct loaded *fix_editable(struct fixctx *c, struct finding *f, const char *file, char *alias, size_t cap)
{
	const struct loaded *l = fix_load(c, file);

	if (!file)
		return fix_no_edit(c, f, "the source line is not known"), NULL;
	if (!l)
		return fix_no_edit(c, f, "'%s' cannot be read now", fix_shown(c, file)), NULL;
	if (l->changed)
		return fix_no_edit(c, f, "'%s' changed since the recording", fix_shown(c, file)), NULL;
	if (!fix_edit_path(c, l, file))
		return fix_no_edit(c, f, "'%s' is outside the recording's working directory", fix_shown(c, file)), NULL;
	if (!fix_tf_alias(l, alias, cap))
		return fix_no_edit(c, f, "'%s' does not `import tensorflow` at the top level", fix_shown(c, file)), NULL;
	return l;
}

