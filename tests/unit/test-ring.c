/*
 * test-ring.c - the collector's record encoding, end to end: records written
 * by the collector's own emit functions into its shared-memory rings are
 * drained by the launcher's writer into SQLite and read back.
 */
#include "../../collector/collector.h"
#include "../../writer/run_writer.h"
#include "recording.h"

#include <criterion/criterion.h>
#include <limits.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define WRITER_FIXTURE_DIR "/tmp/agprof-ring-XXXXXX"
#include "writer_fixture.h"

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

/* Open the finished recording as every reader does, and check the whole file. */
static void open_recording_checked(sqlite3 **db)
{
	struct recording rec;

	cr_assert_eq(recording_open(&rec, db_path), 0);
	*db = rec.db;
	free(rec.path);
	cr_assert_eq(query_int(*db, "SELECT count(*) FROM pragma_quick_check WHERE quick_check != 'ok'"), 0);
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
	sess.end_ns = agp_now_ns();  /* where an open capture window ends */
	cr_assert_eq(run_writer_finish(writer, &sess, &totals), 0);
	cr_assert_eq(sqlite3_open_v2(db_path, db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	return totals;
}

#define EVENTS_PER_THREAD 100000

static void emit_many(int n, const char *op)
{
	struct agp_thread *t = agp_thread_get();
	uint32_t file, func, site, name, lib;

	cr_assert_not_null(t);
	file = agp_intern(t, "/src/train.py", 13);
	func = agp_intern(t, "step", 4);
	site = agp_site_define(t, file, func, 42, 0, 0);
	/* A library frame called from that user line: a chain of two sites. */
	lib = agp_intern(t, "/venv/site-packages/lib/opt.py", 30);
	site = agp_site_define(t, lib, func, 7, site, AGP_SITE_LIBRARY);
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

Test(ring, records_survive_wrapping_and_threads, .init = start, .fini = remove_files)
{
	pthread_t th[3];
	const char *ops[3] = { "MatMul", "AddV2", "Relu" };
	int done = 0, joined[3] = { 0, 0, 0 };
	sqlite3 *db;
	struct run_totals totals;
	const struct run_budget every_event_a_row = { 0, 0 };

	/* Without a budget: producers faster than the writer fill rings and drop. */
	run_writer_budget(writer, &every_event_a_row);
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
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops e JOIN callsites l ON l.id = e.callsite_id"
				   " JOIN callsites c ON c.id = l.parent_id JOIN strings f ON f.id = c.file_id"
				   " WHERE f.text = '/src/train.py' AND c.line = 42 AND c.library = 0"
				   " AND c.parent_id IS NULL AND l.library = 1 AND l.line = 7"),
		     (int64_t)totals.eager_ops);
	/* The same chain defined by three threads is one pair of rows. */
	cr_assert_eq(query_int(db, "SELECT count(*) FROM callsites"), 2);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops WHERE end_ns - start_ns != 500"), 0);
	cr_assert_eq(query_int(db, "SELECT dropped_events FROM processes"), (int64_t)totals.dropped);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM threads"), 3);
	sqlite3_close(db);
}

/*
 * The writer inserts eager ops a batch of rows per statement: a commit
 * (every 250 ms of polls) still holds every row read before it, a partial
 * batch included (45 rows: one batch and 13 more), with each column as the
 * record said, NULLs kept NULL, and ids in reading order.
 */
Test(ring, batched_rows_are_exact_at_each_commit, .init = start, .fini = remove_files)
{
	struct agp_thread *t = agp_thread_get();
	uint32_t name, dev, file, func, site;
	struct run_totals totals;
	sqlite3 *db;

	cr_assert_not_null(t);
	name = agp_intern(t, "AddV2", 5);
	dev = agp_intern(t, "/job:localhost/device:CPU:0", 27);
	file = agp_intern(t, "/src/train.py", 13);
	func = agp_intern(t, "step", 4);
	site = agp_site_define(t, file, func, 42, 0, 0);
	for (int i = 0; i < 45; i++)
		agp_emit_span(t, AGP_REC_EAGER, name, 1000 + 10 * (uint64_t)i, 1005 + 10 * (uint64_t)i, i % 3 ? dev : 0,
			      i % 5 ? site : 0, (i % 4 ? 0 : AGP_SPAN_SLOW_PATH) | (i % 7 ? 0 : AGP_SPAN_FAILED),
			      (uint32_t)i, 0);
	run_writer_poll(writer);
	usleep(300000);
	run_writer_poll(writer);  /* commits */
	cr_assert_eq(sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops"), 45, "a commit holds the partial batch");
	sqlite3_close(db);
	totals = finish(&db);
	cr_assert_eq(totals.eager_ops, 45);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops WHERE device_id IS NULL"), 15);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops e JOIN strings s ON s.id = e.device_id"
				   " WHERE s.text = '/job:localhost/device:CPU:0'"), 30);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops WHERE callsite_id IS NULL"), 9);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops WHERE slow_path = 1"), 12);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops WHERE ok = 0"), 7);
	cr_assert_eq(query_int(db, "SELECT sum(python_ns) FROM eager_ops"), 45 * 44 / 2);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops WHERE start_ns != 1000 + 10 * python_ns"
				   " OR end_ns != start_ns + 5"), 0);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops a JOIN eager_ops b ON b.id = a.id + 1"
				   " WHERE b.start_ns < a.start_ns"), 0, "ids in reading order");
	sqlite3_close(db);
}

