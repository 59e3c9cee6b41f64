/*
 * merge_copy.c - copy one recording into a merged one, table by table, as
 * INSERT ... SELECT from the attached input: SQLite streams the rows, so
 * memory does not grow with the inputs' sizes or number.
 *
 * The catalog of kinds (common/kinds.c) says, for each table of the
 * schema, which of its columns need rewriting (their roles); every other
 * column is copied as it is, and only the columns that both the input and
 * the merged schema have are copied (an older input lacks newer columns:
 * they take their default).  merge_check_table_list() refuses to merge
 * while a table of the schema has no entry there.
 */
#include "merge.h"
#include "db.h"
#include "kinds.h"
#include "strbuf.h"
#include "util.h"

#include <stdio.h>
#include <string.h>

/* What gpu_external_ids.event_table calls t's rows: schema 6's eager ops are eager_ops (the view). */
static const char *event_table_name(const struct agp_kind *t)
{
	return strcmp(t->table, "eager_op_rows") ? t->table : "eager_ops";
}

#define NTABLES agp_nkinds

/* Per input: how far each table's ids and the pids move. */
struct shifts {
	int64_t id[AGP_MAX_KINDS];
	int has_id[AGP_MAX_KINDS];
	int64_t pid;
	const struct merge_input *in;
};

static int table_index(const char *name, size_t len)
{
	const struct agp_kind *k = agp_kind_find(name, len);

	return k ? (int)(k - agp_kinds) : -1;
}

static int64_t query_int(sqlite3 *db, const char *sql, int *failed)
{
	sqlite3_stmt *s = db_prepare(db, sql);
	int64_t v = 0;

	if (!s || sqlite3_step(s) != SQLITE_ROW)
		*failed = 1;
	else
		v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

/* Shift ids past the merged rows (whatever the input's own range, negative ids included). */
static int compute_shifts(sqlite3 *db, struct shifts *sh)
{
	char sql[512];
	int failed = 0;

	for (size_t i = 0; i < NTABLES && !failed; i++) {
		size_t kl;
		const char *k = agp_kind_role(&agp_kinds[i], "id", &kl);

		if (!k || kl != 2 || strncmp(k, "id", 2) || !db_schema_has_table(db, "src", agp_kinds[i].table))
			continue;
		snprintf(sql, sizeof(sql),
			 "SELECT coalesce((SELECT max(id) FROM main.%s), 0) - coalesce((SELECT min(id) FROM src.%s), 1) + 1",
			 agp_kinds[i].table, agp_kinds[i].table);
		sh->id[i] = query_int(db, sql, &failed);
		sh->has_id[i] = 1;
	}
	/* pids stay as they were unless an earlier input has the same one (another host) */
	if (!failed && query_int(db, "SELECT EXISTS (SELECT 1 FROM src.processes s JOIN main.processes m USING (pid))",
				 &failed))
		sh->pid = query_int(db, "SELECT (SELECT max(pid) FROM main.processes) - (SELECT min(pid) FROM src.processes) + 1",
				    &failed);
	return failed ? -1 : 0;
}

/* The expression that stands for src column col of table t in the SELECT. */
static void add_column_expr(struct strbuf *sb, const struct shifts *sh, const struct agp_kind *t, const char *col)
{
	size_t kl;
	const char *k = agp_kind_role(t, col, &kl);
	int ref;

	/* the shifts are integers computed here, not input: pasting them is safe */
	if (!k)
		strbuf_addf(sb, "\"%s\"", col);
	else if (kl == 4 && !strncmp(k, "time", 4))
		strbuf_addf(sb, "\"%s\" + %lld", col, (long long)sh->in->clock_offset_ns);
	else if (kl == 3 && !strncmp(k, "pid", 3))
		strbuf_addf(sb, "\"%s\" + %lld", col, (long long)sh->pid);
	else if (kl == 4 && !strncmp(k, "rank", 4))
		strbuf_addf(sb, "%d", sh->in->rank);
	else if (kl == 7 && !strncmp(k, "strings", 7))
		/* an id the input's strings lack (a damaged input) becomes -1: still no text, never a NULL */
		strbuf_addf(sb, "CASE WHEN \"%s\" IS NULL THEN NULL ELSE coalesce((SELECT new FROM temp.string_map"
			    " WHERE old = \"%s\"), -1) END", col, col);
	else if (*k == '@') {
		strbuf_addf(sb, "CASE \"%.*s\"", (int)kl - 1, k + 1);
		for (size_t i = 0; i < NTABLES; i++)
			if (sh->has_id[i])
				strbuf_addf(sb, " WHEN '%s' THEN \"%s\" + %lld",
					    event_table_name(&agp_kinds[i]),
					    col, (long long)sh->id[i]);
		strbuf_addf(sb, " ELSE \"%s\" END", col);
	} else if (kl == 2 && !strncmp(k, "id", 2))
		strbuf_addf(sb, "\"%s\" + %lld", col, (long long)sh->id[t - agp_kinds]);
	else if ((ref = table_index(k, kl)) >= 0)
		strbuf_addf(sb, "\"%s\" + %lld", col, (long long)sh->id[ref]);
	else
		strbuf_addf(sb, "\"%s\"", col);  /* a kind for a table the input lacks: nothing to shift */
}

static char write_error[256];  /* why writing the output failed, for merge_write_error() */

/*
 * 1 when the last statement failed writing the output (disk full, I/O
 * error, file size limit); the reason is kept: the caller says it once.
 */
static int is_write_error(sqlite3 *db)
{
	int code = sqlite3_errcode(db) & 0xff;

	if (code != SQLITE_FULL && code != SQLITE_IOERR && !db_write_failure(db))
		return 0;
	if (!write_error[0])
		snprintf(write_error, sizeof(write_error), "%s",
			 db_write_failure(db) ? sqlite3_errstr(db_write_failure(db)) : sqlite3_errmsg(db));
	return 1;
}

const char *merge_write_error(sqlite3 *db)
{
	if (!write_error[0] && db_write_failure(db))
		return sqlite3_errstr(db_write_failure(db));
	return write_error[0] ? write_error : NULL;
}

/* INSERT INTO main.T (the columns both have) SELECT (their expressions) FROM src.T. */
static int copy_table(sqlite3 *db, const struct shifts *sh, const struct agp_kind *t)
{
	struct strbuf cols = STRBUF_INIT, exprs = STRBUF_INIT, sql = STRBUF_INIT;
	sqlite3_stmt *s = db_prepare(db, "SELECT name FROM pragma_table_info(?, 'main') ORDER BY cid");
	int rc = -1;

	if (!s)
		return -1;
	sqlite3_bind_text(s, 1, t->table, -1, SQLITE_STATIC);
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *col = db_col_text(s, 0);
		size_t kl;
		const char *k = agp_kind_role(t, col, &kl);
		int is_rank = k && kl == 4 && !strncmp(k, "rank", 4);

		if (!is_rank && !db_schema_has_column(db, "src", t->table, col))
			continue;
		strbuf_addf(&cols, "%s\"%s\"", cols.len ? ", " : "", col);
		strbuf_addstr(&exprs, exprs.len ? ", " : "");
		add_column_expr(&exprs, sh, t, col);
	}
	strbuf_addf(&sql, "INSERT%s INTO main.%s (%s) SELECT %s FROM src.%s", t->flags & AGP_KIND_OR_IGNORE ? " OR IGNORE" : "",
		    t->table, cols.buf, exprs.buf, t->table);
	if (strbuf_failed(&cols) || strbuf_failed(&exprs) || strbuf_failed(&sql))
		error("out of memory");
	else if (sqlite3_exec(db, sql.buf, NULL, NULL, NULL) == SQLITE_OK)
		rc = 0;
	else if (is_write_error(db))
		rc = -2;  /* said once by the caller */
	else  /* e.g. ids so large that they cannot move past the earlier inputs' */
		error("cannot merge table '%s' of '%s': %s", t->table, sh->in->path, sqlite3_errmsg(db));
	sqlite3_finalize(s);
	strbuf_release(&cols);
	strbuf_release(&exprs);
	strbuf_release(&sql);
	return rc;
}

