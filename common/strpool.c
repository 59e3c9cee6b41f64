/* strpool.c - see strpool.h. */
#include "strpool.h"
#include "checked.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Text is bump-allocated from blocks of this size; longer strings get a block of their own. */
#define BLOCK_BYTES ((size_t)64 * 1024)

struct strpool_block {
	struct strpool_block *next;
	size_t used, size;
	char text[];
};

/* Entries with the same hash chain through next (rare: the hash has 64 bits). */
struct strpool_entry {
	const char *s;
	size_t len;
	size_t next_plus1;   /* 0: end of the chain */
};

/* FNV-1a over the bytes; the idmap scrambles it again. */
static int64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return (int64_t)h;
}

/* Room for n bytes of text, or NULL. */
static char *take(struct strpool *p, size_t n)
{
	struct strpool_block *b = p->blocks;
	size_t size;

	if (p->limit && (n > p->limit || p->bytes > p->limit - n))
		return NULL;
	if (!b || b->size - b->used < n) {
		size = n > BLOCK_BYTES / 4 ? n : BLOCK_BYTES;
		if (size > SIZE_MAX - sizeof(*b) || !(b = malloc(sizeof(*b) + size)))
			return NULL;
		b->size = size;
		b->used = 0;
		/* a big string's own block goes second: the current block keeps filling */
		if (size != BLOCK_BYTES && p->blocks) {
			b->next = p->blocks->next;
			p->blocks->next = b;
		} else {
			b->next = p->blocks;
			p->blocks = b;
		}
	}
	p->bytes += n;
	b->used += n;
	return b->text + b->used - n;
}

const char *strpool_intern(struct strpool *p, const char *s, size_t len)
{
	struct strpool_entry *e;
	int64_t h;
	size_t i, *link = NULL, *recent;
	char *copy;

	if (!s || len == SIZE_MAX)
		return NULL;
	h = hash_bytes(s, len);
	recent = &p->recent[((uint64_t)h ^ (uint64_t)h >> 32) % STRPOOL_RECENT];
	if (*recent && (e = &p->entries[*recent - 1])->len == len && !memcmp(e->s, s, len))
		return e->s;
	if (idmap_get(&p->by_hash, h, &i)) {
		for (;;) {
			e = &p->entries[i];
			if (e->len == len && !memcmp(e->s, s, len)) {
				*recent = i + 1;
				return e->s;
			}
			if (!e->next_plus1)
				break;
			i = e->next_plus1 - 1;
		}
		link = &e->next_plus1;
	}
	/* the map last: a failure before it leaves no entry that points nowhere */
	if (ARRAY_GROW(p->entries, p->used, p->cap) || !(copy = take(p, len + 1)) ||
	    (!link && idmap_put(&p->by_hash, h, p->used) < 0))
		return NULL;
	memcpy(copy, s, len);
	copy[len] = '\0';
	if (link)
		*link = p->used + 1;
	p->entries[p->used] = (struct strpool_entry){ copy, len, 0 };
	*recent = ++p->used;
	return copy;
}

const char *strpool_copy(struct strpool *p, const char *s, size_t len)
{
	char *copy;

	if (!s || len == SIZE_MAX || !(copy = take(p, len + 1)))
		return NULL;
	memcpy(copy, s, len);
	copy[len] = '\0';
	return copy;
}

const char *strpool_str(struct strpool *p, const char *s)
{
	return s ? strpool_intern(p, s, strlen(s)) : NULL;
}

const char *strpool_vprintf(struct strpool *p, const char *fmt, va_list ap)
{
	char *s = NULL;
	const char *r;
	int n = vasprintf(&s, fmt, ap);

	if (n < 0)
		return NULL;
	r = strpool_intern(p, s, (size_t)n);
	free(s);
	return r;
}

const char *strpool_printf(struct strpool *p, const char *fmt, ...)
{
	va_list ap;
	const char *r;

	va_start(ap, fmt);
	r = strpool_vprintf(p, fmt, ap);
	va_end(ap);
	return r;
}

void strpool_adopt(struct strpool *into, struct strpool *from)
{
	struct strpool_block **tail = &from->blocks;

	while (*tail)
		tail = &(*tail)->next;
	/* after into's newest block, which keeps filling */
	if (from->blocks && into->blocks) {
		*tail = into->blocks->next;
		into->blocks->next = from->blocks;
	} else if (from->blocks) {
		into->blocks = from->blocks;
	}
	into->bytes += from->bytes;
	from->blocks = NULL;
	strpool_release(from);
}

void strpool_release(struct strpool *p)
{
	size_t limit = p->limit;

	while (p->blocks) {
		struct strpool_block *b = p->blocks;

		p->blocks = b->next;
		free(b);
	}
	free(p->entries);
	idmap_release(&p->by_hash);
	memset(p, 0, sizeof(*p));
	p->limit = limit;
}
