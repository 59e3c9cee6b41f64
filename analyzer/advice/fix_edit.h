/*
 * fix_edit.h - private to the fix engine (analyzer/advice/fix*.c): the
 * files an edit reads, the edit being written, and the helpers every edit
 * kind shares.  fix.c picks the builder by the rule's fix kind; each edit
 * kind has its own file (fix_signature.c, fix_call_arg.c, fix_hoist.c,
 * fix_wrap.c, fix_eager_switch.c, fix_pipeline.c), fix_files.c reads and
 * stores, fix_output.c prints, and fix_lines.c is the legacy line reader
 * for files the parser's facts do not cover.
 */
#ifndef AGPROF_FIX_EDIT_H
#define AGPROF_FIX_EDIT_H

#include "code_facts.h"
#include "fix_facts.h"
#include "model.h"
#include "srcfile.h"
#include "strbuf.h"

#include <stddef.h>

#define FIX_MAX_FILES 16
#define FIX_MAX_ARGS 32

/* A source file as an edit reads it, cached for the whole annotation. */
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
	struct loaded files[FIX_MAX_FILES];
	size_t nfiles;
};

/* An edit being written: lines line..line+nlines-1 of file replaced by after. */
struct edit {
	const char *file;       /* recorded path */
	long line, nlines;
	struct strbuf after;
	int pins_signature;     /* finding_fix.pins_signature */
};

/* A parameter's name (fix_params_of). */
struct fix_param {
	char name[64];
};

/* ---- fix_files.c: reading the files, storing the edit ---------------------- */

/* The file as it is now, or the notebook cell the recording keeps (cached); NULL when it cannot be read. */
struct loaded *fix_load(struct fixctx *c, const char *path);
/* The path an edit of l names: a cell's own, else relative to cwd (NULL when not under it). */
const char *fix_edit_path(const struct fixctx *c, const struct loaded *l, const char *path);
/* How a reason names file: a notebook cell by its label ("In [3]"). */
const char *fix_shown(const struct fixctx *c, const char *file);
/* "  12 | code\n" for lines from..to of l (a cell's lines numbered as the cell's). */
void fix_quote_lines(struct strbuf *sb, const struct loaded *l, long from, long to);
/* The module name TensorFlow is imported as in l ("tf") into buf, or NULL. */
const char *fix_tf_alias(const struct loaded *l, char *buf, size_t cap);
/* Checks shared by every edit of file: readable, unchanged, under cwd, TensorFlow imported (its name into alias). */
const struct loaded *fix_editable(struct fixctx *c, struct finding *f, const char *file, char *alias, size_t cap);
/* f's no_edit: why there is no edit. */
void fix_no_edit(struct fixctx *c, struct finding *f, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Store e as f's edit (before = the file's lines now); returns 0. */
int fix_store_edit(struct fixctx *c, struct finding *f, const struct loaded *l, struct edit *e);
/* Store e, an edit of the one line `line` of file, and free its text. */
void fix_store_line_edit(struct fixctx *c, struct finding *f, const struct loaded *l, const char *file, long line,
			 struct edit *e);

/* Whether the parser's position facts hold for l's file: else the edits read its text. */
int fix_positions(const struct fixctx *c, const struct loaded *l, const char *file);
/*
 * Which reader an edit of l's file uses: FIX_FACTS (the parser's facts of
 * this agprof, facts_version() == FACTS_VERSION), FIX_OLD_FACTS (facts of
 * a recording made before the ones the edit needs: no edit, with the
 * reason fix_old_facts() gives), or FIX_LEGACY_TEXT (no facts at all: a
 * recording made before them, a file that did not parse, a notebook cell).
 */
enum fix_reader { FIX_LEGACY_TEXT, FIX_OLD_FACTS, FIX_FACTS };
enum fix_reader fix_reader(const struct fixctx *c, const struct loaded *l, const char *file);
/* f's no_edit for FIX_OLD_FACTS: the facts of file lack what (the kinds the edit needs); a new recording has them. */
void fix_old_facts(struct fixctx *c, struct finding *f, const char *file, const char *what);