/*
 * The launcher polls again at once after a poll that found a ring a
 * quarter full (run_writer_idle_us): a fixed pause after a long drain let a
 * 2 M events/s producer fill the main ring (bench/ingest).
 */
Test(ring, a_quarter_full_ring_is_polled_again_at_once, .init = start, .fini = remove_files)
{
	int quarter = (int)(AGP_RING_MAIN_BYTES / 4 / sizeof(struct agp_rec_span)) + 1;
	unsigned us;
	sqlite3 *db;

	emit_many(quarter, "Const");
	run_writer_poll(writer);
	cr_assert_eq(run_writer_idle_us(writer), 0, "a quarter of the ring was waiting");
	emit_many(10, "Const");
	run_writer_poll(writer);
	us = run_writer_idle_us(writer);
	cr_assert(us >= RUN_WRITER_IDLE_US && us <= 2 * RUN_WRITER_IDLE_US, "10 records after being behind: %u us, at most twice 5 ms", us);
	finish(&db);
	sqlite3_close(db);
}

/*
 * A ring a quarter full at two polls in a row, no emptier at the second:
 * the writer falls behind and switches to aggregates ("rate") rather than
 * drop events; a burst (the next poll finds little) or a shrinking backlog
 * does not switch it.
 */
Test(ring, a_growing_backlog_switches_to_aggregates, .init = start, .fini = remove_files)
{
	int quarter = (int)(AGP_RING_MAIN_BYTES / 4 / sizeof(struct agp_rec_span)) + 1;
	int polls[] = { quarter, 10, 2 * quarter, quarter, quarter };  /* records before each poll */
	struct run_totals totals;
	sqlite3 *db;

	for (int i = 0; i < 5; i++) {
		emit_many(polls[i], "Const");
		run_writer_poll(writer);
	}
	totals = finish(&db);
	cr_assert_eq(totals.dropped, 0);
	cr_assert_eq(totals.eager_ops, (uint64_t)(4 * quarter + 10), "rows until the fifth poll");
	cr_assert_eq(totals.eager_aggregated, (uint64_t)quarter, "the fifth poll's records aggregated");
	cr_assert_eq(query_int(db, "SELECT sum(count) FROM eager_op_buckets"), quarter);
	cr_assert_eq(query_int(db, "SELECT value = 'rate' FROM meta WHERE key = 'aggregate_reason'"), 1);
	sqlite3_close(db);
}

/* With --max-events 0 the same backlog stays rows. */
Test(ring, without_a_budget_a_backlog_stays_rows, .init = start, .fini = remove_files)
{
	int quarter = (int)(AGP_RING_MAIN_BYTES / 4 / sizeof(struct agp_rec_span)) + 1;
	const struct run_budget every_event_a_row = { 0, 0 };
	struct run_totals totals;
	sqlite3 *db;

	run_writer_budget(writer, &every_event_a_row);
	for (int i = 0; i < 3; i++) {
		emit_many(quarter, "Const");
		run_writer_poll(writer);
	}
	totals = finish(&db);
	cr_assert_eq(totals.eager_ops, (uint64_t)(3 * quarter));
	cr_assert_eq(totals.eager_aggregated, 0);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM meta WHERE key = 'aggregate_reason'"), 0);
	sqlite3_close(db);
}

static uint64_t now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

/* Poll after at least a millisecond: 10 records in it are a rate that allows any pause. */
static unsigned pause_after_10_records(void)
{
	emit_many(10, "Const");
	usleep(1000);
	run_writer_poll(writer);
	return run_writer_idle_us(writer);
}

/*
 * The pause follows the fastest-filling ring (run_writer.h): the time it
 * takes to fill a sixteenth of itself at the rate it had since the last
 * poll, at most twice the last pause, 5 ms once one is a sixteenth full.
 */
Test(ring, the_pause_follows_the_fullest_ring, .init = start, .fini = remove_files)
{
	int sixteenth = (int)(AGP_RING_MAIN_BYTES / 16 / sizeof(struct agp_rec_span)) + 1;
	int thirty_second = (int)(AGP_RING_MAIN_BYTES / 32 / sizeof(struct agp_rec_span));
	uint64_t before, after;
	unsigned us;
	sqlite3 *db;

	run_writer_poll(writer);
	cr_assert_eq(run_writer_idle_us(writer), RUN_WRITER_QUIET_US, "nothing waited");
	emit_many(sixteenth, "Const");
	run_writer_poll(writer);
	cr_assert_eq(run_writer_idle_us(writer), RUN_WRITER_IDLE_US, "a sixteenth of the ring waited");
	for (us = 2 * RUN_WRITER_IDLE_US; us < RUN_WRITER_IDLE_MAX_US; us *= 2)
		cr_assert_eq(pause_after_10_records(), us, "a slow rate: twice the last pause");
	before = now_us();
	cr_assert_eq(pause_after_10_records(), RUN_WRITER_IDLE_MAX_US, "at most the longest pause");
	/* 1/32 of the ring between two polls 10 ms apart or more: a sixteenth in twice that */
	usleep(10000);
	emit_many(thirty_second, "Const");
	run_writer_poll(writer);
	after = now_us();
	us = run_writer_idle_us(writer);
	cr_assert(us >= 2 * 10000 * 9 / 10 && us <= 2 * (after - before) * 11 / 10,
		  "1/32 of the ring in 10,000 to %lu us: a pause of %u us", (unsigned long)(after - before), us);
	finish(&db);
	sqlite3_close(db);
}

