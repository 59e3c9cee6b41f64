/*
 * fleet_tables.c - the fleet's table set and its typed CSV (see
 * fleet_export.h, fleet_internal.h): each table's columns and types come
 * from the current schema (schema.sql in a scratch in-memory database, the
 * eager_ops view defined over it as readers define it), so every recording,
 * whatever its version, is written with the same columns in the same
 * order, and every engine reads the files with the types of _schema.ddl,
 * without inference.
 */
#include "fleet_internal.h"
#include "db.h"
#include "kinds.h"
#include "strbuf.h"
#include "util.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct fleet_table tables[AGP_MAX_KINDS];
static size_t ntables;

/* The engines' type of an SQLite declared type (a computed column of the eager_ops view: an integer). */
static enum fleet_type type_of(const char *decl)
{
	if (!decl || !*decl || !strcmp(decl, "INTEGER"))
		return FT_BIGINT;
	if (!strcmp(decl, "REAL"))
		return FT_DOUBLE;
	return FT_STRING; /* TEXT, and BLOB as hex */
}

static const char *const type_names[] = { "BIGINT", "DOUBLE", "STRING" };

/* t's columns from the scratch database's pragma_table_info; 0 or -1. */
static int load_columns(sqlite3 *db, struct fleet_table *t)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT name, type FROM pragma_table_info(?1) ORDER BY cid");
	int rc = 0;

	if (!s)
		return -1;
	sqlite3_bind_text(s, 1, t->name, -1, SQLITE_STATIC);
	while (sqlite3_step(s) == SQLITE_ROW && t->ncols < FLEET_MAX_COLS) {
		const char *name = db_col_text(s, 0);

		if (!name || !(t->cols[t->ncols] = strdup(name))) {
			rc = -1;
			break;
		}
		t->types[t->ncols++] = type_of(db_col_text(s, 1));
	}
	sqlite3_finalize(s);
	return rc == 0 && t->ncols > 0 ? 0 : -1;
}

/* "SELECT "c1", ... FROM "t"" and the Spark/Hive DDL "recording STRING, c1 BIGINT, ..." of t. */
static int build_texts(struct fleet_table *t)
{
	struct strbuf sel = STRBUF_INIT, ddl = STRBUF_INIT;

	strbuf_addstr(&sel, "SELECT ");
	strbuf_addstr(&ddl, "recording STRING");
	for (int c = 0; c < t->ncols; c++) {
		strbuf_addf(&sel, "%s\"%s\"", c ? ", " : "", t->cols[c]);
		strbuf_addf(&ddl, ", %s %s", t->cols[c], type_names[t->types[c]]);
	}
	/* unqualified: an older file's TEMP view of the current columns (compat.c), or the eager_ops view */
	strbuf_addf(&sel, " FROM \"%s\"", t->name);
	if (strbuf_failed(&sel) || strbuf_failed(&ddl)) {
		strbuf_release(&sel);
		strbuf_release(&ddl);
		return -1;
	}
	t->select = strbuf_detach(&sel);
	t->ddl = strbuf_detach(&ddl);
	return 0;
}

