/*
 * tsan-ring.c - the rings' lock-free claim, checked by ThreadSanitizer:
 * producer threads record through the collector's own emit functions while
 * the launcher's writer drains the same rings (run_writer_poll), then
 * finishes; short-lived threads meanwhile end and hand their slots on
 * (ENDED, drained, FREE, claimed again).  Built with -fsanitize=thread (tests/unit/meson.build); TSan
 * fails the run on the first race (halt_on_error), and the counts must add
 * up: every event is either stored (a row, or an aggregate once the writer
 * falls behind) or counted as dropped.
 *
 * Plain main(), not Criterion: Criterion's fixed-address arena cannot live
 * beside TSan's shadow memory.
 */
#include "../../collector/collector.h"
#include "../../writer/run_writer.h"
#include "../../common/db.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define THREADS 3
#define EVENTS_PER_THREAD 50000

static _Atomic int running;

/* Short-lived threads (issue 46): their slots change hands while the writer drains them. */
#define CHURN_THREADS 200
#define CHURN_EVENTS 500

static void *short_producer(void *arg)
{
	struct agp_thread *t = agp_thread_get();

	(void)arg;
	for (int i = 0; t && i < CHURN_EVENTS; i++)
		agp_emit_span(t, AGP_REC_EAGER, agp_intern(t, "Identity", 8), 1000 + (uint64_t)i, 1500 + (uint64_t)i,
			      0, 0, 0, 0, (uint64_t)i + 1);
	return t ? NULL : (void *)1;
}

static void *churn(void *arg)
{
	pthread_t th[4];

	(void)arg;
	for (int i = 0; i < CHURN_THREADS; i += 4) {
		for (int j = 0; j < 4; j++)
			pthread_create(&th[j], NULL, short_producer, NULL);
		for (int j = 0; j < 4; j++)
			pthread_join(th[j], NULL);
	}
	running--;
	return NULL;
}

static void *producer(void *arg)
{
	struct agp_thread *t = agp_thread_get();
	const char *op = arg;
	uint32_t file, func, site;

	if (!t)
		return (void *)1;
	file = agp_intern(t, "/src/train.py", 13);
	func = agp_intern(t, "step", 4);
	site = agp_site_define(t, file, func, 42, 0, 0);
	for (int i = 0; i < EVENTS_PER_THREAD; i++) {
		if (i % 200 == 0)
			usleep(1000);  /* let the drain keep up: more reads overlap the writes */
		agp_emit_span(t, AGP_REC_EAGER, agp_intern(t, op, strlen(op)), 1000 + (uint64_t)i,
			      1500 + (uint64_t)i, 0, site, 0, 0, (uint64_t)i + 1);
	}
	running--;
	return NULL;
}

int main(void)
{
	char dir[] = "/tmp/agprof-tsan-XXXXXX", db[64], err[256], cmd[96];
	const char *ops[THREADS] = { "MatMul", "AddV2", "Relu" };
	char *argv[] = { "tsan-ring", NULL };
	pthread_t th[THREADS], churner;
	const uint64_t events = (uint64_t)THREADS * EVENTS_PER_THREAD + (uint64_t)CHURN_THREADS * CHURN_EVENTS;
	struct run_writer *w;
	struct run_session sess;
	struct run_totals totals;
	int fails = 0;

	if (!mkdtemp(dir) || agp_start(dir) != 0)
		return 2;
	snprintf(db, sizeof(db), "%s.agprof", dir);
	if (!(w = run_writer_create(db, dir, err, sizeof(err)))) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	run_writer_borrow_mapping(agp_proc.shm);  /* one address for both sides: TSan sees them meet */
	running = THREADS + 1;
	for (int i = 0; i < THREADS; i++)
		pthread_create(&th[i], NULL, producer, (void *)ops[i]);
	pthread_create(&churner, NULL, churn, NULL);
	while (running > 0)
		run_writer_poll(w);  /* drains while the producers wrap their rings */
	for (int i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);
	pthread_join(churner, NULL);
	memset(&sess, 0, sizeof(sess));
	sess.argv = argv;
	sess.cwd = "/";
	sess.main_pid = getpid();
	if (run_writer_finish(w, &sess, &totals) != 0)
		fails++, fprintf(stderr, "run_writer_finish failed\n");
	if (totals.eager_ops + totals.eager_aggregated + totals.dropped != events)
		fails++, fprintf(stderr, "stored %llu + aggregated %llu + dropped %llu != %llu events\n",
				 (unsigned long long)totals.eager_ops, (unsigned long long)totals.eager_aggregated,
				 (unsigned long long)totals.dropped, (unsigned long long)events);
	if (totals.note[0])
		fails++, fprintf(stderr, "damage reported on a clean ring: %s\n", totals.note);
	printf("tsan-ring: %llu stored, %llu aggregated, %llu dropped, %s\n", (unsigned long long)totals.eager_ops,
	       (unsigned long long)totals.eager_aggregated, (unsigned long long)totals.dropped, fails ? "FAIL" : "ok");
	db_remove(db);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);  /* the rings and side files */
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return fails ? 1 : 0;
}
