/*
 * test-recording.c - recording_open(), the one place a recording is opened
 * for reading: what it accepts, and the one-line error (exit 2 in every
 * subcommand) for each kind of file it refuses.
 */
#include "db.h"
#include "recording.h"

#include <criterion/criterion.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[] = "/tmp/agprof-recording-XXXXXX";

static void setup(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[600];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	cr_assert_eq(system(cmd), 0);
}

static const char *path_of(const char *name)
{
	static char path[512];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return path;
}

/* A fresh recording as the writer creates it, then closed. */
static const char *make_recording(const char *name, const char *extra_sql)
{
	const char *path = path_of(name);
	char err[256];
	sqlite3 *db;

	cr_assert_eq(db_create_recording(path, &db, err, sizeof(err)), 0, "%s", err);
	if (extra_sql)
		cr_assert_eq(sqlite3_exec(db, extra_sql, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
	cr_assert_eq(sqlite3_exec(db, "PRAGMA journal_mode=DELETE", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	return path;
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	cr_assert_not_null(f);
	cr_assert_eq(fwrite(data, 1, len, f), len);
	fclose(f);
}

/* recording_open refuses path with an error line that contains want. */
static void assert_refused(const char *path, const char *want)
{
	struct recording rec;
	char buf[1024] = "";
	FILE *err = tmpfile();
	int saved = dup(STDERR_FILENO), rc;

	cr_assert(err && saved >= 0);
	fflush(stderr);
	dup2(fileno(err), STDERR_FILENO);
	rc = recording_open(&rec, path);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	cr_assert_eq(rc, -1, "'%s' was accepted", path);
	cr_assert_null(rec.db);
	rewind(err);
	cr_assert_not_null(fgets(buf, sizeof(buf), err));
	fclose(err);
	cr_assert(strstr(buf, "error: ") == buf && strstr(buf, want), "'%s' lacks '%s'", buf, want);
}

TestSuite(recording, .init = setup, .fini = teardown);

Test(recording, a_fresh_recording_opens)
{
	struct recording rec;
	const char *path = make_recording("ok.agprof", NULL);

	cr_assert_eq(recording_open(&rec, path), 0);
	cr_assert_not_null(rec.db);
	cr_assert_str_eq(rec.path, path);
	cr_assert_not_null(recording_empty_reason(&rec), "no events: empty");
	recording_close(&rec);
	cr_assert_null(rec.db);
}

Test(recording, missing_file)
{
	assert_refused(path_of("none.agprof"), "cannot open");
}

Test(recording, directory)
{
	assert_refused(dir, "is a directory");
}

Test(recording, fifo_is_refused_without_blocking)
{
	const char *path = path_of("fifo");

	cr_assert_eq(mkfifo(path, 0600), 0);
	assert_refused(path, "not a regular file");
}

Test(recording, empty_file)
{
	const char *path = path_of("empty.agprof");

	write_file(path, "", 0);
	assert_refused(path, "is empty");
}

Test(recording, not_sqlite)
{
	const char *path = path_of("text.agprof");

	write_file(path, "hello, this is not a database at all\n", 37);
	assert_refused(path, "not an SQLite file");
}

Test(recording, truncated_header)
{
	const char *path = path_of("short.agprof");

	write_file(path, "SQLite format 3\0abc", 19);
	assert_refused(path, "truncated");
}

Test(recording, truncated_pages)
{
	const char *path = make_recording("cut.agprof", NULL);
	struct stat st;

	cr_assert_eq(stat(path, &st), 0);
	cr_assert_eq(truncate(path, st.st_size / 2), 0);
	assert_refused(path, "truncated");
}

Test(recording, other_sqlite_file)
{
	const char *path = path_of("other.db");
	sqlite3 *db;

	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "CREATE TABLE t(x)", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_refused(path, "not an agprof recording");
}

Test(recording, newer_schema)
{
	assert_refused(make_recording("new.agprof", "PRAGMA user_version = 999"), "upgrade agprof");
}

Test(recording, missing_table)
{
	assert_refused(make_recording("notable.agprof", "DROP TABLE eager_op_keys"), "no table 'eager_op_keys'");
}

Test(recording, view_in_place_of_a_table)
{
	assert_refused(make_recording("view.agprof", "DROP TABLE eager_op_keys; CREATE VIEW eager_op_keys AS SELECT 1"),
		       "is a view");
}

/* Schema 6 without its rows table: read as schemas 1-5, whose eager_ops must be a table, not the file's view. */
Test(recording, eager_view_without_rows)
{
	assert_refused(make_recording("noview.agprof", "DROP TABLE eager_op_rows"), "is a view");
}

/* Schemas 1-5: eager_ops is a table; its absence is said. */
Test(recording, old_schema_without_eager_ops)
{
	assert_refused(make_recording("old.agprof", "DROP TABLE eager_op_rows; DROP VIEW eager_ops; PRAGMA user_version = 5"),
		       "no table 'eager_ops'");
}

/*
 * The reader's own eager_ops (a TEMP view): the file's view is never run,
 * even where it was replaced by one that never ends.
 */
Test(recording, file_view_is_not_run)
{
	struct recording rec;
	sqlite3_stmt *st;

	make_recording("ownview.agprof",
		       "DROP VIEW eager_ops; CREATE VIEW eager_ops AS WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL"
		       " SELECT x + 1 FROM c) SELECT x AS id FROM c;"
		       "INSERT INTO eager_op_keys(id, pid, tid, op_id, base_ns) VALUES (1, 7, 8, 1, 1000);"
		       "INSERT INTO eager_op_rows(key, start, dur, python_ns, flags) VALUES (1, 5, 10, 3, 3)");
	cr_assert_eq(recording_open(&rec, path_of("ownview.agprof")), 0);
	cr_assert_eq(sqlite3_prepare_v2(rec.db, "SELECT count(*), min(start_ns), max(end_ns), min(slow_path), max(ok),"
					" min(tid) FROM eager_ops", -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	cr_assert_eq(sqlite3_column_int64(st, 0), 1);
	cr_assert_eq(sqlite3_column_int64(st, 1), 1005);
	cr_assert_eq(sqlite3_column_int64(st, 2), 1015);
	cr_assert_eq(sqlite3_column_int64(st, 3), 1);
	cr_assert_eq(sqlite3_column_int64(st, 4), 0);
	cr_assert_eq(sqlite3_column_int64(st, 5), 8);
	sqlite3_finalize(st);
	recording_close(&rec);
}
