/*
 * compat.c - old schema versions read as the current one, once, when a
 * reader opens a recording (db_open_readonly()): each table of the catalog
 * (common/kinds.c) that the file lacks becomes an empty TEMP table of the
 * current schema (a current file may lack the tables that are not
 * AGP_KIND_REQUIRED too), and in an older file each table that lacks
 * columns a TEMP view of the same name with those columns at their
 * defaults.  Readers then query the
 * current schema unconditionally; what they still ask the file is which
 * storage it has (db_has_table(): schema 6's eager op rows, schema 5's
 * kernel totals), never which columns.  Nothing is written to the file:
 * TEMP objects live on the connection.
 */
#include "db.h"
#include "kinds.h"
#include "strbuf.h"

#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Per catalog entry: the current schema's columns as ", DEFAULT AS "name"" items, tab-separated by name. */
static char *current_cols[AGP_MAX_KINDS];
static pthread_once_t current_once = PTHREAD_ONCE_INIT;

/* The current schema's columns and defaults, from schema.sql in a scratch in-memory database. */
static void load_current(void)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;

	if (sqlite3_open(":memory:", &db) != SQLITE_OK || sqlite3_exec(db, agprof_schema_sql, NULL, NULL, NULL) != SQLITE_OK ||
	    sqlite3_prepare_v2(db, "SELECT name, coalesce(dflt_value, 'NULL') FROM pragma_table_info(?1) ORDER BY cid", -1,
			       &s, NULL) != SQLITE_OK)
		goto done;
	for (size_t i = 0; i < agp_nkinds; i++) {
		struct strbuf sb = STRBUF_INIT;

		sqlite3_reset(s);
		sqlite3_bind_text(s, 1, agp_kinds[i].table, -1, SQLITE_STATIC);
		while (sqlite3_step(s) == SQLITE_ROW)
			strbuf_addf(&sb, "%s\t%s\n", sqlite3_column_text(s, 0), sqlite3_column_text(s, 1));
		current_cols[i] = strbuf_failed(&sb) ? (strbuf_release(&sb), NULL) : strbuf_detach(&sb);
	}
done:
	sqlite3_finalize(s);
	sqlite3_close(db);
}

/* CREATE TEMP TABLE of table's statement in schema.sql, into ddl. */
static int create_empty(struct strbuf *ddl, const char *table)
{
	char head[96];
	const char *start, *end;

	snprintf(head, sizeof(head), "CREATE TABLE %s (", table);
	start = strstr(agprof_schema_sql, head);
	end = start ? strstr(start, ");") : NULL;
	if (!end)
		return -1;
	start += strlen("CREATE TABLE ");
	strbuf_addf(ddl, "CREATE TEMP TABLE IF NOT EXISTS %.*s;\n", (int)(end + 1 - start), start);
	return 0;
}

/* "\nTABLE\tCOLUMN\n" of each column of each table of the file: one query, not one per column. */
static int file_columns(sqlite3 *db, struct strbuf *sb)
{
	sqlite3_stmt *s = NULL;
	int rc;

	/* prepared quietly: a damaged file's error is said by its first reader */
	if (sqlite3_prepare_v2(db, "SELECT m.name, p.name FROM main.sqlite_schema m, pragma_table_info(m.name, 'main') p"
			       " WHERE m.type = 'table'", -1, &s, NULL) != SQLITE_OK) {
		sqlite3_finalize(s);
		return -1;
	}
	strbuf_addch(sb, '\n');
	while ((rc = sqlite3_step(s)) == SQLITE_ROW)
		strbuf_addf(sb, "%s\t%s\n", sqlite3_column_text(s, 0), sqlite3_column_text(s, 1));
	sqlite3_finalize(s);
	return rc == SQLITE_DONE && !strbuf_failed(sb) ? 0 : -1;
}

static int has_column(const struct strbuf *file, const char *table, const char *col)
{
	char key[160];

	snprintf(key, sizeof(key), "\n%s\t%s\n", table, col);
	return strstr(file->buf, key) != NULL;
}

static int has_table(const struct strbuf *file, const char *table)
{
	char key[96];

	snprintf(key, sizeof(key), "\n%s\t", table);
	return strstr(file->buf, key) != NULL;
}

/* A TEMP view of table with the current columns it lacks at their defaults, into ddl; nothing when it lacks none. */
static int add_columns(struct strbuf *ddl, const struct strbuf *file, const char *table, const char *cols)
{
	struct strbuf extra = STRBUF_INIT;
	char *sql;
	int rc = 0;

	for (const char *p = cols; p && *p;) {
		const char *tab = strchr(p, '\t'), *nl = strchr(p, '\n');
		char name[64];

		if (!tab || !nl || tab - p >= (ptrdiff_t)sizeof(name))
			break;
		snprintf(name, sizeof(name), "%.*s", (int)(tab - p), p);
		if (!has_column(file, table, name))
			strbuf_addf(&extra, ", %.*s AS \"%s\"", (int)(nl - tab - 1), tab + 1, name);
		p = nl + 1;
	}
	if (extra.len) {
		sql = sqlite3_mprintf("CREATE TEMP VIEW IF NOT EXISTS \"%w\" AS SELECT *%s FROM main.\"%w\";\n", table,
				      extra.buf, table);
		if (sql)
			strbuf_addstr(ddl, sql);
		rc = sql ? 0 : -1;
		sqlite3_free(sql);
	}
	strbuf_release(&extra);
	return rc;
}

int db_define_compat(sqlite3 *db)
{
	sqlite3_stmt *s = NULL;
	struct strbuf file = STRBUF_INIT, ddl = STRBUF_INIT;
	int version = AGPROF_SCHEMA_VERSION, rc = 0;

	if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &s, NULL) == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
		version = sqlite3_column_int(s, 0);
	sqlite3_finalize(s);
	if (version > AGPROF_SCHEMA_VERSION || version < 1)
		return 0;  /* not a recording this agprof reads: recording_open() says so */
	if (version < AGPROF_SCHEMA_VERSION)
		pthread_once(&current_once, load_current);
	if (file_columns(db, &file)) {
		strbuf_release(&file);
		return -1;  /* a damaged file: its first query says so */
	}
	for (size_t i = 0; i < agp_nkinds && rc == 0; i++) {
		const struct agp_kind *k = &agp_kinds[i];

		if (k->view_over)
			continue;  /* eager_ops: the file's table (schema 1-5) or the reader's view (db_define_eager_view()) */
		/* a table the file lacks (also a current one: only AGP_KIND_REQUIRED ones must be there) */
		if (!has_table(&file, k->table))
			rc = create_empty(&ddl, k->table);
		else if (version < AGPROF_SCHEMA_VERSION)
			rc = add_columns(&ddl, &file, k->table, current_cols[i]);
	}
	/* one transaction: the temp schema is parsed again once, not after each statement */
	if (rc == 0 && ddl.len)
		rc = strbuf_failed(&ddl) || sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK ? -1
		     : sqlite3_exec(db, ddl.buf, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
	if (ddl.len && sqlite3_get_autocommit(db) == 0)
		sqlite3_exec(db, rc ? "ROLLBACK" : "COMMIT", NULL, NULL, NULL);
	strbuf_release(&file);
	strbuf_release(&ddl);
	return rc;
}
