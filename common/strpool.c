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

struct strpool_slot {
	const char *s;   /* NULL: empty */
	size_t len;
	uint64_t hash;
};

/* FNV-1a over the bytes: strings are short; the table grows with the entries only. */
static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

static struct strpool_slot *find(struct strpool_slot *slots, size_t cap, const char *s, size_t len, uint64_t h)
{
	size_t i = (size_t)h & (cap - 1);

	while (slots[i].s && !(slots[i].hash == h && slots[i].len == len && !memcmp(slots[i].s, s, len)))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int grow_slots(struct strpool *p)
{
	size_t ncap = p->cap ? p->cap * 2 : 256;
	struct strpool_slot *ns;

	if (ncap < p->cap || !(ns = alloc_zeroed(ncap, sizeof(*ns))))
		return -1;
	for (size_t i = 0; i < p->cap; i++)
		if (p->slots[i].s)
			*find(ns, ncap, p->slots[i].s, p->slots[i].len, p->slots[i].hash) = p->slots[i];
	free(p->slots);
	p->slots = ns;
	p->cap = ncap;
	return 0;
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
	struct strpool_slot *slot;
	uint64_t h;
	char *c;

	if (!s || len == SIZE_MAX)
		return NULL;
	/* keep the load under one half: probes stay short */
	if ((p->used + 1) * 2 > p->cap && grow_slots(p))
		return NULL;
	h = hash_bytes(s, len);
	slot = find(p->slots, p->cap, s, len, h);
	if (slot->s)
		return slot->s;
	c = take(p, len + 1);
	if (!c)
		return NULL;
	memcpy(c, s, len);
	c[len] = '\0';
	slot->s = c;
	slot->len = len;
	slot->hash = h;
	p->used++;
	return c;
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

void strpool_release(struct strpool *p)
{
	size_t limit = p->limit;

	while (p->blocks) {
		struct strpool_block *b = p->blocks;

		p->blocks = b->next;
		free(b);
	}
	free(p->slots);
	memset(p, 0, sizeof(*p));
	p->limit = limit;
}
