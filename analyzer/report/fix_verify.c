/*
 * fix_verify.c - `agprof fix --verify`: each finding's edit as an
 * experiment (fix_verify.h).  The runs interleave (as it is, each edit, all
 * edits; then again), so a machine whose load drifts slows every side
 * alike.  Per finding, the time it named is measured in every run:
 *   its function's tracing and calls (a retrace's or jit_compile's edit),
 *   less their threads' waits for a CPU (function_waits()),
 *   the input wait (a pipeline's), the run's CPU time otherwise: its
 *   threads' time on a CPU from its first TensorFlow event on (cpu_samples;
 *   a machine loaded by other work makes a run wait longer for a CPU, not
 *   use more of it: at a wait share of 75% the active times of one program
 *   spread 2x and flipped a verdict), the active time when a run has none
 * and compared over every pair (edited - as it is): verified when every
 * pair is faster and the medians differ by 5% or more (less is a run's
 * noise), refuted when not or when the output differs, failed when the
 * edited program crashed, ran past the time limit or never ran the edit.
 * The scratch work (copies, runs) is verify_scratch.c's; the outputs'
 * comparison verify_output.c's.
 */
#include "call_times.h"
#include "checked.h"
#include "db.h"
#include "diff.h"
#include "duration.h"
#include "recording.h"
#include "rule_advice.h"
#include "strbuf.h"
#include "util.h"
#include "verdicts.h"
#include "verify_internal.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* the edits tried together are kept in the model's struct verify_together */
_Static_assert(VERIFY_MAX_EDITS <= VERIFY_TOGETHER_MAX, "edits tried together fit the sidecar's keys");

/* The function diff matched to f's (its name), or NULL. */
static const struct diff_function *fixed_function(const struct diff *d, const struct finding *f)
{
	for (size_t i = 0; f->function && i < d->nfns; i++)
		if (!d->fns[i].made_by && !strcmp(d->fns[i].name, f->function))
			return &d->fns[i];
	return NULL;
}

/* Whether a user frame of the edited run is at one of the lines f's edit wrote (its file: rel, or under a directory). */
static int edited_lines_ran(sqlite3 *db, const struct finding *f)
{
	static const char sql[] =
		"SELECT EXISTS (SELECT 1 FROM callsites c JOIN strings s ON s.id = c.file_id"
		" WHERE c.library = 0 AND c.line BETWEEN ?1 AND ?2 AND (s.text = ?3 OR substr(s.text, -length(?4)) = ?4))"
		" OR EXISTS (SELECT 1 FROM functions fn JOIN strings s ON s.id = fn.file_id"
		" WHERE fn.line BETWEEN ?1 AND ?2 + 1 AND (s.text = ?3 OR substr(s.text, -length(?4)) = ?4)"
		" AND EXISTS (SELECT 1 FROM traces t WHERE t.function_id = fn.id))";
	struct strbuf tail = STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	int lines = 0, ran = 0;

	for (const char *p = f->fix.after; p && *p; p++)
		lines += *p == '\n';
	strbuf_addf(&tail, "/%s", f->fix.file);
	if (!strbuf_failed(&tail) && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int(st, 1, f->fix.line);
		sqlite3_bind_int(st, 2, f->fix.line + (lines > 0 ? lines - 1 : 0));
		sqlite3_bind_text(st, 3, f->fix.file, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, tail.buf, -1, SQLITE_STATIC);
		ran = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
	}
	sqlite3_finalize(st);
	strbuf_release(&tail);
	return ran;
}

/*
 * Whether f's edit ran in the edited run (its function traced and called,
 * or a line it wrote executed) and its measure moved as the finding
 * promised: the function's traces for a retrace, the eager share for an
 * eager loop (the time is the finding's measure's to judge).  When not,
 * why into why; *ran whether the edit ran.
 */
static int edit_kept_promise(const struct diff *d, sqlite3 *db, const struct finding *f, int faster,
			     struct strbuf *why, int *ran_out)
{
	const struct diff_function *x = fixed_function(d, f);
	int ran = (x && x->new_.traces > 0 && x->new_.calls > 0) || edited_lines_ran(db, f);