/*
 * The WAL's pages reach the main file while the run goes on, by the
 * checkpointer's thread: the writer's connection has no automatic
 * checkpoint, and a checkpointer whose connection never learned the file
 * is in WAL mode did nothing until the run's finish.
 */
Test(ring, commits_reach_the_main_file_during_the_run, .init = start, .fini = remove_files)
{
	struct stat before, after;
	sqlite3 *db;

	cr_assert_eq(stat(db_path, &before), 0);
	for (int round = 0; round < 3; round++) {
		emit_many(20000, "Const");
		run_writer_poll(writer);
		usleep(300000);  /* the next poll commits (every 250 ms) */
		run_writer_poll(writer);
	}
	for (int i = 0; i < 40 && stat(db_path, &after) == 0 && after.st_size <= before.st_size + 65536; i++)
		usleep(50000);
	cr_assert_gt(after.st_size, before.st_size + 65536, "main file %lld bytes, %lld at the start",
		     (long long)after.st_size, (long long)before.st_size);
	finish(&db);
	sqlite3_close(db);
}

Test(ring, frames_are_classified)
{
	static const struct {
		const char *path;
		int kind;
	} cases[] = {
		{ "/home/u/proj/train.py", AGP_FRAME_USER },
		{ "/venv/lib/python3.12/site-packages/gpflow/optimizers/scipy.py", AGP_FRAME_LIBRARY },
		{ "/usr/lib/python3/dist-packages/numpy/core.py", AGP_FRAME_LIBRARY },
		{ "/usr/lib/python3.12/threading.py", AGP_FRAME_LIBRARY },
		{ "/venv/lib/python3.12/site-packages/tensorflow/python/eager/def_function.py", AGP_FRAME_FRAMEWORK },
		{ "<frozen runpy>", AGP_FRAME_FRAMEWORK },
		{ "/tmp/__autograph_generated_filecv5vwudm.py", AGP_FRAME_FRAMEWORK },
		{ "<stdin>", AGP_FRAME_USER },
		/* CPython's own frames: 3.12's trampoline, 3.13's __init__ clean-up */
		{ "<shim>", AGP_FRAME_FRAMEWORK },
		{ "__init__", AGP_FRAME_FRAMEWORK },
		{ "<shim>.py", AGP_FRAME_USER },
		{ "pkg/__init__.py", AGP_FRAME_USER },
		{ "/home/u/lib/python_tools/x.py", AGP_FRAME_USER },
		{ "/opt/py/lib64/python3.11/json/decoder.py", AGP_FRAME_LIBRARY },
		/* overrides (set below): --user-code beats the path, --library marks user code */
		{ "/t/fakelib/site-packages/minilib/optimizer.py", AGP_FRAME_USER },
		{ "/t/fakelib/site-packages/other/x.py", AGP_FRAME_LIBRARY },
		{ "/home/u/proj/vendored/util.py", AGP_FRAME_LIBRARY },
		{ "/home/u/proj/vendored2/util.py", AGP_FRAME_USER },
		/* a venv inside a --user-code tree is still installed code */
		{ "/home/u/proj/.venv/lib/python3.12/site-packages/x/y.py", AGP_FRAME_LIBRARY },
	};

	setenv("AGPROF_USER_CODE", "/t/fakelib/site-packages/minilib/:/home/u/proj", 1);
	setenv("AGPROF_LIBRARY", "/home/u/proj/vendored", 1);
	agp_py_read_overrides();
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		cr_assert_eq(agp_classify_path(cases[i].path, strlen(cases[i].path)), cases[i].kind, "%s",
			     cases[i].path);
}

/* Make dir/rel (directories as needed) holding text; rel ending in '/' makes a directory. */
static void tree_file(const char *dir, const char *rel, const char *text)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, rel);
	for (char *p = path + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(path, 0700);
		*p = '/';
	}
	if (rel[strlen(rel) - 1] == '/')
		return;
	cr_assert_not_null(f = fopen(path, "w"), "%s", path);
	fputs(text, f);
	fclose(f);
}

/*
 * Library roots beyond site-packages (issue 45), found by agp_py_owner_init
 * in a tree made here: the program in T/external/proj (a directory named
 * like a vendored one above the project says nothing), PYTHONPATH entries,
 * editable installs (direct_url.json, a .pth of a path), a clone and a
 * vendored copy inside the project.
 */
