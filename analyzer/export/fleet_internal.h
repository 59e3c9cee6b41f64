/*
 * fleet_internal.h - shared by fleet_export.c (the folder, the protocol)
 * and fleet_tables.c (the table set, the typed CSV of a row).
 */
#ifndef AGPROF_FLEET_INTERNAL_H
#define AGPROF_FLEET_INTERNAL_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdio.h>

#define FLEET_MAX_COLS 64
/*
 * The text of one row, at most (a value past it is cut and counted):
 * DuckDB's loader reads lines of up to twice this (max_line_size).
 */
#define FLEET_ROW_MAX 4000000

enum fleet_type { FT_BIGINT, FT_DOUBLE, FT_STRING };

struct fleet_table {
	const char *name;
	int ncols;
	const char *cols[FLEET_MAX_COLS];
	unsigned char types[FLEET_MAX_COLS]; /* enum fleet_type */
	char *select;                       /* its rows from a recording, in the columns' order */
	char *ddl;                          /* "recording STRING, id BIGINT, ...": _schema.ddl */
};

/* What a recording's export changed or met, for its recordings row. */
struct fleet_counts {
	long long rows;   /* rows written */
	long long nulled; /* values not of their column's type, written as NULL */
	long long cut;    /* values cut at the row's bound */
};

struct fleet_row {
	size_t left;                 /* bytes of text the row may still take */
	struct fleet_counts *counts;
};

/* The catalog's tables (less AGP_KIND_STORAGE) with the current schema's columns; 0, or -1 after an error. */
int fleet_tables_load(const struct fleet_table **out, size_t *n);
/*
 * The fleet's index, DIR/recordings: its select is "SELECT ?1, ..., ?N", the
 * values bound in the order of its columns (fleet_tables.c); NULL when out of memory.
 */
#define FLEET_INDEX_NCOLS 13
const struct fleet_table *fleet_index_table(void);
/* Column c of s's row as a CSV field of type: NULL as \N, text quoted, valid UTF-8, bounded. */
void fleet_put_value(FILE *out, sqlite3_stmt *s, int c, enum fleet_type type, struct fleet_row *row);
/* The header and every row of s (its columns t's), into out: 0, or -1 with the reason in problem. */
int fleet_write_rows(sqlite3 *db, sqlite3_stmt *s, const struct fleet_table *t, FILE *out,
		     struct fleet_counts *counts, char *problem, size_t len);
/*
 * t's rows from db (a recording) as CSV into out: 0, or -1 with the
 * reason in problem ("traces: database disk image is malformed after 120
 * rows") when the rows stop early; those before are written.
 */
int fleet_write_table(sqlite3 *db, const struct fleet_table *t, FILE *out, struct fleet_counts *counts,
		      char *problem, size_t len);
/* _load/duckdb.sql (spark 0) or _load/spark.sql: a view per table of all[n] and extra; malloc'd, NULL when out of memory. */
char *fleet_loader(int spark, const struct fleet_table *all, size_t n, const struct fleet_table *extra);

#endif
