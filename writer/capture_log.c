/*
 * capture_log.c - turn the window's bit changes into capture_windows rows
 * (see capture_log.h).  A process's window is open while its collector bits
 * and the launcher's bit are all clear; the rows are per process, and the
 * analyzer takes their union as the recorded time.
 */
#include "capture_log.h"
#include "agp_protocol.h"
#include "checked.h"
#include "db.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int capture_log_add(struct capture_log *log, int pid, uint64_t ns, uint32_t bits, const char *why)
{
	struct capture_change *c;

	/* the workload writes the side records: bound what they can make us hold */
	if (log->nchanges >= CAPTURE_LOG_MAX_CHANGES || ARRAY_GROW(log->changes, log->nchanges, log->cap) != 0)
		return -1;
	c = &log->changes[log->nchanges++];
	c->pid = pid;
	c->ns = ns;
	c->bits = bits;
	c->seq = log->nchanges - 1;
	snprintf(c->why, sizeof(c->why), "%s", why ? why : "?");
	return 0;
}

int capture_log_process(struct capture_log *log, int pid, uint64_t start_ns)
{
	if (ARRAY_GROW(log->procs, log->nprocs, log->procs_cap) != 0)
		return -1;
	log->procs[log->nprocs].pid = pid;
	log->procs[log->nprocs].start_ns = start_ns;
	log->nprocs++;
	return 0;
}

/* Changes in time order (stable for equal times: the order they were made in). */
static int cmp_change(const void *a, const void *b)
{
	const struct capture_change *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns < y->ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int insert_window(struct capture_log *log, sqlite3 *db, sqlite3_stmt *st, int pid, uint64_t from,
			 uint64_t to, const char *opened, const char *closed)
{
	char why[160];

	if (to <= from)
		return 0;
	snprintf(why, sizeof(why), "%s .. %s", opened, closed);
	sqlite3_bind_int(st, 1, pid);
	sqlite3_bind_int64(st, 2, (int64_t)from);
	sqlite3_bind_int64(st, 3, (int64_t)to);
	sqlite3_bind_text(st, 4, why, -1, SQLITE_TRANSIENT);
	log->windows++;
	log->window_ns += (int64_t)(to - from);
	return db_step_done(db, st);
}

/* Apply change c to a process's (launcher, own) bits when it is the launcher's or that process's. */
static int applies(const struct capture_change *c, int pid, uint32_t *launcher, uint32_t *own)
{
	if (c->pid != 0 && c->pid != pid)
		return 0;
	*(c->pid == 0 ? launcher : own) = c->bits;
	return 1;
}

/* One process's windows, walking the (sorted) changes that apply to it. */
static int write_process(struct capture_log *log, sqlite3 *db, sqlite3_stmt *st, const struct capture_process *p,
			 uint64_t end_ns)
{
	uint32_t launcher = 0, own = 0;
	uint64_t open_ns = p->start_ns;
	const char *opened = "start";
	size_t i = 0;
	int open, rc = 0;

	/* the state the process started in: the changes before it */
	for (; i < log->nchanges && log->changes[i].ns <= p->start_ns; i++)
		applies(&log->changes[i], p->pid, &launcher, &own);
	open = (launcher | own) == 0;
	for (; i < log->nchanges; i++) {
		const struct capture_change *c = &log->changes[i];
		int now;

		if (!applies(c, p->pid, &launcher, &own))
			continue;
		now = (launcher | own) == 0;
		if (now && !open) {
			open_ns = c->ns;
			opened = c->why;
		} else if (!now && open && insert_window(log, db, st, p->pid, open_ns, c->ns, opened, c->why) != 0) {
			rc = -1;
		}
		open = now;
	}
	if (open && end_ns > open_ns && insert_window(log, db, st, p->pid, open_ns, end_ns, opened, "end") != 0)
		rc = -1;
	return rc;
}

int capture_log_write(struct capture_log *log, sqlite3 *db, uint64_t end_ns)
{
	sqlite3_stmt *st;
	int rc = 0;

	log->windows = log->window_ns = 0;
	if (!log->used)
		return 0;
	sort_array(log->changes, log->nchanges, sizeof(*log->changes), cmp_change);
	st = db_prepare(db, "INSERT INTO capture_windows(pid, start_ns, end_ns, why) VALUES (?,?,?,?)");
	if (!st)
		return -1;
	for (size_t i = 0; i < log->nprocs && rc == 0; i++)
		rc = write_process(log, db, st, &log->procs[i], end_ns);
	sqlite3_finalize(st);
	return rc;
}

void capture_log_release(struct capture_log *log)
{
	free(log->changes);
	free(log->procs);
	memset(log, 0, sizeof(*log));
}
