/* test-eager-buckets.c - writer/eager_buckets.c: the launcher's table of
 * open per-second buckets past the recording's budget.  Every op added is in
 * exactly one written row, whatever the flushes (a full table, seconds
 * closed in between, probe chains that wrap). */
#include "eager_buckets.h"
#include "db.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <unistd.h>

static char path[64];
static sqlite3 *db;
static struct eager_buckets b;

static void setup(void)
{
	char err[256];

	snprintf(path, sizeof(path), "/tmp/agprof-test-buckets-%d.agprof", (int)getpid());
	unlink(path);
	cr_assert_eq(db_create_recording(path, &db, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(eager_buckets_init(&b, db), 0);
}

static void teardown(void)
{
	eager_buckets_release(&b);
	sqlite3_finalize(b.ins);
	sqlite3_close(db);
	unlink(path);
}

TestSuite(eager_buckets, .init = setup, .fini = teardown);

static int64_t q(const char *sql)
{
	sqlite3_stmt *st = db_prepare(db, sql);
	int64_t v = -1;

	cr_assert(st);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static void add(int64_t tid, int64_t op, int64_t second, int64_t start, int64_t dur)
{
	struct eager_key k = { .pid = 1, .tid = tid, .op = op, .device = 0, .site = op + 100, .second = second };

	eager_buckets_add(&b, &k, start, start + dur, 7, op == 1, 0);
}

Test(eager_buckets, one_bucket_sums_its_ops_and_histogram)
{
	add(5, 1, 3, 3000000000, 100);
	add(5, 1, 3, 3000000500, 300);
	add(5, 1, 3, 3000001000, 0);
	eager_buckets_close(&b, INT64_MAX);
	cr_assert_eq(q("SELECT count(*) FROM eager_op_buckets"), 1);
	cr_assert_eq(q("SELECT count FROM eager_op_buckets"), 3);
	cr_assert_eq(q("SELECT total_ns FROM eager_op_buckets"), 400);
	cr_assert_eq(q("SELECT python_ns FROM eager_op_buckets"), 21);
	cr_assert_eq(q("SELECT slow_path FROM eager_op_buckets"), 3);
	cr_assert_eq(q("SELECT start_ns FROM eager_op_buckets"), 3000000000);
	cr_assert_eq(q("SELECT end_ns FROM eager_op_buckets"), 3000001000);
	cr_assert_eq(q("SELECT callsite_id FROM eager_op_buckets"), 101);
	/* 0 ns in bucket 0, 100 in [64, 128) = bucket 7, 300 in [256, 512) = bucket 9: 10 counts */
	cr_assert_eq(q("SELECT length(histogram) FROM eager_op_buckets"), 40);
	cr_assert_eq(q("SELECT hex(substr(histogram, 29, 4)) = '01000000' FROM eager_op_buckets"), 1);
	cr_assert_eq(q("SELECT hex(substr(histogram, 37, 4)) = '01000000' FROM eager_op_buckets"), 1);
	cr_assert_eq(b.stored, 3);
}

Test(eager_buckets, closing_past_seconds_keeps_the_open_ones_findable)
{
	/* 3000 keys over two seconds; closing second 0 leaves holes in the probe chains */
	for (int rep = 0; rep < 2; rep++)
		for (int64_t i = 0; i < 3000; i++)
			add(i, i % 7, i % 2, (i % 2) * 1000000000 + i, 10);
	eager_buckets_close(&b, 1);
	cr_assert_eq(q("SELECT count(*) FROM eager_op_buckets"), 1500, "second 0 written");
	for (int64_t i = 1; i < 3000; i += 2)
		add(i, i % 7, 1, 1000000000 + i, 10);
	cr_assert_eq(b.n, 1500, "second 1's buckets found again, none made twice");
	eager_buckets_close(&b, INT64_MAX);
	cr_assert_eq(q("SELECT count(*) FROM eager_op_buckets"), 3000);
	cr_assert_eq(q("SELECT sum(count) FROM eager_op_buckets"), 7500);
	cr_assert_eq(q("SELECT max(count) FROM eager_op_buckets"), 3);
	cr_assert_eq(b.stored, 7500);
}

Test(eager_buckets, a_full_table_is_written_out_and_nothing_is_lost)
{
	/* more keys than the table holds open: it flushes, a key may get two rows */
	for (int rep = 0; rep < 3; rep++)
		for (int64_t i = 0; i < 20000; i++)
			add(i, 2, 4, 4000000000 + i, 5);
	eager_buckets_close(&b, INT64_MAX);
	cr_assert_eq(q("SELECT sum(count) FROM eager_op_buckets"), 60000);
	cr_assert_eq(q("SELECT count(*) FROM (SELECT tid FROM eager_op_buckets GROUP BY tid HAVING sum(count) = 3)"), 20000);
	cr_assert_eq(q("SELECT sum(total_ns) FROM eager_op_buckets"), 300000);
	cr_assert_eq(b.n, 0);
}

Test(eager_buckets, sync_writes_the_open_buckets_and_replaces_their_rows)
{
	/* a commit mid-second: the open bucket is a row at once, later syncs replace it by id */
	add(5, 1, 3, 3000000000, 100);
	add(5, 1, 3, 3000000100, 100);
	eager_buckets_sync(&b);
	cr_assert_eq(q("SELECT count(*) FROM eager_op_buckets"), 1);
	cr_assert_eq(q("SELECT count FROM eager_op_buckets"), 2);
	cr_assert_eq(b.stored, 2);
	eager_buckets_sync(&b);  /* nothing changed: nothing written */
	cr_assert_eq(b.stored, 2);
	add(5, 1, 3, 3000000200, 300);
	eager_buckets_sync(&b);
	cr_assert_eq(q("SELECT count(*) FROM eager_op_buckets"), 1, "the same row, replaced");
	cr_assert_eq(q("SELECT count FROM eager_op_buckets"), 3);
	cr_assert_eq(q("SELECT total_ns FROM eager_op_buckets"), 500);
	cr_assert_eq(b.stored, 3);
	eager_buckets_close(&b, INT64_MAX);
	cr_assert_eq(q("SELECT count(*) FROM eager_op_buckets"), 1);
	cr_assert_eq(q("SELECT sum(count) FROM eager_op_buckets"), 3);
	cr_assert_eq(b.stored, 3);
	cr_assert_eq(b.n, 0);
}

/* The same code for another table (schema 7): the INSERT names the columns it has. */
Test(eager_buckets, another_table_takes_the_values_it_names)
{
	struct eager_buckets c;
	struct eager_key k = { .pid = 1, .tid = 2, .op = 77, .site = 0, .second = 1 };

	cr_assert_eq(eager_buckets_init_as(&c, db, "INSERT OR REPLACE INTO function_call_buckets(id, pid, tid, start_ns,"
				     " end_ns, name_id, callsite_id, count, total_ns, failed, histogram)"
				     " VALUES (?14,?1,?2,?3,?4,?5,?7,?8,?9,?12,?13)"), 0);
	eager_buckets_add(&c, &k, 1000000000, 1000000400, 0, 0, 1);
	eager_buckets_add(&c, &k, 1000000500, 1000000600, 0, 0, 0);
	eager_buckets_close(&c, INT64_MAX);
	cr_assert_eq(q("SELECT count || ' ' || total_ns || ' ' || failed || ' ' || name_id || ' ' ||"
		       " coalesce(callsite_id, 'null') = '2 500 1 77 null' FROM function_call_buckets"), 1);
	eager_buckets_release(&c);
	sqlite3_finalize(c.ins);
}
