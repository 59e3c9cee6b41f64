/* eager_keys.c - see eager_keys.h. */
#include "eager_keys.h"
#include "db.h"

#include <stdlib.h>
#include <string.h>

#define EK_FIRST_CAP 256u

int eager_keys_init(struct eager_keys *ks, sqlite3 *db)
{
	memset(ks, 0, sizeof(*ks));
	ks->cap = EK_FIRST_CAP;
	ks->keys = calloc(ks->cap, sizeof(*ks->keys));
	ks->ids = calloc(ks->cap, sizeof(*ks->ids));
	ks->ins = db_prepare(db, "INSERT INTO eager_op_keys(pid, tid, op_id, device_id, callsite_id, base_ns)"
				 " VALUES (?,?,?,?,?,?)");
	if (!ks->keys || !ks->ids || !ks->ins) {
		eager_keys_release(ks);
		return -1;
	}
	return 0;
}

static uint32_t slot_of(const struct eager_key *k, uint32_t cap)
{
	const int64_t v[] = { k->pid, k->tid, k->op, k->device, k->site };
	uint64_t h = 0x9E3779B97F4A7C15ULL;

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		h ^= (uint64_t)v[i] + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2);
		h *= 0xBF58476D1CE4E5B9ULL;
	}
	return (uint32_t)(h ^ (h >> 31)) & (cap - 1);
}

static int same_key(const struct eager_key *a, const struct eager_key *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->op == b->op && a->device == b->device && a->site == b->site;
}

/* The slot of k: its own, or the free one where it goes. */
static uint32_t key_find(const struct eager_keys *ks, const struct eager_key *k)
{
	uint32_t i = slot_of(k, ks->cap);

	while (ks->ids[i] && !same_key(&ks->keys[i], k))
		i = (i + 1) & (ks->cap - 1);
	return i;
}

static int keys_grow(struct eager_keys *ks)
{
	struct eager_keys old = *ks;

	if (ks->cap > UINT32_MAX / 4)
		return -1;
	ks->cap *= 2;
	ks->keys = calloc(ks->cap, sizeof(*ks->keys));
	ks->ids = calloc(ks->cap, sizeof(*ks->ids));
	if (!ks->keys || !ks->ids) {
		free(ks->keys);
		free(ks->ids);
		ks->keys = old.keys, ks->ids = old.ids, ks->cap = old.cap;
		return -1;
	}
	for (uint32_t i = 0; i < old.cap; i++)
		if (old.ids[i]) {
			uint32_t j = key_find(ks, &old.keys[i]);

			ks->keys[j] = old.keys[i];
			ks->ids[j] = old.ids[i];
		}
	free(old.keys);
	free(old.ids);
	return 0;
}

static void key_bind_id(sqlite3_stmt *st, int col, int64_t id)
{
	if (id > 0)
		sqlite3_bind_int64(st, col, id);
	else
		sqlite3_bind_null(st, col);
}

int64_t eager_keys_get(struct eager_keys *ks, const struct eager_key *k, int64_t start_ns)
{
	uint32_t i = key_find(ks, k);
	sqlite3 *db = sqlite3_db_handle(ks->ins);

	if (ks->ids[i])
		return ks->ids[i];
	if ((ks->n + 1) * 2 > ks->cap) {
		if (keys_grow(ks))
			return 0;
		i = key_find(ks, k);
	}
	if (!ks->has_base)
		ks->base_ns = start_ns, ks->has_base = 1;
	sqlite3_bind_int64(ks->ins, 1, k->pid);
	sqlite3_bind_int64(ks->ins, 2, k->tid);
	sqlite3_bind_int64(ks->ins, 3, k->op);
	key_bind_id(ks->ins, 4, k->device);
	key_bind_id(ks->ins, 5, k->site);
	sqlite3_bind_int64(ks->ins, 6, ks->base_ns);
	if (db_step_quiet(db, ks->ins) != 0)
		return 0;
	ks->keys[i] = *k;
	ks->ids[i] = sqlite3_last_insert_rowid(db);
	ks->n++;
	return ks->ids[i];
}

void eager_keys_release(struct eager_keys *ks)
{
	sqlite3_finalize(ks->ins);
	free(ks->keys);
	free(ks->ids);
	memset(ks, 0, sizeof(*ks));
}