int fleet_tables_load(const struct fleet_table **out, size_t *n)
{
	sqlite3 *db = NULL;
	int rc = 0;

	if (ntables) {
		*out = tables, *n = ntables;
		return 0;
	}
	if (sqlite3_open(":memory:", &db) != SQLITE_OK || sqlite3_exec(db, agprof_schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    db_define_eager_view(db) != 0)
		rc = -1;
	for (size_t i = 0; rc == 0 && i < agp_nkinds; i++) {
		struct fleet_table *t = &tables[ntables];

		if (agp_kinds[i].flags & AGP_KIND_STORAGE)
			continue;
		t->name = agp_kinds[i].table;
		if (load_columns(db, t) != 0 || build_texts(t) != 0)
			rc = -1;
		else
			ntables++;
	}
	sqlite3_close(db);
	if (rc != 0)
		return error("cannot read agprof's own schema");
	*out = tables, *n = ntables;
	return 0;
}

/* The fleet's index: one row per recording (fleet_export.c binds ?1 ... in this order). */
static const char *const index_cols[] = { "id_source", "sha256", "file", "schema_version", "agprof_version",
					  "host", "start_wall_ns", "start_day", "status", "problem", "rows",
					  "values_nulled", "values_cut" };
static const unsigned char index_types[] = { FT_STRING, FT_STRING, FT_STRING, FT_BIGINT, FT_STRING, FT_STRING,
					     FT_BIGINT, FT_STRING, FT_STRING, FT_STRING, FT_BIGINT, FT_BIGINT,
					     FT_BIGINT };
_Static_assert(sizeof(index_cols) / sizeof(index_cols[0]) == FLEET_INDEX_NCOLS, "the index's columns");
_Static_assert(sizeof(index_types) == FLEET_INDEX_NCOLS, "the index's types");

const struct fleet_table *fleet_index_table(void)
{
	static struct fleet_table t;
	struct strbuf sel = STRBUF_INIT;

	if (t.select)
		return &t;
	t.name = "recordings";
	t.ncols = FLEET_INDEX_NCOLS;
	memcpy(t.cols, index_cols, sizeof(index_cols));
	memcpy(t.types, index_types, sizeof(index_types));
	if (build_texts(&t) != 0)
		return NULL;
	free(t.select);
	strbuf_addstr(&sel, "SELECT ?1");
	for (int c = 1; c < t.ncols; c++)
		strbuf_addf(&sel, ", ?%d", c + 1);
	t.select = strbuf_failed(&sel) ? NULL : strbuf_detach(&sel);
	strbuf_release(&sel);
	return t.select ? &t : NULL;
}

/* The bytes left of a row's text, the counts of values changed (fleet_internal.h). */
static void put_bytes(FILE *out, const unsigned char *p, size_t n, struct fleet_row *row)
{
	static const char fffd[] = "\xef\xbf\xbd";

	fputc('"', out);
	for (size_t i = 0; i < n;) {
		uint32_t cp;
		size_t len = utf8_seq(p + i, n - i, &cp);

		if (row->left < 8) {
			row->counts->cut++;
			break;
		}
		if (!len || cp == 0) {
			/* not UTF-8 (engines refuse such a file), or a NUL: U+FFFD */
			fputs(fffd, out);
			row->left -= 3, i += len ? len : 1;
			continue;
		}
		if (cp == '"')
			fputc('"', out), row->left--;
		fwrite(p + i, 1, len, out);
		row->left -= len, i += len;
	}
	fputc('"', out);
}

static void put_hex(FILE *out, const unsigned char *p, size_t n, struct fleet_row *row)
{
	static const char hex[] = "0123456789abcdef";

	fputc('"', out);
	for (size_t i = 0; i < n; i++, row->left -= 2) {
		if (row->left < 8) {
			row->counts->cut++;
			break;
		}
		fputc(hex[p[i] >> 4], out);
		fputc(hex[p[i] & 15], out);
	}
	fputc('"', out);
}

/* A value that does not fit its column's type: NULL, counted. */
static void put_null(FILE *out, struct fleet_row *row, int coerced)
{
	fputs("\\N", out);
	row->counts->nulled += coerced;
}

static void put_number(FILE *out, sqlite3_stmt *s, int c, enum fleet_type type, struct fleet_row *row)
{
	double d = sqlite3_column_double(s, c);

	if (sqlite3_column_type(s, c) == SQLITE_INTEGER) {
		fprintf(out, "%lld", (long long)sqlite3_column_int64(s, c));
		return;
	}
	if (!isfinite(d) || (type == FT_BIGINT && (d != floor(d) || d < -9.2e18 || d > 9.2e18))) {
		put_null(out, row, 1);
		return;
	}
	if (type == FT_BIGINT)
		fprintf(out, "%lld", (long long)d);
	else
		fprintf(out, "%.17g", d);
}

void fleet_put_value(FILE *out, sqlite3_stmt *s, int c, enum fleet_type type, struct fleet_row *row)
{
	int st = sqlite3_column_type(s, c);
	char num[64];

	if (st == SQLITE_NULL)
		put_null(out, row, 0);
	else if (type != FT_STRING)
		if (st == SQLITE_INTEGER || st == SQLITE_FLOAT)
			put_number(out, s, c, type, row);
		else
			put_null(out, row, 1);
	else if (st == SQLITE_BLOB)
		put_hex(out, sqlite3_column_blob(s, c), (size_t)sqlite3_column_bytes(s, c), row);
	else if (st == SQLITE_TEXT)
		put_bytes(out, sqlite3_column_text(s, c), (size_t)sqlite3_column_bytes(s, c), row);
	else {
		if (st == SQLITE_INTEGER)
			snprintf(num, sizeof(num), "%lld", (long long)sqlite3_column_int64(s, c));
		else
			snprintf(num, sizeof(num), "%.17g", sqlite3_column_double(s, c));
		put_bytes(out, (const unsigned char *)num, strlen(num), row);
	}
}

int fleet_write_rows(sqlite3 *db, sqlite3_stmt *s, const struct fleet_table *t, FILE *out,
		     struct fleet_counts *counts, char *problem, size_t len)
{
	long long before = counts->rows;
	int rc;

	for (int c = 0; c < t->ncols; c++)
		fprintf(out, "%s%s", c ? "," : "", t->cols[c]);
	fputc('\n', out);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		struct fleet_row row = { FLEET_ROW_MAX, counts };

		for (int c = 0; c < t->ncols; c++) {
			if (c)
				fputc(',', out);
			fleet_put_value(out, s, c, t->types[c], &row);
		}
		fputc('\n', out);
		counts->rows++;
	}
	if (rc != SQLITE_DONE)
		snprintf(problem, len, "%s: %s after %lld rows", t->name, sqlite3_errmsg(db), counts->rows - before);
	return rc == SQLITE_DONE ? 0 : -1;
}

