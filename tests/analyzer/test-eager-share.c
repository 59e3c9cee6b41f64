/*
 * test-eager-share.c - the eager share and the eager-hotspot forecast on
 * the same program recorded on a quiet machine and beside CPU hogs (issue
 * 46), on small recordings written here: the hogs' time slices land in
 * dispatches (recorded longer) and in the Python between ops (past the
 * collector's 1 ms bound: python_ns 0), and the thread's time grows by
 * them.  The share reads the ops at their steady cost, of the thread's
 * time less its waits for a CPU (thread_samples; in an older recording
 * its process's cpu_samples): the same in both, and so is the finding's
 * severity.  Before, the loaded recording's share was 0.50 against 0.67.
 */
#include "db.h"
#include "fix.h"
#include "model.h"
#include "recording.h"
#include "rules.h"
#include "strbuf.h"

#include "recording_fixture.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static char path[64];
static struct recording rec;
static struct model m;

#define US 1000LL
#define MS 1000000LL
#define OPS 2000
#define T0 (100 * MS)         /* the first op: the first TensorFlow event */
#define AFTER (100 * MS)      /* the thread's time after the loop, no eager op */
#define SLICE (4 * MS)        /* a hog's time slice: the wait a preemption adds */

/*
 * pid 1, thread 1 (main), a loop at /src/loop.py:7 in <module>: OPS ops
 * alternating MatMul and AddV2, each dispatched in 20 us after 80 us of
 * Python.  loaded: every 5th op from the 2nd is preempted inside its
 * dispatch, every 5th from the 4th in the Python before it, each by
 * SLICE; with thread_samples (the waits) unless process_only, which
 * writes only cpu_samples (an older recording).  *loop_end: the last op's end.
 */
static void write_loop(sqlite3 *db, int loaded, int process_only, int64_t *loop_end)
{
	struct strbuf sb = STRBUF_INIT;
	int64_t t = T0, waits = 0;

	strbuf_addstr(&sb, "INSERT INTO eager_ops(pid, tid, start_ns, end_ns, op_id, callsite_id, python_ns) VALUES ");
	for (int i = 0; i < OPS; i++) {
		int64_t gap = i ? 80 * US : 0, dur = 20 * US;

		if (loaded && i % 5 == 1)
			dur += SLICE;
		if (loaded && i % 5 == 3)
			gap += SLICE;
		waits += dur + gap - (i ? 100 : 20) * US;
		t += gap;
		strbuf_addf(&sb, "%s(1, 1, %lld, %lld, %d, 1, %lld)", i ? ", " : "", (long long)t, (long long)(t + dur),
			    1 + i % 2, (long long)(gap < MS ? gap : 0));
		t += dur;
	}
	strbuf_addch(&sb, ';');
	cr_assert_eq(db_exec(db, sb.buf), 0);
	strbuf_release(&sb);
	*loop_end = t;
	if (!loaded)
		return;
	/* the waits, all inside the loop: before it and after it the thread runs alone */
	if (process_only)
		strbuf_addf(&sb, "INSERT INTO cpu_samples(pid, t_ns, run_ns, wait_ns, threads) VALUES"
			    " (1, %lld, %lld, 0, 1), (1, %lld, %lld, %lld, 1), (1, %lld, %lld, 0, 1);",
			    (long long)T0, (long long)(T0 > 50 * MS ? 50 * MS : T0), (long long)t,
			    (long long)(t - T0 - waits), (long long)waits, (long long)(t + AFTER), (long long)AFTER);
	else
		strbuf_addf(&sb, "INSERT INTO thread_samples(pid, tid, from_ns, t_ns, run_ns, wait_ns) VALUES"
			    " (1, 1, 0, %lld, %lld, 0), (1, 1, %lld, %lld, %lld, %lld), (1, 1, %lld, %lld, %lld, 0);",
			    (long long)T0, (long long)T0, (long long)T0, (long long)t, (long long)(t - T0 - waits),
			    (long long)waits, (long long)t, (long long)(t + AFTER), (long long)AFTER);
	cr_assert_eq(db_exec(db, sb.buf), 0);
	strbuf_release(&sb);
}

