/*
 * verdicts.c - the experiments' sidecar (verdicts.h): written by
 * `agprof fix --verify`, read back by every analysis of the recording.
 */
#include "verdicts.h"
#include "duration.h"
#include "json.h"
#include "json_read.h"
#include "model_internal.h"
#include "recording.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Times beyond this (11 days) in a sidecar are not a run's: the entry is ignored. */
#define MAX_NS 1000000000000000LL

static const char *const kind_names[] = { "none", "verified", "refuted", "failed" };

const char *verdict_name(int kind)
{
	return kind_names[kind >= VERDICT_VERIFIED && kind <= VERDICT_FAILED ? kind : VERDICT_NONE];
}

void verdicts_path(struct strbuf *sb, const char *rec_path)
{
	strbuf_addf(sb, "%s.verify.json", rec_path);
}

/* One verdict with the finding it is about, as the sidecar keys it. */
struct entry {
	struct finding_key k;
	struct finding_verdict v;
};

static void add_signed(struct strbuf *sb, int64_t ns)
{
	strbuf_addch(sb, ns < 0 ? '-' : '+');
	strbuf_add_duration(sb, ns < 0 ? -ns : ns);
}

void verdict_text(struct strbuf *sb, const struct finding_verdict *v)
{
	if (v->kind == VERDICT_FAILED) {
		strbuf_addf(sb, "the experiment failed: %s", v->reason ? v->reason : "?");
		return;
	}
	strbuf_addf(sb, "%s on this program: ", v->kind == VERDICT_VERIFIED ? "verified" : "refuted");
	if (v->reason)
		strbuf_addf(sb, "%s; ", v->reason);
	strbuf_addf(sb, "%s ", v->measure ? v->measure : "the time");
	strbuf_add_duration(sb, v->base_ns);
	strbuf_addstr(sb, " -> ");
	strbuf_add_duration(sb, v->new_ns);
	strbuf_addstr(sb, " (");
	add_signed(sb, v->new_ns - v->base_ns);
	strbuf_addstr(sb, "; from ");
	add_signed(sb, v->low_ns);
	strbuf_addstr(sb, " to ");
	add_signed(sb, v->high_ns);
	strbuf_addf(sb, " over %d x %d runs), output %s", v->runs, v->runs, v->output ? v->output : "not compared");
}

/* The recording's identity: its size and modification time.  0 or -1. */
static int rec_key(const char *rec_path, long long *size, long long *sec, long long *nsec)
{
	struct stat st;

	if (stat(rec_path, &st))
		return -1;
	*size = (long long)st.st_size;
	*sec = (long long)st.st_mtim.tv_sec;
	*nsec = (long long)st.st_mtim.tv_nsec;
	return 0;
}

/* v's members, inside an object already begun. */
static void verdict_members(struct json *j, const struct finding_verdict *v)
{
	json_kv_str(j, "verdict", verdict_name(v->kind));
	json_kv_str(j, "reason", v->reason);
	json_kv_str(j, "measure", v->measure);
	json_kv_int(j, "base_ns", v->base_ns);
	json_kv_int(j, "new_ns", v->new_ns);
	json_kv_int(j, "low_ns", v->low_ns);
	json_kv_int(j, "high_ns", v->high_ns);
	json_kv_int(j, "runs", v->runs);
	json_kv_str(j, "output", v->output);
}

void verdict_json(struct json *j, const struct finding_verdict *v)
{
	if (!v->kind) {
		json_null(j);
		return;
	}
	json_begin_object(j);
	verdict_members(j, v);
	json_end_object(j);
}

/* k's members, inside an object already begun. */
static void key_members(struct json *j, const struct finding_key *k)
{
	json_kv_str(j, "rule", k->rule);
	json_kv_str(j, "function", k->function);
	json_kv_str(j, "file", k->file);
	json_kv_int(j, "line", k->line);
}

static void write_entry(struct json *j, const struct entry *e)
{
	json_begin_object(j);
	key_members(j, &e->k);
	verdict_members(j, &e->v);
	json_end_object(j);
}

/* The edits together: the findings' keys, then the verdict's members (docs/report-json.md). */
static void together_members(struct json *j, const struct verify_together *t)
{
	json_key(j, "findings");
	json_begin_array(j, 0);
	for (size_t i = 0; i < t->nkeys; i++) {
		json_begin_object(j);
		key_members(j, &t->keys[i]);
		json_end_object(j);
	}
	json_end_array(j);
	verdict_members(j, &t->verdict);
}