Test(ring, library_roots_are_inferred)
{
	char tmpl[] = "/tmp/agp-owner-XXXXXX", real[PATH_MAX], t[512], proj[1024], script[2048], site[1024];
	char env[8192], json[8192];
	const char *sys_path[2] = { proj, site };
	static const struct {
		const char *rel;
		int kind;
	} cases[] = {
		{ "external/proj/train.py", AGP_FRAME_USER },
		{ "external/proj/src/model.py", AGP_FRAME_USER },            /* PYTHONPATH=src */
		{ "external/proj/third_party/minilib/optimizer.py", AGP_FRAME_LIBRARY },
		{ "external/proj/vendor/six.py", AGP_FRAME_LIBRARY },
		{ "external/proj/third_party.py", AGP_FRAME_USER },
		{ "external/proj/third_party/kept/x.py", AGP_FRAME_USER },   /* --user-code wins */
		{ "external/proj/clone/pkg/m.py", AGP_FRAME_LIBRARY },       /* its own pyproject and LICENSE */
		{ "external/proj/notclone/pkg/m.py", AGP_FRAME_USER },       /* a pyproject alone */
		{ "checkout/minilib/optimizer.py", AGP_FRAME_LIBRARY },      /* PYTHONPATH, outside */
		{ "checkout/minilib/kept.py", AGP_FRAME_USER },              /* --user-code wins */
		{ "target/minilib/optimizer.py", AGP_FRAME_LIBRARY },        /* PYTHONPATH, *.dist-info */
		{ "edit dir/minilib/optimizer.py", AGP_FRAME_LIBRARY },      /* direct_url.json, %20 */
		{ "legacy/minilib/optimizer.py", AGP_FRAME_LIBRARY },        /* a .pth line */
		{ "elsewhere/x.py", AGP_FRAME_USER },
	};

	cr_assert_not_null(mkdtemp(tmpl));
	cr_assert_not_null(realpath(tmpl, real));
	cr_assert_lt(strlen(real), 400);
	snprintf(t, sizeof(t), "%.400s", real);
	snprintf(proj, sizeof(proj), "%s/external/proj", t);
	snprintf(script, sizeof(script), "%s/train.py", proj);
	snprintf(site, sizeof(site), "%s/venv/lib/python3.12/site-packages", t);
	tree_file(t, "external/proj/train.py", "");
	tree_file(t, "external/proj/src/", "");
	tree_file(t, "external/proj/clone/pyproject.toml", "");
	tree_file(t, "external/proj/clone/LICENSE.txt", "");
	tree_file(t, "external/proj/notclone/pyproject.toml", "");
	tree_file(t, "checkout/minilib/", "");
	tree_file(t, "target/minilib-1.0.dist-info/METADATA", "");
	tree_file(t, "edit dir/minilib/", "");
	tree_file(t, "legacy/minilib/", "");
	snprintf(json, sizeof(json), "{\"url\": \"file://%s/edit%%20dir\", \"dir_info\": {\"editable\": true}}", t);
	tree_file(site, "minilib-1.0.dist-info/direct_url.json", json);
	snprintf(json, sizeof(json), "{\"dir_info\": {\"editable\": true}, \"url\": \"file://%s\"}", proj);
	tree_file(site, "proj-0.1.dist-info/direct_url.json", json);  /* pip install -e . of the project run */
	snprintf(json, sizeof(json), "# a comment\nimport os; os.getcwd()\n%s/legacy\n../../../../nowhere\n", t);
	tree_file(site, "easy-install.pth", json);
	cr_assert_eq(chdir(proj), 0);
	snprintf(env, sizeof(env), "src:%s/checkout:%s/target", t, t);
	setenv("PYTHONPATH", env, 1);
	snprintf(env, sizeof(env), "%s/third_party/kept:%s/checkout/minilib/kept.py", proj, t);
	setenv("AGPROF_USER_CODE", env, 1);
	unsetenv("AGPROF_LIBRARY");
	agp_py_read_overrides();
	agp_py_owner_init(script, sys_path, 2);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char path[4096];

		snprintf(path, sizeof(path), "%s/%s", t, cases[i].rel);
		cr_assert_eq(agp_classify_path(path, strlen(path)), cases[i].kind, "%s", cases[i].rel);
	}
	snprintf(env, sizeof(env), "rm -rf '%s'", t);
	cr_assert_eq(system(env), 0);
}

Test(ring, overflow_is_counted_never_silent, .init = start, .fini = remove_files)
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

/*
 * Short-lived threads (issue 46): a thread that ends gives its slot back
 * once the writer has drained it.  Each records SHORT_EVENTS eager ops and
 * one kernel's totals (entry 0 of its table, as hooks_kernel.c keeps
 * them); returns whether it got a slot.
 */
#define SHORT_EVENTS 50
#define SHORT_KERNELS 3

static void *short_thread(void *arg)
{
	struct agp_thread *t = agp_thread_get();
	struct agp_kernel_total *k;

	(void)arg;
	if (!t)
		return NULL;
	for (int i = 0; i < SHORT_EVENTS; i++)
		agp_emit_span(t, AGP_REC_EAGER, agp_intern(t, "Identity", 8), 1000 + (uint64_t)i, 1500 + (uint64_t)i,
			      0, 0, 0, 0, (uint64_t)i + 1);
	k = agp_kernel_totals_map(t);
	cr_assert_not_null(k);
	cr_assert_eq(k[0].count, 0, "a slot's next owner finds its table cleared");
	t->ktotals = k;  /* as kernel_totals_ready and kernel_slot_new leave them */
	t->kused = 1;
	k[0].name = agp_intern(t, "id", 2);
	k[0].type = agp_intern(t, "Identity", 8);
	k[0].count = SHORT_KERNELS;
	return t;
}

/* n short threads, `together` at a time, the writer polled after each group (poll = 0: never); how many got a slot. */
static int run_short_threads(int n, int together, int poll)
{
	pthread_t th[8];
	int recorded = 0;
	void *got;

	cr_assert_leq(together, 8);
	for (int i = 0; i < n; i += together) {
		for (int j = 0; j < together; j++)
			cr_assert_eq(pthread_create(&th[j], NULL, short_thread, NULL), 0);
		for (int j = 0; j < together; j++) {
			pthread_join(th[j], &got);
			recorded += got != NULL;
		}
		if (poll)
			run_writer_poll(writer);
	}
	return recorded;
}