	*ran_out = ran;
	if (!ran) {
		strbuf_addf(why, "the edited code did not run (%s:%d%s%s)", f->fix.file, f->fix.line,
			    f->function ? ", " : "", f->function ? f->function : "");
		return 0;
	}
	switch (f->fix_kind) {
	case FIX_RETRACE:
	case FIX_SEE_RETRACING:
		if (x && x->new_.traces < x->base.traces)
			return 1;
		strbuf_addf(why, "%s's traces did not drop", f->function ? f->function : "the function");
		return 0;
	case FIX_EAGER_LOOP:
		if (d->new_->session.eager_share < d->base->session.eager_share)
			return 1;
		strbuf_addstr(why, "the eager share did not drop");
		return 0;
	default:
		(void)faster;
		return 1;   /* the finding's measure judges the time */
	}
}

/* run_recorded()'s status when the run's recording cannot be analyzed */
#define RUN_UNREAD (-3)

/* One program as it is (no edit), with one finding's edit, or with all of them. */
struct variant {
	char dir[PATH_MAX];
	const struct finding *const *edits;
	size_t nedits;
	int status[VERIFY_MAX_RUNS];      /* exit status, VERIFY_TIMED_OUT, -1 */
	int64_t *measure;                 /* [finding][run] for the findings measured (all for as it is) */
	int64_t active[VERIFY_MAX_RUNS];  /* the run's active time */
	int64_t cpu[VERIFY_MAX_RUNS];     /* its threads' time on a CPU in it, -1 without cpu_samples */
	int ran, promised;                /* the edits ran / kept their promise (run 0) */
	struct strbuf line;               /* traces before -> after (run 0), or why not */
	struct strbuf summary;            /* diff's summary of run 0 against the base's */
	long differs;                     /* the first output line that differs from the base's run 0 */
	int tolerated;
	struct strbuf what;
	int file_differs;                 /* a file it wrote differs from the base's run 0's (file_what) */
	struct strbuf file_what;
	size_t files_compared;            /* of run 0: the base's files compared */
};

struct experiment {
	const struct model *m;
	const struct finding *const *pick;
	size_t n;
	const struct verify_opts *o;
	char **argv;
	char scratch[PATH_MAX / 2];
	struct variant *v;  /* [0] as it is, [1..n] one edit each, [n + 1] all of them (n > 1) */
	size_t nv;
	struct written_files base;  /* the files run 0 as it is wrote, kept in scratch/kept */
	unsigned char *varies;      /* [base.n]: another run as it is wrote another one: not compared */
	struct strbuf linked;       /* the files too big to copy (scratch_copy) */
	int no_cpu;                 /* a run had no cpu_samples: the whole run's measure is its active time */
};

/* A file of run r of variant k in the scratch directory ("v1-r0.agprof"). */
static void run_file(char *buf, size_t cap, const struct experiment *x, size_t k, int r, const char *ext)
{
	snprintf(buf, cap, "%.*s/v%zu-r%d.%s", PATH_MAX / 2, x->scratch, k, r, ext);
}

/* Whether f's edit is measured by its function's time (a retrace's, jit_compile's). */
static int function_measured(const struct finding *f)
{
	return (f->fix_kind == FIX_RETRACE || f->fix_kind == FIX_SEE_RETRACING || f->fix_kind == FIX_JIT_COMPILE) &&
	       f->function;
}

/* Whether f's edit is measured by the whole run (its CPU time), not by a part of it. */
static int whole_run(const struct finding *f)
{
	return !function_measured(f) && f->fix_kind != FIX_INPUT_PIPELINE;
}

/*
 * What fn's traces and calls in run m waited for a CPU (their threads'
 * samples): a machine loaded by other work stretches them, and beside two
 * CPU hogs that stretch (+-110 ms over 2 x 2 runs) hid a 38 ms saving of
 * retraces.  A trace nested in another of fn's is the outer one's time.
 */
