/*
 * merge_clock.c - align the ranks' clocks when merging (see merge.h).
 *
 * Method "steps": synchronous data-parallel training ends every step in an
 * all-reduce, a barrier, so the n-th call of the step function ends within
 * the barrier's skew on every rank.  The offset of rank r is the median of
 * (end_n on the reference - end_n on r) over the first MERGE_CLOCK_MAX
 * calls, the residual the median of |difference - offset|: the medians
 * ignore the calls that were no barrier (the first, which traces on each
 * rank at its own pace).  Ranks on the reference's host share its
 * CLOCK_MONOTONIC: their offset is 0 ("same-host") and the residual says
 * how far the barrier assumption is from it.  Calls are matched by the
 * Python function's name (functions.name), never by graph function name,
 * whose numbers differ across processes.
 *
 * Method "collectives" (preferred when the recordings have them, schema 5):
 * the same collective on every rank is the n-th execution of one
 * (group_key, instance_key) pair (collective_execs); an all-reduce or a
 * broadcast completes at about the same moment on every rank, so the
 * offset is the median of (end on the reference - end on r) over the
 * matched collectives, the residual the median misfit, as for steps.
 * Collectives without keys are never used to align clocks.
 */
#include "merge.h"
#include "db.h"
#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char step_ends_sql[] =
	"SELECT c.end_ns FROM function_calls c JOIN graph_functions g ON g.id = c.graph_function_id"
	" JOIN functions f ON f.id = g.function_id JOIN strings s ON s.id = f.name_id"
	" WHERE s.text = ? ORDER BY c.end_ns LIMIT %d";

long merge_clock_reference(sqlite3 *ref, char **step_name, int64_t *ends)
{
	sqlite3_stmt *s = db_prepare(ref, "SELECT s.text FROM function_calls c"
					  " JOIN graph_functions g ON g.id = c.graph_function_id"
					  " JOIN functions f ON f.id = g.function_id JOIN strings s ON s.id = f.name_id"
					  " GROUP BY s.text ORDER BY count(*) DESC, s.text LIMIT 1");
	char sql[sizeof(step_ends_sql) + 16];
	long n = 0;

	*step_name = NULL;
	if (s && sqlite3_step(s) == SQLITE_ROW && db_col_text(s, 0))
		*step_name = strdup(db_col_text(s, 0));
	sqlite3_finalize(s);
	if (!*step_name)
		return 0;
	snprintf(sql, sizeof(sql), step_ends_sql, MERGE_CLOCK_MAX);
	if (!(s = db_prepare(ref, sql)))
		return 0;
	sqlite3_bind_text(s, 1, *step_name, -1, SQLITE_STATIC);
	while (n < MERGE_CLOCK_MAX && sqlite3_step(s) == SQLITE_ROW)
		ends[n++] = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return n;
}

static int64_t median(int64_t *v, long n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_int64);
	return v[n / 2];
}

/* Differences clamped to +-2^61 ns so that no subtraction below overflows. */
static int64_t clamp_diff(int64_t a, int64_t b)
{
	const int64_t lim = (int64_t)1 << 61;

	if (a > lim)
		a = lim;
	if (a < -lim)
		a = -lim;
	if (b > lim)
		b = lim;
	if (b < -lim)
		b = -lim;
	return a - b;
}

/* Offset and residual from the differences of n matched events (n > 0). */
static void fit(int64_t *diff, long n, int same_host, struct merge_input *in)
{
	int64_t offset = same_host ? 0 : median(diff, n);

	for (long i = 0; i < n; i++)
		diff[i] = llabs(clamp_diff(diff[i], offset));
	in->clock_offset_ns = offset;
	in->clock_residual_ns = median(diff, n);
	in->clock_matches = n;
}

void merge_clock_estimate(sqlite3 *db, const char *step_name, const int64_t *ref_ends, long n, int same_host,
			  struct merge_input *in)
{
	char sql[sizeof(step_ends_sql) + 16];
	int64_t *diff = n > 0 ? malloc((size_t)n * sizeof(*diff)) : NULL;
	sqlite3_stmt *s = NULL;
	long m = 0;

	in->clock_offset_ns = 0;
	in->clock_residual_ns = -1;
	in->clock_matches = 0;
	in->clock_method = same_host ? "same-host" : "none";
	snprintf(sql, sizeof(sql), step_ends_sql, MERGE_CLOCK_MAX);
	if (diff && step_name && (s = db_prepare(db, sql))) {
		sqlite3_bind_text(s, 1, step_name, -1, SQLITE_STATIC);
		while (m < n && sqlite3_step(s) == SQLITE_ROW) {
			diff[m] = clamp_diff(ref_ends[m], sqlite3_column_int64(s, 0));
			m++;
		}
	}
	sqlite3_finalize(s);
	if (m > 0) {
		fit(diff, m, same_host, in);
		if (!same_host)
			in->clock_method = "steps";
	}
	free(diff);
}

static const char keyed_sql[] =
	"SELECT group_key, instance_key, row_number() OVER (PARTITION BY group_key, instance_key ORDER BY start_ns, id),"
	" end_ns FROM collective_execs WHERE group_key IS NOT NULL AND instance_key IS NOT NULL"
	" ORDER BY 1, 2, 3 LIMIT %d";

long merge_clock_keyed(sqlite3 *db, struct merge_keyed *out)
{
	char sql[sizeof(keyed_sql) + 16];
	sqlite3_stmt *s;
	long n = 0;

	if (!db_has_table(db, "collective_execs"))
		return 0;
	snprintf(sql, sizeof(sql), keyed_sql, MERGE_CLOCK_MAX);
	if (!(s = db_prepare(db, sql)))
		return 0;
	while (n < MERGE_CLOCK_MAX && sqlite3_step(s) == SQLITE_ROW) {
		out[n].group_key = sqlite3_column_int64(s, 0);
		out[n].instance_key = sqlite3_column_int64(s, 1);
		out[n].occurrence = sqlite3_column_int64(s, 2);
		out[n].end_ns = sqlite3_column_int64(s, 3);
		n++;
	}
	sqlite3_finalize(s);
	return n;
}

static int keyed_cmp(const struct merge_keyed *a, const struct merge_keyed *b)
{
	if (a->group_key != b->group_key)
		return a->group_key < b->group_key ? -1 : 1;
	if (a->instance_key != b->instance_key)
		return a->instance_key < b->instance_key ? -1 : 1;
	return a->occurrence < b->occurrence ? -1 : a->occurrence > b->occurrence;
}

long merge_clock_estimate_keyed(sqlite3 *db, const struct merge_keyed *ref, long nref, int same_host,
				struct merge_input *in)
{
	struct merge_keyed *mine = nref > 0 ? malloc(MERGE_CLOCK_MAX * sizeof(*mine)) : NULL;
	int64_t *diff = nref > 0 ? malloc((size_t)nref * sizeof(*diff)) : NULL;
	long n = mine && diff ? merge_clock_keyed(db, mine) : 0, i = 0, j = 0, m = 0;

	/* both lists are sorted by (group, instance, occurrence): one merge join */
	while (i < nref && j < n) {
		int c = keyed_cmp(&ref[i], &mine[j]);

		if (c == 0)
			diff[m++] = clamp_diff(ref[i].end_ns, mine[j].end_ns);
		i += c <= 0;
		j += c >= 0;
	}
	if (m > 0) {
		fit(diff, m, same_host, in);
		in->clock_method = same_host ? "same-host" : "collectives";
	}
	free(mine);
	free(diff);
	return m;
}
