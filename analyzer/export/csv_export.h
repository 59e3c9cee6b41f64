/*
 * csv_export.h - `agprof export --format csv -o DIR`: every table of the
 * recording as DIR/TABLE.csv (RFC 4180, a header row of column names), for
 * engines that read CSV but not SQLite files: DuckDB (read_csv, then COPY
 * ... TO parquet), Spark, Trino (docs/fleet.md).
 *
 * Owns: which tables are written (those of agprof's schema that the file
 * has: a name the schema does not know is never written), and the
 * encoding: NULL is an empty field, text is quoted, a BLOB is written as
 * its lowercase hex.  Streams row by row: constant memory.
 */
#ifndef AGPROF_CSV_EXPORT_H
#define AGPROF_CSV_EXPORT_H

struct recording;

#define CSV_READ_FAILED  (-1) /* the recording is malformed or unreadable */
#define CSV_WRITE_FAILED (-2) /* a file of DIR could not be written */

/* 0, or CSV_*_FAILED after printing one error line.  dir must exist. */
int csv_export(struct recording *rec, const char *dir);

#endif
