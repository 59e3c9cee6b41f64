/* srcfile.c - fingerprints and lines of the user's source files (srcfile.h). */
#include "srcfile.h"
#include "db.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Files a recording fingerprints at most: a bound on the writer's end-of-run work. */
#define SRCFILE_MAX_RECORDED 2000

static void resolve(char *buf, size_t cap, const char *path, const char *cwd)
{
	if (path[0] != '/' && cwd && cwd[0])
		snprintf(buf, cap, "%s/%s", cwd, path);
	else
		snprintf(buf, cap, "%s", path);
}

/* Read the whole regular file at path; malloc'd, NUL-terminated; NULL on failure. */
static char *read_whole(const char *path, size_t *len, struct stat *st)
{
	char *buf = NULL;
	size_t got = 0;
	int fd;

	/* a path from a recording is untrusted: never open a device or FIFO (opening some has effects) */
	if (stat(path, st) || !S_ISREG(st->st_mode))
		return NULL;
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return NULL;
	if (fstat(fd, st) || !S_ISREG(st->st_mode) || st->st_size < 0 || (uint64_t)st->st_size > SRCFILE_MAX_BYTES)
		goto fail;
	if (!(buf = malloc((size_t)st->st_size + 1)))
		goto fail;
	while (got < (size_t)st->st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st->st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	*len = got;
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}

static void fnv1a_hex(const char *data, size_t len, char out[17])
{
	uint64_t h = 14695981039346656037ull;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)data[i];
		h *= 1099511628211ull;
	}
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* Hash sf->data and split it into lines (in place); 0 or -1. */
static int split_lines(struct srcfile *sf)
{
	size_t n = 1;

	fnv1a_hex(sf->data, sf->len, sf->hash);
	for (size_t i = 0; i < sf->len; i++)
		n += sf->data[i] == '\n';
	if (!(sf->lines = calloc(n, sizeof(*sf->lines)))) {
		srcfile_release(sf);
		return -1;
	}
	for (char *p = sf->data; p && *p;) {
		char *nl = strchr(p, '\n');

		sf->lines[sf->nlines++] = p;
		if (!nl)
			break;
		*nl = '\0';
		if (nl > p && nl[-1] == '\r')
			nl[-1] = '\0';
		p = nl + 1;
	}
	return 0;
}

int srcfile_load(struct srcfile *sf, const char *path, const char *cwd)
{
	char full[PATH_MAX];
	struct stat st;

	memset(sf, 0, sizeof(*sf));
	if (!path || !*path)
		return -1;
	resolve(full, sizeof(full), path, cwd);
	if (!(sf->data = read_whole(full, &sf->len, &st)))
		return -1;
	sf->size = (int64_t)st.st_size;
	sf->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	return split_lines(sf);
}

int srcfile_from_text(struct srcfile *sf, const char *text, size_t len)
{
	memset(sf, 0, sizeof(*sf));
	if (len > SRCFILE_MAX_BYTES || !(sf->data = malloc(len + 1)))
		return -1;
	memcpy(sf->data, text, len);
	sf->data[len] = '\0';
	sf->len = strlen(sf->data);  /* text from a recording: up to its first NUL */
	sf->size = (int64_t)sf->len;
	return split_lines(sf);
}

void srcfile_release(struct srcfile *sf)
{
	free(sf->data);
	free(sf->lines);
	memset(sf, 0, sizeof(*sf));
}

const char *srcfile_line(const struct srcfile *sf, long n)
{
	return n >= 1 && (size_t)n <= sf->nlines ? sf->lines[n - 1] : NULL;
}

int srcfile_hash(const char *path, const char *cwd, char out[17], int64_t *size, int64_t *mtime_ns)
{
	struct srcfile sf;

	if (srcfile_load(&sf, path, cwd))
		return -1;
	memcpy(out, sf.hash, 17);
	*size = sf.size;
	*mtime_ns = sf.mtime_ns;
	srcfile_release(&sf);
	return 0;
}

int srcfile_record(sqlite3 *db, const char *cwd)
{
	sqlite3_stmt *sel, *ins;
	int n = 0, rc = 0;

	if (!db_has_table(db, "source_files"))
		return 0;
	sel = db_prepare(db, "SELECT s.text FROM strings s WHERE s.id IN"
			     " (SELECT file_id FROM callsites WHERE library = 0 UNION SELECT file_id FROM functions)");
	ins = db_prepare(db, "INSERT OR REPLACE INTO source_files (path, size, mtime_ns, hash) VALUES (?, ?, ?, ?)");
	if (!sel || !ins) {
		rc = -1;
		goto cleanup;
	}
	while (n < SRCFILE_MAX_RECORDED && sqlite3_step(sel) == SQLITE_ROW) {
		const char *path = (const char *)sqlite3_column_text(sel, 0);
		char hash[17];
		int64_t size, mtime;

		if (!path || path[0] == '<' || srcfile_hash(path, cwd, hash, &size, &mtime))
			continue;
		sqlite3_bind_text(ins, 1, path, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(ins, 2, size);
		sqlite3_bind_int64(ins, 3, mtime);
		sqlite3_bind_text(ins, 4, hash, -1, SQLITE_TRANSIENT);
		if (db_step_done(db, ins)) {
			rc = -1;
			break;
		}
		n++;
	}
cleanup:
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	return rc;
}

int srcfile_recorded_hash(sqlite3 *db, const char *path, char out[17])
{
	sqlite3_stmt *s;
	int rc = -1;

	if (!db || !path)
		return -1;
	if (sqlite3_prepare_v2(db, "SELECT hash FROM source_files WHERE path = ?", -1, &s, NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_text(s, 1, path, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) == SQLITE_TEXT) {
		snprintf(out, 17, "%s", (const char *)sqlite3_column_text(s, 0));
		rc = 0;
	}
	sqlite3_finalize(s);
	return rc;
}
