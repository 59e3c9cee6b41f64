/* top_find.c - see top_find.h. */
#include "top_find.h"
#include "db.h"
#include "util.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Whether path names an agprof recording (not its -wal or -shm): its header says so. */
static int is_recording(const char *path)
{
	unsigned char hdr[72];
	size_t len = strlen(path);
	int fd, ok;

	if (path[0] != '/' || (len > 4 && (!strcmp(path + len - 4, "-wal") || !strcmp(path + len - 4, "-shm"))) ||
	    strstr(path, " (deleted)"))
		return 0;
	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)) < 0)
		return 0;
	ok = read(fd, hdr, sizeof(hdr)) == (ssize_t)sizeof(hdr) && !memcmp(hdr, "SQLite format 3", 16) &&
	     ((uint32_t)hdr[68] << 24 | (uint32_t)hdr[69] << 16 | (uint32_t)hdr[70] << 8 | hdr[71]) ==
		     AGPROF_APPLICATION_ID;
	close(fd);
	return ok;
}

/* A recording pid holds open, into out; 1 or 0.  want: only that path (NULL: any). */
static int held_recording(pid_t pid, const char *want, char *out, size_t len)
{
	char dir[64], link[PATH_MAX + 32], target[PATH_MAX];
	struct dirent *e;
	int found = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	if (!(d = opendir(dir)))
		return 0;
	while (!found && (e = readdir(d))) {
		ssize_t n;

		if (!isdigit((unsigned char)e->d_name[0]))
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
		if ((n = readlink(link, target, sizeof(target) - 1)) <= 0)
			continue;
		target[n] = '\0';
		if (want ? !strcmp(target, want) : is_recording(target))
			found = (size_t)snprintf(out, len, "%s", target) < len;
	}
	closedir(d);
	return found;
}

/* A child of pid that holds a recording open; its pid, 0 when none. */
static pid_t child_recording(pid_t pid, char *out, size_t len)
{
	struct dirent *e;
	pid_t found = 0;
	DIR *d = opendir("/proc");

	if (!d)
		return 0;
	while (!found && (e = readdir(d))) {
		pid_t c = isdigit((unsigned char)e->d_name[0]) ? (pid_t)atoi(e->d_name) : 0;

		if (c > 0 && process_parent(c) == pid && held_recording(c, NULL, out, len))
			found = c;
	}
	closedir(d);
	return found;
}

pid_t top_pid_recording(pid_t pid, char *out, size_t len)
{
	pid_t p = pid;

	/* the launcher is an ancestor at most a few levels up (a shell, python -m, ...) */
	for (int depth = 0; p > 1 && depth < 64; depth++, p = process_parent(p))
		if (held_recording(p, NULL, out, len))
			return p;
	return child_recording(pid, out, len);
}

pid_t top_path_writer(const char *path)
{
	char real[PATH_MAX], held[PATH_MAX];
	struct dirent *e;
	pid_t found = 0, self = getpid();
	DIR *d;

	if (!realpath(path, real) || !(d = opendir("/proc")))
		return 0;
	while (!found && (e = readdir(d))) {
		pid_t c = isdigit((unsigned char)e->d_name[0]) ? (pid_t)atoi(e->d_name) : 0;

		if (c > 0 && c != self && held_recording(c, real, held, sizeof(held)))
			found = c;
	}
	closedir(d);
	return found;
}

int top_final_path(const char *hidden, char *out, size_t len)
{
	const char *slash = strrchr(hidden, '/'), *base = slash ? slash + 1 : hidden;
	size_t blen = strlen(base), dlen = (size_t)(base - hidden);

	/* ".FILE.XXXXXX": a dot, FILE, a dot and mkstemp's six characters */
	if (base[0] != '.' || blen < 9 || base[blen - 7] != '.')
		return -1;
	if ((size_t)snprintf(out, len, "%.*s%.*s", (int)dlen, hidden, (int)(blen - 8), base + 1) >= len)
		return -1;
	return 0;
}
