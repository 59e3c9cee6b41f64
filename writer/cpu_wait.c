/* cpu_wait.c - the program's threads' run-queue wait, sampled (cpu_wait.h). */
#include "cpu_wait.h"
#include "checked.h"
#include "db.h"
#include "run_writer_int.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cpu_wait_init(struct cpu_wait *cw, sqlite3 *db)
{
	memset(cw, 0, sizeof(*cw));
	if (db_has_table(db, "cpu_samples"))
		cw->ins = db_prepare(db, "INSERT INTO cpu_samples(pid, t_ns, run_ns, wait_ns, threads) VALUES (?,?,?,?,?)");
	if (cw->ins && db_has_table(db, "thread_samples"))
		cw->ins_thread = db_prepare(db, "INSERT INTO thread_samples(pid, tid, from_ns, t_ns, run_ns, wait_ns)"
					    " VALUES (?,?,?,?,?,?)");
	cw->last_tracked = -1;
}

static int tracked(const struct cpu_wait *cw, int64_t key)
{
	for (size_t i = 0; i < cw->ntracked; i++)
		if (cw->tracked[i] == key)
			return 1;
	return 0;
}

void cpu_wait_track_key(struct cpu_wait *cw, int64_t key)
{
	cw->last_tracked = key;
	if (!tracked(cw, key) && cw->ntracked < CPU_WAIT_MAX_TRACKED)
		cw->tracked[cw->ntracked++] = key;
}

/* A tracked thread's own interval between reads a and b: its run and wait in it. */
static void thread_row(struct run_writer *w, int pid, int tid, const struct cpu_read *a, const struct cpu_read *b)
{
	sqlite3_stmt *st = w->cpu.ins_thread;

	sqlite3_bind_int64(st, 1, pid);
	sqlite3_bind_int64(st, 2, tid);
	sqlite3_bind_int64(st, 3, (int64_t)(a->t_ns & INT64_MAX));
	sqlite3_bind_int64(st, 4, (int64_t)(b->t_ns & INT64_MAX));
	sqlite3_bind_int64(st, 5, (int64_t)((b->run_ns - a->run_ns) & INT64_MAX));
	sqlite3_bind_int64(st, 6, (int64_t)((b->wait_ns - a->wait_ns) & INT64_MAX));
	writer_step(w, st);
}

/*
 * Thread t of p read now (its totals in *now): keep the read, and when it
 * is tracked, its rows: the last interval, or on its first rows every
 * interval kept back.
 */
static void thread_read(struct run_writer *w, const struct cpu_proc *p, struct cpu_task *t, const struct cpu_read *now)
{
	uint64_t from = t->nback > CPU_WAIT_BACK ? t->nback - CPU_WAIT_BACK : 0;

	if (t->nback && w->cpu.ins_thread && tracked(&w->cpu, cpu_wait_key(p->pid, t->tid))) {
		for (uint64_t i = t->rows ? t->nback - 1 : from; i + 1 < t->nback; i++)
			thread_row(w, p->pid, t->tid, &t->back[i % CPU_WAIT_BACK], &t->back[(i + 1) % CPU_WAIT_BACK]);
		thread_row(w, p->pid, t->tid, &t->back[(t->nback - 1) % CPU_WAIT_BACK], now);
		t->rows = 1;
	}
	t->back[t->nback++ % CPU_WAIT_BACK] = *now;
}