static double function_waits(const struct model *m, sqlite3 *db, const struct model_function *fn)
{
	static const char sql[] = "SELECT c.pid, c.tid, c.start_ns, c.end_ns FROM function_calls c"
				  " JOIN graph_functions g ON g.id = c.graph_function_id"
				  " WHERE g.function_id = ?1 AND g.pid = ?2 AND c.pid = ?2";
	sqlite3_stmt *st = db_prepare(db, sql);
	int64_t outer_end = INT64_MIN, outer_tid = -1;
	double wait = 0;

	for (size_t i = 0; i < fn->ntraces; i++) {
		const struct model_trace *t = &fn->traces[i];

		if (t->tid == outer_tid && t->start_ns < outer_end)
			continue;
		wait += model_thread_wait_ns(m, t->pid, t->tid, t->start_ns, t->end_ns);
		outer_tid = t->tid;
		outer_end = t->end_ns;
	}
	if (!st)
		return wait;
	sqlite3_bind_int64(st, 1, fn->id);
	sqlite3_bind_int64(st, 2, fn->pid);
	while (sqlite3_step(st) == SQLITE_ROW)
		wait += model_thread_wait_ns(m, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
					     sqlite3_column_int64(st, 2), sqlite3_column_int64(st, 3));
	sqlite3_finalize(st);
	return wait;
}

/* The time f named, in the analyzed run m (the whole run's: judge() reads its own). */
static int64_t measure_of(const struct model *m, sqlite3 *db, const struct finding *f)
{
	int64_t ns = 0;

	if (function_measured(f)) {
		for (size_t i = 0; i < m->nfunctions; i++) {
			const struct model_function *fn = &m->functions[i];
			int64_t own, wait;

			if (fn->made_by || strcmp(fn->name, f->function))
				continue;
			own = sat_add64(fn->trace_ns, fn->exec_ns);
			wait = (int64_t)function_waits(m, db, fn);
			ns = sat_add64(ns, own - (wait < own ? wait : own));
		}
		return ns;
	}
	return f->fix_kind == FIX_INPUT_PIPELINE ? m->session.input_ns : m->session.active_ns;
}

static const char *measure_name(struct strbuf *sb, const struct finding *f, int no_cpu)
{
	strbuf_reset(sb);
	if (function_measured(f))
		strbuf_addf(sb, "%s's tracing and calls", f->function);
	else if (f->fix_kind == FIX_INPUT_PIPELINE)
		strbuf_addstr(sb, "the input wait");
	else
		strbuf_addstr(sb, no_cpu ? "the run's active time" : "the run's CPU time");
	return sb->buf ? sb->buf : "";
}

/* The run m's threads' time on a CPU from its first TensorFlow event to its end; -1 without cpu_samples. */
static int64_t cpu_of(const struct model *m)
{
	struct cpu_intervals *ci = NULL;
	int64_t ns = cpu_intervals_load(m, 0, &ci) ? -1 : cpu_intervals_run(ci, m->session.first_tf_ns, m->session.end_ns);

	cpu_intervals_free(ci);
	return ns;
}

/* Run 0 of an edited variant against the base's run 0: did each edit run and keep its promise, what moved. */
static void promise(struct experiment *x, size_t k, const struct model *m, sqlite3 *db, const char *rec)
{
	struct variant *v = &x->v[k];
	struct diff_baseline b;
	struct analyze_opts ao = { .allow_empty = 1, .no_verdicts = 1 };
	char base[PATH_MAX];
	struct strbuf why = STRBUF_INIT;

	run_file(base, sizeof(base), x, 0, 0, "agprof");
	if (diff_baseline_load(&b, base, &ao, m, rec)) {
		strbuf_addstr(&v->line, "the runs cannot be compared");
		return;
	}
	v->ran = v->promised = 1;
	for (size_t i = 0; i < v->nedits && v->ran && v->promised; i++) {
		int ran = 0;

		v->promised = edit_kept_promise(&b.d, db, v->edits[i], 0, &why, &ran);
		v->ran = ran;
	}
	if (!v->promised)
		strbuf_addf(&v->line, "%s; ", why.buf ? why.buf : "");
	for (size_t i = 0; i < b.d.nfns; i++) {
		const struct diff_function *f = &b.d.fns[i];
		int fixed = 0;

		for (size_t e = 0; e < v->nedits && !fixed; e++)
			fixed = v->edits[e]->function && !strcmp(v->edits[e]->function, f->name);
		if (fixed && !f->made_by)
			strbuf_addf(&v->line, "%s %zu trace%s -> %zu, ", f->name, f->base.traces,
				    f->base.traces == 1 ? "" : "s", f->new_.traces);
	}
	strbuf_addf(&v->summary, "%s", b.d.summary ? b.d.summary : "");
	diff_baseline_release(&b);
	strbuf_release(&why);
}

