/* util.h - error reporting and locating agprof's own files. */
#ifndef AGPROF_UTIL_H
#define AGPROF_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/*
 * Print "error: <msg>" to stderr as one line, control characters and
 * invalid UTF-8 made harmless; returns -1 so that `return error(...)` reads well.
 */
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The clock id's time in nanoseconds (CLOCK_MONOTONIC, CLOCK_REALTIME, ...). */
uint64_t clock_ns(clockid_t id);
/* CLOCK_MONOTONIC in seconds: for timing a step. */
double monotonic_seconds(void);

/* Whether process pid runs (exists, and is neither a zombie nor dead), from /proc/PID/stat. */
int process_running(pid_t pid);

/* The parent of pid (after the last ')' of /proc/PID/stat: a name may hold one), 0 when unknown. */
pid_t process_parent(pid_t pid);

/* Print "warning: <msg>" to stderr. */
void warning(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * Directory of the running agprof executable (resolved through
 * /proc/self/exe), without trailing slash.  Static storage.
 */
const char *agprof_exe_dir(void);

/*
 * Find one of agprof's own files: tries each candidate path relative to the
 * executable's directory (build tree and installed layouts).  Returns a
 * malloc'd absolute path of the first that exists, or NULL.
 */
char *agprof_find_file(const char *const *candidates);

/* Directory holding the built-in rules, or NULL.  Honours AGPROF_RULES_DIR. */
char *agprof_rules_dir(void);

/* Whether colour output is wanted on fd (a tty, NO_COLOR unset, TERM not dumb). */
int want_color(int fd);

/* qsort() for arrays that may be empty, and then NULL (qsort wants a valid pointer even for none). */
void sort_array(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));

/* For sort_array / qsort: int64_t values, ascending. */
int cmp_int64(const void *a, const void *b);

/*
 * The k-th smallest of v[0..n) (k < n), as sorting and reading v[k] would
 * give it, in linear time on average: the medians of a 10 M-event report's
 * steps were a full sort each.  Reorders v.
 */
int64_t nth_int64(int64_t *v, size_t n, size_t k);

/*
 * Up to cap - 1 bytes of the file at path into buf, NUL-terminated: the
 * length, or -1 when it cannot be opened (errno says why).
 */
long read_small_file(const char *path, char *buf, size_t cap);

/* For sort_array: rows of int64 (pid, tid, start, ...) by their first three. */
int cmp_thread_start(const void *a, const void *b);

#endif
