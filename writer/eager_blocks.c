/* eager_blocks.c - see eager_blocks.h. */
#include "eager_blocks.h"
#include "db.h"

#include <string.h>

int eager_blocks_init(struct eager_blocks *b, sqlite3 *db)
{
	memset(b, 0, sizeof(*b));
	b->first_id = 1;
	b->ins = db_prepare(db, "INSERT INTO eager_op_blocks(pid, tid, first_id, last_id, min_start_ns, max_start_ns)"
				" VALUES (?,?,?,?,?,?)");
	b->max_id = db_prepare(db, "SELECT coalesce(max(id), 0) FROM eager_op_rows");
	if (!b->ins || !b->max_id) {
		eager_blocks_release(b);
		return -1;
	}
	return 0;
}

int eager_blocks_full(const struct eager_blocks *b)
{
	return b->rows >= EAGER_BLOCK_ROWS || b->nopen == EAGER_BLOCK_THREADS;
}

void eager_blocks_add(struct eager_blocks *b, int64_t pid, int64_t tid, int64_t start_ns)
{
	struct eager_block_thread *t = b->nopen ? &b->open[b->last] : NULL;

	if (!t || t->pid != pid || t->tid != tid) {
		int i = 0;

		while (i < b->nopen && (b->open[i].pid != pid || b->open[i].tid != tid))
			i++;
		if (i == EAGER_BLOCK_THREADS)
			i = EAGER_BLOCK_THREADS - 1;  /* never: the writer closes a full block first; widen the last */
		if (i == b->nopen) {
			b->open[i] = (struct eager_block_thread){ pid, tid, start_ns, start_ns };
			b->nopen++;
		}
		b->last = i;
		t = &b->open[i];
	}
	if (start_ns < t->min_start)
		t->min_start = start_ns;
	if (start_ns > t->max_start)
		t->max_start = start_ns;
	b->rows++;
}

void eager_blocks_close(struct eager_blocks *b)
{
	sqlite3 *db;
	int64_t last;

	if (!b->ins || !b->nopen)
		return;
	db = sqlite3_db_handle(b->ins);
	last = sqlite3_step(b->max_id) == SQLITE_ROW ? sqlite3_column_int64(b->max_id, 0) : 0;
	sqlite3_reset(b->max_id);
	/* nothing stored since the last close (refused rows, a full disk): no block */
	for (int i = 0; i < b->nopen && last >= b->first_id; i++) {
		const struct eager_block_thread *t = &b->open[i];

		sqlite3_bind_int64(b->ins, 1, t->pid);
		sqlite3_bind_int64(b->ins, 2, t->tid);
		sqlite3_bind_int64(b->ins, 3, b->first_id);
		sqlite3_bind_int64(b->ins, 4, last);
		sqlite3_bind_int64(b->ins, 5, t->min_start);
		sqlite3_bind_int64(b->ins, 6, t->max_start);
		db_step_quiet(db, b->ins);
	}
	if (last >= b->first_id)
		b->first_id = last + 1;
	b->nopen = b->last = 0;
	b->rows = 0;
}

void eager_blocks_release(struct eager_blocks *b)
{
	sqlite3_finalize(b->ins);
	sqlite3_finalize(b->max_id);
	memset(b, 0, sizeof(*b));
}
