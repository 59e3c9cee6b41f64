/*
 * test-kinds.c - the catalog of recorded kinds (common/kinds.c) against
 * common/schema.sql, as SQLite reads it: every table of the schema has an
 * entry, every entry's columns exist with the roles it claims, every
 * reference of the schema has its role (else merge would copy it
 * unshifted), and every query of the catalog prepares with the columns its
 * reader expects.
 */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "kinds.h"

static sqlite3 *db;

static void open_schema(void)
{
	char *msg = NULL;

	cr_assert_eq(sqlite3_open(":memory:", &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, agprof_schema_sql, NULL, NULL, &msg), SQLITE_OK, "schema.sql: %s", msg);
}

static void close_schema(void)
{
	sqlite3_close(db);
}

TestSuite(kinds, .init = open_schema, .fini = close_schema);

static int has_object(const char *type, const char *name)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT 1 FROM sqlite_schema WHERE type = ?1 AND name = ?2");
	int found;

	sqlite3_bind_text(s, 1, type, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, name, -1, SQLITE_STATIC);
	found = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return found;
}

/* Column col of table: its declared type and its place in the primary key; 0 when it has none. */
static int column(const char *table, const char *col, char *type, size_t len, int *pk)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT type, pk FROM pragma_table_info(?1) WHERE name = ?2");
	int found;

	sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, col, -1, SQLITE_STATIC);
	found = sqlite3_step(s) == SQLITE_ROW;
	if (found) {
		snprintf(type, len, "%s", db_col_text_or(s, 0, ""));
		*pk = sqlite3_column_int(s, 1);
	}
	sqlite3_finalize(s);
	return found;
}

Test(kinds, every_schema_table_has_one_entry)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT name FROM sqlite_schema WHERE type = 'table'");
	int n = 0;

	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *name = db_col_text(s, 0);

		cr_expect(agp_kind_find(name, strlen(name)), "table '%s' of schema.sql has no entry in kinds.c", name);
		n++;
	}
	sqlite3_finalize(s);
	cr_assert_gt(n, 30);
	for (size_t i = 0; i < agp_nkinds; i++) {
		const struct agp_kind *k = &agp_kinds[i];

		cr_expect_eq(agp_kind_find(k->table, strlen(k->table)), k, "'%s' has two entries", k->table);
		if (k->view_over)
			cr_expect(has_object("view", k->table) && has_object("table", k->view_over),
				  "'%s' is no view over '%s' in schema.sql", k->table, k->view_over);
		else
			cr_expect(has_object("table", k->table), "'%s' of kinds.c is no table of schema.sql", k->table);
		cr_expect(k->since >= 1 && k->since <= AGPROF_SCHEMA_VERSION, "'%s': since %d", k->table, k->since);
	}
}

/* The role's table reference, checked against the schema's REFERENCES (views have none). */
static void check_reference(const struct agp_kind *k, const char *col, const char *role, size_t rl)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT \"table\" FROM pragma_foreign_key_list(?1) WHERE \"from\" = ?2");

	cr_expect(agp_kind_find(role, rl), "%s.%s: role '%.*s' is no role nor table", k->table, col, (int)rl, role);
	sqlite3_bind_text(s, 1, k->table, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, col, -1, SQLITE_STATIC);
	if (sqlite3_step(s) == SQLITE_ROW)
		cr_expect(strlen(db_col_text_or(s, 0, "")) == rl && !strncmp(db_col_text(s, 0), role, rl),
			  "%s.%s references %s, its role says %.*s", k->table, col, db_col_text(s, 0), (int)rl, role);
	sqlite3_finalize(s);
}

static int role_is(const char *role, size_t rl, const char *what)
{
	return strlen(what) == rl && !strncmp(role, what, rl);
}

Test(kinds, every_role_names_a_column_of_its_kind)
{
	for (size_t i = 0; i < agp_nkinds; i++) {
		const struct agp_kind *k = &agp_kinds[i];

		for (const char *p = k->columns; *p;) {
			const char *colon = strchr(p, ':'), *end = strchr(p, ' ');
			char col[64], type[32];
			size_t rl;
			int pk;

			end = end ? end : p + strlen(p);
			cr_assert(colon && colon < end && colon - p < 64, "%s: '%s' is no column:role list", k->table, k->columns);
			snprintf(col, sizeof(col), "%.*s", (int)(colon - p), p);
			rl = (size_t)(end - colon - 1);
			cr_expect(column(k->table, col, type, sizeof(type), &pk), "%s has no column '%s'", k->table, col);
			if (role_is(colon + 1, rl, "id"))
				cr_expect(k->view_over || (pk == 1 && !strcmp(type, "INTEGER")),
					  "%s.%s: role id, not its INTEGER PRIMARY KEY", k->table, col);
			else if (colon[1] == '@') {
				snprintf(col, sizeof(col), "%.*s", (int)rl - 1, colon + 2);
				cr_expect(column(k->table, col, type, sizeof(type), &pk), "%s: role @%s names no column",
					  k->table, col);
			}
			else if (!role_is(colon + 1, rl, "pid") && !role_is(colon + 1, rl, "tid") &&
				 !role_is(colon + 1, rl, "time") && !role_is(colon + 1, rl, "rank"))
				check_reference(k, col, colon + 1, rl);
			p = *end ? end + 1 : end;
		}
	}
}

