/* strbuf.c - see strbuf.h.  Allocation failure is sticky (strbuf_failed). */
#include "strbuf.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void strbuf_init(struct strbuf *sb)
{
	sb->buf = NULL;
	sb->len = sb->alloc = 0;
	sb->failed = 0;
}

void strbuf_release(struct strbuf *sb)
{
	if (sb->alloc)
		free(sb->buf);
	strbuf_init(sb);
}

int strbuf_failed(const struct strbuf *sb)
{
	return sb->failed;
}

void strbuf_reset(struct strbuf *sb)
{
	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = '\0';
}

/* Room for extra more bytes and the NUL; 0, or -1 (sticky) when memory ran out. */
static int strbuf_grow(struct strbuf *sb, size_t extra)
{
	static char empty[1];
	size_t want = sb->len + extra + 1, ncap = sb->alloc ? sb->alloc : 64;
	char *p;

	if (sb->failed)
		return -1;
	if (want <= sb->alloc)
		return 0;
	while (ncap < want && ncap <= SIZE_MAX / 2)
		ncap *= 2;
	if (want < extra || ncap < want || !(p = realloc(sb->alloc ? sb->buf : NULL, ncap))) {
		/* keep what is there, readable: a NULL buffer becomes an empty string */
		sb->failed = 1;
		if (!sb->buf)
			sb->buf = empty;
		return -1;
	}
	if (!sb->alloc)
		p[0] = '\0';
	sb->buf = p;
	sb->alloc = ncap;
	return 0;
}

void strbuf_add(struct strbuf *sb, const void *data, size_t len)
{
	if (strbuf_grow(sb, len))
		return;
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
	if (strbuf_grow(sb, (size_t)n))
		return;
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

size_t utf8_seq(const unsigned char *s, size_t avail, uint32_t *cp)
{
	uint32_t c;
	size_t n;

	if (!avail)
		return 0;
	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07;
	else
		return 0; /* continuation byte, overlong 0xc0/0xc1, or beyond U+10FFFF */
	if (avail < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	/* overlong forms, UTF-16 surrogates, beyond U+10FFFF */
	if ((n == 3 && c < 0x800) || (n == 4 && (c < 0x10000 || c > 0x10ffff)) || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

#define REPLACEMENT "\xef\xbf\xbd" /* U+FFFD */

void strbuf_add_json_argv(struct strbuf *sb, char *const *argv)
{
	strbuf_addch(sb, '[');
	for (char *const *a = argv; a && *a; a++) {
		if (a != argv)
			strbuf_addch(sb, ',');
		strbuf_add_json_string(sb, *a);
	}
	strbuf_addch(sb, ']');
}

void strbuf_add_json_string(struct strbuf *sb, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t len = strlen((const char *)s);

	strbuf_addch(sb, '"');
	while (len) {
		uint32_t c;
		size_t n = utf8_seq(s, len, &c);

		if (!n) {
			/* not UTF-8 (a recording may hold any bytes): JSON must stay valid */
			strbuf_addstr(sb, "\\ufffd");
			s++, len--;
			continue;
		}
		switch (c) {
		case '"': strbuf_addstr(sb, "\\\""); break;
		case '\\': strbuf_addstr(sb, "\\\\"); break;
		case '\n': strbuf_addstr(sb, "\\n"); break;
		case '\r': strbuf_addstr(sb, "\\r"); break;
		case '\t': strbuf_addstr(sb, "\\t"); break;
		default:
			/* controls, C1 controls, and the two line separators JavaScript chokes on */
			if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == 0x2028 || c == 0x2029)
				strbuf_addf(sb, "\\u%04x", (unsigned)c);
			else
				strbuf_add(sb, s, n);
		}
		s += n, len -= n;
	}
	strbuf_addch(sb, '"');
}

void strbuf_add_xml_escaped(struct strbuf *sb, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "");
	size_t len = strlen((const char *)s);

	while (len) {
		uint32_t c;
		size_t n = utf8_seq(s, len, &c);

		if (!n) {
			strbuf_addstr(sb, REPLACEMENT);
			s++, len--;
			continue;
		}
		switch (c) {
		case '<': strbuf_addstr(sb, "&lt;"); break;
		case '>': strbuf_addstr(sb, "&gt;"); break;
		case '&': strbuf_addstr(sb, "&amp;"); break;
		case '"': strbuf_addstr(sb, "&quot;"); break;
		case '\'': strbuf_addstr(sb, "&apos;"); break;
		default:
			/* XML 1.0 has no way to write other C0 controls, not even as &#N; */
			if (c < 0x20 && c != '\n' && c != '\t' && c != '\r')
				strbuf_addch(sb, '?');
			else if (c == '\r')
				strbuf_addstr(sb, "&#13;");
			else
				strbuf_add(sb, s, n);
		}
		s += n, len -= n;
	}
}

/* Length of an SGR sequence (ESC [ digits/; m) at s, or 0. */
static size_t sgr_len(const unsigned char *s, size_t avail)
{
	size_t i = 2;

	if (avail < 3 || s[0] != 0x1b || s[1] != '[')
		return 0;
	while (i < avail && ((s[i] >= '0' && s[i] <= '9') || s[i] == ';'))
		i++;
	return i < avail && s[i] == 'm' ? i + 1 : 0;
}

void strbuf_sanitize_text(struct strbuf *sb, size_t from, int keep_sgr)
{
	struct strbuf out = STRBUF_INIT;
	const unsigned char *s;
	size_t len;

	if (from >= sb->len)
		return;
	s = (const unsigned char *)sb->buf + from;
	len = sb->len - from;
	strbuf_add(&out, sb->buf, from);
	while (len) {
		uint32_t c;
		size_t n = keep_sgr ? sgr_len(s, len) : 0;

		if (n) {
			strbuf_add(&out, s, n);
		} else if (!(n = utf8_seq(s, len, &c))) {
			strbuf_addstr(&out, REPLACEMENT);
			n = 1;
		} else if ((c < 0x20 && c != '\n' && c != '\t' && !(c == '\r' && len > 1 && s[1] == '\n')) ||
			   (c >= 0x7f && c <= 0x9f)) {
			/* a terminal would obey it: ESC sequences, BEL, BS, CR, C1 CSI */
			strbuf_addch(&out, '?');
		} else {
			strbuf_add(&out, s, n);
		}
		s += n, len -= n;
	}
	out.failed |= sb->failed;
	strbuf_release(sb);
	*sb = out;
}

char *strbuf_detach(struct strbuf *sb)
{
	char *b = sb->alloc ? sb->buf : calloc(1, 1);

	strbuf_init(sb);
	return b;
}
