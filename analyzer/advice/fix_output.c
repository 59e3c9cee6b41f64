/*
 * fix_output.c - an edit as the user reads it (fix.h): the unified diff of
 * agprof fix, and the JSON and SARIF members that carry it.
 */
#include "fix.h"
#include "json.h"
#include "model.h"
#include "srcfile.h"
#include "verdicts.h"

#include <string.h>

#define DIFF_CONTEXT 3

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
	json_kv_str(j, "experiment", finding_try_command(f));
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

