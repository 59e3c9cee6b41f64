/*
 * calls.c - the user's calls into a library that traces functions of its
 * own (Keras' fit/predict/evaluate, tf.data), as the metric source
 * "library_calls" (rules/library-call.rule): one row per user line, with
 * everything TensorFlow did under that line grouped.
 *
 * A library's traces are not the user's retraces: they follow from the
 * user's call.  What the user controls is how often the call runs on the
 * same objects.  Each new model (or other object) pays its first traces
 * once, on purpose; each further call on it builds its input pipeline and
 * iterator again, traces tf.data's functions again and waits for the first
 * batch: that set-up is what calling less often saves.
 */
#include "code_facts.h"
#include "metric_fields.h"
#include "model_internal.h"
#include "recording.h"
#include "srcfile.h"
#include "util.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct lib_call {
	struct source_loc loc;      /* the user's line */
	const char *library;        /* "Keras", "tf.data", "TensorFlow" */
	const char *call, *api, *advice;
	int64_t traces, trace_ns;   /* the library's traces under the line (nested ones once) */
	int64_t build_ns;           /* of those, each object's first trace (and TensorFlow's second of it) */
	int64_t models;             /* most tf.function objects of one of its (non tf.data) functions */
	int64_t pipelines;          /* input pipelines the line built (its most built source dataset) */
	int64_t eager_ops, eager_ns; /* eager ops at the line: pipeline and iterator set-up, waits */
	int64_t exec_ns;            /* the library's graph calls made there (the model's work) */
};

struct lib_calls {
	struct lib_call *v;
	size_t n;
};

static int same_line(const struct source_loc *a, const struct source_loc *b)
{
	return a->line == b->line && a->file && b->file && !strcmp(a->file, b->file);
}

static struct lib_call *call_at(struct lib_calls *c, const struct source_loc *loc, size_t *cap)
{
	for (size_t i = 0; i < c->n; i++)
		if (same_line(&c->v[i].loc, loc))
			return &c->v[i];
	if (ARRAY_GROW(c->v, c->n, *cap))
		return NULL;
	memset(&c->v[c->n], 0, sizeof(c->v[0]));
	c->v[c->n].loc = *loc;
	c->v[c->n].loc.lib_file = NULL, c->v[c->n].loc.lib_line = 0;
	return &c->v[c->n++];
}

/* The time some span of rows (pid, tid, start, end) covers, per thread, added up: nested traces once. */
static int64_t union_ns(int64_t (*rows)[4], size_t n)
{
	int64_t total = 0, end = INT64_MIN;

	sort_array(rows, n, sizeof(*rows), cmp_thread_start);
	for (size_t i = 0; i < n; i++) {
		int64_t from;

		if (!i || rows[i][0] != rows[i - 1][0] || rows[i][1] != rows[i - 1][1])
			end = INT64_MIN;
		from = rows[i][2] > end ? rows[i][2] : end;
		if (rows[i][3] > from)
			total = dur_add(total, rows[i][3] - from);
		if (rows[i][3] > end)
			end = rows[i][3];
	}
	return total;
}

/*
 * lc's tracing time (its traces' union) and of it the objects' own first
 * traces (and TensorFlow's second of each): the price of each model, paid
 * once.  tf.data's traces are per call.  0 or -1.
 */
static int trace_times(const struct model *m, struct lib_call *lc)
{
	int64_t (*all)[4] = NULL, (*build)[4] = NULL;
	size_t n = 0, nb = 0;

	if (lc->traces && (!(all = calloc((size_t)lc->traces, sizeof(*all))) ||
			   !(build = calloc((size_t)lc->traces, sizeof(*build))))) {
		free(all);
		return -1;
	}
	for (size_t i = 0; i < m->nfunctions; i++)
		for (size_t k = 0; m->functions[i].library && k < m->functions[i].ntraces; k++) {
			const struct model_trace *t = &m->functions[i].traces[k];

			if (!same_line(&t->callsite, &lc->loc) || t->callsite.library_only || n >= (size_t)lc->traces)
				continue;
			all[n][0] = t->pid, all[n][1] = t->tid, all[n][2] = t->start_ns, all[n++][3] = t->end_ns;
			if (!m->functions[i].tf_data && (t->object_trace_no <= 1 || t->why.followup))
				memcpy(build[nb++], all[n - 1], sizeof(*build));
		}
	lc->trace_ns = union_ns(all, n);
	lc->build_ns = union_ns(build, nb);
	free(all);
	free(build);
	return 0;
}

