/* diff_json.c - `agprof diff --format json` (docs/report-json.md, "agprof diff"). */
#include "diff.h"
#include "json.h"
#include "report.h"

#include <math.h>

static void side_json(struct json *j, const struct diff_side *s)
{
	if (!s->present) {
		json_null(j);
		return;
	}
	json_begin_object(j);
	json_kv_int(j, "line", s->def.line);
	json_kv_int(j, "traces", (long long)s->traces);
	json_kv_int(j, "calls", s->calls);
	json_kv_int(j, "trace_ns", s->trace_ns);
	json_kv_int(j, "call_ns", s->call_ns);
	json_kv_int(j, "call_median_ns", s->median_ns);
	json_kv_int(j, "call_p25_ns", s->p25_ns);
	json_kv_int(j, "call_p75_ns", s->p75_ns);
	json_key(j, "retrace_causes");
	json_begin_object(j);
	for (int c = 1; c < CAUSE__COUNT; c++)
		if (s->cause_counts[c])
			json_kv_int(j, retrace_cause_name((enum retrace_cause)c), (long long)s->cause_counts[c]);
	json_end_object(j);
	json_kv_int(j, "blackbox_execs", s->blackbox_execs);
	json_kv_int(j, "blackbox_ns", s->blackbox_ns);
	json_end_object(j);
}

static void compare_json(struct json *j, const struct stats_compare *s)
{
	json_kv_num(j, "ratio", s->ratio);
	json_kv_num(j, "ratio_low", s->ratio_lo > 0 ? s->ratio_lo : NAN);
	json_kv_num(j, "ratio_high", s->ratio_hi);
	json_kv_num(j, "p_slower", s->p_larger);
	json_kv_num(j, "p_faster", s->p_smaller);
}

static void functions_json(struct json *j, const struct diff *d)
{
	json_key(j, "functions");
	json_begin_array(j, JSON_LINES);
	for (size_t i = 0; i < d->nfns; i++) {
		const struct diff_function *x = &d->fns[i];

		json_begin_object(j);
		json_kv_str(j, "function", x->name);
		json_kv_str(j, "file", x->file);
		json_kv_str(j, "made_by", x->made_by);
		if (x->rank >= 0)
			json_kv_int(j, "rank", x->rank);
		json_key(j, "base");
		side_json(j, &x->base);
		json_key(j, "new");
		side_json(j, &x->new_);
		json_kv_int(j, "delta_ns", x->delta_ns);
		json_key(j, "calls_compared");
		if (x->compared) {
			json_begin_object(j);
			compare_json(j, &x->calls);
			json_end_object(j);
		} else
			json_null(j);
		json_end_object(j);
	}
	json_end_array(j);
}

static void line_side(struct json *j, int line, int64_t count, int64_t ns)
{
	if (!line && !count) {
		json_null(j);
		return;
	}
	json_begin_object(j);
	json_kv_int(j, "line", line);
	json_kv_int(j, "count", count);
	json_kv_int(j, "ns", ns);
	json_end_object(j);
}

static void lines_json(struct json *j, const struct diff *d)
{
	json_key(j, "lines");
	json_begin_array(j, JSON_LINES);
	for (size_t i = 0; i < d->nlines; i++) {
		const struct diff_line *x = &d->lines[i];

		json_begin_object(j);
		json_kv_str(j, "kind", x->kind);
		json_kv_str(j, "file", x->file);
		json_kv_str(j, "function", x->func);
		json_kv_str(j, "what", x->what);
		json_key(j, "base");
		line_side(j, x->line_base, x->count[0], x->ns[0]);
		json_key(j, "new");
		line_side(j, x->line_new, x->count[1], x->ns[1]);
		json_kv_int(j, "delta_ns", x->delta_ns);
		json_end_object(j);
	}
	json_end_array(j);
}