void verdict_together_json(struct json *j, const struct verify_together *t)
{
	if (!t->verdict.kind) {
		json_null(j);
		return;
	}
	json_begin_object(j);
	together_members(j, t);
	json_end_object(j);
}

void verdict_together_text(struct strbuf *sb, const struct verify_together *t)
{
	strbuf_addf(sb, "the %zu edits together (", t->nkeys);
	for (size_t i = 0; i < t->nkeys; i++)
		strbuf_addf(sb, "%s%s%s%s", i ? ", " : "", t->keys[i].rule, t->keys[i].function ? " " : "",
			    t->keys[i].function ? t->keys[i].function : "");
	strbuf_addstr(sb, "): ");
	verdict_text(sb, &t->verdict);
}

static int same_key(const struct finding_key *a, const struct finding_key *b)
{
	return !strcmp(a->rule, b->rule) && !strcmp(a->function ? a->function : "", b->function ? b->function : "") &&
	       !strcmp(a->file ? a->file : "", b->file ? b->file : "") && a->line == b->line;
}

/* A finding's key in the sidecar, checked: 0, or -1 when it is to be ignored. */
static int read_key(const struct jnode *o, struct finding_key *k)
{
	double line = json_get_num(o, "line", -1);

	memset(k, 0, sizeof(*k));
	if (!(k->rule = json_get_str(o, "rule")) || line < 0 || line > 1e7)
		return -1;
	k->function = json_get_str(o, "function");
	k->file = json_get_str(o, "file");
	k->line = (int)line;
	return 0;
}

/* A verdict's members in the sidecar, checked: 0, or -1 when they are to be ignored. */
static int read_verdict(const struct jnode *o, struct finding_verdict *v)
{
	const char *kind = json_get_str(o, "verdict");
	double runs = json_get_num(o, "runs", -1);
	const char *const nums[] = { "base_ns", "new_ns", "low_ns", "high_ns" };
	int64_t *dst[] = { &v->base_ns, &v->new_ns, &v->low_ns, &v->high_ns };

	memset(v, 0, sizeof(*v));
	if (!kind || runs < 1 || runs > 100)
		return -1;
	for (int k = VERDICT_VERIFIED; k <= VERDICT_FAILED; k++)
		if (!strcmp(kind, kind_names[k]))
			v->kind = k;
	for (int i = 0; i < 4; i++) {
		double x = json_get_num(o, nums[i], 0);

		if (x < -MAX_NS || x > MAX_NS)
			return -1;
		*dst[i] = (int64_t)x;
	}
	v->runs = (int)runs;
	v->reason = json_get_str(o, "reason");
	v->measure = json_get_str(o, "measure");
	v->output = json_get_str(o, "output");
	return v->kind ? 0 : -1;
}

/* An entry of the sidecar, checked: 0, or -1 when it is to be ignored. */
static int read_entry(const struct jnode *o, struct entry *e)
{
	return read_key(o, &e->k) || read_verdict(o, &e->v) ? -1 : 0;
}

/* The sidecar's "all" (o; NULL when absent) into t: 0, or -1 (t's kind 0) when absent or to be ignored. */
static int read_together(const struct jnode *o, struct verify_together *t)
{
	const struct jnode *list = o && o->type == J_OBJ ? json_get(o, "findings") : NULL;

	memset(t, 0, sizeof(*t));
	if (!list || list->type != J_ARR || read_verdict(o, &t->verdict))
		goto ignore;
	for (const struct jnode *k = list->child; k; k = k->next)
		if (t->nkeys == VERIFY_TOGETHER_MAX || read_key(k, &t->keys[t->nkeys++]))
			goto ignore;
	if (t->nkeys > 1)
		return 0;
ignore:
	memset(t, 0, sizeof(*t));
	return -1;
}

/*
 * The sidecar of rec_path, parsed and checked against the recording:
 * its entries (up to VERDICTS_MAX, pointing into doc) into e, its edits
 * together into *t (kind 0 when none); the count, or -1: none (no file,
 * another recording's) or after one warning line (malformed).
 */
