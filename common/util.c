/* util.c - see util.h. */
#include "util.h"
#include "config.h"
#include "strbuf.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * "PREFIX: message" as one line on stderr.  Messages quote names from
 * recordings, programs and status files: no control character, newline or
 * invalid UTF-8 of theirs reaches the terminal (strbuf_sanitize_text).
 */
static void print_line(const char *prefix, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_vaddf(&sb, fmt, ap);
	for (size_t i = 0; i < sb.len; i++)
		if (sb.buf[i] == '\n')
			sb.buf[i] = '?';
	strbuf_sanitize_text(&sb, 0, 0);
	fprintf(stderr, "%s: %s\n", prefix, sb.buf && !strbuf_failed(&sb) ? sb.buf : fmt);
	strbuf_release(&sb);
}

int error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_line("error", fmt, ap);
	va_end(ap);
	return -1;
}

uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

double monotonic_seconds(void)
{
	return (double)clock_ns(CLOCK_MONOTONIC) / 1e9;
}

void warning(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	print_line("warning", fmt, ap);
	va_end(ap);
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

/* Partitions narrowing the range before nth_int64() sorts what is left (a pivot keeps missing the middle). */
#define NTH_MAX_ROUNDS 64

int64_t nth_int64(int64_t *v, size_t n, size_t k)
{
	size_t lo = 0, hi = n - 1;

	for (int round = 0; lo < hi && round < NTH_MAX_ROUNDS; round++) {
		int64_t a = v[lo], b = v[lo + (hi - lo) / 2], c = v[hi], t;
		/* the median of three as pivot; Hoare's partition around it */
		int64_t pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
		size_t i = lo, j = hi;

		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				t = v[i], v[i] = v[j], v[j] = t;
				i++;
				if (j-- == 0)
					break;
			}
		}
		/* now v[lo..j] <= pivot <= v[i..hi], and whatever lies between equals pivot */
		if (k <= j && j != (size_t)-1)
			hi = j;
		else if (k >= i)
			lo = i;
		else
			return v[k];
	}
	if (lo < hi)
		sort_array(v + lo, hi - lo + 1, sizeof(*v), cmp_int64);
	return v[k];
}

int cmp_thread_start(const void *a, const void *b)
{
	const int64_t *x = a, *y = b;

	for (int i = 0; i < 3; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

int process_running(pid_t pid)
{
	char path[64], state = 'X';
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (pid <= 0 || !(f = fopen(path, "re")))
		return 0;
	if (fscanf(f, "%*d (%*[^)]) %c", &state) != 1)
		state = 'X';
	fclose(f);
	return state != 'Z' && state != 'X';
}

long read_small_file(const char *path, char *buf, size_t cap)
{
	FILE *f = fopen(path, "re");
	size_t n;

	if (!f)
		return -1;
	n = fread(buf, 1, cap - 1, f);
	fclose(f);
	buf[n] = '\0';
	return (long)n;
}

pid_t process_parent(pid_t pid)
{
	char path[64], buf[1024], *p;
	int ppid = 0;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (pid <= 0 || read_small_file(path, buf, sizeof(buf)) < 0)
		return 0;
	if (!(p = strrchr(buf, ')')) || sscanf(p + 1, " %*c %d", &ppid) != 1)
		return 0;
	return (pid_t)ppid;
}