static void load(int loaded, int process_only, const char *more_sql)
{
	char meta[256];
	sqlite3 *db;
	int64_t loop_end;

	db = fixture_recording(path, sizeof(path), "eager-share");
	cr_assert_eq(db_exec(db,
		"INSERT INTO processes(pid, start_ns, python_version, tf_status) VALUES (1, 0, '3.11', 'hooked');"
		"INSERT INTO threads VALUES (1, 1, 'python', 'main');"
		"INSERT INTO strings(id, text) VALUES (1, 'MatMul'), (2, 'AddV2'), (3, '/src/loop.py'), (4, '<module>');"
		"INSERT INTO callsites(id, file_id, line, func_id) VALUES (1, 3, 7, 4);"), 0);
	write_loop(db, loaded, process_only, &loop_end);
	snprintf(meta, sizeof(meta), "INSERT INTO meta VALUES ('start_ns', '0'), ('end_ns', '%lld'),"
		 " ('tf_status', 'hooked'); UPDATE processes SET end_ns = %lld;",
		 (long long)(loop_end + AFTER), (long long)(loop_end + AFTER));
	cr_assert_eq(db_exec(db, meta), 0);
	if (more_sql)
		cr_assert_eq(db_exec(db, more_sql), 0);
	fixture_load(db, path, &rec, &m);
}

static void teardown(void)
{
	fixture_release(path, &rec, &m);
}

static const struct model_thread *main_thread(void)
{
	cr_assert_eq(m.nthreads, 1);
	return &m.threads[0];
}

/* The eager-hotspot finding of the built-in rules, its forecast estimated. */
static const struct finding *hotspot(struct ruleset *rs)
{
	ruleset_init(rs);
	cr_assert_eq(ruleset_load_default(rs, NULL), 0);
	rules_run(rs, &m);
	for (size_t i = 0; i < m.nfindings; i++)
		if (!strcmp(m.findings[i].rule, "eager-hotspot")) {
			saving_estimate(&m, &m.findings[i]);
			return &m.findings[i];
		}
	cr_assert_fail("no eager-hotspot finding");
	return NULL;
}

struct seen {
	double share;
	int64_t eager_ns, wall_ns, wait_ns, cost_ns, forecast_ns;
	enum severity severity;
	int borderline;
};

static struct seen record(int loaded, int process_only)
{
	struct ruleset rs;
	const struct finding *f;
	struct seen s;

	load(loaded, process_only, NULL);
	f = hotspot(&rs);
	s = (struct seen){ main_thread()->eager_share, main_thread()->eager_ns, main_thread()->eager_wall_ns,
			   main_thread()->cpu_wait_ns, f->cost_ns, f->forecast_ns, f->severity, f->borderline };
	ruleset_release(&rs);
	teardown();
	return s;
}

/* The same loop quiet and beside hogs: one share, one cost, one forecast, one severity. */
Test(eager_share, load_changes_nothing)
{
	struct seen quiet = record(0, 0), loaded = record(1, 0);

	/* quiet: 2000 ops of 100 us (each at the mean: the first had no Python before it) of 300 ms */
	cr_assert(llabs(quiet.eager_ns - OPS * 100 * US) < 100 * US, "steady cost %lld", (long long)quiet.eager_ns);
	cr_assert_eq(quiet.wait_ns, 0);
	cr_assert_float_eq(quiet.share, 2.0 / 3.0, 0.001);
	/* loaded: 800 time slices recorded in it, 1,600 ms more on the wall (hence the old 0.50) */
	cr_assert_gt(loaded.wall_ns, quiet.wall_ns + 1500 * MS, "the recording saw the load");
	cr_assert_eq(loaded.wait_ns, 800 * SLICE);
	cr_assert(llabs(loaded.eager_ns - quiet.eager_ns) < quiet.eager_ns / 100, "steady cost %lld against %lld",
		  (long long)loaded.eager_ns, (long long)quiet.eager_ns);
	cr_assert_float_eq(loaded.share, quiet.share, 0.01, "share %f beside hogs, %f quiet", loaded.share, quiet.share);
	cr_assert(llabs(loaded.forecast_ns - quiet.forecast_ns) < quiet.forecast_ns / 100);
	cr_assert_gt(quiet.forecast_ns, 0);
	cr_assert_eq(loaded.severity, quiet.severity);
	cr_assert_eq(loaded.borderline, quiet.borderline);
	cr_assert_eq(quiet.severity, SEV_WARNING, "0.67: a warning, within its noise of the error line");
}

