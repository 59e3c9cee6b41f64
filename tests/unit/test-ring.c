/*
 * test-ring.c - the collector's record encoding, end to end: records written
 * by the collector's own emit functions into its shared-memory rings are
 * drained by the launcher's writer into SQLite and read back.
 */
#include "../../collector/collector.h"
#include "../../cmd/agprof/run_writer.h"

#include <criterion/criterion.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/agprof-ring-XXXXXX";
static char db_path[512];
static struct run_writer *writer;

static void start(void)
{
	char err[256];

	cr_assert_not_null(mkdtemp(dir));
	snprintf(db_path, sizeof(db_path), "%s.agprof", dir);
	cr_assert_eq(agp_start(dir), 0);
	writer = run_writer_create(db_path, dir, err, sizeof(err));
	cr_assert_not_null(writer, "%s", err);
}

static int64_t query_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	int64_t v = -1;

	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static struct run_totals finish(sqlite3 **db)
{
	struct run_session sess;
	struct run_totals totals;
	char *argv[] = { "test", NULL };

	memset(&sess, 0, sizeof(sess));
	sess.argv = argv;
	sess.cwd = "/";
	sess.main_pid = getpid();
	cr_assert_eq(run_writer_finish(writer, &sess, &totals), 0);
	cr_assert_eq(sqlite3_open_v2(db_path, db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	return totals;
}

#define EVENTS_PER_THREAD 100000

static void emit_many(int n, const char *op)
{
	struct agp_thread *t = agp_thread_get();
	uint32_t file, func, site, name;

	cr_assert_not_null(t);
	file = agp_intern(t, "/src/train.py", 13);
	func = agp_intern(t, "step", 4);
	site = agp_site_define(t, file, func, 42);
	for (int i = 0; i < n; i++) {
		name = agp_intern(t, op, strlen(op));  /* cached after the first */
		agp_emit_span(t, AGP_REC_EAGER, name, 1000 + (uint64_t)i, 1500 + (uint64_t)i, 0, site,
			      i % 2 ? AGP_SPAN_SLOW_PATH : 0, 0, (uint64_t)i + 1);
	}
}

static void *thread_main(void *arg)
{
	emit_many(EVENTS_PER_THREAD, arg);
	return NULL;
}

Test(ring, records_survive_wrapping_and_threads, .init = start)
{
	pthread_t th[3];
	const char *ops[3] = { "MatMul", "AddV2", "Relu" };
	int done = 0, joined[3] = { 0, 0, 0 };
	sqlite3 *db;
	struct run_totals totals;

	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, thread_main, (void *)ops[i]);
	/* Drain while the producers run: each ring wraps many times. */
	while (!done) {
		int alive = 0;

		run_writer_poll(writer);
		for (int i = 0; i < 3; i++) {
			if (!joined[i] && pthread_tryjoin_np(th[i], NULL) == 0)
				joined[i] = 1;  /* never join a thread twice */
			alive += !joined[i];
		}
		done = alive == 0;
	}
	totals = finish(&db);
	/* A full ring drops and counts; whatever was not dropped is exact. */
	cr_assert_eq(totals.eager_ops + totals.dropped, 3 * EVENTS_PER_THREAD);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops"), (int64_t)totals.eager_ops);
	cr_assert_eq(query_int(db, "SELECT count(DISTINCT op_id) FROM eager_ops"), 3);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops e JOIN callsites c ON c.id = e.callsite_id"
				   " JOIN strings f ON f.id = c.file_id WHERE f.text = '/src/train.py' AND c.line = 42"),
		     (int64_t)totals.eager_ops);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops WHERE end_ns - start_ns != 500"), 0);
	cr_assert_eq(query_int(db, "SELECT dropped_events FROM processes"), (int64_t)totals.dropped);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM threads"), 3);
	sqlite3_close(db);
}

Test(ring, overflow_is_counted_never_silent, .init = start)
{
	sqlite3 *db;
	struct run_totals totals;
	int n = (int)(AGP_RING_MAIN_BYTES / sizeof(struct agp_rec_span)) * 3;  /* the test's main thread */

	emit_many(n, "Const");  /* nobody drains: the ring fills up */
	totals = finish(&db);
	cr_assert_gt(totals.dropped, 0);
	cr_assert_lt(totals.eager_ops, (uint64_t)n);
	cr_assert_eq(totals.eager_ops + totals.dropped, (uint64_t)n);
	cr_assert_eq(query_int(db, "SELECT value FROM meta WHERE key = 'dropped_events'"), (int64_t)totals.dropped);
	sqlite3_close(db);
}

Test(ring, side_records_round_trip, .init = start)
{
	struct agp_side s;
	sqlite3 *db;

	agp_side_begin(&s, AGP_SIDE_TF_STATUS);
	agp_side_text(&s, AGP_F_STATUS, "mismatch");
	agp_side_text(&s, AGP_F_DETAIL, "no hooks");
	agp_side_text(&s, AGP_F_TFVER, "9.99");
	agp_side_end(&s);
	run_writer_poll(writer);
	finish(&db);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM processes WHERE tf_status = 'mismatch'"
				   " AND tf_detail = 'no hooks' AND tf_version = '9.99'"), 1);
	sqlite3_close(db);
}

Test(ring, session_steps_round_trip, .init = start)
{
	struct agp_thread *t = agp_thread_get();
	struct run_totals totals;
	uint32_t site;
	sqlite3 *db;

	cr_assert_not_null(t);
	site = agp_site_define(t, agp_intern(t, "/src/tf1.py", 11), agp_intern(t, "main", 4), 54);
	for (int i = 0; i < 300; i++)
		agp_emit_session(t, AGP_SESSION_RUN, 1000 + 10 * (uint64_t)i, 1005 + 10 * (uint64_t)i, site, 0, 2, 1, 1);
	agp_emit_session(t, AGP_SESSION_CALLABLE, 9000, 9100, 0, AGP_SPAN_FAILED, 1, 2, 0);
	agp_emit_session(t, AGP_SESSION_PARTIAL, 9200, 9300, site, 0, 1, 1, 0);
	agp_emit_session(t, 99, 9400, 9500, site, 0, 0, 0, 0);  /* an unknown kind reads as "run" */
	totals = finish(&db);
	cr_assert_eq(totals.session_runs, 303);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM session_runs s JOIN callsites c ON c.id = s.callsite_id"
				   " JOIN strings f ON f.id = c.file_id WHERE f.text = '/src/tf1.py' AND c.line = 54"
				   " AND kind = 'run' AND feeds = 2 AND fetches = 1 AND targets = 1 AND ok = 1"
				   " AND end_ns - start_ns = 5"),
		     300);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM session_runs WHERE kind = 'callable' AND callsite_id IS NULL"
				   " AND ok = 0 AND feeds = 1 AND fetches = 2"),
		     1);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM session_runs WHERE kind = 'partial'"), 1);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM session_runs WHERE kind = 'run'"), 301);
	sqlite3_close(db);
}
