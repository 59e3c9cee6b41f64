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

int idmap_put(struct idmap *m, int64_t id, size_t value)
{
	return store(m, id, value, 0);
}

int idmap_set(struct idmap *m, int64_t id, size_t value)
{
	return store(m, id, value, 1);
}

int idmap_get(const struct idmap *m, int64_t id, size_t *value)
{
	const struct idmap_slot *s;

	if (!m->cap)
		return 0;
	s = find(m->slots, m->cap, id);
	if (!s->value_plus1)
		return 0;
	*value = s->value_plus1 - 1;
	return 1;
}

void idmap_release(struct idmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}
