/* publish.c - a recording to its name; see publish.h. */
#include "publish.h"
#include "db.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <unistd.h>

/* rename() that never replaces an existing file (EEXIST instead). */
static int rename_noreplace(const char *from, const char *to)
{
	if (renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) == 0)
		return 0;
	if (errno != EINVAL && errno != ENOSYS)
		return -1;
	if (link(from, to) != 0)  /* a file system without RENAME_NOREPLACE */
		return -1;
	unlink(from);
	return 0;
}

int recording_publish(const char *tmp_path, char *out, size_t outlen, int force, int default_name)
{
	char wal[PATH_MAX + 8], to_wal[PATH_MAX + 8], to_shm[PATH_MAX + 8];
	int rc;

	for (int n = 2;; n++) {
		rc = force ? rename(tmp_path, out) : rename_noreplace(tmp_path, out);
		if (rc == 0 || errno != EEXIST || !default_name || n >= 100000)
			break;
		snprintf(out, outlen, "agprof-%d.agprof", n);
	}
	if (rc != 0)
		return -1;
	snprintf(wal, sizeof(wal), "%s-wal", tmp_path);
	snprintf(to_wal, sizeof(to_wal), "%s-wal", out);
	snprintf(to_shm, sizeof(to_shm), "%s-shm", out);
	if (access(wal, F_OK) == 0) {
		unlink(to_shm);
		rename(wal, to_wal);
	}
	db_remove(tmp_path);  /* only side files are left under that name */
	return 0;
}