/* "RUN WAIT SLICES\n" of one thread: its totals, or -1 (it ended, or the kernel keeps no schedstat). */
static int read_schedstat(int taskdir, const char *tid, uint64_t *run, uint64_t *wait)
{
	char path[48], buf[96];
	unsigned long long r, w;
	ssize_t n;
	int fd;

	if ((size_t)snprintf(path, sizeof(path), "%s/schedstat", tid) >= sizeof(path) ||
	    (fd = openat(taskdir, path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	if (sscanf(buf, "%llu %llu", &r, &w) != 2)
		return -1;
	*run = r;
	*wait = w;
	return 0;
}

static struct cpu_task *task_of(struct cpu_proc *p, int tid)
{
	for (size_t i = 0; i < p->n; i++)
		if (p->tasks[i].tid == tid)
			return &p->tasks[i];
	if (p->n >= CPU_WAIT_MAX_TASKS || ARRAY_GROW(p->tasks, p->n, p->cap))
		return NULL;
	memset(&p->tasks[p->n], 0, sizeof(p->tasks[0]));
	p->tasks[p->n].tid = tid;
	p->tasks[p->n].run_ns = p->tasks[p->n].wait_ns = UINT64_MAX;  /* new: no totals yet */
	return &p->tasks[p->n++];
}

/*
 * Add each thread's change since the last sample to *run, *wait.  A thread
 * first seen adds all it has (it started in the interval, or the process
 * is new: then the caller stores nothing); one that ended since takes its
 * last interval with it.  A tracked thread read before gets its own row
 * (thread_samples).  The number of threads read, or -1.
 */
static long sample_proc(struct run_writer *w, struct cpu_proc *p, uint64_t now, uint64_t *run, uint64_t *wait)
{
	char dir[32];
	DIR *d;
	struct dirent *e;
	long threads = 0;
	size_t kept = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/task", p->pid);
	if (!(d = opendir(dir)))
		return -1;
	for (size_t i = 0; i < p->n; i++)
		p->tasks[i].seen = 0;
	while ((e = readdir(d))) {
		int tid = atoi(e->d_name);
		uint64_t r, wt;
		struct cpu_task *t;

		if (tid <= 0 || !(t = task_of(p, tid)) || read_schedstat(dirfd(d), e->d_name, &r, &wt))
			continue;
		/* first seen, or totals that went back (the tid is another thread's now): all of it is new */
		if (t->run_ns == UINT64_MAX || r < t->run_ns || wt < t->wait_ns) {
			t->run_ns = t->wait_ns = 0;
			t->nback = 0;
			t->rows = 0;
		}
		*run += r - t->run_ns;
		*wait += wt - t->wait_ns;
		thread_read(w, p, t, &(struct cpu_read){ now, r, wt });
		t->run_ns = r;
		t->wait_ns = wt;
		t->seen = 1;
		threads++;
	}
	closedir(d);
	for (size_t i = 0; i < p->n; i++)
		if (p->tasks[i].seen)
			p->tasks[kept++] = p->tasks[i];
	p->n = kept;
	return threads;
}

static struct cpu_proc *proc_of(struct cpu_wait *cw, int pid, int *fresh)
{
	*fresh = 0;
	for (size_t i = 0; i < cw->n; i++)
		if (cw->procs[i].pid == pid)
			return &cw->procs[i];
	if (ARRAY_GROW(cw->procs, cw->n, cw->cap))
		return NULL;
	memset(&cw->procs[cw->n], 0, sizeof(cw->procs[0]));
	cw->procs[cw->n].pid = pid;
	*fresh = 1;
	return &cw->procs[cw->n++];
}

void cpu_wait_tick(struct run_writer *w, uint64_t now_ns, int force)
{
	struct cpu_wait *cw = &w->cpu;

	if (!cw->ins || (!force && now_ns - cw->last_ns < CPU_WAIT_PERIOD_NS * (1 + (uint64_t)cw->last_threads / 32)))
		return;
	cw->last_ns = now_ns;
	cw->last_threads = 0;
	for (size_t i = 0; i < w->nstreams; i++) {
		int fresh;
		struct cpu_proc *p = proc_of(cw, w->streams[i]->pid, &fresh);
		uint64_t run = 0, wait = 0;
		long threads;

		/* a process with several streams (one per thread group) is read once per tick */
		if (!p || p->gone || (!fresh && p->seen_ns == now_ns))
			continue;
		p->seen_ns = now_ns;
		if ((threads = sample_proc(w, p, now_ns, &run, &wait)) < 0) {
			p->gone = 1;
			continue;
		}
		cw->last_threads += threads;
		if (fresh)
			continue;
		sqlite3_bind_int64(cw->ins, 1, p->pid);
		sqlite3_bind_int64(cw->ins, 2, (int64_t)now_ns);
		sqlite3_bind_int64(cw->ins, 3, (int64_t)(run & INT64_MAX));
		sqlite3_bind_int64(cw->ins, 4, (int64_t)(wait & INT64_MAX));
		sqlite3_bind_int64(cw->ins, 5, threads);
		writer_step(w, cw->ins);
	}
}

void cpu_wait_release(struct cpu_wait *cw)
{
	for (size_t i = 0; i < cw->n; i++)
		free(cw->procs[i].tasks);
	free(cw->procs);
	sqlite3_finalize(cw->ins);
	sqlite3_finalize(cw->ins_thread);
	memset(cw, 0, sizeof(*cw));
}