/*
 * 600 threads, 4 at a time, more than twice the slots: every one recorded
 * whole (its events, its threads row, its kernel totals once: the writer
 * reads them when it frees the slot and clears them for the next owner),
 * in a handful of slots, none live at the end.
 */
Test(ring, ended_threads_give_their_slots_back, .init = start, .fini = remove_files)
{
	const int n = 600;
	sqlite3 *db;
	struct run_totals totals;
	uint32_t used;

	cr_assert_eq(run_short_threads(n, 4, 1), n);
	used = atomic_load(&agp_proc.shm->nthreads);
	cr_assert_leq(used, 8, "slots used: %u", used);
	cr_assert_eq(atomic_load(&agp_proc.shm->live_threads), 0);
	cr_assert_eq(atomic_load(&agp_proc.shm->free_slots), used);
	totals = finish(&db);
	cr_assert_eq(totals.dropped, 0);
	cr_assert_eq(totals.eager_ops, (uint64_t)n * SHORT_EVENTS);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM threads"), n);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM (SELECT tid FROM eager_ops GROUP BY tid HAVING count(*) != 50)"), 0);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM kernel_totals"), n);
	cr_assert_eq(query_int(db, "SELECT sum(k.count) FROM kernel_totals k JOIN graph_nodes g ON g.id = k.node_id"
				   " WHERE g.name = 'id' AND g.op_type = 'Identity'"), (int64_t)n * SHORT_KERNELS);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM meta WHERE key = 'incomplete'"), 0);
	sqlite3_close(db);
}

/*
 * Nobody drains (a launcher killed, an attach stopped): an ended thread's
 * slot stays taken, so 300 threads one after another fill the 256 slots
 * and the last 44 are counted as threads that got no buffer; once the
 * writer has drained the ended ones, new threads get slots again.
 */
Test(ring, without_a_drain_ended_slots_stay_taken, .init = start, .fini = remove_files)
{
	sqlite3 *db;
	struct run_totals totals;
	char note[512];

	cr_assert_eq(run_short_threads(300, 1, 0), AGP_MAX_THREADS);
	cr_assert_eq(atomic_load(&agp_proc.shm->dropped_no_slot), 300 - AGP_MAX_THREADS);
	run_writer_poll(writer);
	cr_assert_eq(atomic_load(&agp_proc.shm->free_slots), AGP_MAX_THREADS);
	cr_assert_eq(run_short_threads(10, 2, 1), 10);
	totals = finish(&db);
	cr_assert_eq(totals.eager_ops, (uint64_t)(AGP_MAX_THREADS + 10) * SHORT_EVENTS);
	cr_assert_eq(query_int(db, "SELECT dropped_events FROM processes"), 300 - AGP_MAX_THREADS);
	cr_assert_eq(query_int(db, "SELECT sum(count) FROM kernel_totals"), (int64_t)(AGP_MAX_THREADS + 10) * SHORT_KERNELS);
	snprintf(note, sizeof(note), "%s", totals.note);
	cr_assert(strstr(note, "44 events of threads that got no buffer"), "%s", note);
	sqlite3_close(db);
}

Test(ring, side_records_round_trip, .init = start, .fini = remove_files)
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

/*
 * Hostile buffers: ring and side files written by hand, as a buggy or
 * malicious workload could leave them.  The drain must end quickly (each
 * test has a short timeout), never crash, and leave a readable recording
 * that says what it could not read (meta.incomplete).
 */
#include "db.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#define FAKE_PID 999999
#define FAKE_CAP AGP_RING_OTHER_BYTES

struct fake {
	int fd;
	struct agp_shm_header *h;
	char path[600], side[600];
	uint64_t head;
};

static struct fake fake;