/*
 * Every reference, process id and start or end time of the schema has its
 * role: merge rewrites a column by its role and copies the others as they
 * are.
 */
Test(kinds, every_reference_pid_and_time_has_its_role)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT m.name, c.name, coalesce(f.\"table\", '') FROM sqlite_schema m"
					 " JOIN pragma_table_info(m.name) c"
					 " LEFT JOIN pragma_foreign_key_list(m.name) f ON f.\"from\" = c.name"
					 " WHERE m.type = 'table'");

	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *table = db_col_text(s, 0), *col = db_col_text(s, 1), *ref = db_col_text(s, 2), *want = NULL;
		const struct agp_kind *k = agp_kind_find(table, strlen(table));
		const char *role;
		size_t rl;

		if (*ref)
			want = ref;
		else if (!strcmp(col, "pid") || !strcmp(col, "ppid"))
			want = "pid";
		else if (!strcmp(col, "start_ns") || !strcmp(col, "end_ns") || !strcmp(col, "created_ns"))
			want = "time";
		if (!k || !want || (k->flags & AGP_KIND_MERGED_ELSEWHERE))
			continue;
		role = agp_kind_role(k, col, &rl);
		cr_expect(role && role_is(role, rl, want), "%s.%s: role %.*s, want %s", table, col, role ? (int)rl : 4,
			  role ? role : "none", want);
	}
	sqlite3_finalize(s);
}

static int columns_of(const char *sql)
{
	sqlite3_stmt *s = NULL;
	int n;

	cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &s, NULL), SQLITE_OK, "%s: %s", sqlite3_errmsg(db), sql);
	n = sqlite3_column_count(s);
	sqlite3_finalize(s);
	return n;
}

Test(kinds, every_lane_once_with_its_queries)
{
	char sql[2048];

	for (int kind = 0; kind < AGP_NLANES; kind++) {
		const struct agp_lane *l = agp_lane_find(kind);
		int nlabels = 0;

		cr_assert(l, "lane kind %d has no entry", kind);
		cr_expect(strlen(l->short_name) <= 5, "%s: short name '%s'", l->long_name, l->short_name);
		cr_expect(l->color8 >= 1 && l->color8 <= 7 && l->color256 >= 16 && l->color256 <= 255,
			  "%s: colours %d, %d", l->long_name, l->color8, l->color256);
		cr_expect_eq(columns_of(l->slice), 10, "%s: slice columns", l->long_name);
		snprintf(sql, sizeof(sql), "%s WHERE %s", l->slice, l->filter);
		columns_of(sql);
		snprintf(sql, sizeof(sql), "%s WHERE %s IN (1)", l->slice, l->search);
		columns_of(sql);
		while (nlabels < 12 && l->labels[nlabels])
			nlabels++;
		cr_expect_eq(columns_of(l->details), nlabels, "%s: details columns and labels", l->long_name);
	}
	for (size_t i = 0; i < agp_nkinds; i++)
		for (int j = 0; j < 2; j++)
			if (agp_kinds[i].lanes[j].long_name)
				cr_expect_eq(agp_lane_find(agp_kinds[i].lanes[j].kind), &agp_kinds[i].lanes[j],
					     "lane kind %d twice", agp_kinds[i].lanes[j].kind);
}

/* The columns an args list reads, or -1 when it is misspelt. */
static int args_columns(const char *args)
{
	int n = 0;

	for (const char *p = args; *p;) {
		const char *colon = strchr(p, ':'), *end = strchr(p, ' ');

		end = end ? end : p + strlen(p);
		if (!colon || colon > end)
			return -1;
		if (end - colon == 4 && !strncmp(colon + 1, "loc", 3))
			n += 2;
		else if (end - colon == 2 && strchr("silLn", colon[1]))
			n++;
		else
			return -1;
		p = *end ? end + 1 : end;
	}
	return n;
}

