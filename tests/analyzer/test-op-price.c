/*
 * test-op-price.c - the price of what an edit adds (saving_added_price(),
 * analyzer/model/saving_reads.c) on small recordings written here: the
 * collector's thread CPU calibration (op_prices) is preferred to recorded
 * warm dispatches that a loaded machine inflated (issue 46); without the
 * table, or with a hostile one, the recorded dispatches price it as before.
 */
#include "db.h"
#include "model.h"
#include "recording.h"
#include "saving_reads.h"

#include "recording_fixture.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char path[64];
static struct recording rec;
static struct model m;

#define MS 1000000LL

/*
 * pid 1, thread 10.  _EagerConst: a first dispatch of 50 ms (its kernel),
 * then 10 warm ones of 28 ms each (preempted beside a CPU hog); Cast: a
 * first, then 9 warm ones of 20 ms.  op_prices: _EagerConst at 12 us and
 * 14 us of thread CPU (300 ops each; the second from another process),
 * and rows a reader must pass over: too few ops, a negative, a text, a
 * price over a second, an op id that names no string.  No Cast price.
 */
static const char base_sql[] =
	"INSERT INTO meta VALUES ('start_ns', '0'), ('end_ns', '2000000000'), ('tf_status', 'hooked');"
	"INSERT INTO processes(pid, start_ns, end_ns, python_version, tf_status) VALUES (1, 0, 2000000000, '3.11', 'hooked');"
	"INSERT INTO threads VALUES (1, 10, 'python', 'python-main');"
	"INSERT INTO strings(id, text) VALUES (1, '_EagerConst'), (2, 'Cast');"
	"WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 10)"
	" INSERT INTO eager_ops(pid, tid, start_ns, end_ns, op_id)"
	" SELECT 1, 10, 1000 + i * 100000000, 1000 + i * 100000000 + CASE i WHEN 0 THEN 50000000 ELSE 28000000 END, 1 FROM k;"
	"WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 9)"
	" INSERT INTO eager_ops(pid, tid, start_ns, end_ns, op_id)"
	" SELECT 1, 10, 1200000000 + i * 50000000, 1200000000 + i * 50000000 + 20000000, 2 FROM k;"
	"INSERT INTO op_prices(pid, tid, op_id, samples, cpu_ns, wall_ns) VALUES"
	" (1, 10, 1, 300, 12000, 28000000), (2, 20, 1, 300, 14000, 14500),"
	" (1, 10, 1, 10, 1, 1), (1, 10, 1, 300, -5, 1), (1, 10, 1, 300, 'x', 1), (1, 10, 1, 300, 5000000000, 1),"
	" (1, 10, 99, 300, 1, 1);";

static void load(const char *more_sql)
{
	sqlite3 *db;

	db = fixture_recording(path, sizeof(path), "price");
	cr_assert_eq(db_exec(db, base_sql), 0);
	if (more_sql)
		cr_assert_eq(db_exec(db, more_sql), 0);
	fixture_load(db, path, &rec, &m);
}

static void teardown(void)
{
	fixture_release(path, &rec, &m);
}

/* The recorded warm dispatches are inflated: the thread CPU calibration prices the tf.constant. */
Test(op_price, calibration_over_inflated_dispatches, .fini = teardown)
{
	enum price_source from;
	int64_t samples;

	load(NULL);
	cr_assert_eq(saving_warm_dispatch(&m, "_EagerConst"), 28 * MS, "the recorded warm dispatches: 28 ms");
	cr_assert_eq(saving_op_price(&m, "_EagerConst", &samples), 12000, "the lower median of the valid rows");
	cr_assert_eq(samples, 600);
	cr_assert_eq(saving_added_price(&m, "_EagerConst", &from, &samples), 12000);
	cr_assert_eq(from, PRICE_CALIBRATED);
}

