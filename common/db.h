/*
 * db.h - the one thin layer over SQLite that every part of agprof uses.
 *
 * Owns: creating recordings, opening them read-only with the guards every
 * reader needs (analyzer/model/recording.c adds the format checks), preparing
 * statements with errors that name the failing SQL, and the
 * string-interning cache used by the writer.
 */
#ifndef AGPROF_DB_H
#define AGPROF_DB_H

#include <sqlite3.h>
#include "strpool.h" /* db_col_pooled */
#include <stdint.h>
#include <stddef.h>

#define AGPROF_SCHEMA_VERSION 9
#define AGPROF_APPLICATION_ID 1634168946

extern const char agprof_schema_sql[];

/*
 * Open path read-only (flags: extra SQLITE_OPEN_* bits, e.g. NOMUTEX) with
 * the guards every reader of a recording needs, since a recording may come
 * from anyone: views and triggers off (a "table" that is a recursive view
 * could run forever), the schema untrusted (no unsafe functions from it),
 * and a budget of virtual-machine steps per statement, proportional to the
 * file's size, after which the statement fails with "interrupted".
 * Returns an SQLite code; *out is set (and must be closed) as with
 * sqlite3_open_v2().  A schema 6 file also gets the view eager_ops, as a
 * TEMP view of the connection (db_define_eager_view()); an older one the
 * current schema's tables and columns (db_define_compat()).
 */
int db_open_readonly(const char *path, int flags, sqlite3 **out);
/*
 * 1 when AGPROF_OPEN_NOFOLLOW is set (not "0"): a recording whose own name
 * is a symbolic link is not opened (O_NOFOLLOW, SQLITE_OPEN_NOFOLLOW).  For
 * a caller that checked the directory and must not be sent elsewhere by a
 * link made after its check (the TensorBoard tab).
 */
int db_open_nofollow(void);
/*
 * db_open_readonly() of a file shorter than its header says (truncated):
 * SQLite refuses such a file unless its schema is writable, so the
 * connection (read-only all the same) is not defensive and has
 * writable_schema on; the pages that are there read, the others fail with
 * SQLITE_CORRUPT.  For salvage only (recording_open_salvage()).
 */
int db_open_truncated(const char *path, int flags, sqlite3 **out);

/*
 * A recording of an older schema version read as the current one
 * (common/compat.c): each table of the catalog of kinds it lacks becomes an
 * empty TEMP table, each table of an older version that lacks columns a
 * TEMP view of the same name with them at their defaults (the file's own
 * stays main.TABLE).
 * db_has_table() and db_has_column() still answer for the file.  0 (also
 * for a current file) or -1.
 */
int db_define_compat(sqlite3 *db);

/*
 * Schema 6: where eager_op_rows is a table of main, define eager_ops (the
 * columns of schemas 1-5) as a TEMP view over it, from common/schema.sql's
 * CREATE VIEW: the file's own view is never run (views are off on a
 * reader's connection; TEMP ones stay on and come first in name lookup).
 * 0 (also when there is nothing to define) or -1.
 */
int db_define_eager_view(sqlite3 *db);

/*
 * The step budget of db_open_readonly() for a file of size bytes: far more
 * than any query of agprof needs on a well-formed file of that size.
 * AGPROF_READ_BUDGET (steps) overrides it, for tests.
 */
int64_t db_step_budget(int64_t size);

/*
 * Create a fresh recording at path (which must not exist) with the schema's
 * tables; db_create_indexes adds its indexes (the launcher: right after, so
 * that they are kept up to date during the run and the finish has none to build).
 */
int db_create_recording(const char *path, sqlite3 **out, char *err, size_t errlen);
/* Remove a recording and the -wal and -shm files SQLite may have left beside it. */
void db_remove(const char *path);
int db_create_indexes(sqlite3 *db);
/* The indexes of columns the launcher rewrites when the run ends (kernels.call_id): after that. */
int db_create_late_indexes(sqlite3 *db);
/*
 * Make whatever part of the schema is missing (tables, indexes, late
 * indexes), each in a transaction of its own: what a launcher killed
 * before its schema was made, or before its finish built the late
 * indexes, left out (writer/keeper.c).  0 or -1.
 */