/* A recording made before thread_samples: its process's wait share, as if the thread were runnable throughout. */
Test(eager_share, older_recording_reads_its_process_samples)
{
	struct seen quiet = record(0, 0), loaded = record(1, 1);

	cr_assert_float_eq(loaded.share, quiet.share, 0.01, "share %f beside hogs, %f quiet", loaded.share, quiet.share);
	cr_assert_eq(loaded.severity, quiet.severity);
}

/* Hostile samples: the waits are at most the thread's time, the share at most 1; nothing read out of bounds. */
Test(eager_share, hostile_samples_stay_bounded, .fini = teardown)
{
	load(1, 0, "INSERT INTO thread_samples(pid, tid, from_ns, t_ns, run_ns, wait_ns) VALUES"
		   " (1, 1, 5, 4, 1, 1), (1, 1, 0, 9000000000000000000, 0, 9000000000000000000),"
		   " (1, 1, -9000000000000000000, 10, 1, -5), (1, 1, 0, 1, 'x', 'y'), (1, 2, 0, 1, 1, 1);");
	cr_assert_leq(main_thread()->cpu_wait_ns, main_thread()->active_ns);
	cr_assert_geq(main_thread()->cpu_wait_ns, 0);
	cr_assert_leq(main_thread()->eager_share, 1.0);
	cr_assert_geq(main_thread()->eager_share, 0.0);
}

/*
 * Ops long by nature (5 ms: a tf.data iterator made per call) beside hogs:
 * each wall-clock op four fifths waits for a CPU, as its thread's samples
 * say; its steady cost is what it costs quiet.
 */
Test(eager_share, long_ops_lose_their_waits, .fini = teardown)
{
	int64_t quiet;

	load(0, 0, "DELETE FROM eager_op_rows; DELETE FROM eager_op_keys; DELETE FROM eager_op_blocks;"
		   "WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 99)"
		   " INSERT INTO eager_ops(pid, tid, start_ns, end_ns, op_id, callsite_id, python_ns)"
		   " SELECT 1, 1, 100000000 + i * 10000000, 105000000 + i * 10000000, 1, 1, 0 FROM k;");
	quiet = main_thread()->eager_ns;
	cr_assert_eq(quiet, 100 * 5 * MS);
	teardown();
	load(0, 0, "DELETE FROM eager_op_rows; DELETE FROM eager_op_keys; DELETE FROM eager_op_blocks;"
		   "WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 99)"
		   " INSERT INTO eager_ops(pid, tid, start_ns, end_ns, op_id, callsite_id, python_ns)"
		   " SELECT 1, 1, 100000000 + i * 50000000, 125000000 + i * 50000000, 1, 1, 0 FROM k;"
		   "WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 99)"
		   " INSERT INTO thread_samples(pid, tid, from_ns, t_ns, run_ns, wait_ns)"
		   " SELECT 1, 1, 100000000 + i * 50000000, 150000000 + i * 50000000, 10000000, 40000000 FROM k;");
	cr_assert(llabs(main_thread()->eager_ns - quiet) < quiet / 100, "steady cost %lld beside hogs, %lld quiet",
		  (long long)main_thread()->eager_ns, (long long)quiet);
	cr_assert_gt(main_thread()->eager_wall_ns, 4 * quiet, "recorded with the waits in it");
}
