/*
 * report_ranks.c - the per-rank summary of a merged recording in the text
 * and JSON reports.  Reads the model's ranks source (ranks.h) only.
 */
#include "duration.h"
#include "json.h"
#include "ranks.h"
#include "report.h"

#include <math.h>
#include <stdio.h>

/* A share as "12.3%", "-" when missing. */
static const char *share_str(char *buf, size_t len, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%.1f%%", v * 100.0);
	return buf;
}

static const char *time_str(char *buf, size_t len, double ns)
{
	if (isnan(ns))
		snprintf(buf, len, "-");
	else
		duration_format(buf, len, (int64_t)ns);
	return buf;
}

static long long num_or0(const struct model *m, size_t row, const char *field)
{
	double v = ranks_num(m, row, field);

	return isnan(v) ? 0 : (long long)v;
}

void report_ranks_text(struct strbuf *out, const struct model *m)
{
	size_t n = ranks_count(m);

	if (!n)
		return;
	strbuf_addstr(out, "\nRanks: one per worker recording (agprof merge)\n");
	strbuf_addf(out, "  %4s %-10s %-12s %5s %10s %6s %8s %6s %7s %10s  %s\n", "rank", "task", "host", "steps",
		    "step time", "traces", "retraces", "eager", "eager%", "input", "clock");
	for (size_t i = 0; i < n; i++) {
		char step[DURATION_MAX], input[DURATION_MAX], resid[DURATION_MAX], share[16], task[48];
		const char *type = ranks_text(m, i, "task_type");
		double index = ranks_num(m, i, "task_index");

		if (type && !isnan(index))
			snprintf(task, sizeof(task), "%s:%lld", type, (long long)index);
		else
			snprintf(task, sizeof(task), "-");
		strbuf_addf(out, "  %4lld %-10.10s %-12.12s %5lld %10s %6lld %8lld %6lld %7s %10s  %s, +-%s\n",
			    num_or0(m, i, "rank"), task, ranks_text(m, i, "host") ? ranks_text(m, i, "host") : "-",
			    num_or0(m, i, "steps"), time_str(step, sizeof(step), ranks_num(m, i, "step_ns")),
			    num_or0(m, i, "traces"), num_or0(m, i, "retraces"), num_or0(m, i, "eager_ops"),
			    share_str(share, sizeof(share), ranks_num(m, i, "eager_share")),
			    time_str(input, sizeof(input), ranks_num(m, i, "input_ns")),
			    ranks_text(m, i, "clock_method") ? ranks_text(m, i, "clock_method") : "-",
			    time_str(resid, sizeof(resid), ranks_num(m, i, "clock_residual_ns")));
	}
}

void report_ranks_json(struct json *j, const struct model *m)
{
	static const char *const nums[] = { "rank", "task_index", "steps", "step_ns", "traces", "retraces",
					    "trace_ns", "active_ns", "eager_ops", "eager_ns", "input_ns",
					    "clock_offset_ns", "clock_residual_ns" };
	static const char *const shares[] = { "eager_share", "input_share" };
	static const char *const texts[] = { "task_type", "host", "source", "clock_method" };
	size_t n = ranks_count(m);

	json_begin_array(j, JSON_LINES);
	for (size_t i = 0; i < n; i++) {
		json_begin_object(j);
		for (size_t k = 0; k < sizeof(nums) / sizeof(nums[0]); k++) {
			double v = ranks_num(m, i, nums[k]);

			json_key(j, nums[k]);
			if (isnan(v))
				json_null(j);
			else
				json_int(j, (long long)v);
		}
		for (size_t k = 0; k < sizeof(shares) / sizeof(shares[0]); k++)
			json_kv_num(j, shares[k], ranks_num(m, i, shares[k]));
		for (size_t k = 0; k < sizeof(texts) / sizeof(texts[0]); k++)
			json_kv_str(j, texts[k], ranks_text(m, i, texts[k]));
		json_end_object(j);
	}
	json_end_array(j);
}