/* Analyze run r of variant k: the time each of its findings named, its active time.  0 or -1. */
static int analyze_run(struct experiment *x, size_t k, int r)
{
	struct variant *v = &x->v[k];
	const struct finding *const *fs = k ? v->edits : x->pick;
	size_t nf = k ? v->nedits : x->n;
	struct analyze_opts ao = { .allow_empty = 1, .no_verdicts = 1 };
	char rec[PATH_MAX];
	struct recording rc;
	struct ruleset rs;
	struct model m;

	run_file(rec, sizeof(rec), x, k, r, "agprof");
	if (recording_open(&rc, rec))
		return -1;
	if (analyze(&m, &rs, &rc, &ao) != ANALYZE_OK) {
		recording_close(&rc);
		return -1;
	}
	v->active[r] = m.session.active_ns;
	if ((v->cpu[r] = cpu_of(&m)) < 0)
		x->no_cpu = 1;
	for (size_t i = 0; i < nf; i++)
		v->measure[i * (size_t)x->o->runs + (size_t)r] = measure_of(&m, rc.db, fs[i]);
	if (k && !r)
		promise(x, k, &m, rc.db, rec);
	model_release(&m);
	ruleset_release(&rs);
	recording_close(&rc);
	return 0;
}

/* dir/rel into buf: 0, or -1 when it does not fit. */
static int join(char *buf, size_t cap, const char *dir, const char *rel)
{
	int n = snprintf(buf, cap, "%s/%s", dir, rel);

	return n < 0 || (size_t)n >= cap ? -1 : 0;
}

/* The base's file i: where run 0 as it is left it (scratch/kept/REL).  0 or -1 (too long). */
static int kept_file(char *buf, size_t cap, const struct experiment *x, size_t i)
{
	char kept[PATH_MAX];

	return join(kept, sizeof(kept), x->scratch, "kept") || join(buf, cap, kept, x->base.rel[i]) ? -1 : 0;
}

/* Run 0 as it is: the files it wrote become the reference, copied aside.  0 or -1. */
static int keep_files(struct experiment *x, const struct timespec *since)
{
	char from[PATH_MAX], to[PATH_MAX];

	if (written_files(x->v[0].dir, since, &x->base) ||
	    !(x->varies = calloc(x->base.n ? x->base.n : 1, 1)))
		return -1;
	for (size_t i = 0; i < x->base.n; i++) {
		if (join(from, sizeof(from), x->v[0].dir, x->base.rel[i]) || kept_file(to, sizeof(to), x, i)) {
			x->varies[i] = 1;  /* a path too long to compare */
			continue;
		}
		if (copy_file_into(from, to))
			return -1;
	}
	return 0;
}

/* One difference of variant v's files, the first kept (said once). */
static void file_differs(struct variant *v, const char *rel, const char *what)
{
	if (v->file_differs++)
		return;
	strbuf_addf(&v->file_what, "file %s %s", rel, what);
}

/*
 * Base file i against the copy run r of variant k wrote (w: what it wrote).
 * k 0, another run as it is: a file it writes otherwise, or not at all,
 * varies and is never compared.
 */
static void compare_file(struct experiment *x, size_t k, int r, const struct written_files *w, size_t i)
{
	struct variant *v = &x->v[k];
	const char *rel = x->base.rel[i];
	struct strbuf what = STRBUF_INIT;
	char a[PATH_MAX], b[PATH_MAX];
	int tol = 0, d;

	if (written_find(w, rel) < 0) {
		if (k)
			file_differs(v, rel, "is not written as edited");
		else
			x->varies[i] = 1;
		return;
	}
	d = kept_file(a, sizeof(a), x, i) || join(b, sizeof(b), v->dir, rel) ? -1
									      : file_difference(a, b, x->o->rtol, x->o->atol, &what, &tol);
	if (!k)
		x->varies[i] |= d != 0;
	else if (d == 1 || d < 0)
		file_differs(v, rel, d < 0 ? "cannot be read" : what.buf ? what.buf : "differs");
	if (k) {
		v->tolerated |= tol;
		v->files_compared += !r && (d == 0 || d == 1);
	}
	strbuf_release(&what);
}

