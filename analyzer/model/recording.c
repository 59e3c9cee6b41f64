/*
 * recording.c - see recording.h.
 *
 * The one place a recording is opened for reading and checked.  No PRAGMA
 * quick_check: it reads the whole file (seconds on a large recording, more
 * than the whole analysis), so truncation is detected from the header's
 * page count against the file size instead, and damage further in shows as
 * an SQLite error on the first query that meets it, which every reader
 * reports.
 */
#include "recording.h"
#include "db.h"
#include "kinds.h"
#include "util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * The eager ops: schema 6's tables (eager_ops is then a view, defined by the
 * reader itself: db_define_eager_view()), or the table of schemas 1-5.
 */
static const char *const eager_v6_tables[] = { "eager_op_rows", "eager_op_keys", NULL };
static const char *const eager_old_tables[] = { "eager_ops", NULL };

static uint32_t be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static int pragma_int(sqlite3 *db, const char *sql, int *out)
{
	sqlite3_stmt *s = NULL;
	int ok = sqlite3_prepare_v2(db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW;

	if (ok)
		*out = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return ok ? 0 : -1;
}

/*
 * A run's recording is the hidden file beside FILE (.FILE.XXXXXX, run
 * --help) until the run's finish renames it; a run whose agprof was killed
 * (SIGKILL, a crash) with its keeper leaves it there.
 */
int recording_hidden_path(const char *path, char *out, size_t len)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	char dir[4096], cand[4096];
	size_t blen = strlen(base);
	time_t newest = 0;
	struct dirent *e;
	int found = 0;
	DIR *d;

	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else if (snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path) >= (int)sizeof(dir))
		return 0;
	if (!blen || blen > 255 || !(d = opendir(dir)))
		return 0;
	while ((e = readdir(d))) {
		struct stat st;

		/* ".FILE." and the six characters mkstemp() chose, nothing after (not -wal, -shm) */
		if (e->d_name[0] != '.' || strncmp(e->d_name + 1, base, blen) || e->d_name[blen + 1] != '.' ||
		    strlen(e->d_name + blen + 2) != 6 || strchr(e->d_name + blen + 2, '-'))
			continue;
		if (snprintf(cand, sizeof(cand), "%s/%s", dir, e->d_name) >= (int)sizeof(cand) ||
		    stat(cand, &st) != 0 || !S_ISREG(st.st_mode) || st.st_mtime < newest)
			continue;
		newest = st.st_mtime;
		found = (size_t)snprintf(out, len, "%s", cand) < len;
	}
	closedir(d);
	return found;
}

/*
 * When FILE is missing, name the hidden file of a run that has not
 * published it: one still running or finishing (an agprof.start() whose
 * program ended with os._exit() is finished by its writer a moment later),
 * or whose agprof and keeper were killed.
 */
static void killed_run_hint(const char *path, char *hint, size_t len)
{
	char hidden[4096];

	hint[0] = '\0';
	if (recording_hidden_path(path, hidden, sizeof(hidden)))
		snprintf(hint, len, "; its run has not published it (still writing it, or agprof was killed before"
			 " the run's finish): the recording so far is '%s'", hidden);
}