/* Whether span lies in l's lines as they are (the facts are untrusted). */
int fix_span_in(const struct loaded *l, const struct code_span *sp);
/* The source text of span (checked by fix_span_in), its lines joined by '\n', appended to sb. */
void fix_span_text(const struct loaded *l, const struct code_span *sp, struct strbuf *sb);
/* e: the lines of span (checked by fix_span_in) with the span's text replaced by text. */
void fix_splice(const struct loaded *l, const struct code_span *sp, const char *text, struct edit *e);

/* ---- fix.c ------------------------------------------------------------------ */

/* The first retrace of fn with cause (not a follow-up). */
const struct model_trace *fix_first_retrace(const struct model_function *fn, enum retrace_cause cause);

/* ---- the edit kinds ----------------------------------------------------------- */

/* fix_signature.c: retracing by shape (input_signature, reduce_retracing); jit_compile=True. */
void fix_edit_signature(struct fixctx *c, struct finding *f, const struct model_function *fn);
void fix_edit_jit(struct fixctx *c, struct finding *f, const struct model_function *fn);
/*
 * The parameters of the def of name at line def, self or cls first left
 * out, into ps[0..FIX_MAX_ARGS): their count, -1 when refused (*args,
 * **kw, keyword-only ones, or a def the reader cannot see).
 */
int fix_params_of(const struct fixctx *c, const struct loaded *l, const char *file, long def, const char *name,
		  struct fix_param *ps);
/* fix_call_arg.c: python-value / dtype retraces: the argument wrapped at the call. */
void fix_edit_call_arg(struct fixctx *c, struct finding *f, const struct model_function *fn);
/* fix_hoist.c: new-function-object: the tf.function built once, above the loop. */
void fix_edit_hoist(struct fixctx *c, struct finding *f, const struct model_function *fn);
/* fix_wrap.c: eager-hotspot: the switch, @tf.function on the function, or the advice in words. */
void fix_eager_advice(struct fixctx *c, struct finding *f);
/* fix_model_wrap.c: eager-hotspot's model call alone in a graph (`N_fn = tf.function(N)`): 0 with the edit, else -1. */
int fix_model_wrap(struct fixctx *c, struct finding *f, const struct code_fact *call);
/* fix_eager_switch.c: eager execution switched on (run_functions_eagerly, run_eagerly): 0 with the edit, else -1. */
int fix_eager_switch(struct fixctx *c, struct finding *f);
/* fix_pipeline.c: input-bound: parallel maps and a prefetch. */
void fix_edit_pipeline(struct fixctx *c, struct finding *f);

/* ---- fix_lines.c: the legacy line reader ---------------------------------------- */
/*
 * For files without the parser's facts only (a recording made before them,
 * a file that did not parse, a notebook cell): one Python line read as
 * text.  Each edit that uses it recognises one narrow form of line and
 * gives up on anything else.
 */
size_t text_indent(const char *s);
int text_blank(const char *s);                  /* empty, or only a comment */
size_t text_ident_len(const char *s);
int text_ident_char(int ch);
/* Index of the bracket closing the one at open, or -1 (strings are skipped). */
long text_match_close(const char *s, size_t open);

struct text_arg {
	size_t start, end;      /* the argument's text, trimmed */
	size_t kw_len;          /* length of "name" in "name=value", 0 when positional */
	size_t value;           /* where the value starts */
};

/* Split the arguments between s[open] '(' and s[close] ')'. Returns their number, -1 when too many. */
int text_split_args(const char *s, size_t open, size_t close, struct text_arg *args);
/* Position of the first "name(" call in s at or after from whose callee is name (after '.' or a non-identifier). */
long text_find_call(const char *s, const char *name, size_t from);

#endif
