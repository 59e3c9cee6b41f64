/*
 * strbuf.h - growable byte buffer for building text (JSON, SQL-free output).
 *
 * Errors are sticky, as with SQLite's sqlite3_str: when memory runs out the
 * buffer keeps what it holds, every later append does nothing, and
 * strbuf_failed() says so.  Whoever writes the text out checks it once and
 * reports "out of memory" once; the code that builds it checks nothing.
 */
#ifndef AGPROF_STRBUF_H
#define AGPROF_STRBUF_H

#include <stddef.h>
#include <stdarg.h>
#include <stdint.h>

struct strbuf {
	char *buf;    /* NULL until the first append, then always NUL-terminated */
	size_t len;
	size_t alloc; /* 0: buf is NULL or a shared empty string, not ours to free */
	int failed;   /* an allocation failed: appends are dropped since */
};

#define STRBUF_INIT { NULL, 0, 0, 0 }

void strbuf_init(struct strbuf *sb);
void strbuf_release(struct strbuf *sb);
void strbuf_reset(struct strbuf *sb);
void strbuf_add(struct strbuf *sb, const void *data, size_t len);
void strbuf_addstr(struct strbuf *sb, const char *s);
void strbuf_addch(struct strbuf *sb, int c);
void strbuf_addf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strbuf_vaddf(struct strbuf *sb, const char *fmt, va_list ap);
/*
 * Text from a recording is untrusted and need not be UTF-8.  The escapers
 * below always produce valid output: invalid UTF-8 becomes U+FFFD.
 */
/* Append s as a JSON string literal, quotes included; controls as \uXXXX. */
void strbuf_add_json_string(struct strbuf *sb, const char *s);
/* A NULL-terminated argv as a JSON array of strings: ["python","train.py"]. */
void strbuf_add_json_argv(struct strbuf *sb, char *const *argv);
/* Append s with XML special characters escaped; controls XML cannot hold become '?'. */
void strbuf_add_xml_escaped(struct strbuf *sb, const char *s);
/*
 * Make sb's text from offset from safe for a terminal or a CSV reader, the
 * one place text and CSV output pass before they are written: control
 * characters other than newline, tab and CR before LF become '?', C1
 * controls too, invalid UTF-8 becomes U+FFFD.  keep_sgr keeps colour
 * sequences (ESC [ ... m), which only set colours.
 */
void strbuf_sanitize_text(struct strbuf *sb, size_t from, int keep_sgr);
/*
 * Length of the valid UTF-8 sequence at s (at most avail bytes) and its
 * code point in *cp, or 0 when s does not start one (overlong, surrogate,
 * truncated, beyond U+10FFFF).
 */
size_t utf8_seq(const unsigned char *s, size_t avail, uint32_t *cp);
/* Detach the buffer (never NULL but when out of memory); caller frees. */
char *strbuf_detach(struct strbuf *sb);
/* 1 when an append was dropped for lack of memory (the text is incomplete). */
int strbuf_failed(const struct strbuf *sb);

#endif