/* Distinct tf.function objects of f first traced from loc. */
static int64_t objects_at(const struct model_function *f, const struct source_loc *loc)
{
	int64_t n = 0;

	for (size_t k = 0; k < f->ntraces; k++)
		n += same_line(&f->traces[k].callsite, loc) && f->traces[k].object_trace_no <= 1 &&
		     !f->traces[k].why.followup;
	return n;
}

static const char *library_of(const struct model_function *f)
{
	if (f->tf_data)
		return "tf.data";
	return f->def.file && strstr(f->def.file, "/keras/") ? "Keras" : "TensorFlow";
}

/* The library's traces and graph calls, by the user line that made them. */
static int add_traces(struct model *m, struct lib_calls *c, size_t *cap)
{
	for (size_t i = 0; i < m->nfunctions; i++) {
		const struct model_function *f = &m->functions[i];
		struct source_loc home = model_function_user_loc(f);

		for (size_t k = 0; f->library && k < f->ntraces; k++) {
			const struct model_trace *t = &f->traces[k];
			struct lib_call *lc;

			if (!t->callsite.file || t->callsite.library_only)
				continue;
			if (!(lc = call_at(c, &t->callsite, cap)))
				return -1;
			if (!lc->library || (!f->tf_data && !strcmp(lc->library, "tf.data")))
				lc->library = library_of(f);
			lc->traces++;
		}
		for (size_t j = 0; f->library && j < c->n; j++)
			if (!f->tf_data && objects_at(f, &c->v[j].loc) > c->v[j].models)
				c->v[j].models = objects_at(f, &c->v[j].loc);
		for (size_t j = 0; f->library && home.file && j < c->n; j++)
			if (same_line(&c->v[j].loc, &home))
				c->v[j].exec_ns = dur_add(c->v[j].exec_ns, f->exec_ns);
	}
	for (size_t j = 0; j < c->n; j++)
		if (trace_times(m, &c->v[j]))
			return -1;
	return 0;
}

static int is_source_dataset(const char *transformation)
{
	static const char *const sources[] = { "range", "from_tensors", "from_tensor_slices", "from_generator",
					       "TFRecordDataset", "TextLineDataset", NULL };

	for (int i = 0; transformation && sources[i]; i++)
		if (!strcmp(transformation, sources[i]))
			return 1;
	return 0;
}

/*
 * The input pipelines built at loc: the times its most built kind of
 * source dataset was made there (datasets are one entry per line with its
 * count before schema 8, one per dataset made since).
 */
static int64_t pipelines_built_at(const struct model *m, const struct source_loc *loc)
{
	struct { const char *kind; int64_t n; } kinds[32];
	size_t nkinds = 0;
	int64_t most = 0;

	for (size_t i = 0; i < m->ndatasets; i++) {
		const struct model_dataset_op *d = &m->datasets[i];
		size_t k = 0;

		if (!same_line(&d->loc, loc) || !is_source_dataset(d->transformation))
			continue;
		while (k < nkinds && strcmp(kinds[k].kind, d->transformation))
			k++;
		if (k == nkinds) {
			if (nkinds == sizeof(kinds) / sizeof(kinds[0]))
				continue;
			kinds[nkinds].kind = d->transformation;
			kinds[nkinds++].n = 0;
		}
		kinds[k].n += d->built;
		if (kinds[k].n > most)
			most = kinds[k].n;
	}
	return most;
}

/* Eager ops at each line, and the pipelines it built. */
static void add_eager_and_pipelines(struct model *m, struct lib_calls *c)
{
	for (size_t j = 0; j < c->n; j++) {
		struct lib_call *lc = &c->v[j];

		for (size_t i = 0; i < m->nsites; i++)
			if (same_line(&m->sites[i].loc, &lc->loc)) {
				lc->eager_ops += m->sites[i].count;
				lc->eager_ns = dur_add(lc->eager_ns, m->sites[i].total_ns);
			}
		lc->pipelines = pipelines_built_at(m, &lc->loc);
	}
}

/*
 * The call as written on the line: "model.predict(x[:n], verbose=0)" for
 * the first of names found as ".name(", its receiver back to a space or an
 * operator, its arguments to the matching ')' ("...)" when they go on on
 * the next line).  NULL when no name is on the line.
 */
