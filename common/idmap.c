/* idmap.c - see idmap.h. */
#include "idmap.h"
#include "checked.h"

#include <stdlib.h>
#include <string.h>

struct idmap_slot {
	int64_t id;
	size_t value_plus1; /* 0: empty slot */
};

/* Scramble the id so that sequential or adversarial ids spread (splitmix64 finalizer). */
static uint64_t id_hash(int64_t id)
{
	uint64_t x = (uint64_t)id;

	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static struct idmap_slot *find(struct idmap_slot *slots, size_t cap, int64_t id)
{
	size_t i = (size_t)id_hash(id) & (cap - 1);

	while (slots[i].value_plus1 && slots[i].id != id)
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int grow(struct idmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64;
	struct idmap_slot *ns;

	if (ncap < m->cap || !(ns = alloc_zeroed(ncap, sizeof(*ns))))
		return -1;
	for (size_t i = 0; i < m->cap; i++)
		if (m->slots[i].value_plus1)
			*find(ns, ncap, m->slots[i].id) = m->slots[i];
	free(m->slots);
	m->slots = ns;
	m->cap = ncap;
	return 0;
}

static int store(struct idmap *m, int64_t id, size_t value, int replace)
{
	struct idmap_slot *s;

	if (value == SIZE_MAX)
		return -1;
	/* keep the load under one half: probes stay short */
	if ((m->used + 1) * 2 > m->cap && grow(m))
		return -1;
	s = find(m->slots, m->cap, id);
	if (s->value_plus1 && !replace)
		return 1;
	m->used += !s->value_plus1;
	s->id = id;
	s->value_plus1 = value + 1;
	return 0;
}

/* id's place in the dense array, or SIZE_MAX when it is outside its range. */
static size_t dense_at(const struct idmap *m, int64_t id)
{
	uint64_t off = (uint64_t)id - (uint64_t)m->base;

	return m->dlen && id >= m->base && off < m->dlen ? (size_t)off : SIZE_MAX;
}

/*
 * Make the dense array reach id if it may: nothing hashed yet (else an id
 * already hashed could fall in the new range) and the array stays at least
 * half full (memory follows the entries, as in the hashed table).
 */
static size_t dense_extend(struct idmap *m, int64_t id)
{
	uint64_t off = (uint64_t)id - (uint64_t)m->base;

	if (m->used || (m->dlen && id < m->base))
		return SIZE_MAX;
	if (!m->dlen) {
		m->base = id;
		off = 0;
	} else if (off >= 2 * (uint64_t)m->dused + 64) {
		return SIZE_MAX;
	}
	if (off >= m->dcap) {
		size_t ncap = m->dcap ? m->dcap * 2 : 64, *nd;

		while (ncap <= off)
			ncap *= 2;
		if (!(nd = realloc_array(m->dense, ncap, sizeof(*nd))))
			return SIZE_MAX;
		alloc_advise_huge(nd, ncap * sizeof(*nd));
		memset(nd + m->dcap, 0, (ncap - m->dcap) * sizeof(*nd));
		m->dense = nd;
		m->dcap = ncap;
	}
	m->dlen = (size_t)off + 1;
	return (size_t)off;
}

static int put_or_set(struct idmap *m, int64_t id, size_t value, int replace)
{
	size_t at = dense_at(m, id);

	if (value == SIZE_MAX)
		return -1;
	if (at == SIZE_MAX)
		at = dense_extend(m, id);
	if (at == SIZE_MAX)
		return store(m, id, value, replace);
	if (m->dense[at] && !replace)
		return 1;
	m->dused += !m->dense[at];
	m->dense[at] = value + 1;
	return 0;
}

int idmap_put(struct idmap *m, int64_t id, size_t value)
{
	return put_or_set(m, id, value, 0);
}

int idmap_set(struct idmap *m, int64_t id, size_t value)
{
	return put_or_set(m, id, value, 1);
}

int idmap_get(const struct idmap *m, int64_t id, size_t *value)
{
	const struct idmap_slot *s;
	size_t at = dense_at(m, id);

	if (at != SIZE_MAX) {
		if (!m->dense[at])
			return 0;
		*value = m->dense[at] - 1;
		return 1;
	}
	if (!m->cap)
		return 0;
	s = find(m->slots, m->cap, id);
	if (!s->value_plus1)
		return 0;
	*value = s->value_plus1 - 1;
	return 1;
}

void idmap_prefetch(const struct idmap *m, int64_t id)
{
	if (m->cap && dense_at(m, id) == SIZE_MAX)
		__builtin_prefetch(&m->slots[(size_t)id_hash(id) & (m->cap - 1)]);
}

void idmap_release(struct idmap *m)
{
	free(m->slots);
	free(m->dense);
	memset(m, 0, sizeof(*m));
}
