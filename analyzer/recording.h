/* recording.h - open a recording for reading with the format checks. */
#ifndef AGPROF_RECORDING_H
#define AGPROF_RECORDING_H

#include <sqlite3.h>
#include <stddef.h>

struct recording {
	sqlite3 *db;
	char *path;
};

/*
 * Open path read-only.  On failure prints one "error: ..." line and returns
 * -1; the caller exits with 2.
 */
int recording_open(struct recording *rec, const char *path);
void recording_close(struct recording *rec);

#endif
