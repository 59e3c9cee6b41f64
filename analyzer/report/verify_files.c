/*
 * verify_files.c - the files a run of `agprof fix --verify` wrote in its
 * scratch copy, and two runs' copies of one file compared
 * (verify_internal.h): arrays NumPy saved (.npy) element by element within
 * --rtol/--atol, text line by line as the standard outputs are, anything
 * else byte for byte.  An edit that changes the weights a program saves
 * changes its output as surely as one that changes what it prints.
 */
#include "verify_internal.h"
#include "checked.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether a directory entry is the interpreter's or a tool's cache, never the program's output. */
static int cache_name(const char *name)
{
	return !strcmp(name, "__pycache__") || !strcmp(name, ".ipynb_checkpoints") || !strcmp(name, ".mypy_cache");
}

static int written_add(struct written_files *w, const char *rel)
{
	char *copy;

	if (w->n >= WRITTEN_MAX) {
		w->more = 1;
		return 0;
	}
	if (!(copy = strdup(rel)) || ARRAY_GROW(w->rel, w->n, w->cap)) {
		free(copy);
		return error("out of memory");
	}
	w->rel[w->n++] = copy;
	return 0;
}

/* The walk of written_files(): dir/rel's entries, links not followed. */
static int walk(const char *dir, const char *rel, const struct timespec *since, struct written_files *w, int depth)
{
	struct strbuf path = STRBUF_INIT;
	struct dirent *e;
	DIR *d;
	int ret = 0;

	strbuf_addf(&path, "%s%s%s", dir, *rel ? "/" : "", rel);
	if (depth > 32 || strbuf_failed(&path) || !(d = opendir(path.buf))) {
		strbuf_release(&path);
		return 0;  /* deeper than any program's outputs, or gone: nothing of the run's */
	}
	while (!ret && (e = readdir(d))) {
		struct strbuf r = STRBUF_INIT, p = STRBUF_INIT;
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || cache_name(e->d_name))
			continue;
		strbuf_addf(&r, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
		strbuf_addf(&p, "%s/%s", dir, r.buf ? r.buf : "");
		if (strbuf_failed(&r) || strbuf_failed(&p))
			ret = error("out of memory");
		else if (lstat(p.buf, &st))
			;  /* removed meanwhile */
		else if (S_ISDIR(st.st_mode))
			ret = walk(dir, r.buf, since, w, depth + 1);
		else if (S_ISREG(st.st_mode) && (st.st_mtim.tv_sec > since->tv_sec ||
						 (st.st_mtim.tv_sec == since->tv_sec && st.st_mtim.tv_nsec > since->tv_nsec)))
			ret = written_add(w, r.buf);
		strbuf_release(&r);
		strbuf_release(&p);
	}
	closedir(d);
	strbuf_release(&path);
	return ret;
}

int written_files(const char *dir, const struct timespec *since, struct written_files *out)
{
	memset(out, 0, sizeof(*out));
	if (walk(dir, "", since, out, 0))
		return -1;
	if (out->n > 1)
		qsort(out->rel, out->n, sizeof(*out->rel), cmp_str);
	return 0;
}

long written_find(const struct written_files *w, const char *rel)
{
	char *const *hit = w->n ? bsearch(&rel, w->rel, w->n, sizeof(*w->rel), cmp_str) : NULL;

	return hit ? (long)(hit - w->rel) : -1;
}

void written_files_release(struct written_files *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->rel[i]);
	free(w->rel);
	memset(w, 0, sizeof(*w));
}

/* A .npy array: its element type, and where its data start. */
struct npy {
	char kind;        /* 'f', 'i', 'u', 'b'; 0: compared as bytes */
	size_t size;      /* bytes per element */
	size_t data, n;   /* offset of the data; elements */
};

/* The text of key's value in the header dict ("'descr': '<f4'" gives "<f4'..."), or NULL. */
static const char *npy_value(const char *h, size_t len, const char *key)
{
	const char *k = memmem(h, len, key, strlen(key));

	if (!k || !(k = memchr(k + strlen(key), ':', len - (size_t)(k + strlen(key) - h))))
		return NULL;
	for (k++; k < h + len && *k == ' '; k++)
		;
	return k < h + len ? k : NULL;
}

/* The shape's element count from "(3, 4), ..." (a scalar's "()" is 1); 0 when unreadable or too big. */
static size_t npy_count(const char *s, const char *end)
{
	size_t n = 1;

	if (*s++ != '(')
		return 0;
	while (s < end && *s != ')') {
		char *next;
		unsigned long long d = strtoull(s, &next, 10);

		if (next == s || (d && n > SIZE_MAX / d))
			return 0;
		n *= (size_t)d;
		for (s = next; s < end && (*s == ',' || *s == ' ' || *s == 'L'); s++)
			;
	}
	return s < end ? n : 0;
}

