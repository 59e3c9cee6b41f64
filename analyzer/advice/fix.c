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
 *
 * This file picks the builder by the rule's fix kind (builders[]) and runs
 * them; each edit kind lives in its own file (fix_edit.h).
 */
#include "fix.h"
#include "fix_edit.h"
#include "graph_ops.h"
#include "model_internal.h"
#include "rule_advice.h"

#include <string.h>

/* The first retrace of fn with cause (not a follow-up). */
const struct model_trace *fix_first_retrace(const struct model_function *fn, enum retrace_cause cause)
{
	for (size_t i = 1; i < fn->ntraces; i++)
		if (fn->traces[i].why.cause == cause && !fn->traces[i].why.followup)
			return &fn->traces[i];
	return NULL;
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
	if (!(l = fix_load(c, file))) {
		fix_no_edit(c, f, "the source '%s' cannot be read now", fix_shown(c, file));
		return;
	}
	fix_quote_lines(&sb, l, line > 1 ? line - 1 : line, line + 1);
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
	fix_no_edit(c, f, "an input_signature with None dimensions (the retracing finding's edit) removes the"
		    " retraces but not the compilations: XLA compiles %s once per concrete input shape."
		    " Pad or bucket its inputs to a few fixed shapes where they are made, or drop jit_compile=True;"
		    " which one keeps the results right is not in the recording",
		    fn ? fn->name : f->function ? f->function : "the function");
}

static void fix_build_once(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	fix_no_edit(c, f, "%s creates its variables at the first trace of each new tf.function object%s:"
		    " build the object that owns it once, outside the loop, or create the variables in __init__."
		    " Whether the loop means to start from fresh variables each time is not in the recording",
		    fn ? fn->name : f->function ? f->function : "the function",
		    f->cause == CAUSE_NEW_FUNCTION_OBJECT ? " (a new object per call)" : "");
}

static void fix_py_function(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	if (f->function && !strcmp(f->function, "generator_next_fn"))  /* tf.data's from_generator body */
		fix_no_edit(c, f, "from_generator calls the Python generator for every element, under the GIL: when the"
			    " elements fit in memory, build the dataset from tensors instead (tf.data.Dataset."
			    "from_tensor_slices, with tf.ragged.constant for sequences of different lengths); else keep"
			    " the generator light and let prefetch overlap it with the step. Which one fits the data"
			    " is not in the recording");
	else
		fix_no_edit(c, f, "the body of a py_function is Python that TensorFlow runs under the GIL, one call at"
			    " a time: rewrite it with TensorFlow ops (or move it out of %s); no mechanical edit keeps"
			    " what it computes", fn ? fn->name : f->function ? f->function : "the function");
}

static void fix_see_retracing(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	(void)fn;
	fix_no_edit(c, f, "the edits are in the retracing findings of the functions that retrace");
}

static void fix_none(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	(void)fn;
	fix_no_edit(c, f, "no edit is written for %s: the fix depends on code agprof did not record", f->rule);
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
		fix_no_edit(c, f, "the advice for %s is not jit_compile=True", fn->name);
	else
		fix_edit_jit(c, f, fn);
}

/* retrace: the edit follows the cause of the function's retraces. */
static void fix_retrace(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	switch (f->cause) {
	case CAUSE_SHAPE:
		fix_edit_signature(c, f, fn);
		break;
	case CAUSE_PYTHON_VALUE:
	case CAUSE_DTYPE:
		fix_edit_call_arg(c, f, fn);
		break;
	case CAUSE_NEW_FUNCTION_OBJECT:
		fix_edit_hoist(c, f, fn);
		break;
	case CAUSE_UNKNOWN:
		fix_no_edit(c, f, "the cause of the retraces is unknown");
		break;
	default:
		fix_no_edit(c, f, "a %s retrace has no edit agprof can write safely", retrace_cause_name(f->cause));
		break;
	}
}

static void fix_eager_loop(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	(void)fn;
	fix_eager_advice(c, f);
}

static void fix_input_pipeline(struct fixctx *c, struct finding *f, const struct model_function *fn)
{
	(void)fn;
	fix_edit_pipeline(c, f);
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
				fix_no_edit(&c, f, "the edit saves nothing measurable (%s)", f->saving_method);
			}
		}
		model_bound_finding(m, f);
	}
	for (size_t i = 0; i < c.nfiles; i++)
		srcfile_release(&c.files[i].sf);
	model_sort_findings(m);
}