static int read_sidecar(const char *rec_path, struct json_doc *doc, struct entry *e, struct verify_together *t)
{
	struct strbuf path = STRBUF_INIT, text = STRBUF_INIT;
	const char *why = NULL;
	long long size, sec, nsec;
	const struct jnode *rec, *list;
	int n = -1, fd;

	memset(t, 0, sizeof(*t));
	verdicts_path(&path, rec_path);
	if (strbuf_failed(&path) || (fd = open(path.buf, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) < 0)
		goto out;
	for (char buf[65536];;) {
		ssize_t r = read(fd, buf, sizeof(buf));

		if (r <= 0 || text.len > JSON_READ_MAX_BYTES) {
			why = r < 0 ? strerror(errno) : text.len > JSON_READ_MAX_BYTES ? "too large" : NULL;
			break;
		}
		strbuf_add(&text, buf, (size_t)r);
	}
	close(fd);
	if (why || strbuf_failed(&text) || json_read(doc, text.buf ? text.buf : "", text.len, &why))
		goto bad;
	if (json_get_num(doc->root, "agprof_verify", 0) != VERDICTS_VERSION) {
		why = "not a version 1 verify file";
		goto bad;
	}
	rec = json_get(doc->root, "recording");
	list = json_get(doc->root, "findings");
	if (!rec || !list || list->type != J_ARR) {
		why = "no recording or findings";
		goto bad;
	}
	if (rec_key(rec_path, &size, &sec, &nsec) || json_get_num(rec, "size", -1) != (double)size ||
	    json_get_num(rec, "mtime_s", -1) != (double)sec || json_get_num(rec, "mtime_nsec", -1) != (double)nsec)
		goto release;  /* another recording's (or this one rewritten): not ours to apply */
	n = 0;
	for (const struct jnode *o = list->child; o && n < VERDICTS_MAX; o = o->next)
		n += !read_entry(o, &e[n]);
	read_together(json_get(doc->root, "all"), t);
	goto out;
bad:
	warning("ignoring '%s': %s", path.buf, why ? why : "unreadable");
release:
	json_doc_release(doc);
out:
	strbuf_release(&path);
	strbuf_release(&text);
	return n;
}

/* The sidecar's JSON of entries e[0..n) into out. */
static void write_doc(struct strbuf *out, const char *rec_path, const struct entry *e, size_t n,
		      const struct verify_together *t, const struct verdicts_run *run)
{
	struct json j;
	long long size = 0, sec = 0, nsec = 0;

	rec_key(rec_path, &size, &sec, &nsec);
	json_init(&j, out);
	json_begin_object(&j);
	json_kv_int(&j, "agprof_verify", VERDICTS_VERSION);
	json_key(&j, "recording");
	json_begin_object(&j);
	json_kv_int(&j, "size", size);
	json_kv_int(&j, "mtime_s", sec);
	json_kv_int(&j, "mtime_nsec", nsec);
	json_end_object(&j);
	json_kv_int(&j, "runs", run->runs);
	json_kv_num(&j, "rtol", run->rtol);
	json_kv_num(&j, "atol", run->atol);
	json_kv_num(&j, "time_limit_s", run->time_limit);
	json_key(&j, "findings");
	json_begin_array(&j, JSON_LINES);
	for (size_t i = 0; i < n; i++)
		write_entry(&j, &e[i]);
	json_end_array(&j);
	if (t->verdict.kind) {
		json_key(&j, "all");
		json_begin_object(&j);
		together_members(&j, t);
		json_end_object(&j);
	}
	json_end_object(&j);
	strbuf_addch(out, '\n');
}

/* f's key (its strings f's). */
static struct finding_key key_of(const struct finding *f)
{
	return (struct finding_key){ f->rule, f->function, f->loc.file, f->loc.line };
}

int verdicts_write(const char *rec_path, const struct finding *const *f, const struct finding_verdict *v, size_t n,
		   const struct finding_verdict *all, const struct verdicts_run *run)
{
	struct entry *e = calloc(VERDICTS_MAX * 2, sizeof(*e));
	struct verify_together t;
	struct json_doc doc = { 0 };
	struct strbuf path = STRBUF_INIT, tmp = STRBUF_INIT, out = STRBUF_INIT;
	size_t k = 0;
	int old, ret = -1, fd;

	if (!e)
		return error("out of memory");
	for (size_t i = 0; i < n && k < VERDICTS_MAX; i++)
		e[k++] = (struct entry){ key_of(f[i]), v[i] };
	old = read_sidecar(rec_path, &doc, e + VERDICTS_MAX, &t);
	for (int i = 0; i < old && k < VERDICTS_MAX; i++) {
		int dup = 0;

		for (size_t x = 0; x < n && !dup; x++)
			dup = same_key(&e[x].k, &e[VERDICTS_MAX + i].k);
		if (!dup)
			e[k++] = e[VERDICTS_MAX + i];
	}
	/* this experiment's edits together replace the old sidecar's; without one, the old stays */
	if (all && all->kind && n > 1 && n <= VERIFY_TOGETHER_MAX) {
		t.nkeys = n;
		t.verdict = *all;
		for (size_t i = 0; i < n; i++)
			t.keys[i] = key_of(f[i]);
	}
	write_doc(&out, rec_path, e, k, &t, run);
	verdicts_path(&path, rec_path);
	strbuf_addf(&tmp, "%s.tmp", path.buf ? path.buf : "");
	if (strbuf_failed(&out) || strbuf_failed(&path) || strbuf_failed(&tmp)) {
		error("out of memory");
	} else if ((fd = open(tmp.buf, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0) {
		error("cannot write '%s': %s", tmp.buf, strerror(errno));
	} else {
		int ok = write(fd, out.buf, out.len) == (ssize_t)out.len;

		if (close(fd) || !ok || rename(tmp.buf, path.buf))
			error("cannot write '%s': %s", path.buf, strerror(errno));
		else
			ret = 0;
		if (ret)
			unlink(tmp.buf);
	}
	json_doc_release(&doc);
	free(e);
	strbuf_release(&path);
	strbuf_release(&tmp);
	strbuf_release(&out);
	return ret;
}

/* The verdict v (its strings into m) on f: what it claims, or the advice it takes back. */
static void apply(struct model *m, struct finding *f, const struct finding_verdict *v)
{
	struct strbuf line = STRBUF_INIT;

	f->verdict = *v;
	f->verdict.measure = model_strdup(m, v->measure);
	f->verdict.output = model_strdup(m, v->output);
	f->verdict.reason = model_strdup(m, v->reason);
	verdict_text(&line, &f->verdict);
	strbuf_sanitize_text(&line, 0, 0);
	if (v->kind == VERDICT_VERIFIED) {
		f->experiment = NULL;
		f->saving_ns = v->base_ns > v->new_ns ? v->base_ns - v->new_ns : 0;
		f->saving_method = model_strf(m, "measured by agprof fix --verify: %s", line.buf ? line.buf : "");
		f->saving_summary = "measured on this program (agprof fix --verify)";
	} else if (v->kind == VERDICT_REFUTED) {
		/* the advice is taken back for this recording: no edit, no saving, no command to try it */
		f->experiment = NULL;
		f->recommendation = NULL;
		memset(&f->fix, 0, sizeof(f->fix));
		f->saving_ns = 0;
		f->forecast_ns = 0;  /* a refuted forecast is no figure to show */
		f->forecasts = 0;
		f->saving_method = model_strf(m, "none: %s", line.buf ? line.buf : "");
		f->saving_summary = NULL;
		f->no_edit = NULL;
	}
	strbuf_release(&line);
}

/* The sidecar's edits together (strings in its doc) into m, its strings m's. */
static void apply_together(struct model *m, const struct verify_together *t)
{
	struct verify_together *to = &m->together;

	*to = *t;
	for (size_t i = 0; i < t->nkeys; i++) {
		to->keys[i].rule = model_strdup(m, t->keys[i].rule);
		to->keys[i].function = model_strdup(m, t->keys[i].function);
		to->keys[i].file = model_strdup(m, t->keys[i].file);
	}
	to->verdict.measure = model_strdup(m, t->verdict.measure);
	to->verdict.output = model_strdup(m, t->verdict.output);
	to->verdict.reason = model_strdup(m, t->verdict.reason);
}

void verdicts_apply(struct model *m)
{
	struct entry *e;
	struct verify_together t;
	struct json_doc doc = { 0 };
	int n;

	if (!m->rec || !m->rec->path || !m->nfindings || !(e = calloc(VERDICTS_MAX, sizeof(*e))))
		return;
	n = read_sidecar(m->rec->path, &doc, e, &t);
	if (n >= 0 && t.verdict.kind)
		apply_together(m, &t);
	for (size_t i = 0; i < m->nfindings && n > 0; i++) {
		struct finding *f = &m->findings[i];
		struct finding_key key = key_of(f);

		for (int k = 0; k < n; k++)
			if (same_key(&key, &e[k].k)) {
				apply(m, f, &e[k].v);
				break;
			}
	}
	if (n > 0)
		model_sort_findings(m);
	json_doc_release(&doc);
	free(e);
}