/* The files run r of variant k wrote against the base's.  0 or -1. */
static int compare_files(struct experiment *x, size_t k, int r, const struct timespec *since)
{
	struct written_files w;

	if (written_files(x->v[k].dir, since, &w))
		return -1;
	for (size_t i = 0; i < x->base.n; i++)
		if (!x->varies[i])
			compare_file(x, k, r, &w, i);
	for (size_t i = 0; k && !x->base.more && i < w.n; i++)
		if (written_find(&x->base, w.rel[i]) < 0)
			file_differs(&x->v[k], w.rel[i], "is written as edited only");
	written_files_release(&w);
	return 0;
}

/* Run r of variant k under agprof; its output compared with the base's run 0.  0, or -1 when it cannot run. */
static int run_variant(struct experiment *x, size_t k, int r)
{
	struct variant *v = &x->v[k];
	char rec[PATH_MAX], out[PATH_MAX], err[PATH_MAX], base[PATH_MAX];
	const char *const files[3] = { rec, out, err };
	struct strbuf what = STRBUF_INIT;
	struct timespec since;
	int tol = 0;
	long d;

	run_file(rec, sizeof(rec), x, k, r, "agprof");
	run_file(out, sizeof(out), x, k, r, "out");
	run_file(err, sizeof(err), x, k, r, "err");
	run_file(base, sizeof(base), x, 0, 0, "out");
	/*
	 * The fine clock: a file the copy made before it has an older time,
	 * whether the file system stamps coarse times (a tick late) or fine
	 * ones (multigrain: a file copied in this tick is then newer than the
	 * coarse clock, and was taken for the run's: experiments-eager's
	 * a.agprof); the run writes nothing in its first tick.
	 */
	clock_gettime(CLOCK_REALTIME, &since);
	if ((v->status[r] = run_recorded(v->dir, x->argv, files, x->o->time_limit)) == -1)
		return -1;
	if (v->status[r] == VERIFY_TIMED_OUT)
		return 0;
	if ((k || r) ? compare_files(x, k, r, &since) : keep_files(x, &since))
		return error("cannot compare the files the program wrote in %s", v->dir);
	if ((k || r) && !v->differs && (d = output_difference(base, out, x->o->rtol, x->o->atol, &what, &tol))) {
		v->differs = d;
		strbuf_addf(&v->what, "%s", d < 0 ? "(unreadable)" : what.buf ? what.buf : "");
	}
	v->tolerated |= tol;
	strbuf_release(&what);
	if (analyze_run(x, k, r))
		v->status[r] = RUN_UNREAD;
	return 0;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

static int64_t median(const int64_t *v, size_t n)
{
	int64_t s[VERIFY_MAX_RUNS * VERIFY_MAX_RUNS];

	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_i64);
	return n ? (s[(n - 1) / 2] + s[n / 2]) / 2 : 0;
}

/*
 * The measure as it is (b) and as edited (e), runs each: the medians, the
 * lowest and highest of e - b over every pair, and what they say (1
 * verified, else why not into why).
 */
static int faster(const int64_t *b, const int64_t *e, int runs, struct finding_verdict *v, const char **why)
{
	int64_t d[VERIFY_MAX_RUNS * VERIFY_MAX_RUNS];
	size_t nd = 0;

	for (int i = 0; i < runs; i++)
		for (int j = 0; j < runs; j++)
			d[nd++] = e[j] - b[i];
	qsort(d, nd, sizeof(*d), cmp_i64);
	v->base_ns = median(b, (size_t)runs);
	v->new_ns = median(e, (size_t)runs);
	v->low_ns = d[0];
	v->high_ns = d[nd - 1];
	v->runs = runs;
	/* every pair faster, by 5% at least: less is a run's noise */
	if (d[nd - 1] < 0 && v->base_ns - v->new_ns >= v->base_ns / 20)
		return 1;
	*why = d[0] > 0 ? "slower" : "no measurable change (under 5%, or within the runs' spread)";
	return 0;
}