static void start_writer_only(void)
{
	char err[256];

	cr_assert_not_null(mkdtemp(dir));
	dir_made = 1;
	snprintf(db_path, sizeof(db_path), "%s.agprof", dir);
	memset(&fake, 0, sizeof(fake));
	snprintf(fake.path, sizeof(fake.path), "%s/%d-0.ring", dir, FAKE_PID);
	snprintf(fake.side, sizeof(fake.side), "%s/%d-0.side", dir, FAKE_PID);
	fake.fd = open(fake.path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	cr_assert_geq(fake.fd, 0);
	cr_assert_eq(ftruncate(fake.fd, (off_t)AGP_SHM_FILE_BYTES), 0);
	fake.h = mmap(NULL, AGP_SHM_FILE_BYTES, PROT_READ | PROT_WRITE, MAP_SHARED, fake.fd, 0);
	cr_assert_neq(fake.h, MAP_FAILED);
	fake.h->pid = FAKE_PID;
	fake.h->ring_bytes = AGP_RING_BYTES;
	fake.h->max_threads = AGP_MAX_THREADS;
	atomic_store(&fake.h->nthreads, 1);
	fake.h->threads[0].capacity = FAKE_CAP;
	atomic_store(&fake.h->threads[0].tid, FAKE_PID);
	atomic_store(&fake.h->threads[0].state, AGP_SLOT_WORD(1, AGP_SLOT_LIVE));
	fake.h->magic = AGP_SHM_MAGIC;
	close(open(fake.side, O_WRONLY | O_CREAT | O_TRUNC, 0600));
	writer = run_writer_create(db_path, dir, err, sizeof(err));
	cr_assert_not_null(writer, "%s", err);
}

static void fake_put(const void *rec, size_t bytes)
{
	uint64_t room = FAKE_CAP - (fake.head & (FAKE_CAP - 1));

	if (room < bytes) {  /* as the collector does: a wrap record, then the start */
		struct agp_rec_hdr wrap = { AGP_REC_WRAP, 0, 0 };

		memcpy((char *)fake.h + AGP_HEADER_BYTES + (fake.head & (FAKE_CAP - 1)), &wrap, sizeof(wrap));
		fake.head += room;
	}
	memcpy((char *)fake.h + AGP_HEADER_BYTES + (fake.head & (FAKE_CAP - 1)), rec, bytes);
	fake.head += bytes;
}

static void fake_publish(uint64_t head)
{
	atomic_store(&fake.h->threads[0].head, head);
}

static void fake_string(uint32_t id, const char *text, int with_nul)
{
	char rec[256];
	struct agp_rec_hdr *h = (void *)rec;
	size_t len = strlen(text), words = 1 + (len + (with_nul ? 1 : 0) + 7) / 8;

	memset(rec, 0, sizeof(rec));
	h->type = AGP_REC_STRING;
	h->words = (uint16_t)words;
	h->arg = id;
	memcpy(rec + sizeof(*h), text, len);
	if (!with_nul)  /* fill the padding too: no NUL anywhere in the record */
		memset(rec + sizeof(*h) + len, 'Z', words * 8 - sizeof(*h) - len);
	fake_put(rec, words * 8);
}

static void fake_span(uint32_t name, uint64_t start)
{
	struct agp_rec_span r;

	memset(&r, 0, sizeof(r));
	r.h.type = AGP_REC_EAGER;
	r.h.words = sizeof(r) / 8;
	r.h.arg = name;
	r.start_ns = start;
	r.end_ns = start + 10;
	fake_put(&r, sizeof(r));
}

static void fake_side(uint32_t type, uint32_t len, const void *body, size_t body_len)
{
	struct agp_side_hdr h = { type, len };
	int fd = open(fake.side, O_WRONLY | O_APPEND);

	cr_assert_eq(write(fd, &h, sizeof(h)), (ssize_t)sizeof(h));
	if (body_len)
		cr_assert_eq(write(fd, body, body_len), (ssize_t)body_len);
	close(fd);
}

static double seconds_since(const struct timespec *t0)
{
	struct timespec t1;

	clock_gettime(CLOCK_MONOTONIC, &t1);
	return (double)(t1.tv_sec - t0->tv_sec) + (double)(t1.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Finish, then open the file the way every reader does; returns meta.incomplete ("" if none). */
static struct run_totals finish_hostile(sqlite3 **db, char *incomplete, size_t len)
{
	struct run_session sess;
	struct run_totals totals;
	char *argv[] = { "test", NULL };
	char *v;

	memset(&sess, 0, sizeof(sess));
	sess.argv = argv;
	sess.cwd = "/";
	sess.main_pid = FAKE_PID;
	cr_assert_eq(run_writer_finish(writer, &sess, &totals), 0);
	open_recording_checked(db);
	v = db_meta_get(*db, "incomplete");
	snprintf(incomplete, len, "%s", v ? v : "");
	free(v);
	return totals;
}

Test(hostile, corrupt_head_ends_at_once, .init = start_writer_only, .fini = remove_files, .timeout = 10)
{
	struct timespec t0;
	sqlite3 *db;
	char note[1024];

	/* valid 16-byte records tiling the whole ring: a reader that believes head reads them forever */
	while (fake.head < FAKE_CAP)
		fake_string(1 + (uint32_t)(fake.head / 16) % 100, "abcdefg", 1);
	fake_publish(UINT64_C(1) << 62);  /* far beyond anything written */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	run_writer_poll(writer);
	fprintf(stderr, "corrupt head: first drain ends in %.3f ms", seconds_since(&t0) * 1e3);
	for (int i = 0; i < 9; i++)
		run_writer_poll(writer);
	finish_hostile(&db, note, sizeof(note));
	fprintf(stderr, "; 10 drains + finish in %.3f ms\n", seconds_since(&t0) * 1e3);
	cr_assert(strstr(note, "head out of range"), "meta.incomplete: '%s'", note);
	sqlite3_close(db);
}

Test(hostile, head_behind_tail_is_damage, .init = start_writer_only, .fini = remove_files, .timeout = 10)
{
	sqlite3 *db;
	char note[1024];

	fake_string(1, "MatMul", 1);
	for (int i = 0; i < 10; i++)
		fake_span(1, 1000 + (uint64_t)i);
	fake_publish(fake.head);
	run_writer_poll(writer);
	fake_publish(8);  /* the producer "went back" */
	run_writer_poll(writer);
	run_writer_poll(writer);
	finish_hostile(&db, note, sizeof(note));
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops"), 10);
	cr_assert(strstr(note, "head out of range"), "meta.incomplete: '%s'", note);
	cr_assert_null(strstr(note, "shrank"), "one cause, said once: '%s'", note);
	cr_assert_null(strchr(note, ';'), "one cause, said once: '%s'", note);
	sqlite3_close(db);
}

Test(hostile, huge_and_zero_words_stop_the_ring, .init = start_writer_only, .fini = remove_files, .timeout = 10)
{
	struct agp_rec_hdr bad = { AGP_REC_EAGER, 65535, 1 };
	sqlite3 *db;
	char note[1024];

	fake_string(1, "MatMul", 1);
	fake_span(1, 1000);
	fake_put(&bad, sizeof(bad));
	fake_span(1, 2000);  /* behind the bad record: never reached */
	fake_publish(fake.head);
	for (int i = 0; i < 10; i++)
		run_writer_poll(writer);
	finish_hostile(&db, note, sizeof(note));
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops"), 1);
	cr_assert(strstr(note, "malformed record"), "meta.incomplete: '%s'", note);
	sqlite3_close(db);
}

Test(hostile, string_without_nul_stops_at_its_record, .init = start_writer_only, .fini = remove_files, .timeout = 10)
{
	sqlite3 *db;
	char note[1024];

	fake_string(7, "ABCDEFGHIJ", 0);  /* no NUL: "ABCDEFGHIJ" padded with "ZZZZZZ" */
	fake_span(7, 1000);
	fake_publish(fake.head);
	run_writer_poll(writer);
	finish_hostile(&db, note, sizeof(note));
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops e JOIN strings s ON s.id = e.op_id"
				   " WHERE s.text = 'ABCDEFGHIJZZZZZZ'"), 1);
	cr_assert_str_eq(note, "");
	sqlite3_close(db);
}

Test(hostile, largest_string_id_costs_one_entry, .init = start_writer_only, .fini = remove_files, .timeout = 10)
{
	sqlite3 *db;
	char note[1024];

	fake_string(0xFFFFFFFFu, "Relu", 1);
	fake_string(0x80000000u, "Conv2D", 1);
	fake_span(0xFFFFFFFFu, 1000);
	fake_span(0x80000000u, 2000);
	fake_span(12345, 3000);  /* never defined: stored with an unknown op */
	fake_publish(fake.head);
	run_writer_poll(writer);
	finish_hostile(&db, note, sizeof(note));
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops e JOIN strings s ON s.id = e.op_id"
				   " WHERE s.text IN ('Relu', 'Conv2D')"), 2);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops"), 3);
	sqlite3_close(db);
}