static const char *call_text(struct model *m, const char *text, const char *const *names, const char **api)
{
	for (int i = 0; text && names[i]; i++) {
		char pat[40];
		const char *at, *start, *p;
		int depth = 0;

		snprintf(pat, sizeof(pat), ".%s(", names[i]);
		if (!(at = strstr(text, pat)))
			continue;
		for (start = at; start > text && (isalnum((unsigned char)start[-1]) || strchr("_.]", start[-1]));)
			start--;
		for (p = at + strlen(pat) - 1; *p; p++) {
			depth += *p == '(' || *p == '[' ? 1 : *p == ')' || *p == ']' ? -1 : 0;
			if (!depth)
				break;
		}
		*api = names[i];
		if (!*p)
			return model_strf(m, "%.*s...)", (int)(p - start > 80 ? 80 : p - start), start);
		return model_strf(m, "%.*s", (int)(p + 1 - start > 100 ? 100 : p + 1 - start), start);
	}
	return NULL;
}

/* The use as written: "y.reshape(...)", "y[...] = ...", "np.argmax(y)". */
static const char *numpy_use_text(struct model *m, const struct code_fact *use)
{
	size_t n = strlen(use->detail);

	if (!strcmp(use->detail, ".T"))
		return model_strf(m, "%s.T", use->name);
	if (use->detail[0] == '.')
		return model_strf(m, "%s%s(...)", use->name, use->detail);
	if (!strcmp(use->detail, "item store"))
		return model_strf(m, "%s[...] = ...", use->name);
	if (n > 2 && !strcmp(use->detail + n - 2, "()"))
		return model_strf(m, "%.*s(%s)", (int)(n - 2), use->detail, use->name);
	return use->name;
}

/*
 * What to do instead, in the terms of the call (api, on the receiver recv).
 * use: how the next lines use predict()'s result as NumPy (code facts), or
 * NULL: a direct call returns a tensor, so the advice then adds .numpy().
 */
static const char *advice_for(struct model *m, const char *api, const char *call, const struct code_fact *use)
{
	const char *dot = call ? strrchr(call, '.') : NULL;
	int rl = dot ? (int)(dot - call) : 0;
	const char *recv = dot && rl > 0 ? call : "model";

	if (!dot || rl <= 0)
		rl = (int)strlen(recv);
	if (api && !strcmp(api, "predict") && use)
		return model_strf(m, "For small inputs call the model directly (%.*s(x, training=False).numpy(): a"
				  " direct call returns a tensor, and line %d uses the result as a NumPy array: %s) or "
				  "%.*s.predict_on_batch(x), which returns NumPy: each predict() builds an input pipeline"
				  " and iterator and traces tf.data's functions before it runs the model; or make one"
				  " predict() over all the data.", rl, recv, use->end_line, numpy_use_text(m, use), rl, recv);
	if (api && !strcmp(api, "predict"))
		return model_strf(m, "For small inputs call the model directly (%.*s(x, training=False)) or "
				  "%.*s.predict_on_batch(x): each predict() builds an input pipeline and iterator and "
				  "traces tf.data's functions before it runs the model; or make one predict() over all "
				  "the data.", rl, recv, rl, recv);
	if (api && !strcmp(api, "evaluate"))
		return model_strf(m, "Evaluate all the data in one evaluate() call, or one batch at a time with "
				  "%.*s.test_on_batch(x, y): each evaluate() builds an input pipeline and iterator "
				  "and traces tf.data's functions again.", rl, recv);
	if (api && !strcmp(api, "fit"))
		return model_strf(m, "Train in one fit() call over all the data (more epochs, a larger dataset), "
				  "or one batch at a time with %.*s.train_on_batch(x, y): each fit() builds an input "
				  "pipeline and iterator and traces tf.data's functions again.", rl, recv);
	return "Call it fewer times with more data each time: each call sets up the library's input "
	       "pipeline, iterator and traced functions again.";
}

static int changed_since(const struct model *m, const struct srcfile *sf, const char *path)
{
	char recorded[17];

	return m->rec && m->rec->db && !srcfile_recorded_hash(m->rec->db, path, recorded) && strcmp(recorded, sf->hash);
}

/* Name each line's call as written, from the recorded program's source. */
static void name_calls(struct model *m, struct lib_calls *c)
{
	static const char *const names[] = { "predict_on_batch", "train_on_batch", "test_on_batch", "predict",
					      "evaluate", "fit", "__call__", NULL };

	for (size_t j = 0; j < c->n; j++) {
		struct lib_call *lc = &c->v[j];
		struct srcfile sf;
		const char *text;

		lc->call = "the library call on this line";
		if (srcfile_load(&sf, lc->loc.file, m->session.cwd))
			continue;
		/* a file edited since the recording: its line may be another now */
		text = changed_since(m, &sf, lc->loc.file) ? NULL : srcfile_line(&sf, lc->loc.line);
		if (text && !(lc->call = call_text(m, text, names, &lc->api))) {
			while (isspace((unsigned char)*text))
				text++;
			lc->call = model_strf(m, "%.*s", (int)strcspn(text, "#\r\n"), text);
		}
		srcfile_release(&sf);
	}
	for (size_t j = 0; j < c->n; j++)
		c->v[j].advice = advice_for(m, c->v[j].api, c->v[j].call,
					    code_numpy_use(m, c->v[j].loc.file, c->v[j].loc.line));
}