int fleet_write_table(sqlite3 *db, const struct fleet_table *t, FILE *out, struct fleet_counts *counts,
		      char *problem, size_t len)
{
	sqlite3_stmt *s = NULL;
	int rc;

	if (sqlite3_prepare_v2(db, t->select, -1, &s, NULL) != SQLITE_OK) {
		for (int c = 0; c < t->ncols; c++)
			fprintf(out, "%s%s", c ? "," : "", t->cols[c]);
		fputc('\n', out);
		snprintf(problem, len, "%s: %s", t->name, sqlite3_errmsg(db));
		return -1;
	}
	rc = fleet_write_rows(db, s, t, out, counts, problem, len);
	sqlite3_finalize(s);
	return rc;
}

/* One view per table for DuckDB (the columns as a struct of names and types). */
static void duckdb_view(struct strbuf *sb, const struct fleet_table *t)
{
	strbuf_addf(sb, "CREATE OR REPLACE VIEW %s AS SELECT * FROM read_csv('%s/*/*.csv', header = true,"
		    " hive_partitioning = true, hive_types = {'recording': 'VARCHAR'}, auto_detect = false,"
		    " quote = '\"', escape = '\"', nullstr = '\\N', allow_quoted_nulls = false,"
		    " max_line_size = %d, columns = {", t->name, t->name, 2 * FLEET_ROW_MAX);
	for (int c = 0; c < t->ncols; c++)
		strbuf_addf(sb, "%s'%s': '%s'", c ? ", " : "", t->cols[c], t->types[c] == FT_STRING ? "VARCHAR" : type_names[t->types[c]]);
	strbuf_addstr(sb, "});\n");
}

/* And for Spark SQL: a temporary view over the table's folder, with its schema. */
static void spark_view(struct strbuf *sb, const struct fleet_table *t)
{
	strbuf_addf(sb, "CREATE OR REPLACE TEMPORARY VIEW %s (%s) USING csv OPTIONS (path '%s', header 'true',"
		    " multiLine 'true', escape '\"', nullValue '\\\\N', mode 'FAILFAST');\n", t->name, t->ddl, t->name);
}

char *fleet_loader(int spark, const struct fleet_table *all, size_t n, const struct fleet_table *extra)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addf(&sb, "-- agprof export --fleet: %s views over this folder's tables; paths are relative to the\n"
		    "-- folder (docs/fleet.md).  Written by agprof, the same for every recording.\n",
		    spark ? "Spark SQL" : "DuckDB");
	for (size_t i = 0; i <= n; i++) {
		const struct fleet_table *t = i < n ? &all[i] : extra;

		if (spark)
			spark_view(&sb, t);
		else
			duckdb_view(&sb, t);
	}
	if (strbuf_failed(&sb)) {
		strbuf_release(&sb);
		return NULL;
	}
	return strbuf_detach(&sb);
}