static void finding_json(struct json *j, const struct model *m, const struct finding *f)
{
	json_begin_object(j);
	json_kv_str(j, "rule", f->rule);
	json_kv_str(j, "severity", severity_name(f->severity));
	json_kv_str(j, "function", f->function);
	json_kv_str(j, "cause", retrace_cause_name(f->cause));
	json_kv_str(j, "file", report_rel_path(m, f->loc.file));
	json_kv_int(j, "line", f->loc.line);
	json_kv_str(j, "message", f->message);
	json_kv_int(j, "cost_ns", f->cost_ns);
	json_end_object(j);
}

static void findings_list(struct json *j, const struct diff *d, const char *key, const struct diff_finding *v, size_t n)
{
	json_key(j, key);
	json_begin_array(j, JSON_LINES);
	for (size_t i = 0; i < n; i++) {
		if (v[i].base && v[i].new_) {
			json_begin_object(j);
			json_key(j, "base");
			finding_json(j, d->base, v[i].base);
			json_key(j, "new");
			finding_json(j, d->new_, v[i].new_);
			json_end_object(j);
		} else if (v[i].new_)
			finding_json(j, d->new_, v[i].new_);
		else
			finding_json(j, d->base, v[i].base);
	}
	json_end_array(j);
}

static void session_json(struct json *j, const char *key, const char *path, const struct model_session *s)
{
	json_key(j, key);
	json_begin_object(j);
	json_kv_str(j, "recording", path);
	json_kv_str(j, "tf_version", s->tf_version);
	json_kv_str(j, "python_version", s->python_version);
	json_kv_str(j, "host", s->host);
	json_kv_int(j, "active_ns", s->active_ns);
	json_kv_int(j, "traces", s->traces);
	json_kv_int(j, "trace_ns", s->trace_ns);
	json_kv_int(j, "eager_ops", s->eager_ops);
	json_kv_int(j, "eager_ns", s->eager_ns);
	json_kv_num(j, "eager_share", s->eager_share);
	json_kv_int(j, "input_waits", s->input_waits);
	json_kv_int(j, "input_ns", s->input_ns);
	json_end_object(j);
}

static void step_json(struct json *j, const struct diff *d)
{
	json_key(j, "step");
	if (!d->step) {
		json_null(j);
		return;
	}
	json_begin_object(j);
	json_kv_str(j, "function", d->step->name);
	json_kv_str(j, "file", d->step->file);
	json_kv_int(j, "base_steps", (long long)d->step_period.na);
	json_kv_int(j, "new_steps", (long long)d->step_period.nb);
	json_kv_int(j, "base_median_ns", d->step_median[0]);
	json_kv_int(j, "new_median_ns", d->step_median[1]);
	if (d->step_sampled) {
		json_kv_num(j, "base_cpu_wait_share", d->step_wait_share[0]);
		json_kv_num(j, "new_cpu_wait_share", d->step_wait_share[1]);
		json_kv_num(j, "load_factor", d->step_load_factor);
	}
	if (d->step_compared)
		compare_json(j, &d->step_period);
	json_end_object(j);
}

void diff_print_json(struct strbuf *out, const struct diff *d)
{
	struct json j;

	json_init(&j, out);
	json_begin_object(&j);
	json_kv_int(&j, "version", 1);
	json_kv_str(&j, "summary", d->summary);
	json_key(&j, "warnings");
	json_begin_array(&j, JSON_LINES);
	for (size_t i = 0; i < d->nwarnings; i++)
		json_str(&j, d->warnings[i]);
	json_end_array(&j);
	session_json(&j, "base", d->base_path, &d->base->session);
	session_json(&j, "new", d->new_path, &d->new_->session);
	step_json(&j, d);
	functions_json(&j, d);
	lines_json(&j, d);
	json_key(&j, "findings");
	json_begin_object(&j);
	findings_list(&j, d, "new", d->added, d->nadded);
	findings_list(&j, d, "resolved", d->resolved, d->nresolved);
	findings_list(&j, d, "changed", d->changed, d->nchanged);
	json_end_object(&j);
	json_end_object(&j);
	strbuf_addch(out, '\n');
}