/* One id per text across the inputs; temp.string_map maps this input's ids to them. */
static int intern_strings(sqlite3 *db)
{
	return db_exec(db, "DROP TABLE IF EXISTS temp.string_map;"
			   "CREATE TEMP TABLE string_map (old INTEGER PRIMARY KEY, new INTEGER NOT NULL);"
			   "INSERT OR IGNORE INTO main.strings (text) SELECT text FROM src.strings WHERE text IS NOT NULL;"
			   "INSERT OR IGNORE INTO temp.string_map SELECT s.id, m.id FROM src.strings s"
			   " JOIN main.strings m ON m.text = s.text;");
}

int merge_copy(sqlite3 *db, struct merge_input *in)
{
	struct shifts sh = { .in = in };
	int rc = 0;

	if (db_exec(db, "BEGIN") != 0)
		return -1;
	if (compute_shifts(db, &sh) != 0 || intern_strings(db) != 0)
		rc = is_write_error(db) ? -2 : -1;
	in->pid_shift = sh.pid;
	for (size_t i = 0; i < NTABLES && rc == 0; i++)
		if (!(agp_kinds[i].flags & AGP_KIND_MERGED_ELSEWHERE) && db_schema_has_table(db, "src", agp_kinds[i].table))
			rc = copy_table(db, &sh, &agp_kinds[i]);
	if (rc == 0 && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK)
		return 0;
	if (rc == 0)
		rc = is_write_error(db) ? -2 : error("cannot merge '%s': %s", in->path, sqlite3_errmsg(db));
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int merge_check_table_list(sqlite3 *db)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT name FROM main.sqlite_master WHERE type = 'table' ORDER BY name");
	int rc = 0;

	if (!s)
		return -1;
	while (sqlite3_step(s) == SQLITE_ROW && rc == 0) {
		const char *name = db_col_text(s, 0);

		if (!name || table_index(name, strlen(name)) < 0)
			rc = error("table '%s' of the schema has no entry in common/kinds.c's catalog", name ? name : "?");
	}
	sqlite3_finalize(s);
	return rc;
}