/* Why variant k's runs failed (a crash, the time limit, no recording), or NULL. */
static const char *failure(struct experiment *x, size_t k, struct strbuf *sb)
{
	const struct variant *v = &x->v[k];

	for (int r = 0; r < x->o->runs; r++) {
		if (v->status[r] == VERIFY_TIMED_OUT)
			strbuf_addf(sb, "time limit (a run went past %g s)", x->o->time_limit);
		else if (v->status[r] == RUN_UNREAD)
			strbuf_addstr(sb, "the edited run's recording cannot be analyzed");
		else if (v->status[r] != x->v[0].status[0])
			strbuf_addf(sb, "the program exited %d as edited, %d as it is", v->status[r], x->v[0].status[0]);
		else
			continue;
		return sb->buf;
	}
	if (!v->ran) {
		const char *l = v->line.buf ? v->line.buf : "the edited code did not run";

		strbuf_addf(sb, "%.*s", (int)strcspn(l, ";"), l);
		return sb->buf;
	}
	if (x->v[0].differs)
		strbuf_addf(sb, "the output differs between two runs of the program as it is, from line %ld: %s"
			    " (--rtol/--atol allow numbers to differ)", x->v[0].differs, x->v[0].what.buf);
	return sb->buf;
}

/* The verdict of variant k on its edits: into out (strings in bufs[0..2]: reason, output, measure). */
static void judge(struct experiment *x, size_t k, const int64_t *base, struct finding_verdict *out,
		  struct strbuf bufs[3])
{
	struct variant *v = &x->v[k];
	const char *why = NULL, *failed;
	int whole = v->nedits > 1 || whole_run(v->edits[0]);
	const int64_t *b = whole ? (x->no_cpu ? x->v[0].active : x->v[0].cpu) : base;
	const int64_t *e = whole ? (x->no_cpu ? v->active : v->cpu) : v->measure;

	memset(out, 0, sizeof(*out));
	out->measure = v->nedits > 1 ? (x->no_cpu ? "the run's active time" : "the run's CPU time")
				     : measure_name(&bufs[2], v->edits[0], x->no_cpu);
	if ((failed = failure(x, k, &bufs[0]))) {
		out->kind = VERDICT_FAILED;
		out->reason = failed;
		out->runs = x->o->runs;
		return;
	}
	out->kind = faster(b, e, x->o->runs, out, &why) ? VERDICT_VERIFIED : VERDICT_REFUTED;
	if (v->differs)
		strbuf_addf(&bufs[1], "differs from line %ld: %s", v->differs, v->what.buf ? v->what.buf : "");
	else if (v->file_differs)
		strbuf_addf(&bufs[1], "differs: %s", v->file_what.buf ? v->file_what.buf : "");
	else
		strbuf_addf(&bufs[1], "identical%s%s", v->tolerated ? " within the tolerance" : "",
			    v->files_compared ? ", and the files it wrote" : "");
	out->output = bufs[1].buf;
	if (!v->promised) {
		strbuf_addf(&bufs[0], "%.*s", (int)(v->line.len > 2 ? strcspn(v->line.buf, ";") : 0), v->line.buf);
		why = bufs[0].buf;
	} else if (v->differs || v->file_differs) {
		why = "the output differs";
	}
	if (why) {
		out->kind = VERDICT_REFUTED;
		out->reason = why;
	}
}

