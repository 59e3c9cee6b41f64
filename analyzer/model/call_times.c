/* call_times.c - one function's graph calls one by one (call_times.h). */
#include "call_times.h"
#include "checked.h"
#include "db.h"
#include "model.h"
#include "recording.h"
#include "util.h"

#include <stdint.h>
#include <stdlib.h>

/* The calls of graph functions that are f's user-level call (roles as model.c counts calls). */
static const char calls_sql[] =
	"SELECT c.tid, c.start_ns, c.end_ns FROM function_calls c"
	" WHERE c.graph_function_id IN (SELECT g.id FROM graph_functions g"
	"  WHERE (g.function_id = ?1 OR g.trace_id IN (SELECT t.id FROM traces t WHERE t.function_id = ?1))"
	"  AND g.role IN ('inference', 'forward', 'loaded', 'other'))"
	" ORDER BY c.tid, c.start_ns LIMIT 1000000"; /* CALL_TIMES_MAX */

static int push(int64_t **v, size_t *n, size_t *cap, int64_t x)
{
	if (ARRAY_GROW(*v, *n, *cap))
		return -1;
	(*v)[(*n)++] = x;
	return 0;
}

int call_times_add(const struct model *m, const struct model_function *f, struct call_times *ct)
{
	sqlite3_stmt *s = db_prepare(m->rec->db, calls_sql);
	int64_t prev_tid = 0, prev_start = -1;
	int rc, ret = -1, oom = 0;

	if (!s)
		return -1;
	sqlite3_bind_int64(s, 1, f->id);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		int64_t tid = sqlite3_column_int64(s, 0), start = sqlite3_column_int64(s, 1);
		int64_t end = sqlite3_column_int64(s, 2);

		/* a damaged row (times are untrusted): no duration, and no difference that overflows */
		if (end < start || (start < 0 && end > INT64_MAX + start))
			continue;
		if (push(&ct->dur_ns, &ct->n, &ct->cap_dur, end - start) ||
		    (prev_start >= 0 && tid == prev_tid && start > prev_start &&
		     push(&ct->period_ns, &ct->nperiods, &ct->cap_period, start - prev_start))) {
			oom = 1;
			break;
		}
		prev_tid = tid;
		prev_start = start;
	}
	if (oom)
		error("out of memory");
	else if (rc != SQLITE_ROW && rc != SQLITE_DONE)
		error("%s: cannot read the calls of %s: %s", m->rec->path, f->name, sqlite3_errmsg(m->rec->db));
	else
		ret = 0;
	sqlite3_finalize(s);
	sort_array(ct->dur_ns, ct->n, sizeof(int64_t), cmp_int64);
	sort_array(ct->period_ns, ct->nperiods, sizeof(int64_t), cmp_int64);
	return ret;
}

void call_times_release(struct call_times *ct)
{
	free(ct->dur_ns);
	free(ct->period_ns);
	ct->dur_ns = ct->period_ns = NULL;
	ct->n = ct->nperiods = ct->cap_dur = ct->cap_period = 0;
}