/* Whether path has a non-empty WAL beside it ("PATH-wal"). */
int recording_has_wal(const char *path)
{
	char wal[PATH_MAX];
	struct stat st;

	if ((size_t)snprintf(wal, sizeof(wal), "%s-wal", path) >= sizeof(wal))
		return 0;
	return stat(wal, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0;
}

/*
 * Check the file before SQLite sees it; one-line reason in err.  Opened
 * with O_NONBLOCK and checked with fstat() first: a FIFO or a device given
 * as the recording must be refused, not block or be read forever.
 */
static int check_header(const char *path, char *err, size_t len, char *damage, size_t dlen)
{
	unsigned char hdr[100];
	struct stat st;
	int fd;
	ssize_t got;
	size_t n = 0;
	uint32_t page_size, pages;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (db_open_nofollow() ? O_NOFOLLOW : 0))) < 0) {
		int saved = errno;
		char hint[4300];

		if (saved == ENOENT)
			killed_run_hint(path, hint, sizeof(hint));
		else
			hint[0] = '\0';
		snprintf(err, len, "cannot open '%s': %s%s", path, strerror(saved), hint);
		return -1;
	}
	if (fstat(fd, &st) != 0) {
		snprintf(err, len, "cannot open '%s': %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, len, "'%s' is a directory, not an agprof recording", path);
		close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, len, "'%s' is not a regular file, not an agprof recording", path);
		close(fd);
		return -1;
	}
	while (n < sizeof(hdr) && (got = read(fd, hdr + n, sizeof(hdr) - n)) > 0)
		n += (size_t)got;
	close(fd);
	if (n == 0) {
		snprintf(err, len, "'%s' is empty, not an agprof recording", path);
		return -1;
	}
	if (n < 16 || memcmp(hdr, "SQLite format 3", 16) != 0) {
		snprintf(err, len, "'%s' is not an agprof recording (not an SQLite file)", path);
		return -1;
	}
	if (n < 100) {
		snprintf(err, len, "'%s' is truncated (%zu bytes)", path, n);
		return -1;
	}
	page_size = (uint32_t)hdr[16] << 8 | hdr[17];
	if (page_size == 1)
		page_size = 65536;
	pages = be32(hdr + 28);
	/*
	 * The in-header size is valid when the change counters agree, and when
	 * no WAL is beside the file: a checkpoint that a full disk stopped
	 * half-way (the launcher's checkpointer) has written the new page 1 and
	 * not the pages after it, which SQLite still reads from the WAL.
	 */
	if (pages && be32(hdr + 92) == be32(hdr + 24) &&
	    (uint64_t)st.st_size < (uint64_t)pages * page_size && !recording_has_wal(path)) {
		snprintf(damage ? damage : err, damage ? dlen : len, "'%s' is truncated (%lld of %llu bytes)", path,
			 (long long)st.st_size, (unsigned long long)pages * page_size);
		return damage ? 0 : -1;
	}
	return 0;
}

/*
 * Every table of the schema that the file has must be a real table: a view
 * (or a virtual table) under a table's name would run whatever its author
 * wrote, e.g. a recursive view that never ends.  Views are also off on the
 * connection (db_open_readonly()); this check gives the clear error.
 */
static int check_table(sqlite3 *db, sqlite3_stmt *s, const char *path, const char *name, int required, char *err,
		       size_t len)
{
	int step, found = 0;

	sqlite3_reset(s);
	sqlite3_bind_text(s, 1, name, -1, SQLITE_TRANSIENT);
	while ((step = sqlite3_step(s)) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(s, 0);
		const char *sql = (const char *)sqlite3_column_text(s, 1);

		if (!type || strcmp(type, "table") || !sql || !strncasecmp(sql, "CREATE VIRTUAL", 14)) {
			snprintf(err, len, "'%s' is malformed: '%s' is a %s, not a table", path, name,
				 type && strcmp(type, "table") ? type : "virtual table");
			return -1;
		}
		found = 1;
	}
	if (step != SQLITE_DONE) {
		snprintf(err, len, "'%s' is corrupt: %s", path, sqlite3_errmsg(db));
		return -1;
	}
	if (!found && required) {
		snprintf(err, len, "'%s' is not a complete agprof recording (no table '%s')", path, name);
		return -1;
	}
	return 0;
}

/*
 * The tables this agprof knows, the catalog's (common/kinds.c; a file
 * without one of AGP_KIND_REQUIRED is not a recording), and the eager ops'.
 */
static int check_tables(sqlite3 *db, const char *path, char *err, size_t len)
{
	const char *const *eager;
	sqlite3_stmt *s = NULL;
	int rc = 0;

	if (sqlite3_prepare_v2(db, "SELECT type, sql FROM sqlite_schema WHERE name = ?1 COLLATE NOCASE", -1, &s,
			       NULL) != SQLITE_OK) {
		snprintf(err, len, "'%s' is corrupt: %s", path, sqlite3_errmsg(db));
		return -1;
	}
	for (size_t i = 0; !rc && i < agp_nkinds; i++)
		if (!agp_kinds[i].view_over)
			rc = check_table(db, s, path, agp_kinds[i].table, agp_kinds[i].flags & AGP_KIND_REQUIRED, err, len);
	eager = db_has_table(db, "eager_op_rows") ? eager_v6_tables : eager_old_tables;
	for (int i = 0; !rc && eager[i]; i++)
		rc = check_table(db, s, path, eager[i], 1, err, len);
	sqlite3_finalize(s);
	return rc;
}