/* ---- the metric source -------------------------------------------------- */

static const char *const call_fields[] = {
	"file, line: the user's line; call: the call as written there (text)",
	"api: the library method it calls (predict, fit, evaluate, ..., text; none when not recognised)",
	"library: Keras, tf.data or TensorFlow (text); advice: what to do instead, in the call's terms (text)",
	"calls: input pipelines the line built (each fit/predict/evaluate call builds one; 0 when none)",
	"models: the most tf.function objects of one of the library's functions made there (one per model)",
	"repeated: calls - models (calls again on the same objects), 0 at least",
	"traces, trace_ns: the library's traces under the line (time of nested ones once)",
	"build_ns: of trace_ns, each object's first trace (and TensorFlow's second of it): the objects' own price",
	"eager_ops, eager_ns: eager ops at the line (pipeline and iterator set-up, input waits)",
	"exec_ns: the library's graph calls made there (the model's work)",
	"setup_ns, setup_share: trace_ns - build_ns + eager_ns, its share of the run",
	"per_call_ns: setup_ns / calls; saving_ns: per_call_ns * repeated",
	NULL,
};

static int64_t repeated(const struct lib_call *c)
{
	return c->pipelines > c->models ? c->pipelines - c->models : 0;
}

static int64_t setup_ns(const struct lib_call *c)
{
	return dur_add(c->trace_ns > c->build_ns ? c->trace_ns - c->build_ns : 0, c->eager_ns);
}

static int64_t saving_ns(const struct lib_call *c)
{
	return c->pipelines ? (int64_t)((double)setup_ns(c) / (double)c->pipelines * (double)repeated(c)) : 0;
}

static size_t call_count(const struct model *m, void *data)
{
	(void)m;
	return ((struct lib_calls *)data)->n;
}

static int call_get(const struct model *m, void *data, size_t row, const char *field, struct metric_value *out)
{
	const struct lib_call *c = &((struct lib_calls *)data)->v[row];

	TEXT("file", c->loc.file);
	NUM("line", c->loc.line);
	TEXT("call", c->call);
	TEXT("api", c->api ? c->api : "none");
	TEXT("library", c->library);
	TEXT("advice", c->advice);
	NUM("calls", c->pipelines);
	NUM("models", c->models);
	NUM("repeated", repeated(c));
	NUM("traces", c->traces);
	NUM("trace_ns", c->trace_ns);
	NUM("build_ns", c->build_ns);
	NUM("eager_ops", c->eager_ops);
	NUM("eager_ns", c->eager_ns);
	NUM("exec_ns", c->exec_ns);
	NUM("setup_ns", setup_ns(c));
	NUM("setup_share", m->session.active_ns ? (double)setup_ns(c) / (double)m->session.active_ns : 0);
	NUM("per_call_ns", c->pipelines ? setup_ns(c) / c->pipelines : 0);
	NUM("saving_ns", saving_ns(c));
	return -1;
}

static void call_anchor(const struct model *m, void *data, size_t row, struct metric_anchor *a)
{
	const struct lib_call *c = &((struct lib_calls *)data)->v[row];

	(void)m;
	a->function = c->call;
	a->loc = c->loc;
	a->cost_ns = saving_ns(c);
}

static void calls_release(void *data)
{
	struct lib_calls *c = data;

	free(c->v);
	free(c);
}

int calls_register(struct model *m)
{
	struct lib_calls *c = calloc(1, sizeof(*c));
	struct metric_source src = { "library_calls", call_fields, call_count, call_get, call_anchor, calls_release,
				     c };
	size_t cap = 0;

	if (!c || add_traces(m, c, &cap)) {
		if (c)
			calls_release(c);
		return -1;
	}
	add_eager_and_pipelines(m, c);
	name_calls(m, c);
	if (model_add_source(m, &src)) {
		calls_release(c);
		return -1;
	}
	return 0;
}

int calls_repeated_at(const struct model *m, const struct source_loc *loc)
{
	const struct metric_source *src = model_find_source(m, "library_calls");
	const struct lib_calls *c = src && src->release == calls_release ? src->data : NULL;

	for (size_t j = 0; c && loc && j < c->n; j++)
		if (same_line(&c->v[j].loc, loc))
			return c->v[j].models >= 1 && repeated(&c->v[j]) > 0;
	return 0;
}