/* Variant k's verdict as fix --verify prints it: its heading, diff's summary, the verdict line. */
static void print_verdict(const struct experiment *x, size_t k, const struct finding_verdict *v)
{
	const struct variant *var = &x->v[k];
	const struct finding *f = var->edits[0];
	struct strbuf out = STRBUF_INIT;

	if (var->nedits > 1)
		strbuf_addf(&out, "[all] the %zu edits together\n", var->nedits);
	else
		strbuf_addf(&out, "[%zu] %s%s%s at %s:%d\n", k, f->rule, f->function ? " " : "",
			    f->function ? f->function : "", f->fix.file, f->fix.line);
	if (var->summary.len)
		strbuf_addf(&out, "  %s\n", var->summary.buf);
	strbuf_addf(&out, "%s: ", verdict_name(v->kind));
	if (v->kind == VERDICT_FAILED) {
		strbuf_addf(&out, "%s\n", v->reason);
	} else {
		if (v->reason)
			strbuf_addf(&out, "%s; ", v->reason);
		if (var->promised && var->line.len)
			strbuf_add(&out, var->line.buf, var->line.len - 2), strbuf_addstr(&out, "; ");
		strbuf_addf(&out, "%s ", v->measure);
		strbuf_add_duration(&out, v->base_ns);
		strbuf_addstr(&out, " -> ");
		strbuf_add_duration(&out, v->new_ns);
		strbuf_addf(&out, " (%c", v->new_ns < v->base_ns ? '-' : '+');
		strbuf_add_duration(&out, v->new_ns < v->base_ns ? v->base_ns - v->new_ns : v->new_ns - v->base_ns);
		strbuf_addf(&out, "; every pair of the %d x %d runs from %c", v->runs, v->runs, v->low_ns < 0 ? '-' : '+');
		strbuf_add_duration(&out, v->low_ns < 0 ? -v->low_ns : v->low_ns);
		strbuf_addf(&out, " to %c", v->high_ns < 0 ? '-' : '+');
		strbuf_add_duration(&out, v->high_ns < 0 ? -v->high_ns : v->high_ns);
		strbuf_addf(&out, "), output %s\n", v->output);
	}
	strbuf_sanitize_text(&out, 0, 0);
	fputs(out.buf ? out.buf : "", stdout);
	strbuf_release(&out);
}

/* The scratch directory, a copy per variant, each edit applied to its copies.  0 or -1. */
static int prepare(struct experiment *x)
{
	const char *tmp = getenv("TMPDIR");

	if ((size_t)snprintf(x->scratch, sizeof(x->scratch), "%s/agprof-verify-XXXXXX", tmp && *tmp ? tmp : "/tmp") >=
		    sizeof(x->scratch) ||
	    !mkdtemp(x->scratch))
		return x->scratch[0] = '\0', error("cannot create a scratch directory: %s", strerror(errno));
	for (size_t k = 0; k < x->nv; k++) {
		struct variant *v = &x->v[k];

		snprintf(v->dir, sizeof(v->dir), "%.*s/v%zu", PATH_MAX / 2, x->scratch, k);
		if (scratch_copy(x->m->session.cwd, v->dir, x->pick, x->n, k ? NULL : &x->linked))
			return -1;
		/* from the last edit up: an edit never moves the lines of one above it */
		for (size_t i = v->nedits; i-- > 0;) {
			char file[PATH_MAX];

			if ((size_t)snprintf(file, sizeof(file), "%s/%s", v->dir, v->edits[i]->fix.file) >= sizeof(file) ||
			    apply_edit(file, &v->edits[i]->fix))
				return -1;
		}
	}
	return 0;
}

/* Every variant run x->o->runs times, interleaved.  0, or -1 when the program as it is cannot run. */
static int run_all(struct experiment *x)
{
	for (int r = 0; r < x->o->runs; r++)
		for (size_t k = 0; k < x->nv; k++) {
			if (run_variant(x, k, r))
				return -1;
			if (!k && x->v[0].status[r] == VERIFY_TIMED_OUT)
				return error("the program as it is ran past the time limit (%g s): give a shorter command"
					     " after -- or a longer --time-limit", x->o->time_limit);
			if (!k && x->v[0].status[r] == RUN_UNREAD)
				return error("the recording of the program as it is cannot be analyzed");
		}
	return 0;
}

/* Judge, print and keep every variant's verdict.  VERIFY_OK when every one is verified. */
static enum verify_result conclude(struct experiment *x)
{
	struct finding_verdict *v = calloc(x->nv, sizeof(*v));
	struct strbuf (*bufs)[3] = calloc(x->nv, sizeof(*bufs));
	struct verdicts_run run = { x->o->runs, x->o->rtol, x->o->atol, x->o->time_limit };
	enum verify_result ret = VERIFY_OK;
	struct strbuf side = STRBUF_INIT;

	if (!v || !bufs) {
		free(v);
		free(bufs);
		return error("out of memory"), VERIFY_FAILED;
	}
	for (size_t k = 1; k < x->nv; k++) {
		judge(x, k, k <= x->n ? x->v[0].measure + (k - 1) * (size_t)x->o->runs : NULL, &v[k], bufs[k]);
		print_verdict(x, k, &v[k]);
		if (v[k].kind != VERDICT_VERIFIED)
			ret = VERIFY_NOT;
	}
	if (x->o->keep && x->m->rec &&
	    !verdicts_write(x->m->rec->path, x->pick, v + 1, x->n, x->nv > x->n + 1 ? &v[x->n + 1] : NULL, &run)) {
		verdicts_path(&side, x->m->rec->path);
		printf("verdicts kept in %s: agprof report shows them\n", side.buf ? side.buf : "");
	}
	for (size_t k = 0; k < x->nv; k++)
		for (int i = 0; i < 3; i++)
			strbuf_release(&bufs[k][i]);
	strbuf_release(&side);
	free(bufs);
	free(v);
	return ret;
}

