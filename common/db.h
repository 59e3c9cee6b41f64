/*
 * db.h - the one thin layer over SQLite that every part of agprof uses.
 *
 * Owns: opening recordings (create for writing, open read-only with the
 * format checks), preparing statements with errors that name the failing
 * SQL, and the string-interning cache used by the writer.
 */
#ifndef AGPROF_DB_H
#define AGPROF_DB_H

#include <sqlite3.h>
#include <stdint.h>
#include <stddef.h>

#define AGPROF_SCHEMA_VERSION 3
#define AGPROF_APPLICATION_ID 1634168946

extern const char agprof_schema_sql[];

/* Exit codes shared by the subcommands that read recordings. */
enum db_open_status {
	DB_OPEN_OK = 0,
	DB_OPEN_MISSING,     /* file does not exist or cannot be read */
	DB_OPEN_NOT_RECORDING, /* not SQLite or not an agprof recording */
	DB_OPEN_CORRUPT,     /* SQLite says the file is damaged or truncated */
	DB_OPEN_TOO_NEW,     /* written by a newer schema version */
};

/*
 * Open an existing recording read-only and check it: SQLite header,
 * application id, schema version, integrity of the header pages.  On failure
 * returns a status and writes a one-line reason (no trailing newline) to err.
 */
enum db_open_status db_open_recording(const char *path, sqlite3 **out, char *err, size_t errlen);

/*
 * Open path read-only (flags: extra SQLITE_OPEN_* bits, e.g. NOMUTEX) with
 * the guards every reader of a recording needs, since a recording may come
 * from anyone: views and triggers off (a "table" that is a recursive view
 * could run forever), the schema untrusted (no unsafe functions from it),
 * and a budget of virtual-machine steps per statement, proportional to the
 * file's size, after which the statement fails with "interrupted".
 * Returns an SQLite code; *out is set (and must be closed) as with
 * sqlite3_open_v2().
 */
int db_open_readonly(const char *path, int flags, sqlite3 **out);

/*
 * The step budget of db_open_readonly() for a file of size bytes: far more
 * than any query of agprof needs on a well-formed file of that size.
 * AGPROF_READ_BUDGET (steps) overrides it, for tests.
 */
int64_t db_step_budget(int64_t size);

/*
 * Create a fresh recording at path (which must not exist) with the schema's
 * tables; db_create_indexes adds its indexes once the bulk of the rows is in.
 */
int db_create_recording(const char *path, sqlite3 **out, char *err, size_t errlen);
int db_create_indexes(sqlite3 *db);

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
 * The write error (SQLite result code: disk full, I/O error, ...) that ended
 * writing on db, or 0.  After one, db_exec and db_step_done on db do nothing
 * and return -1 without printing: the caller reports it once.
 */
int db_write_failure(sqlite3 *db);
void db_forget_write_failure(sqlite3 *db);

/* 1 when db has a table of that name (tables added after schema 1 may be absent). */
int db_has_table(sqlite3 *db, const char *name);

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

#endif