Test(kinds, scan_and_chrome_queries_prepare)
{
	for (size_t i = 0; i < agp_nkinds; i++) {
		const struct agp_kind *k = &agp_kinds[i];

		if (k->scan)
			cr_expect_eq(columns_of(k->scan), k->scan_lane == AGP_LANE_KERNEL || (k->flags & AGP_KIND_AGGREGATE) ? 7 : 5,
				     "%s: scan columns", k->table);
		if (k->scan || k->chrome.how)
			cr_expect(k->flags & AGP_KIND_EVENT, "%s: drawn or exported, not an event table", k->table);
		if (k->chrome.how == AGP_CHROME_COUNTER)
			cr_expect_eq(columns_of(k->chrome.sql), 5, "%s: counter columns", k->table);
		else if (k->chrome.how) {
			int n = args_columns(k->chrome.args);

			cr_expect_geq(n, 0, "%s: args '%s'", k->table, k->chrome.args);
			cr_expect_eq(columns_of(k->chrome.sql), 5 + n, "%s: chrome columns", k->table);
		}
	}
}

/*
 * compat.c: a recording of an older schema (here 3: no kernels, no
 * traces.collector_ns; and 1's callsites without parent_id and library) is
 * read as the current one, while db_has_table() and db_has_column() still
 * answer for the file; a current recording gets nothing added.
 */
static void make_recording(const char *path, int version)
{
	char err[256], sql[128];
	sqlite3 *w;

	unlink(path);
	cr_assert_eq(db_create_recording(path, &w, err, sizeof(err)), 0, "%s", err);
	cr_assert_eq(db_exec(w, "INSERT INTO strings VALUES (1, 'f.py');"
				"INSERT INTO functions (id, pid, name_id) VALUES (1, 7, 1);"
				"INSERT INTO traces (id, function_id, pid, tid, start_ns, end_ns, function_object, object_trace_no)"
				" VALUES (1, 1, 7, 7, 10, 20, 1, 1);"), 0);
	if (version < AGPROF_SCHEMA_VERSION)
		cr_assert_eq(db_exec(w, "DROP TABLE kernels; ALTER TABLE traces DROP COLUMN collector_ns;"
					"CREATE TABLE cs1 (id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL, line INTEGER NOT NULL,"
					" func_id INTEGER NOT NULL); DROP TABLE callsites; ALTER TABLE cs1 RENAME TO callsites;"
					"INSERT INTO callsites VALUES (1, 1, 3, 1);"), 0);
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", version);
	cr_assert_eq(db_exec(w, sql), 0);
	sqlite3_close(w);
}

static int64_t one_int(sqlite3 *r, const char *sql)
{
	sqlite3_stmt *s = NULL;
	int64_t v;

	cr_assert_eq(sqlite3_prepare_v2(r, sql, -1, &s, NULL), SQLITE_OK, "%s: %s", sqlite3_errmsg(r), sql);
	cr_assert_eq(sqlite3_step(s), SQLITE_ROW, "%s", sql);
	v = sqlite3_column_int64(s, 0);
	sqlite3_finalize(s);
	return v;
}

Test(kinds, old_schema_read_as_current)
{
	const char *path = "test-kinds-v3.agprof";
	sqlite3 *r = NULL;

	make_recording(path, 3);
	cr_assert_eq(db_open_readonly(path, 0, &r), SQLITE_OK);
	cr_expect_eq(one_int(r, "SELECT count(*) FROM kernels"), 0);
	cr_expect_eq(one_int(r, "SELECT count(*) FROM dataset_ops"), 0);
	cr_expect_eq(one_int(r, "SELECT collector_ns FROM traces WHERE id = 1"), 0, "the column's default");
	cr_expect_eq(one_int(r, "SELECT library FROM callsites WHERE id = 1"), 0);
	cr_expect_eq(one_int(r, "SELECT parent_id IS NULL AND line = 3 FROM callsites WHERE id = 1"), 1);
	cr_expect_eq(one_int(r, "SELECT count(*) FROM processes WHERE rank IS NOT NULL"), 0);
	cr_expect(!db_has_table(r, "kernels") && !db_has_column(r, "traces", "collector_ns"),
		  "db_has_table and db_has_column answer for the file");
	cr_expect(db_has_table(r, "session_runs"));
	sqlite3_close(r);
	unlink(path);
}

Test(kinds, current_schema_gets_nothing)
{
	const char *path = "test-kinds-v8.agprof";
	sqlite3 *r = NULL;

	make_recording(path, AGPROF_SCHEMA_VERSION);
	cr_assert_eq(db_open_readonly(path, 0, &r), SQLITE_OK);
	/* the eager ops' view only (db_define_eager_view()) */
	cr_expect_eq(one_int(r, "SELECT count(*) FROM sqlite_temp_schema WHERE name <> 'eager_ops'"), 0);
	sqlite3_close(r);
	unlink(path);
}
