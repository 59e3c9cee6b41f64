/* strbuf.c - see strbuf.h.  Allocation failure aborts: output text is small. */
#include "strbuf.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void strbuf_init(struct strbuf *sb)
{
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
}

void strbuf_release(struct strbuf *sb)
{
	free(sb->buf);
	strbuf_init(sb);
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

static void strbuf_grow(struct strbuf *sb, size_t extra)
{
	size_t want = sb->len + extra + 1;

	if (want <= sb->alloc)
		return;
	sb->alloc = sb->alloc ? sb->alloc : 64;
	while (sb->alloc < want)
		sb->alloc *= 2;
	sb->buf = realloc(sb->buf, sb->alloc);
	if (!sb->buf) {
		fputs("fatal: out of memory\n", stderr);
		abort();
	}
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	strbuf_grow(sb, len);
	memcpy(sb->buf + sb->len, data, len);
	sb->len += len;
	sb->buf[sb->len] = '\0';
}

void strbuf_addstr(struct strbuf *sb, const char *s)
{
	strbuf_add(sb, s, strlen(s));
}

void strbuf_addch(struct strbuf *sb, int c)
{
	char ch = (char)c;

	strbuf_add(sb, &ch, 1);
}

void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap)
{
	va_list cp;
	char probe[256];
	int n;

	if (!fmt)
		return;
	va_copy(cp, ap);
	n = vsnprintf(probe, sizeof(probe), fmt, cp);
	va_end(cp);
	if (n < 0)
		return;
	strbuf_grow(sb, (size_t)n);
	vsnprintf(sb->buf + sb->len, (size_t)n + 1, fmt, ap);
	sb->len += (size_t)n;
}

void strbuf_addf(struct strbuf *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	strbuf_vaddf(sb, fmt, ap);
	va_end(ap);
}

void strbuf_add_json_string(struct strbuf *sb, const char *s)
{
	strbuf_addch(sb, '"');
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		switch (c) {
		case '"': strbuf_addstr(sb, "\\\""); break;
		case '\\': strbuf_addstr(sb, "\\\\"); break;
		case '\n': strbuf_addstr(sb, "\\n"); break;
		case '\r': strbuf_addstr(sb, "\\r"); break;
		case '\t': strbuf_addstr(sb, "\\t"); break;
		default:
			if (c < 0x20)
				strbuf_addf(sb, "\\u%04x", c);
			else
				strbuf_addch(sb, c);
		}
	}
	strbuf_addch(sb, '"');
}

void strbuf_add_xml_escaped(struct strbuf *sb, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': strbuf_addstr(sb, "&lt;"); break;
		case '>': strbuf_addstr(sb, "&gt;"); break;
		case '&': strbuf_addstr(sb, "&amp;"); break;
		case '"': strbuf_addstr(sb, "&quot;"); break;
		case '\'': strbuf_addstr(sb, "&apos;"); break;
		default:
			if ((unsigned char)*s < 0x20 && *s != '\n' && *s != '\t')
				strbuf_addf(sb, "&#%d;", *s);
			else
				strbuf_addch(sb, *s);
		}
	}
}

char *strbuf_detach(struct strbuf *sb)
{
	char *b = sb->buf;

	if (!b)
		b = calloc(1, 1);
	strbuf_init(sb);
	return b;
}
