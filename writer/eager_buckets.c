/* eager_buckets.c - see eager_buckets.h. */
#include "eager_buckets.h"
#include "checked.h"
#include "db.h"

#include <stdlib.h>
#include <string.h>

/* Open buckets at most: a few MiB; half of them in use triggers a flush of all. */
#define EB_SLOTS 16384u

int eager_buckets_init(struct eager_buckets *b, sqlite3 *db)
{
	return eager_buckets_init_as(b, db,
				     "INSERT OR REPLACE INTO eager_op_buckets(id, pid, tid, start_ns, end_ns, op_id,"
				     " device_id, callsite_id, count, total_ns, python_ns, slow_path, failed, histogram)"
				     " VALUES (?14,?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13)");
}

int eager_buckets_init_as(struct eager_buckets *b, sqlite3 *db, const char *insert)
{
	memset(b, 0, sizeof(*b));
	b->cap = EB_SLOTS;
	b->slots = calloc(b->cap, sizeof(*b->slots));
	b->ins = db_prepare(db, insert);
	if (!b->slots || !b->ins) {
		free(b->slots);
		b->slots = NULL;
		return -1;
	}
	return 0;
}

static uint32_t key_hash(const struct eager_key *k, uint32_t cap)
{
	uint64_t h = 0x9E3779B97F4A7C15ULL;
	const int64_t v[] = { k->pid, k->tid, k->op, k->device, k->site, k->second };

	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		h ^= (uint64_t)v[i] + 0x632BE59BD9B4E019ULL + (h << 6) + (h >> 2);
		h *= 0xBF58476D1CE4E5B9ULL;
	}
	return (uint32_t)(h ^ (h >> 31)) & (cap - 1);
}

static int key_eq(const struct eager_key *a, const struct eager_key *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->op == b->op && a->device == b->device &&
	       a->site == b->site && a->second == b->second;
}

static void bind_id(sqlite3_stmt *st, int col, int64_t id)
{
	if (id > 0)
		sqlite3_bind_int64(st, col, id);
	else
		sqlite3_bind_null(st, col);
}

/*
 * The histogram as little-endian uint32 counts up to the last non-zero one.
 * A bucket written before keeps its id (its row is replaced): 0 when stored.
 */
static int write_row(struct eager_buckets *b, struct eager_bucket *e)
{
	int rc;
	unsigned char blob[EB_HIST * 4];
	int n = EB_HIST;

	while (n > 0 && !e->hist[n - 1])
		n--;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < 4; j++)
			blob[i * 4 + j] = (unsigned char)(e->hist[i] >> (8 * j));
	sqlite3_bind_int64(b->ins, 1, e->k.pid);
	sqlite3_bind_int64(b->ins, 2, e->k.tid);
	sqlite3_bind_int64(b->ins, 3, e->first_ns);
	sqlite3_bind_int64(b->ins, 4, e->last_ns);
	sqlite3_bind_int64(b->ins, 5, e->k.op);
	bind_id(b->ins, 6, e->k.device);
	bind_id(b->ins, 7, e->k.site);
	sqlite3_bind_int64(b->ins, 8, e->count);
	sqlite3_bind_int64(b->ins, 9, e->total_ns);
	sqlite3_bind_int64(b->ins, 10, e->python_ns);
	sqlite3_bind_int64(b->ins, 11, e->slow);
	sqlite3_bind_int64(b->ins, 12, e->failed);
	sqlite3_bind_blob(b->ins, 13, blob, n * 4, SQLITE_TRANSIENT);
	bind_id(b->ins, 14, e->row);
	if ((rc = db_step_quiet(sqlite3_db_handle(b->ins), b->ins)) == 0) {
		if (!e->row)
			e->row = sqlite3_last_insert_rowid(sqlite3_db_handle(b->ins)), b->rows++;
		b->stored += e->count - e->written;
		e->written = e->count;
	}
	sqlite3_reset(b->ins);
	return rc;
}

static int hist_index(int64_t ns)
{
	int i = ns > 0 ? 64 - __builtin_clzll((uint64_t)ns) : 0;

	return i < EB_HIST ? i : EB_HIST - 1;
}

void eager_buckets_add(struct eager_buckets *b, const struct eager_key *k, int64_t start_ns, int64_t end_ns,
		       int64_t python_ns, int slow, int failed)
{
	uint32_t i = key_hash(k, b->cap);
	struct eager_bucket *e;
	int64_t dur = span_ns(start_ns, end_ns);

	while (b->slots[i].used && !key_eq(&b->slots[i].k, k))
		i = (i + 1) & (b->cap - 1);
	e = &b->slots[i];
	if (!e->used) {
		if ((b->n + 1) * 2 > b->cap) {
			eager_buckets_close(b, INT64_MAX);  /* bounded: every row written, the table empty */
			eager_buckets_add(b, k, start_ns, end_ns, python_ns, slow, failed);
			return;
		}
		memset(e, 0, sizeof(*e));
		e->used = 1, e->k = *k, e->first_ns = start_ns, e->last_ns = end_ns;
		b->n++;
	}
	e->count++;
	e->total_ns = dur_add(e->total_ns, dur);
	e->python_ns = dur_add(e->python_ns, python_ns > 0 ? python_ns : 0);
	e->slow += slow != 0;
	e->failed += failed != 0;
	if (start_ns < e->first_ns)
		e->first_ns = start_ns;
	if (end_ns > e->last_ns)
		e->last_ns = end_ns;
	if (e->hist[hist_index(dur)] < UINT32_MAX)
		e->hist[hist_index(dur)]++;
	b->ops++;
}

/*
 * Closing leaves holes in the probe chains: the open buckets that stay move
 * toward their hash slot until none can (each move shortens a chain, so the
 * passes end; a move that opens a hole behind a wrapped chain is fixed by
 * the next pass).
 */
static void rechain(struct eager_buckets *b)
{
	int moved;

	do {
		moved = 0;
		for (uint32_t i = 0; i < b->cap; i++) {
			uint32_t j;

			if (!b->slots[i].used)
				continue;
			j = key_hash(&b->slots[i].k, b->cap);
			while (j != i && b->slots[j].used)
				j = (j + 1) & (b->cap - 1);
			if (j == i)
				continue;
			b->slots[j] = b->slots[i];
			b->slots[i].used = 0;
			moved = 1;
		}
	} while (moved);
}

void eager_buckets_close(struct eager_buckets *b, int64_t before_second)
{
	uint32_t kept = 0;

	if (!b->slots || !b->n)
		return;
	for (uint32_t i = 0; i < b->cap; i++)
		if (b->slots[i].used && b->slots[i].k.second < before_second) {
			struct eager_bucket *e = &b->slots[i];

			if (e->count != e->written && write_row(b, e) != 0)
				b->refused += e->count - e->written;  /* dropped from memory: lost */
			e->used = 0;
			b->n--;
		} else if (b->slots[i].used) {
			kept++;
		}
	if (kept)
		rechain(b);
}

void eager_buckets_sync(struct eager_buckets *b)
{
	for (uint32_t i = 0; b->slots && b->n && i < b->cap; i++)
		if (b->slots[i].used && b->slots[i].count != b->slots[i].written)
			write_row(b, &b->slots[i]);  /* a refusal is retried at the next commit */
}

void eager_buckets_release(struct eager_buckets *b)
{
	free(b->slots);
	b->slots = NULL;
	b->n = 0;
}
