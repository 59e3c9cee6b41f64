/* csv_export.c - see csv_export.h. */
#include "csv_export.h"
#include "db.h"
#include "kinds.h"
#include "recording.h"
#include "util.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * 1 when name is a table of agprof's own schema (the catalog's; a table
 * that is a view in the current schema, eager_ops, is exported as that
 * view below, and not from an older file's table of that name).
 */
static int schema_table(const char *name)
{
	const struct agp_kind *k = agp_kind_find(name, strlen(name));

	return k && !k->view_over;
}

static void csv_field(FILE *out, sqlite3_stmt *s, int c)
{
	static const char hex[] = "0123456789abcdef";

	switch (sqlite3_column_type(s, c)) {
	case SQLITE_NULL:
		break;
	case SQLITE_INTEGER:
		fprintf(out, "%lld", (long long)sqlite3_column_int64(s, c));
		break;
	case SQLITE_FLOAT:
		fprintf(out, "%.17g", sqlite3_column_double(s, c));
		break;
	case SQLITE_BLOB: {
		const unsigned char *b = sqlite3_column_blob(s, c);
		int n = sqlite3_column_bytes(s, c);

		for (int i = 0; b && i < n; i++) {
			fputc(hex[b[i] >> 4], out);
			fputc(hex[b[i] & 15], out);
		}
		break;
	}
	default: {
		const char *t = (const char *)sqlite3_column_text(s, c);

		fputc('"', out);
		for (; t && *t; t++) {
			if (*t == '"')
				fputc('"', out);
			fputc(*t, out);
		}
		fputc('"', out);
	}
	}
}

/* SELECT * FROM table into dir/table.csv; 0 or CSV_*_FAILED after the error. */
static int export_table(struct recording *rec, const char *dir, const char *schema, const char *table)
{
	char path[4096], sql[128];
	sqlite3_stmt *s;
	FILE *out;
	int rc, ncols;

	/* a name of our schema, not of the file; the file's table (main), not an old file's view of it (compat.c) */
	snprintf(sql, sizeof(sql), "SELECT * FROM %s.\"%s\"", schema, table);
	if (!(s = db_prepare(rec->db, sql)))
		return CSV_READ_FAILED;
	snprintf(path, sizeof(path), "%s/%s.csv", dir, table);
	if (!(out = fopen(path, "w"))) {
		error("cannot create '%s': %s", path, strerror(errno));
		sqlite3_finalize(s);
		return CSV_WRITE_FAILED;
	}
	ncols = sqlite3_column_count(s);
	for (int c = 0; c < ncols; c++)
		fprintf(out, "%s%s", c ? "," : "", sqlite3_column_name(s, c));
	fputc('\n', out);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		for (int c = 0; c < ncols; c++) {
			if (c)
				fputc(',', out);
			csv_field(out, s, c);
		}
		fputc('\n', out);
	}
	sqlite3_finalize(s);
	if (rc != SQLITE_DONE) {
		fclose(out);
		error("'%s' is corrupt: %s", rec->path, sqlite3_errmsg(rec->db));
		return CSV_READ_FAILED;
	}
	if (ferror(out) | fclose(out)) {
		error("cannot write '%s': %s", path, strerror(errno));
		return CSV_WRITE_FAILED;
	}
	return 0;
}

/* DuckDB's type for an SQLite declared type: INTEGER is 32 bits there, agprof's times need 64. */
static const char *duckdb_type(const char *decl)
{
	if (!decl)
		return "VARCHAR";
	if (!strcmp(decl, "INTEGER"))
		return "BIGINT";
	if (!strcmp(decl, "REAL"))
		return "DOUBLE";
	if (!strcmp(decl, "BLOB"))
		return "BLOB";
	return "VARCHAR";
}

/* Single-quoted SQL literal of s, quotes doubled. */
static void put_sql_string(FILE *out, const char *s)
{
	fputc('\'', out);
	for (; *s; s++) {
		if (*s == '\'')
			fputc('\'', out);
		fputc(*s, out);
	}
	fputc('\'', out);
}

/*
 * load.sql's lines for table: a CREATE TABLE with the columns' types only
 * (no keys nor references: a recording may hold rows that break them) and
 * a COPY of its CSV file, by absolute path (DuckDB resolves paths from its
 * working directory, not the script's).
 */
static int load_lines(struct recording *rec, FILE *out, const char *absdir, const char *schema, const char *table,
		      int computed_integer)
{
	sqlite3_stmt *s = db_prepare(rec->db, "SELECT name, type FROM pragma_table_info(?1, ?2) ORDER BY cid");
	char path[4200];
	int n = 0;

	if (!s)
		return CSV_READ_FAILED;
	sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, schema, -1, SQLITE_STATIC);
	fprintf(out, "CREATE TABLE %s (", table);
	while (sqlite3_step(s) == SQLITE_ROW) {
		fprintf(out, "%s\"", n++ ? ", " : "");
		for (const char *p = db_col_text_or(s, 0, ""); *p; p++)
			if (*p != '"')
				fputc(*p, out);
		const char *decl = db_col_text(s, 1);

		/* a view's computed column has no declared type: the eager_ops view's are integers */
		fprintf(out, "\" %s", computed_integer && decl && !*decl ? "BIGINT" : duckdb_type(decl));
	}
	sqlite3_finalize(s);
	fprintf(out, ");\nCOPY %s FROM ", table);
	snprintf(path, sizeof(path), "%s/%s.csv", absdir, table);
	put_sql_string(out, path);
	fputs(" (HEADER);\n", out);
	return 0;
}

int csv_export(struct recording *rec, const char *dir)
{
	sqlite3_stmt *s = db_prepare(rec->db, "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name");
	char absdir[4096], path[4200];
	FILE *load;
	int rc = 0;

	if (!s)
		return CSV_READ_FAILED;
	if (!realpath(dir, absdir))
		snprintf(absdir, sizeof(absdir), "%s", dir);
	snprintf(path, sizeof(path), "%s/load.sql", dir);
	if (!(load = fopen(path, "w"))) {
		error("cannot create '%s': %s", path, strerror(errno));
		sqlite3_finalize(s);
		return CSV_WRITE_FAILED;
	}
	fputs("-- agprof export --format csv: load these tables into DuckDB (docs/fleet.md)\n", load);
	while (rc == 0 && sqlite3_step(s) == SQLITE_ROW) {
		const char *name = db_col_text(s, 0);

		if (name && schema_table(name) && (rc = export_table(rec, dir, "main", name)) == 0)
			rc = load_lines(rec, load, absdir, "main", name, 0);
	}
	sqlite3_finalize(s);
	/* schema 6: eager_ops is the reader's view (db_define_eager_view()); SQL run in DuckDB reads that name */
	for (size_t i = 0; i < agp_nkinds && rc == 0; i++) {
		const struct agp_kind *k = &agp_kinds[i];

		if (k->view_over && db_has_table(rec->db, k->view_over) &&
		    (rc = export_table(rec, dir, "temp", k->table)) == 0)
			rc = load_lines(rec, load, absdir, "temp", k->table, 1);
	}
	if ((ferror(load) | fclose(load)) && rc == 0) {
		error("cannot write '%s': %s", path, strerror(errno));
		rc = CSV_WRITE_FAILED;
	}
	return rc;
}
