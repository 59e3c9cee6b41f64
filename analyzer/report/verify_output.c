/*
 * verify_output.c - two runs' standard outputs compared line by line with
 * a numeric tolerance (verify_internal.h): a program that prints a loss
 * whose last digits differ from run to run (threads reduce in another
 * order) prints the same output within --rtol, and a different one
 * without it.
 */
#include "verify_internal.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Line at of sb (from its start to the newline), quoted and cut at 60 bytes, into out. */
static void add_line(struct strbuf *out, const struct strbuf *sb, size_t at)
{
	size_t end = at;

	while (at > 0 && sb->buf[at - 1] != '\n')
		at--;
	while (end < sb->len && sb->buf[end] != '\n')
		end++;
	if (at >= sb->len) {
		strbuf_addstr(out, "(no line)");
		return;
	}
	strbuf_addf(out, "'%.*s%s'", (int)(end - at > 60 ? 60 : end - at), sb->buf + at, end - at > 60 ? "..." : "");
}

/* Whether a number starts at s[i] (not inside a name like w0 or conv2d). */
static int number_at(const char *s, size_t i, size_t len)
{
	size_t j = i;

	if (i > 0 && (isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_' || s[i - 1] == '.'))
		return 0;
	if (j < len && (s[j] == '-' || s[j] == '+'))
		j++;
	if (j < len && s[j] == '.')
		j++;
	return j < len && isdigit((unsigned char)s[j]);
}

/* One number of a line: its value and length. */
static size_t scan_number(const char *s, size_t i, size_t len, double *v)
{
	char buf[64];
	size_t n = 0;
	char *end;

	while (i + n < len && n < sizeof(buf) - 1 && strchr("0123456789+-.eE", s[i + n]) &&
	       !(n > 0 && (s[i + n] == '-' || s[i + n] == '+') && s[i + n - 1] != 'e' && s[i + n - 1] != 'E'))
		n++;
	memcpy(buf, s + i, n);
	buf[n] = '\0';
	*v = strtod(buf, &end);
	return end > buf ? (size_t)(end - buf) : 1;
}

/* Lines x[0..nx) and y[0..ny) equal within the tolerance (see output_difference()); *tol when only so. */
static int lines_equal(const char *x, size_t nx, const char *y, size_t ny, double rtol, double atol, int *tol)
{
	size_t i = 0, j = 0;

	while (i < nx && j < ny) {
		int a = number_at(x, i, nx), b = number_at(y, j, ny);
		double u, v;

		if (a != b)
			return 0;
		if (!a) {
			if (x[i++] != y[j++])
				return 0;
			continue;
		}
		i += scan_number(x, i, nx, &u);
		j += scan_number(y, j, ny, &v);
		if (u == v || (isnan(u) && isnan(v)))
			continue;
		if (!(fabs(u - v) <= atol + rtol * fabs(u)))
			return 0;
		*tol = 1;
	}
	return i == nx && j == ny;
}

long output_difference(const char *a, const char *b, double rtol, double atol, struct strbuf *what, int *tolerated)
{
	struct strbuf x = STRBUF_INIT, y = STRBUF_INIT;
	long line = 1, ret = -1;
	size_t i = 0, j = 0;

	*tolerated = 0;
	if (!slurp(a, &x) && !slurp(b, &y)) {
		ret = 0;
		while (i < x.len || j < y.len) {
			size_t ei = i, ej = j;

			while (ei < x.len && x.buf[ei] != '\n')
				ei++;
			while (ej < y.len && y.buf[ej] != '\n')
				ej++;
			if (i >= x.len || j >= y.len || !lines_equal(x.buf + i, ei - i, y.buf + j, ej - j, rtol, atol, tolerated)) {
				ret = line;
				add_line(what, &x, i);
				strbuf_addstr(what, " -> ");
				add_line(what, &y, j);
				break;
			}
			i = ei + 1, j = ej + 1, line++;
		}
	}
	strbuf_release(&x);
	strbuf_release(&y);
	return ret;
}
