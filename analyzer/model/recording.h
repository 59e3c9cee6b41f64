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
/*
 * recording_open() for a connection that one thread at a time uses (an
 * analysis: its workers open their own): no SQLite mutex around every
 * column read, 4% of a million-trace report.
 */
int recording_open_private(struct recording *rec, const char *path);
/*
 * recording_open() for a reader that keeps what it can of a damaged file
 * (agprof export --fleet): a file shorter than its header says is opened
 * all the same, with the reason in damage ("'PATH' is truncated (...)";
 * "" when the file is whole); its queries stop with SQLITE_CORRUPT where
 * the missing pages begin.  Every other check refuses as recording_open().
 */
int recording_open_salvage(struct recording *rec, const char *path, char *damage, size_t len);
void recording_close(struct recording *rec);

/* Whether path has a non-empty WAL beside it ("PATH-wal"): rows SQLite joins to the file. */
int recording_has_wal(const char *path);

/*
 * The recording of a run still in progress (or whose agprof and keeper
 * were killed) that will be named path: the newest hidden .NAME.XXXXXX
 * beside it.  1 with out filled, else 0.
 */
int recording_hidden_path(const char *path, char *out, size_t len);

/*
 * Why a recording holds nothing to analyze, from the session facts: one
 * line (static storage) such as "the workload exited with status 1 before
 * TensorFlow was loaded".  Only meaningful when there are no events.
 */
const char *recording_empty_why(const char *tf_status, const char *tf_detail, int exit_status);

/*
 * NULL when rec holds TensorFlow events (a trace, graph call or eager op);
 * else the reason, as recording_empty_why().  Costs three index lookups.
 */
const char *recording_empty_reason(struct recording *rec);

#endif
