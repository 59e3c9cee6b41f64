/* sql_rows.c - see sql_rows.h.  The rows are copied: the source outlives the statement. */
#include "sql_rows.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct sql_rows {
	char **cols;
	size_t ncols;
	struct metric_value *cells; /* nrows * ncols */
	size_t nrows;
};

static void sql_rows_release(void *data)
{
	struct sql_rows *t = data;

	if (!t)
		return;
	for (size_t i = 0; t->cols && i < t->ncols; i++)
		free(t->cols[i]);
	free(t->cols);
	for (size_t i = 0; i < t->nrows * t->ncols; i++)
		free((char *)t->cells[i].text);
	free(t->cells);
	free(t);
}

static size_t sql_count(const struct model *m, void *data)
{
	(void)m;
	return ((struct sql_rows *)data)->nrows;
}

static int column_of(const struct sql_rows *t, const char *field)
{
	for (size_t c = 0; c < t->ncols; c++)
		if (t->cols[c] && !strcmp(t->cols[c], field))
			return (int)c;
	return -1;
}

static int sql_get(const struct model *m, void *data, size_t row, const char *field, struct metric_value *out)
{
	struct sql_rows *t = data;
	int c = column_of(t, field);

	(void)m;
	if (c < 0)
		return -1;
	*out = t->cells[row * t->ncols + (size_t)c];
	return 0;
}

static void sql_anchor(const struct model *m, void *data, size_t row, struct metric_anchor *a)
{
	struct metric_value v;

	if (!sql_get(m, data, row, "function", &v) && v.type == METRIC_TEXT)
		a->function = v.text;
	if (!sql_get(m, data, row, "file", &v) && v.type == METRIC_TEXT)
		a->loc.file = v.text;
	if (!sql_get(m, data, row, "line", &v) && v.type == METRIC_NUM)
		a->loc.line = (int)v.num;
	if (!sql_get(m, data, row, "cost_ns", &v) && v.type == METRIC_NUM)
		a->cost_ns = (int64_t)v.num;
	if (!sql_get(m, data, row, "start_ns", &v) && v.type == METRIC_NUM)
		a->start_ns = (int64_t)v.num;
	if (!sql_get(m, data, row, "end_ns", &v) && v.type == METRIC_NUM)
		a->end_ns = (int64_t)v.num;
	if (!sql_get(m, data, row, "cause", &v) && v.type == METRIC_TEXT)
		a->cause = retrace_cause_parse(v.text);
}

/* One result row of s appended to t's cells; 0, or -1 when out of memory. */
static int sql_add_row(struct sql_rows *t, sqlite3_stmt *s, size_t *cap)
{
	struct metric_value *cells;

	if (t->nrows >= *cap) {
		size_t ncap = *cap ? *cap * 2 : 16;
		struct metric_value *p = realloc(t->cells, ncap * (t->ncols ? t->ncols : 1) * sizeof(*p));

		if (!p)
			return -1;
		t->cells = p;
		*cap = ncap;
	}
	cells = &t->cells[t->nrows * t->ncols];
	for (size_t c = 0; c < t->ncols; c++) {
		struct metric_value *v = &cells[c];

		memset(v, 0, sizeof(*v));
		switch (sqlite3_column_type(s, (int)c)) {
		case SQLITE_INTEGER:
		case SQLITE_FLOAT:
			v->type = METRIC_NUM;
			v->num = sqlite3_column_double(s, (int)c);
			break;
		case SQLITE_TEXT:
			v->type = METRIC_TEXT;
			v->text = strdup((const char *)sqlite3_column_text(s, (int)c));
			break;
		default:
			break;
		}
	}
	t->nrows++;
	return 0;
}

/* The statement of sql, which must only read; NULL with the reason in err. */
static sqlite3_stmt *sql_prepare(sqlite3 *db, const char *sql, char *err, size_t errlen)
{
	sqlite3_stmt *s = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) {
		snprintf(err, errlen, "query: %s", sqlite3_errmsg(db));
		return NULL;
	}
	if (!sqlite3_stmt_readonly(s)) {
		snprintf(err, errlen, "query must only read the recording");
		sqlite3_finalize(s);
		return NULL;
	}
	return s;
}

int sql_rows_source(sqlite3 *db, const char *sql, const char *name, struct metric_source *out, char *err,
		    size_t errlen)
{
	sqlite3_stmt *s;
	struct sql_rows *t = calloc(1, sizeof(*t));
	size_t cap = 0;
	int rc;

	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (!(s = sql_prepare(db, sql, err, errlen))) {
		free(t);
		return -1;
	}
	t->ncols = (size_t)sqlite3_column_count(s);
	t->cols = calloc(t->ncols + 1, sizeof(*t->cols));
	for (size_t c = 0; t->cols && c < t->ncols; c++)
		t->cols[c] = strdup(sqlite3_column_name(s, (int)c));
	while ((rc = sqlite3_step(s)) == SQLITE_ROW && sql_add_row(t, s, &cap) == 0)
		;
	if (rc != SQLITE_DONE) {  /* an error, or out of memory (rc is still SQLITE_ROW) */
		snprintf(err, errlen, "query: %s", rc == SQLITE_ROW ? "out of memory" : sqlite3_errmsg(db));
		sqlite3_finalize(s);
		sql_rows_release(t);
		return -1;
	}
	sqlite3_finalize(s);
	memset(out, 0, sizeof(*out));
	out->name = name;
	out->count = sql_count;
	out->get = sql_get;
	out->anchor = sql_anchor;
	out->release = sql_rows_release;
	out->data = t;
	return 0;
}

int sql_rows_set_text(struct metric_source *src, size_t row, const char *field, const char *text)
{
	struct sql_rows *t = src->data;
	int c = column_of(t, field);
	struct metric_value *v;
	char *copy;

	if (c < 0 || row >= t->nrows || !(copy = strdup(text ? text : "")))
		return -1;
	v = &t->cells[row * t->ncols + (size_t)c];
	free((char *)v->text);
	v->type = METRIC_TEXT;
	v->text = copy;
	return 0;
}