/* An op type the calibration did not time: its recorded warm dispatches, as before. */
Test(op_price, recorded_dispatches_without_a_price, .fini = teardown)
{
	enum price_source from;
	int64_t samples;

	load(NULL);
	cr_assert_eq(saving_op_price(&m, "Cast", &samples), -1);
	cr_assert_eq(samples, 0);
	cr_assert_eq(saving_added_price(&m, "Cast", &from, &samples), 20 * MS);
	cr_assert_eq(from, PRICE_RECORDED);
}

/* A recording without op_prices (older, or made attached) reads as before. */
Test(op_price, older_recording_without_the_table, .fini = teardown)
{
	enum price_source from;
	int64_t samples;

	load("DROP TABLE op_prices;");
	cr_assert_eq(saving_added_price(&m, "_EagerConst", &from, &samples), 28 * MS);
	cr_assert_eq(from, PRICE_RECORDED);
}

/* A table of another shape gives no price, and no error. */
Test(op_price, hostile_table_of_other_columns, .fini = teardown)
{
	enum price_source from;
	int64_t samples;

	load("DROP TABLE op_prices; CREATE TABLE op_prices(x); INSERT INTO op_prices VALUES (1);");
	cr_assert_eq(saving_added_price(&m, "_EagerConst", &from, &samples), 28 * MS);
	cr_assert_eq(from, PRICE_RECORDED);
	cr_assert_eq(saving_added_price(&m, "NoSuchOp", &from, &samples), 28 * MS, "every warm op's: the Casts' and"
		     " _EagerConsts' lower median");
}

/*
 * Rows past OP_PRICE_ROWS are not read (a fixed array holds them), and a
 * sum of samples saturates.
 */
Test(op_price, rows_and_samples_bounded, .fini = teardown)
{
	enum price_source from;
	int64_t samples;

	load("DELETE FROM op_prices;"
	     "WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 9999)"
	     " INSERT INTO op_prices(pid, tid, op_id, samples, cpu_ns, wall_ns)"
	     " SELECT i, 1, 1, 9223372036854775807, CASE WHEN i < 4096 THEN 7000 ELSE 1 END, 1 FROM k;");
	cr_assert_eq(saving_added_price(&m, "_EagerConst", &from, &samples), 7000);
	cr_assert_eq(from, PRICE_CALIBRATED);
	cr_assert_eq(samples, INT64_MAX);
}

/*
 * A Cast's first dispatch for a new kernel (rows "Cast:first", each the
 * median of a few first dispatches): their lower median in thread CPU, not
 * the recorded first dispatches (wall-clock: 20 ms here); rows of too few
 * dispatches are passed over; an op without such rows, or a name too long
 * for the key, has none.
 */
Test(op_price, first_dispatch_of_a_new_kernel, .fini = teardown)
{
	char longname[300];
	int64_t samples;

	load("INSERT INTO strings(id, text) VALUES (3, 'Cast:first');"
	     "INSERT INTO op_prices(pid, tid, op_id, samples, cpu_ns, wall_ns) VALUES"
	     " (1, 10, 3, 4, 800000, 30000000), (2, 20, 3, 4, 1000000, 1100000), (3, 30, 3, 2, 1, 1);");
	cr_assert_eq(saving_cold_dispatch(&m), 20 * MS, "the recorded first dispatches: the Cast's 20 ms");
	cr_assert_eq(saving_first_price(&m, "Cast", &samples), 800000, "the lower median of the valid rows");
	cr_assert_eq(samples, 8);
	cr_assert_eq(saving_op_price(&m, "Cast", &samples), -1, "no warm price from the first dispatches");
	cr_assert_eq(saving_first_price(&m, "_EagerConst", &samples), -1);
	cr_assert_eq(samples, 0);
	memset(longname, 'A', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	cr_assert_eq(saving_first_price(&m, longname, &samples), -1);
	cr_assert_eq(saving_first_price(&m, NULL, &samples), -1);
}