int db_schema_complete(sqlite3 *db);

/*
 * Prepare sql; on failure print "error: <sqlite message> in '<sql>'" to
 * stderr and return NULL.
 */
sqlite3_stmt *db_prepare(sqlite3 *db, const char *sql);

/* Run sql that returns no rows; returns 0 or -1 after printing the error. */
int db_exec(sqlite3 *db, const char *sql);

/* Step a statement that returns no rows, then reset it; 0 on SQLITE_DONE. */
int db_step_done(sqlite3 *db, sqlite3_stmt *stmt);
/*
 * db_step_done without the message: 0, or the SQLite error code, with
 * sqlite3_errmsg(db) still telling why until the statement is reset (the
 * caller resets it).  For callers that report their errors once.
 */
int db_step_quiet(sqlite3 *db, sqlite3_stmt *stmt);

/*
 * The write error (SQLite result code: disk full, I/O error, ...) that ended
 * writing on db, or 0.  After one, db_exec and db_step_done on db do nothing
 * and return -1 without printing: the caller reports it once.
 */
int db_write_failure(sqlite3 *db);
void db_forget_write_failure(sqlite3 *db);

/* 1 when db has a table of that name (tables added after schema 1 may be absent). */
int db_has_table(sqlite3 *db, const char *name);
/* Whether main's table has column col (a column a later schema added). */
int db_has_column(sqlite3 *db, const char *table, const char *col);
/* The same in an attached schema ("src"). */
int db_schema_has_column(sqlite3 *db, const char *schema, const char *table, const char *col);
/* The same in an attached database ("src" of agprof merge). */
int db_schema_has_table(sqlite3 *db, const char *schema, const char *name);

/* meta table */
int db_meta_set(sqlite3 *db, const char *key, const char *value);
int db_meta_set_int(sqlite3 *db, const char *key, int64_t value);
/* Returns a malloc'd copy of meta[key] or NULL. */
char *db_meta_get(sqlite3 *db, const char *key);

/*
 * String interning for the writer: maps text to strings.id, inserting once.
 * Keeps an open-addressing hash table in memory so that each distinct string
 * costs one INSERT for the whole recording.
 */
struct string_table {
	sqlite3 *db;
	sqlite3_stmt *insert;
	sqlite3_stmt *lookup;
	struct string_slot *slots;
	size_t cap, used;
};

int string_table_init(struct string_table *st, sqlite3 *db);
/* Returns the id of text (len bytes, need not be NUL-terminated), or -1. */
int64_t string_table_intern(struct string_table *st, const char *text, size_t len);
void string_table_release(struct string_table *st);

/*
 * Column readers: the one way a reader takes text out of a row.  Text is
 * valid until the statement steps again, unless it was copied to a pool.
 */
/* Column i as text, NULL for SQL NULL. */
static inline const char *db_col_text(sqlite3_stmt *s, int i)
{
	return (const char *)sqlite3_column_text(s, i);
}

/* Column i as text, dflt for SQL NULL. */
static inline const char *db_col_text_or(sqlite3_stmt *s, int i, const char *dflt)
{
	const char *t = db_col_text(s, i);

	return t ? t : dflt;
}

/* Column i interned in pool (all its bytes), NULL for SQL NULL or when memory is short. */
static inline const char *db_col_pooled(sqlite3_stmt *s, int i, struct strpool *pool)
{
	const char *t = db_col_text(s, i);

	return t ? strpool_intern(pool, t, (size_t)sqlite3_column_bytes(s, i)) : NULL;
}

/* Parameter col bound to a row id, NULL for none (id <= 0). */
static inline void db_bind_id_or_null(sqlite3_stmt *s, int col, int64_t id)
{
	if (id > 0)
		sqlite3_bind_int64(s, col, id);
	else
		sqlite3_bind_null(s, col);
}

/* Parameter col bound to a copy of text, NULL for none. */
static inline void db_bind_text_or_null(sqlite3_stmt *s, int col, const char *text)
{
	if (text)
		sqlite3_bind_text(s, col, text, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(s, col);
}

#endif
