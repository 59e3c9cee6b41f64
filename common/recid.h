/*
 * recid.h - a recording's globally unique id (meta `recording_id`): a
 * random UUID (version 4) that the run writer stores when it creates the
 * recording, so that a fleet of recordings exported apart (agprof export
 * --fleet, docs/fleet.md) joins on (recording, id) without a merge.  A
 * recording made before the id existed is named by its content: the
 * SHA-256 of its file (and WAL) as a UUID of version 8 (RFC 9562), the same
 * on every machine and every run.  OpenSSL's libcrypto.
 */
#ifndef AGPROF_RECID_H
#define AGPROF_RECID_H

#include <stddef.h>

#define RECID_LEN 37    /* 36 characters of 8-4-4-4-12 lowercase hex and the NUL */
#define RECID_DIGEST 32 /* a SHA-256 */

/* A new random id into out: 0, or -1 when no random bytes could be had. */
int recid_new(char out[RECID_LEN]);
/* 1 when s (untrusted, may be NULL) is an id as recid_new() writes it: 36 lowercase 8-4-4-4-12 hex digits. */
int recid_valid(const char *s);
/* The id that names content of digest d (a SHA-256): its first 16 bytes as a version-8 UUID. */
void recid_from_digest(const unsigned char d[RECID_DIGEST], char out[RECID_LEN]);
/*
 * The SHA-256 of path's bytes followed by those of "PATH-wal" when one is
 * beside it (rows SQLite joins to the file), into d.  0, or -1 with errno
 * set when a file cannot be read.
 */
int recid_file_digest(const char *path, unsigned char d[RECID_DIGEST]);
/* d as 64 lowercase hex digits and the NUL. */
void recid_hex(const unsigned char d[RECID_DIGEST], char out[2 * RECID_DIGEST + 1]);

#endif
