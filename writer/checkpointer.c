/* checkpointer.c - the recording's WAL copied into its main file beside the writer (checkpointer.h). */
#include "checkpointer.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <time.h>

#define CHECKPOINT_EVERY_NS 250000000ll

struct checkpointer {
	sqlite3 *db;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	int kicked, stopping;   /* under lock */
};

static struct timespec deadline_after(long long ns)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ns += ts.tv_nsec;
	ts.tv_sec += (time_t)(ns / 1000000000ll);
	ts.tv_nsec = (long)(ns % 1000000000ll);
	return ts;
}

static void *checkpoint_loop(void *arg)
{
	struct checkpointer *c = arg;

	pthread_mutex_lock(&c->lock);
	while (!c->stopping) {
		struct timespec until = deadline_after(CHECKPOINT_EVERY_NS);
		int rc;

		while (!c->kicked && !c->stopping)
			if (pthread_cond_timedwait(&c->wake, &c->lock, &until) == ETIMEDOUT)
				break;
		if (c->stopping)
			break;
		c->kicked = 0;
		pthread_mutex_unlock(&c->lock);
		/* SQLITE_BUSY: another checkpoint (the writer's own, at the WAL's bound) is running */
		rc = sqlite3_wal_checkpoint_v2(c->db, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
		pthread_mutex_lock(&c->lock);
		if (rc != SQLITE_OK && rc != SQLITE_BUSY)
			break;
	}
	pthread_mutex_unlock(&c->lock);
	return NULL;
}

/*
 * The thread blocks every signal: a process-directed one (SIGCHLD, SIGUSR2,
 * SIGINT) must reach the launcher's main thread, whose pause between polls
 * it ends (run.c, wait_program).
 */
static int start_thread(struct checkpointer *c)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	rc = pthread_create(&c->thread, NULL, checkpoint_loop, c);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return rc;
}

struct checkpointer *checkpointer_start(const char *path)
{
	struct checkpointer *c = calloc(1, sizeof(*c));
	pthread_condattr_t attr;
	int cond_ok = 0;

	if (!c)
		return NULL;
	if (pthread_condattr_init(&attr) == 0) {
		cond_ok = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&c->wake, &attr) == 0;
		pthread_condattr_destroy(&attr);
	}
	if (!cond_ok) {
		free(c);
		return NULL;
	}
	if (pthread_mutex_init(&c->lock, NULL) != 0)
		goto fail_cond;
	if (sqlite3_open_v2(path, &c->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK)
		goto fail;
	/* its own close must not checkpoint either: the writer decides how the file ends */
	sqlite3_db_config(c->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
	/*
	 * No fsync (run_writer.c says why).  A connection learns the file is in
	 * WAL mode on its first read; until then a checkpoint does nothing.
	 */
	if (sqlite3_exec(c->db, "PRAGMA synchronous=OFF; PRAGMA journal_mode", NULL, NULL, NULL) != SQLITE_OK)
		goto fail;
	if (start_thread(c) != 0)
		goto fail;
	return c;
fail:
	sqlite3_close(c->db);
	pthread_mutex_destroy(&c->lock);
fail_cond:
	pthread_cond_destroy(&c->wake);
	free(c);
	return NULL;
}

void checkpointer_kick(struct checkpointer *c)
{
	pthread_mutex_lock(&c->lock);
	c->kicked = 1;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->lock);
}

void checkpointer_stop(struct checkpointer *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	c->stopping = 1;
	pthread_cond_signal(&c->wake);
	pthread_mutex_unlock(&c->lock);
	pthread_join(c->thread, NULL);
	sqlite3_close(c->db);
	pthread_mutex_destroy(&c->lock);
	pthread_cond_destroy(&c->wake);
	free(c);
}