Test(hostile, shrunk_ring_file_ends_the_stream_not_the_launcher, .init = start_writer_only, .fini = remove_files, .timeout = 10)
{
	sqlite3 *db;
	char note[1024];
	struct run_totals totals;

	fake_string(1, "MatMul", 1);
	for (int i = 0; i < 10; i++)
		fake_span(1, 1000 + (uint64_t)i);
	fake_publish(fake.head);
	run_writer_poll(writer);  /* maps the file, drains 10 */
	for (int i = 0; i < 10; i++)
		fake_span(1, 5000 + (uint64_t)i);
	fake_publish(fake.head);
	munmap(fake.h, AGP_SHM_FILE_BYTES);
	cr_assert_eq(ftruncate(fake.fd, 4096), 0);  /* ring data and ring headers gone */
	run_writer_poll(writer);
	totals = finish_hostile(&db, note, sizeof(note));
	cr_assert_eq(totals.eager_ops, 10);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops"), 10);
	cr_assert(strstr(note, "shrank"), "meta.incomplete: '%s'", note);
	sqlite3_close(db);
}

Test(hostile, truncated_before_first_scan_is_skipped, .init = start_writer_only, .fini = remove_files, .timeout = 10)
{
	sqlite3 *db;
	char note[1024];

	munmap(fake.h, AGP_SHM_FILE_BYTES);
	cr_assert_eq(ftruncate(fake.fd, 100), 0);
	run_writer_poll(writer);
	finish_hostile(&db, note, sizeof(note));
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops"), 0);
	sqlite3_close(db);
}

Test(hostile, huge_side_record_is_refused, .init = start_writer_only, .fini = remove_files, .timeout = 10)
{
	char body[64];
	struct agp_field f = { AGP_F_STATUS, 0, 0xFFFFFFF0u };  /* a field longer than its record */
	sqlite3 *db;
	char note[1024];

	memset(body, 0, sizeof(body));
	memcpy(body, &f, sizeof(f));
	fake_side(AGP_SIDE_TF_STATUS, sizeof(body), body, sizeof(body));
	fake_side(AGP_SIDE_TRACE, 0xFFFFFFF0u, NULL, 0);  /* a record "4 GiB long" */
	for (int i = 0; i < 5; i++)
		run_writer_poll(writer);
	finish_hostile(&db, note, sizeof(note));
	cr_assert(strstr(note, "side record"), "meta.incomplete: '%s'", note);
	sqlite3_close(db);
}

Test(hostile, stop_request_ends_the_drain, .init = start_writer_only, .fini = remove_files, .timeout = 10)
{
	sqlite3 *db;
	char note[1024];

	fake_string(1, "MatMul", 1);
	for (int i = 0; i < 100; i++)
		fake_span(1, 1000 + (uint64_t)i);
	fake_publish(fake.head);
	run_writer_stop();  /* what a second SIGINT does */
	finish_hostile(&db, note, sizeof(note));
	cr_assert_lt(query_int(db, "SELECT count(*) FROM eager_ops"), 100);
	cr_assert(strstr(note, "interrupted"), "meta.incomplete: '%s'", note);
	sqlite3_close(db);
}

static char err_path[600];

static void start_quiet_writer(void)
{
	start_writer_only();
	snprintf(err_path, sizeof(err_path), "%s/stderr", dir);
	cr_assert_not_null(freopen(err_path, "w", stderr));
}

