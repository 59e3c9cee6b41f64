/* util.c - see util.h. */
#include "util.h"
#include "config.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int error(const char *fmt, ...)
{
	va_list ap;

	fputs("error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	fputs("warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

const char *agprof_exe_dir(void)
{
	static char dir[PATH_MAX];
	ssize_t n;
	char *slash;

	if (dir[0])
		return dir;
	n = readlink("/proc/self/exe", dir, sizeof(dir) - 1);
	if (n <= 0) {
		strcpy(dir, ".");
		return dir;
	}
	dir[n] = '\0';
	slash = strrchr(dir, '/');
	if (slash && slash != dir)
		*slash = '\0';
	return dir;
}

char *agprof_find_file(const char *const *candidates)
{
	char path[PATH_MAX];

	for (; *candidates; candidates++) {
		snprintf(path, sizeof(path), "%s/%s", agprof_exe_dir(), *candidates);
		if (access(path, F_OK) == 0)
			return realpath(path, NULL);
	}
	return NULL;
}

char *agprof_rules_dir(void)
{
	static const char *const installed[] = {
		"../" AGPROF_DATADIR_REL "/rules",      /* <prefix>/bin -> <prefix>/share/agprof/rules */
		NULL,
	};
	const char *env = getenv("AGPROF_RULES_DIR");
	char *dir;

	if (env && *env)
		return strdup(env);
	dir = agprof_find_file(installed);
	/* Run from the build tree: the source tree's rules, wherever the build dir is. */
	if (!dir && access(AGPROF_SOURCE_RULES_DIR, F_OK) == 0)
		dir = strdup(AGPROF_SOURCE_RULES_DIR);
	return dir;
}

int want_color(int fd)
{
	const char *term = getenv("TERM");
	const char *no = getenv("NO_COLOR");

	if (no && *no)
		return 0;
	if (!isatty(fd))
		return 0;
	return !(term && strcmp(term, "dumb") == 0);
}

void sort_array(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

int cmp_int64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

int cmp_thread_start(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	for (int i = 0; i < 3; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}
