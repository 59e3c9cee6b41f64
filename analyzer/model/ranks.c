/*
 * ranks.c - see ranks.h.  The queries read the views steps and
 * collectives (analyzer/model/sql/steps.sql, collectives.sql): a recording is
 * opened with views off (db.h), so they are prepended as WITH clauses
 * instead, the way docs/fleet.md has DuckDB create them as views.
 */
#include "ranks.h"
#include "db.h"
#include "model_internal.h"
#include "recording.h"
#include "sql_rows.h"
#include "strbuf.h"
#include "util.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

extern const char agprof_sql_steps[], agprof_sql_collectives[], agprof_sql_ranks[], agprof_sql_straggler[],
	agprof_sql_collective_wait[], agprof_sql_rank_retrace[];

static const struct {
	const char *source;
	const char *sql;
} job_sources[] = {
	{ "ranks", agprof_sql_ranks },
	{ "stragglers", agprof_sql_straggler },
	{ "collective_waits", agprof_sql_collective_wait },
	{ "rank_retraces", agprof_sql_rank_retrace },
};

/* sql past its leading comment lines and blanks. */
static const char *skip_comments(const char *sql)
{
	for (;;) {
		sql += strspn(sql, " \t\r\n");
		if (strncmp(sql, "--", 2) != 0)
			return sql;
		sql += strcspn(sql, "\n");
	}
}

/* "WITH steps AS (...), collectives AS (...)" then query, whose own WITH joins that list. */
static void add_query(struct strbuf *sb, const char *query)
{
	const char *body = skip_comments(query);

	strbuf_addf(sb, "WITH steps AS (%s\n), collectives AS (%s\n)", agprof_sql_steps, agprof_sql_collectives);
	if (!strncmp(body, "WITH", 4) && (body[4] == ' ' || body[4] == '\n'))
		strbuf_addf(sb, ",%s", body + 4);
	else
		strbuf_addf(sb, "\n%s", body);
}

static int is_merged(sqlite3 *db)
{
	sqlite3_stmt *s;
	int merged = 0;

	if (sqlite3_prepare_v2(db, "SELECT EXISTS (SELECT 1 FROM ranks)", -1, &s, NULL) == SQLITE_OK &&
	    sqlite3_step(s) == SQLITE_ROW)
		merged = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return merged;
}

/* rank_retraces' cause and detail: the model's explanation of the first retrace on the rank that traced most. */
static void explain_rank_retraces(const struct model *m, struct metric_source *src)
{
	for (size_t row = 0; row < src->count(m, src->data); row++) {
		struct metric_value name, pid;

		if (src->get(m, src->data, row, "function", &name) || name.type != METRIC_TEXT ||
		    src->get(m, src->data, row, "pid", &pid) || pid.type != METRIC_NUM)
			continue;
		for (size_t i = 0; i < m->nfunctions; i++) {
			const struct model_function *f = &m->functions[i];

			if (f->pid != (int64_t)pid.num || strcmp(f->name, name.text) || f->main_cause == CAUSE_NONE)
				continue;
			sql_rows_set_text(src, row, "cause", retrace_cause_name(f->main_cause));
			for (size_t t = 1; t < f->ntraces; t++)
				if (f->traces[t].why.cause == f->main_cause && f->traces[t].why.detail) {
					sql_rows_set_text(src, row, "detail", f->traces[t].why.detail);
					break;
				}
			break;
		}
	}
}

int ranks_register(struct model *m)
{
	sqlite3 *db = m->rec->db;

	if (!is_merged(db))
		return 0;
	for (size_t i = 0; i < sizeof(job_sources) / sizeof(job_sources[0]); i++) {
		struct strbuf sql = STRBUF_INIT;
		struct metric_source src;
		char err[512] = "out of memory";
		int rc;

		add_query(&sql, job_sources[i].sql);
		rc = strbuf_failed(&sql) ? -1 : sql_rows_source(db, sql.buf, job_sources[i].source, &src, err, sizeof(err));
		strbuf_release(&sql);
		if (rc != 0)
			return error("'%s': the %s of its ranks: %s", m->rec->path, job_sources[i].source, err);
		if (!strcmp(job_sources[i].source, "rank_retraces"))
			explain_rank_retraces(m, &src);
		if (model_add_source(m, &src) != 0) {
			src.release(src.data);
			return error("out of memory");
		}
	}
	return 0;
}

size_t ranks_count(const struct model *m)
{
	const struct metric_source *s = model_find_source(m, "ranks");

	return s ? s->count(m, s->data) : 0;
}

static int ranks_get(const struct model *m, size_t row, const char *field, struct metric_value *v)
{
	const struct metric_source *s = model_find_source(m, "ranks");

	return s && row < s->count(m, s->data) ? s->get(m, s->data, row, field, v) : -1;
}

double ranks_num(const struct model *m, size_t row, const char *field)
{
	struct metric_value v;

	return ranks_get(m, row, field, &v) == 0 && v.type == METRIC_NUM ? v.num : NAN;
}

const char *ranks_text(const struct model *m, size_t row, const char *field)
{
	struct metric_value v;

	return ranks_get(m, row, field, &v) == 0 && v.type == METRIC_TEXT ? v.text : NULL;
}

int ranks_of_pid(const struct model *m, int64_t pid)
{
	sqlite3_stmt *s;
	int rank = -1;

	if (!is_merged(m->rec->db) ||
	    sqlite3_prepare_v2(m->rec->db, "SELECT rank FROM processes WHERE pid = ?1 AND rank IS NOT NULL", -1, &s,
			       NULL) != SQLITE_OK)
		return -1;
	sqlite3_bind_int64(s, 1, pid);
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_int64(s, 0) >= 0 && sqlite3_column_int64(s, 0) < 1 << 20)
		rank = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	return rank;
}
