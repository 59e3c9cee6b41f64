/*
 * report_loc.c - source locations as every printer writes them: the text
 * report, the JSON/CSV/SARIF printers and check's printers (report.h,
 * "Helpers shared with check's printers").  One home, so that a location
 * reads the same in each output.
 */
#include "report.h"
#include "model.h"
#include "json.h"
#include "pathdisp.h"

#include <string.h>

const char *report_rel_path(const struct model *m, const char *file)
{
	const char *cwd = m->session.cwd;
	size_t n;

	if (!file)
		return NULL;
	n = cwd ? strlen(cwd) : 0;
	if (n && !strncmp(file, cwd, n) && file[n] == '/')
		return file + n + 1;
	return file;
}

/* "In [3], line 4" for a notebook cell's code (user_code.c), as IPython names the cell. */
static int add_cell_loc(struct strbuf *sb, const struct model *m, const char *file, int line)
{
	const struct model_cell *c = model_cell(m, file);

	if (!c)
		return 0;
	strbuf_addf(sb, "%s, line %d", c->label, line + c->first_line - 1);
	return 1;
}

/* "train.py:84 → gpflow/optimizers/scipy.py:224": the user's line, then the library's. */
void report_add_loc(struct strbuf *sb, const struct model *m, const struct source_loc *loc)
{
	if (!loc || !loc->file) {
		strbuf_addch(sb, '-');
		return;
	}
	if (!add_cell_loc(sb, m, loc->file, loc->line))
		strbuf_addf(sb, "%s:%d", path_display(loc->file, m->session.cwd), loc->line);
	if (loc->lib_file)
		strbuf_addf(sb, " \u2192 %s:%d", path_display(loc->lib_file, m->session.cwd), loc->lib_line);
}

/* The innermost library frame of loc as a location object, or null. */
void report_json_library_loc(struct json *j, const struct source_loc *loc)
{
	struct source_loc lib = { NULL, 0, NULL, 0, 0 };

	if (loc && loc->lib_file) {
		lib.file = loc->lib_file;
		lib.line = loc->lib_line;
	}
	report_json_loc(j, &lib);
}

void report_json_loc(struct json *j, const struct source_loc *loc)
{
	if (!loc || !loc->file) {
		json_null(j);
		return;
	}
	json_begin_object(j);
	json_kv_str(j, "file", loc->file);
	json_kv_int(j, "line", loc->line);
	json_end_object(j);
}