/*
 * Disk full: no file of the recording may grow past a limit (RLIMIT_FSIZE,
 * so writes fail with EFBIG as on a full disk).  Writing stops at the first
 * failure, silently here (the launcher says it once), the summary counts
 * only committed rows, and the file keeps them readable.
 */
Test(hostile, disk_full_stops_writing_and_keeps_committed_rows, .init = start_quiet_writer, .fini = remove_files, .timeout = 10)
{
	/* past the schema-4 recording's empty size (tables and their indexes, WAL), then a few rounds */
	struct rlimit lim = { 1024 * 1024, RLIM_INFINITY }, unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	struct run_session sess;
	struct run_totals totals;
	char *argv[] = { "test", NULL };
	int failed_at = -1, emitted = 0;
	sqlite3 *db;

	const struct run_budget every_event_a_row = { 0, 0 };  /* rows grow the file: no switch to aggregates */

	signal(SIGXFSZ, SIG_IGN);
	run_writer_budget(writer, &every_event_a_row);
	fake_string(1, "MatMul", 1);
	/* limited only around the writer: Criterion's own files must not hit the limit */
	if (setrlimit(RLIMIT_FSIZE, &lim) != 0)
		cr_assert_fail("setrlimit: %s", strerror(errno));
	for (int round = 0; round < 200 && failed_at < 0; round++) {
		for (int i = 0; i < 2000; i++, emitted++)
			fake_span(1, 1000 + (uint64_t)emitted);
		fake_publish(fake.head);
		if (run_writer_poll(writer) != 0)
			failed_at = round;
		usleep(30000);
	}
	setrlimit(RLIMIT_FSIZE, &unlimited);  /* the failure is sticky: the writer writes no more */
	cr_assert_geq(failed_at, 1, "the limit was never reached (or reached at once)");
	cr_assert_not_null(run_writer_error(writer));
	cr_assert_eq(run_writer_poll(writer), -1, "sticky");
	memset(&sess, 0, sizeof(sess));
	sess.argv = argv;
	sess.cwd = "/";
	cr_assert_eq(run_writer_finish(writer, &sess, &totals), -1);
	cr_assert_gt(totals.eager_ops, 0);
	cr_assert_lt(totals.eager_ops, (uint64_t)emitted);
	open_recording_checked(&db);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops"), (int64_t)totals.eager_ops);
	sqlite3_close(db);
	fflush(stderr);
	{
		struct stat st;

		cr_assert_eq(stat(err_path, &st), 0);
		cr_assert_eq(st.st_size, 0, "the writer printed errors itself (see %s)", err_path);
	}
}

Test(ring, session_steps_round_trip, .init = start, .fini = remove_files)
{
	struct agp_thread *t = agp_thread_get();
	struct run_totals totals;
	uint32_t site;
	sqlite3 *db;

	cr_assert_not_null(t);
	site = agp_site_define(t, agp_intern(t, "/src/tf1.py", 11), agp_intern(t, "main", 4), 54, 0, 0);
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

/*
 * The capture window, without TensorFlow: events emitted while the
 * launcher's bit or the API bit is set are not recorded, and
 * capture_windows holds the stretches where all bits were clear.
 */
int agprof_capture(int on);

static void emit_n(int n, uint64_t seq0)
{
	struct agp_thread *t = agp_thread_get();
	uint32_t name = agp_intern(t, "AddV2", 5);

	for (int i = 0; i < n; i++)
		agp_emit_span(t, AGP_REC_EAGER, name, agp_now_ns(), agp_now_ns(), 0, 0, 0, 0, seq0 + (uint64_t)i);
}

Test(ring, capture_window_gates_events, .init = start, .fini = remove_files)
{
	sqlite3 *db;
	uint64_t t0 = agp_now_ns();

	run_writer_poll(writer);                  /* maps this process's ring file */
	run_writer_capture(writer, 0, t0, "start", "--test");
	emit_n(10, 1);                            /* open: recorded */
	run_writer_capture(writer, 1, agp_now_ns(), "SIGUSR2", NULL);
	emit_n(7, 100);                           /* launcher closed: not recorded */
	run_writer_capture(writer, 0, agp_now_ns(), "SIGUSR2", NULL);
	emit_n(5, 200);                           /* open again */
	cr_assert_eq(agprof_capture(0), 0);       /* agprof.stop() */
	emit_n(3, 300);
	cr_assert_eq(agprof_capture(1), 0);       /* agprof.start() */
	emit_n(2, 400);
	run_writer_poll(writer);
	finish(&db);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops"), 17);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM capture_windows"), 3);
	/* every recorded event lies inside a window of its process */
	cr_assert_eq(query_int(db, "SELECT count(*) FROM eager_ops e WHERE NOT EXISTS (SELECT 1 FROM capture_windows w"
				   " WHERE w.pid = e.pid AND e.start_ns >= w.start_ns AND e.end_ns <= w.end_ns)"), 0);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM capture_windows WHERE why = 'agprof.stop() .. agprof.start()'"),
		     0);
	cr_assert_eq(query_int(db, "SELECT count(*) FROM capture_windows WHERE why = 'agprof.start() .. end'"), 1);
	cr_assert_eq(query_int(db, "SELECT value FROM meta WHERE key = 'capture_windows'"), 3);
	sqlite3_close(db);
}