/* The files too big to copy: what the program writes into them lands in the user's. */
static void print_linked(const struct strbuf *linked)
{
	struct strbuf out = STRBUF_INIT;

	strbuf_addf(&out, "too big to copy, linked to yours (a run that writes them writes yours): %.*s%s\n",
		    (int)(linked->len > 400 ? 400 : linked->len), linked->buf, linked->len > 400 ? "..." : "");
	strbuf_sanitize_text(&out, 0, 0);
	fputs(out.buf ? out.buf : "", stdout);
	strbuf_release(&out);
}

/* The variants of x: as it is, each edit alone, all of them (when more than one). */
static int variants(struct experiment *x)
{
	x->nv = 1 + x->n + (x->n > 1);
	if (!(x->v = calloc(x->nv, sizeof(*x->v))) || !(x->v[0].measure = calloc(x->n * (size_t)x->o->runs, 8)))
		return error("out of memory");
	for (size_t k = 1; k < x->nv; k++) {
		x->v[k].edits = k <= x->n ? &x->pick[k - 1] : x->pick;
		x->v[k].nedits = k <= x->n ? 1 : x->n;
		if (!(x->v[k].measure = calloc(x->v[k].nedits * (size_t)x->o->runs, 8)))
			return error("out of memory");
	}
	return 0;
}

static void experiment_release(struct experiment *x)
{
	for (size_t k = 0; x->v && k < x->nv; k++) {
		free(x->v[k].measure);
		strbuf_release(&x->v[k].line);
		strbuf_release(&x->v[k].summary);
		strbuf_release(&x->v[k].what);
		strbuf_release(&x->v[k].file_what);
	}
	free(x->v);
	written_files_release(&x->base);
	free(x->varies);
	strbuf_release(&x->linked);
	if (x->scratch[0] && !getenv("AGPROF_KEEP_VERIFY"))
		scratch_remove(x->scratch);
}

enum verify_result fix_verify(const struct model *m, const struct finding *const *pick, size_t n,
			      const struct verify_opts *o)
{
	struct experiment x = { .m = m, .pick = pick, .n = n, .o = o, .argv = o->command };
	char **recorded = NULL;
	enum verify_result ret = VERIFY_CANNOT;

	for (size_t i = 0; i < n; i++)
		if (pick[i]->fix.cell)
			return error("the edit of %s is a notebook cell's: run the corrected cell in the notebook"
				     " (agprof fix prints it)", pick[i]->fix.cell), VERIFY_CANNOT;
	if (n > VERIFY_MAX_EDITS)
		return error("%zu edits: at most %d are tried in one experiment (pick with --rule or --function)", n,
			     VERIFY_MAX_EDITS), VERIFY_CANNOT;
	if (check_paths(m->session.cwd, pick, n))
		return VERIFY_CANNOT;
	if (!x.argv && !(x.argv = recorded = trusted_command(m, o->trust_recorded)))
		return VERIFY_CANNOT;
	if (variants(&x)) {
		ret = VERIFY_FAILED;
		goto out;
	}
	if (prepare(&x))
		goto out;
	printf("agprof fix --verify: %zu edit%s tried %s on copies of %s in %s (your files are untouched);\n"
	       "running the program %d time%s as it is and as edited%s\n", n, n == 1 ? "" : "s",
	       n == 1 ? "alone" : "each alone and all together", m->session.cwd, x.scratch, o->runs,
	       o->runs == 1 ? "" : "s", o->time_limit > 0 ? ", each run within the time limit" : "");
	if (x.linked.len)
		print_linked(&x.linked);
	if (!run_all(&x))
		ret = conclude(&x);
out:
	experiment_release(&x);
	free_argv(recorded);
	return ret;
}
