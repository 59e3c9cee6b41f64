/*
 * sql_rows.h - a metric source (model.h) made of the rows of one SQL query:
 * a rule's `select: sql` (rules.c) and the job sources of a merged
 * recording (ranks.c, from analyzer/model/sql/) read the recording this way.
 * Columns are the fields; integers and reals are numbers, text is text,
 * NULL is missing.
 */
#ifndef AGPROF_SQL_ROWS_H
#define AGPROF_SQL_ROWS_H

#include "model.h"

#include <sqlite3.h>
#include <stddef.h>

/*
 * Run sql (which must only read) on db into a source named name (static
 * storage).  0, or -1 with the reason in err (SQLite's message, "must only
 * read", out of memory).
 */
int sql_rows_source(sqlite3 *db, const char *sql, const char *name, struct metric_source *out, char *err,
		    size_t errlen);

/* Set the text of field of row (a column of the query, e.g. a placeholder `'' AS cause`); 0 or -1. */
int sql_rows_set_text(struct metric_source *src, size_t row, const char *field, const char *text);

#endif
