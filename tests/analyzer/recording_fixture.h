/*
 * recording_fixture.h - an empty recording of the current schema at a new
 * temporary path, for the analyzer's unit tests, which fill it with SQL
 * (the path is free when the test starts: mkstemp's name, its file gone),
 * then read into a model, and all of it released.
 */
#ifndef AGPROF_TEST_RECORDING_FIXTURE_H
#define AGPROF_TEST_RECORDING_FIXTURE_H

#include "db.h"
#include "model.h"
#include "recording.h"

#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* A recording at path (cap bytes, "/tmp/agprof-NAME-XXXXXX"), open. */
static inline sqlite3 *fixture_recording(char *path, size_t cap, const char *name)
{
	char err[256];
	sqlite3 *db;
	int fd;

	snprintf(path, cap, "/tmp/agprof-%s-XXXXXX", name);
	fd = mkstemp(path);
	cr_assert(fd >= 0);
	close(fd);
	unlink(path);
	cr_assert_eq(db_create_recording(path, &db, err, sizeof(err)), 0, "%s", err);
	return db;
}

/* The filled recording db, closed, then read into m (rec open): a test's model. */
static inline void fixture_load(sqlite3 *db, const char *path, struct recording *rec, struct model *m)
{
	sqlite3_close(db);
	cr_assert_eq(recording_open(rec, path), 0);
	cr_assert_eq(model_load(m, rec), 0);
}

/* fixture_load()'s model and recording released, the file gone (and the -shm, -wal the reader left). */
static inline void fixture_release(const char *path, struct recording *rec, struct model *m)
{
	model_release(m);
	recording_close(rec);
	db_remove(path);
}

#endif
