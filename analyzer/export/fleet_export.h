/*
 * fleet_export.h - `agprof export --fleet DIR RECORDING...`: each recording
 * exported on its own, no merge, into a Hive-style partitioned folder that
 * Spark, DuckDB and Trino read as one table set (docs/fleet.md):
 *
 *   DIR/TABLE/_schema.ddl                       the table's columns and types
 *   DIR/TABLE/recording=ID/part-0.csv           one recording's rows
 *   DIR/recordings/recording=ID/part-0.csv      its row of the fleet's index
 *   DIR/recordings/recording=ID/_sha256         what was exported (the file's SHA-256)
 *   DIR/_load/duckdb.sql, DIR/_load/spark.sql   views over the folder, paths relative to DIR
 *
 * ID is meta `recording_id` (a UUID the writer stores when the run starts,
 * common/recid.h), or for an older recording a UUID made from its
 * content's SHA-256.  The partition column `recording` is every row's; ids
 * within a table are the recording's own, so references join on
 * (recording, id).
 *
 * Owns: the fleet's table set (every table of the catalog, common/kinds.c,
 * with the current schema's columns: older recordings read as the current
 * schema, common/compat.c; storage behind a view, AGP_KIND_STORAGE, is left
 * out), the encoding (RFC 4180, every text quoted, NULL as an unquoted \N,
 * a BLOB as quoted hex, each value of the column's declared type: one of
 * another type is written as NULL and counted, text made valid UTF-8 and a
 * row's text bounded), and the append-only protocol: an export writes into
 * a hidden folder of DIR and renames each partition into place, the
 * recordings partition last; a recording already in DIR with the same
 * SHA-256 is left as it is (the same command twice writes the same files),
 * one with the same id and other content is refused.  Streams row by row:
 * constant memory, time linear in rows.
 */
#ifndef AGPROF_FLEET_EXPORT_H
#define AGPROF_FLEET_EXPORT_H

#define FLEET_BAD_INPUT    (-1) /* an unreadable recording, or an id already another recording's: nothing written */
#define FLEET_WRITE_FAILED (-2) /* a file of DIR could not be written */

struct fleet_stats {
	int exported;    /* recordings written */
	int unchanged;   /* recordings DIR already held, with the same content */
	int flagged;     /* of those written, the ones damaged (status other than complete in recordings) */
};

/*
 * Export the n recordings at paths into dir (created when missing; its
 * parent must exist).  First every recording is opened and named, and
 * nothing is written when one cannot be read, when two of them have the
 * same id, or when dir holds that id from other content.  0, or FLEET_*
 * after printing one error line.  A damaged recording is exported as far
 * as it reads, flagged in its recordings row, with one warning line.
 */
int fleet_export(const char *dir, const char *const *paths, int n, struct fleet_stats *st);

#endif
