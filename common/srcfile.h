/*
 * srcfile.h - the user's source files: their fingerprint at record time
 * (table source_files, docs/schema.md) and their lines at report time, so
 * that a recommendation can quote and edit the real code and say when the
 * file changed since the recording.
 *
 * Owns: hashing a file (64-bit FNV-1a of its bytes), writing the
 * source_files rows when a recording ends, and reading a file into lines.
 * Files are read whole, up to SRCFILE_MAX_BYTES: a larger or non-regular file
 * is treated as absent.
 */
#ifndef AGPROF_SRCFILE_H
#define AGPROF_SRCFILE_H

#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#define SRCFILE_MAX_BYTES (8u << 20)

/* A source file read into memory, split into lines (without their '\n'). */
struct srcfile {
	char *data;          /* the bytes, NUL-terminated; lines point into it */
	size_t len;
	char **lines;        /* lines[0] is line 1 */
	size_t nlines;
	char hash[17];       /* 16 hex digits */
	int64_t size, mtime_ns;
};

/*
 * Read path (relative paths are taken under cwd when cwd is not NULL).
 * 0, or -1 when it cannot be read (missing, not a regular file, too large).
 */
int srcfile_load(struct srcfile *sf, const char *path, const char *cwd);
/* The same from text held in memory (a notebook cell the recording keeps); 0 or -1. */
int srcfile_from_text(struct srcfile *sf, const char *text, size_t len);
void srcfile_release(struct srcfile *sf);
/* Line n (1-based), or NULL when out of range. */
const char *srcfile_line(const struct srcfile *sf, long n);

/* The file's hash as 16 hex digits into out[17]; 0 or -1. */
int srcfile_hash(const char *path, const char *cwd, char out[17], int64_t *size, int64_t *mtime_ns);

/*
 * The writer's end of a run: one source_files row per user file named by
 * callsites (library = 0) or functions.  Best effort: files that cannot be
 * read are left out.  0, or -1 on a database error.
 */
int srcfile_record(sqlite3 *db, const char *cwd);

/* The hash recorded for path, copied into out[17]; 0, or -1 when none. */
int srcfile_recorded_hash(sqlite3 *db, const char *path, char out[17]);

#endif