/* buf as a little-endian C-order .npy of a plain number type, into a (a->kind 0 otherwise). */
static void npy_parse(const unsigned char *buf, size_t len, struct npy *a)
{
	size_t hl, at;
	const char *h, *descr, *shape, *order;

	memset(a, 0, sizeof(*a));
	if (len < 10 || memcmp(buf, "\x93NUMPY", 6) || buf[6] < 1 || buf[6] > 3)
		return;
	hl = buf[6] == 1 ? (size_t)buf[8] | (size_t)buf[9] << 8
			 : len < 12 ? SIZE_MAX : (size_t)buf[8] | (size_t)buf[9] << 8 | (size_t)buf[10] << 16 | (size_t)buf[11] << 24;
	at = buf[6] == 1 ? 10 : 12;
	if (hl > len - at)
		return;
	h = (const char *)buf + at;
	descr = npy_value(h, hl, "'descr'");
	shape = npy_value(h, hl, "'shape'");
	order = npy_value(h, hl, "'fortran_order'");
	if (!descr || !shape || !order || strncmp(order, "False", 5) || descr[0] != '\'' ||
	    !strchr("<|", descr[1]) || !strchr("fiub", descr[2]) || !strchr("1248", descr[3]) || descr[4] != '\'')
		return;
	a->size = (size_t)(descr[3] - '0');
	a->n = npy_count(shape, h + hl);
	a->data = at + hl;
	if ((descr[2] == 'f' && a->size < 4) || !a->n || a->n > (len - a->data) / a->size ||
	    a->n * a->size != len - a->data)
		return;
	a->kind = descr[2];
}

/* Element i of a (data at p) as a double. */
static double npy_at(const struct npy *a, const unsigned char *p, size_t i)
{
	const unsigned char *e = p + i * a->size;
	uint64_t u = 0;

	for (size_t b = a->size; b-- > 0;)
		u = u << 8 | e[b];
	if (a->kind == 'f') {
		if (a->size == 4) {
			float f;
			uint32_t w = (uint32_t)u;

			memcpy(&f, &w, 4);
			return f;
		}
		double d;

		memcpy(&d, &u, 8);
		return d;
	}
	if (a->kind == 'i' && a->size < 8 && (u >> (8 * a->size - 1)) & 1)
		u |= ~(uint64_t)0 << (8 * a->size);  /* sign-extended */
	return a->kind == 'i' ? (double)(int64_t)u : (double)u;
}

/* Two .npy arrays of one type and shape, element by element: 0, 1 (what says which), *tol as output_difference. */
static int npy_difference(const struct strbuf *x, const struct strbuf *y, const struct npy *a, double rtol, double atol,
			  struct strbuf *what, int *tol)
{
	const unsigned char *p = (const unsigned char *)x->buf + a->data, *q = (const unsigned char *)y->buf + a->data;

	for (size_t i = 0; i < a->n; i++) {
		double u = npy_at(a, p, i), v = npy_at(a, q, i);

		if (u == v || (isnan(u) && isnan(v)))
			continue;
		if (fabs(u - v) <= atol + rtol * fabs(u)) {
			*tol = 1;
			continue;
		}
		strbuf_addf(what, "element %zu of %zu: %.9g -> %.9g", i, a->n, u, v);
		return 1;
	}
	return 0;
}

int file_difference(const char *a, const char *b, double rtol, double atol, struct strbuf *what, int *tol)
{
	struct strbuf x = STRBUF_INIT, y = STRBUF_INIT;
	struct npy na, nb;
	struct stat sa, sb;
	int ret = -1;
	long line;

	*tol = 0;
	if (stat(a, &sa) || stat(b, &sb))
		goto out;
	if (sa.st_size > FILE_COMPARED_MAX || sb.st_size > FILE_COMPARED_MAX) {
		ret = 2;
		goto out;
	}
	if (slurp(a, &x) || slurp(b, &y))
		goto out;
	npy_parse((const unsigned char *)x.buf, x.len, &na);
	npy_parse((const unsigned char *)y.buf, y.len, &nb);
	if (na.kind && nb.kind && na.kind == nb.kind && na.size == nb.size && na.n == nb.n && na.data == nb.data &&
	    !memcmp(x.buf, y.buf, na.data))
		ret = npy_difference(&x, &y, &na, rtol, atol, what, tol);
	else if (na.kind || nb.kind || memchr(x.buf ? x.buf : "", '\0', x.len) || memchr(y.buf ? y.buf : "", '\0', y.len))
		ret = x.len != y.len || (x.len && memcmp(x.buf, y.buf, x.len))
			      ? (strbuf_addstr(what, na.kind && nb.kind ? "another type or shape" : "other bytes"), 1)
			      : 0;
	else if ((line = output_difference(a, b, rtol, atol, what, tol)) >= 0)
		ret = line > 0 ? (strbuf_addf(what, " (line %ld)", line), 1) : 0;
out:
	strbuf_release(&x);
	strbuf_release(&y);
	return ret;
}