static int open_with(struct recording *rec, const char *path, int flags, char *damage, size_t dlen)
{
	char err[512];
	sqlite3 *db = NULL;
	int version, appid;

	memset(rec, 0, sizeof(*rec));
	if (damage)
		damage[0] = '\0';
	if (check_header(path, err, sizeof(err), damage, dlen))
		return error("%s", err);
	if ((damage && damage[0] ? db_open_truncated : db_open_readonly)(path, flags, &db) != SQLITE_OK) {
		error("cannot open '%s': %s", path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return -1;
	}
	if (pragma_int(db, "PRAGMA user_version", &version) || pragma_int(db, "PRAGMA application_id", &appid)) {
		error("'%s' is corrupt: %s", path, sqlite3_errmsg(db));
		goto fail;
	}
	if (appid != AGPROF_APPLICATION_ID) {
		error("'%s' is an SQLite file but not an agprof recording", path);
		goto fail;
	}
	if (version > AGPROF_SCHEMA_VERSION) {
		error("'%s' has schema version %d, newer than this agprof reads (%d); upgrade agprof", path,
		      version, AGPROF_SCHEMA_VERSION);
		goto fail;
	}
	if (check_tables(db, path, err, sizeof(err))) {
		error("%s", err);
		goto fail;
	}
	/* Large recordings are read through mmap: fewer copies, shared page cache. */
	if (getenv("AGPROF_MMAP"))
		sqlite3_exec(db, "PRAGMA mmap_size=17179869184", NULL, NULL, NULL);
	rec->db = db;
	rec->path = strdup(path);
	if (!rec->path) {
		error("out of memory");
		goto fail;
	}
	return 0;
fail:
	sqlite3_close(db);
	rec->db = NULL;
	return -1;
}

int recording_open(struct recording *rec, const char *path)
{
	return open_with(rec, path, 0, NULL, 0);
}

int recording_open_private(struct recording *rec, const char *path)
{
	return open_with(rec, path, SQLITE_OPEN_NOMUTEX, NULL, 0);
}

int recording_open_salvage(struct recording *rec, const char *path, char *damage, size_t len)
{
	return open_with(rec, path, 0, damage, len);
}

void recording_close(struct recording *rec)
{
	sqlite3_close(rec->db);
	free(rec->path);
	memset(rec, 0, sizeof(*rec));
}

const char *recording_empty_why(const char *tf_status, const char *tf_detail, int exit_status)
{
	static char why[320];

	if (tf_status && !strcmp(tf_status, "mismatch"))
		snprintf(why, sizeof(why), "TensorFlow events are missing: the hooks could not be installed (%s)",
			 tf_detail ? tf_detail : "version mismatch");
	else if (tf_status && !strcmp(tf_status, "hooked"))
		snprintf(why, sizeof(why),
			 "TensorFlow was loaded but did nothing agprof records (no trace, graph call, eager op or Session run)");
	else if (exit_status)
		snprintf(why, sizeof(why), "the workload exited with status %d before TensorFlow was loaded",
			 exit_status);
	else
		snprintf(why, sizeof(why), "TensorFlow was never loaded by the workload");
	return why;
}

const char *recording_empty_reason(struct recording *rec)
{
	sqlite3_stmt *s = NULL;
	const char *why = NULL;
	char sql[512];

	/* Session steps (TF1 graph mode) are activity too (schema 1: an empty table, compat.c). */
	snprintf(sql, sizeof(sql),
		 "SELECT EXISTS (SELECT 1 FROM traces) OR EXISTS (SELECT 1 FROM function_calls)"
		 " OR EXISTS (SELECT 1 FROM eager_ops) OR EXISTS (SELECT 1 FROM session_runs),"
		 " (SELECT value FROM meta WHERE key = 'tf_status'),"
		 " (SELECT tf_detail FROM processes WHERE tf_detail IS NOT NULL LIMIT 1),"
		 " coalesce((SELECT value FROM meta WHERE key = 'exit_status'), 0)");
	if (sqlite3_prepare_v2(rec->db, sql, -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW &&
	    !sqlite3_column_int(s, 0))
		why = recording_empty_why((const char *)sqlite3_column_text(s, 1), (const char *)sqlite3_column_text(s, 2),
					  sqlite3_column_int(s, 3));
	sqlite3_finalize(s);
	return why;
}
