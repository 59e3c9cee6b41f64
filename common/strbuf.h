/* strbuf.h - growable byte buffer for building text (JSON, SQL-free output). */
#ifndef AGPROF_STRBUF_H
#define AGPROF_STRBUF_H

#include <stddef.h>
#include <stdarg.h>

struct strbuf {
	char *buf;    /* always NUL-terminated when len > 0 or after init */
	size_t len;
	size_t alloc;
};

#define STRBUF_INIT { NULL, 0, 0 }

void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/* Append s as a JSON string literal, quotes included. */
void strbuf_add_json_string(struct strbuf *sb, const char *s);
/* Append s with XML special characters escaped. */
void strbuf_add_xml_escaped(struct strbuf *sb, const char *s);
/* Detach the buffer; caller frees. */
char *strbuf_detach(struct strbuf *sb);

#endif
