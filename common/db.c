/* db.c - SQLite helper layer, see db.h. */
#include "db.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

sqlite3_stmt *db_prepare(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *stmt = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK) {
		fprintf(stderr, "error: %s in '%s'\n", sqlite3_errmsg(db), sql);
		return NULL;
	}
	return stmt;
}

/*
 * Write errors that end a recording (disk full, I/O error, ...) are sticky,
 * like sqlite3_str's: the first one is kept for its connection and not
 * printed here (the writer says it once, with the file's name); every later
 * db_exec / db_step_done on that connection is a silent no-op returning -1.
 * A process writes one recording at a time, so one slot is enough.
 */
static struct {
	sqlite3 *db;
	int rc;
} write_failure;

static int is_write_failure(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_FULL:
	case SQLITE_IOERR:
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
	case SQLITE_CANTOPEN:
	case SQLITE_READONLY:
	case SQLITE_NOMEM:
		return 1;
	}
	return 0;
}

/* 1 when rc ends the connection's writing (kept, not printed). */
static int note_write_failure(sqlite3 *db, int rc)
{
	if (!is_write_failure(rc))
		return 0;
	if (write_failure.db != db) {
		write_failure.db = db;
		write_failure.rc = rc;
	}
	return 1;
}

int db_write_failure(sqlite3 *db)
{
	return db && write_failure.db == db ? write_failure.rc : 0;
}

void db_forget_write_failure(sqlite3 *db)
{
	if (write_failure.db == db)
		write_failure.db = NULL;
}

int db_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;
	int rc;

	if (db_write_failure(db))
		return -1;
	rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		if (!note_write_failure(db, sqlite3_extended_errcode(db)))
			fprintf(stderr, "error: %s in '%.200s'\n", msg ? msg : sqlite3_errmsg(db), sql);
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

int db_step_quiet(sqlite3 *db, sqlite3_stmt *stmt)
{
	int rc;

	if (db_write_failure(db)) {
		sqlite3_reset(stmt);
		return db_write_failure(db);
	}
	rc = sqlite3_step(stmt);
	if (rc == SQLITE_DONE || rc == SQLITE_ROW) {
		sqlite3_reset(stmt);
		return 0;
	}
	rc = sqlite3_extended_errcode(db);
	note_write_failure(db, rc);
	return rc ? rc : SQLITE_ERROR;  /* the caller reads sqlite3_errmsg() before the next reset */
}

int db_step_done(sqlite3 *db, sqlite3_stmt *stmt)
{
	int failed = db_write_failure(db), rc = db_step_quiet(db, stmt);

	if (rc && !failed && !db_write_failure(db))
		fprintf(stderr, "error: %s in '%s'\n", sqlite3_errmsg(db), sqlite3_sql(stmt));
	sqlite3_reset(stmt);
	return rc ? -1 : 0;
}

/*
 * The step budget: the trace callback starts each statement with a full
 * budget (per thread: a connection is used by one thread at a time, and a
 * runaway statement never returns to let another start), the progress
 * handler spends it.
 */
#define PROGRESS_STEPS 4096

static __thread int64_t steps_left;

static int stmt_started(unsigned type, void *ctx, void *p, void *x)
{
	(void)type, (void)p, (void)x;
	steps_left = (int64_t)(intptr_t)ctx;
	return 0;
}

static int stmt_progress(void *ctx)
{
	(void)ctx;
	steps_left -= PROGRESS_STEPS;
	return steps_left < 0;
}

int64_t db_step_budget(int64_t size)
{
	const char *env = getenv("AGPROF_READ_BUDGET");
	int64_t budget;

	if (env && *env)
		return strtoll(env, NULL, 10);
	/* a full scan costs a few dozen steps per row, a row takes >= 8 bytes */
	if (size < 0 || __builtin_mul_overflow(size, (int64_t)1000, &budget))
		budget = INT64_MAX;
	return budget < 1000000000 ? 1000000000 : budget;
}

int db_open_nofollow(void)
{
	const char *v = getenv("AGPROF_OPEN_NOFOLLOW");

	return v && *v && strcmp(v, "0");
}

static int open_ro(const char *path, int flags, int truncated, sqlite3 **out)
{
	struct stat st;
	int64_t budget = db_step_budget(stat(path, &st) == 0 ? (int64_t)st.st_size : 0);
	int rc = sqlite3_open_v2(path, out, SQLITE_OPEN_READONLY | flags | (db_open_nofollow() ? SQLITE_OPEN_NOFOLLOW : 0),
				 NULL);

	if (rc != SQLITE_OK)
		return rc;
	if (budget > INTPTR_MAX)
		budget = INTPTR_MAX;
	sqlite3_db_config(*out, SQLITE_DBCONFIG_DEFENSIVE, !truncated, NULL);
	if (truncated)
		sqlite3_exec(*out, "PRAGMA writable_schema = ON", NULL, NULL, NULL);
	sqlite3_db_config(*out, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	sqlite3_db_config(*out, SQLITE_DBCONFIG_ENABLE_VIEW, 0, NULL);
	sqlite3_db_config(*out, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
	sqlite3_trace_v2(*out, SQLITE_TRACE_STMT, stmt_started, (void *)(intptr_t)budget);
	sqlite3_progress_handler(*out, PROGRESS_STEPS, stmt_progress, NULL);
	db_define_eager_view(*out);  /* a file that cannot have it fails on its first use, with SQLite's message */
	db_define_compat(*out);      /* the same */
	return SQLITE_OK;
}

int db_open_readonly(const char *path, int flags, sqlite3 **out)
{
	return open_ro(path, flags, 0, out);
}

int db_open_truncated(const char *path, int flags, sqlite3 **out)
{
	return open_ro(path, flags, 1, out);
}

#define EAGER_VIEW "CREATE VIEW eager_ops AS "

int db_define_eager_view(sqlite3 *db)
{
	const char *start = strstr(agprof_schema_sql, EAGER_VIEW), *end = start ? strchr(start, ';') : NULL;
	char *sql;
	int rc;

	if (!end || !db_has_table(db, "eager_op_rows"))
		return 0;
	start += strlen("CREATE VIEW ");
	sql = sqlite3_mprintf("CREATE TEMP VIEW IF NOT EXISTS %.*s", (int)(end - start), start);
	if (!sql)
		return -1;
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : -1;
	sqlite3_free(sql);
	return rc;
}

#define INDEX_MARKER "-- @indexes"
#define LATE_INDEX_MARKER "-- @late-indexes"

enum schema_part { SCHEMA_TABLES, SCHEMA_INDEXES, SCHEMA_LATE_INDEXES };

/* The schema's tables, its indexes, or the indexes built at the end of a run; malloc'd. */
static char *schema_part(enum schema_part part)
{
	const char *all = agprof_schema_sql, *mark = strstr(all, INDEX_MARKER), *late = strstr(all, LATE_INDEX_MARKER);
	const char *end = all + strlen(all);

	if (!mark)
		mark = end;
	if (!late || late < mark)
		late = end;
	switch (part) {
	case SCHEMA_TABLES: return strndup(all, (size_t)(mark - all));
	case SCHEMA_INDEXES: return strndup(mark, (size_t)(late - mark));
	default: return strdup(late);
	}
}

/*
 * One part in one savepoint (a transaction of its own, or nested in the
 * caller's): a launcher killed while making it leaves all of it or none,
 * which db_schema_complete() relies on.
 */
static int create_part(sqlite3 *db, enum schema_part part)
{
	char *sql = schema_part(part);
	int rc;

	if (!sql || db_exec(db, "SAVEPOINT schema_part") != 0) {
		free(sql);
		return -1;
	}
	rc = db_exec(db, sql);
	if (rc != 0)
		db_exec(db, "ROLLBACK TO schema_part");
	if (db_exec(db, "RELEASE schema_part") != 0)
		rc = -1;
	free(sql);
	return rc;
}

/* Whether the first table or index a part creates exists (a part is made whole or not at all). */
static int part_present(sqlite3 *db, enum schema_part part)
{
	char *sql = schema_part(part), *at = NULL, name[64];
	sqlite3_stmt *s = NULL;
	int found = -1;

	if (sql && ((at = strstr(sql, "CREATE TABLE ")) || (at = strstr(sql, "CREATE INDEX "))) &&
	    sscanf(at + 13, "%63[A-Za-z0-9_]", name) == 1 &&
	    (s = db_prepare(db, "SELECT count(*) FROM sqlite_master WHERE name = ?"))) {
		sqlite3_bind_text(s, 1, name, -1, SQLITE_STATIC);
		if (sqlite3_step(s) == SQLITE_ROW)
			found = sqlite3_column_int(s, 0) > 0;
	}
	sqlite3_finalize(s);
	free(sql);
	return found;
}

int db_schema_complete(sqlite3 *db)
{
	static const enum schema_part parts[] = { SCHEMA_TABLES, SCHEMA_INDEXES, SCHEMA_LATE_INDEXES };

	for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
		int present = part_present(db, parts[i]);

		if (present < 0 || (!present && create_part(db, parts[i]) != 0))
			return -1;
	}
	return 0;
}

int db_create_indexes(sqlite3 *db)
{
	return create_part(db, SCHEMA_INDEXES);
}

int db_create_late_indexes(sqlite3 *db)
{
	return create_part(db, SCHEMA_LATE_INDEXES);
}

void db_remove(const char *path)
{
	static const char *const sides[] = { "", "-wal", "-shm" };
	char name[4096];

	for (size_t i = 0; i < sizeof(sides) / sizeof(sides[0]); i++)
		if ((size_t)snprintf(name, sizeof(name), "%s%s", path, sides[i]) < sizeof(name))
			unlink(name);
}

int db_create_recording(const char *path, sqlite3 **out, char *err, size_t errlen)
{
	sqlite3 *db = NULL;
	char *msg = NULL, *tables;

	/*
	 * NOMUTEX: a recording is written by one thread (the launcher's writer,
	 * merge), so SQLite's per-call connection mutex is pure cost there
	 * (~15% of the writer's CPU per event, bench/ingest.c under perf).
	 */
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK) {
		snprintf(err, errlen, "cannot create '%s': %s", path, db ? sqlite3_errmsg(db) : "out of memory");
		sqlite3_close(db);
		return -1;
	}
	db_forget_write_failure(db);  /* a closed connection's address may come back */
	tables = schema_part(SCHEMA_TABLES);
	/*
	 * WAL with synchronous=NORMAL: a writer commits often so that a crash
	 * of agprof itself still leaves a valid file, without an fsync per
	 * commit.  The launcher's run writer then turns the syncs off as well
	 * (run_writer.c says why); merge keeps them.
	 */
	if (!tables ||
	    sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; BEGIN", NULL, NULL, &msg) != SQLITE_OK ||
	    sqlite3_exec(db, tables, NULL, NULL, &msg) != SQLITE_OK ||
	    sqlite3_exec(db, "COMMIT", NULL, NULL, &msg) != SQLITE_OK) {  /* one transaction: all tables or none */
		snprintf(err, errlen, "cannot create '%s': %s", path, msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		sqlite3_close(db);
		free(tables);
		return -1;
	}
	free(tables);
	*out = db;
	return 0;
}

int db_meta_set(sqlite3 *db, const char *key, const char *value)
{
	sqlite3_stmt *stmt = db_prepare(db, "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)");
	int rc;

	if (!stmt)
		return -1;
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(stmt, 2, value, -1, SQLITE_STATIC);
	rc = db_step_done(db, stmt);
	sqlite3_finalize(stmt);
	return rc;
}

int db_meta_set_int(sqlite3 *db, const char *key, int64_t value)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lld", (long long)value);
	return db_meta_set(db, key, buf);
}

int db_schema_has_table(sqlite3 *db, const char *schema, const char *name)
{
	char *sql = sqlite3_mprintf("SELECT 1 FROM \"%w\".sqlite_schema WHERE type = 'table' AND name = ?", schema);
	sqlite3_stmt *stmt;
	int found = 0;

	if (!sql || sqlite3_prepare_v2(db, sql, -1, &stmt, NULL) != SQLITE_OK) {
		sqlite3_free(sql);
		return 0;
	}
	sqlite3_free(sql);
	sqlite3_bind_text(stmt, 1, name, -1, SQLITE_STATIC);
	found = sqlite3_step(stmt) == SQLITE_ROW;
	sqlite3_finalize(stmt);
	return found;
}

int db_has_table(sqlite3 *db, const char *name)
{
	return db_schema_has_table(db, "main", name);
}

int db_schema_has_column(sqlite3 *db, const char *schema, const char *table, const char *col)
{
	sqlite3_stmt *s = db_prepare(db, "SELECT 1 FROM pragma_table_info(?1, ?3) WHERE name = ?2");
	int found;

	if (!s)
		return 0;
	sqlite3_bind_text(s, 1, table, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, col, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, schema, -1, SQLITE_STATIC);
	found = sqlite3_step(s) == SQLITE_ROW;
	sqlite3_finalize(s);
	return found;
}

int db_has_column(sqlite3 *db, const char *table, const char *col)
{
	return db_schema_has_column(db, "main", table, col);
}

char *db_meta_get(sqlite3 *db, const char *key)
{
	sqlite3_stmt *stmt = db_prepare(db, "SELECT value FROM meta WHERE key = ?");
	char *value = NULL;

	if (!stmt)
		return NULL;
	sqlite3_bind_text(stmt, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0))
		value = strdup((const char *)sqlite3_column_text(stmt, 0));
	sqlite3_finalize(stmt);
	return value;
}

/* String interning */

struct string_slot {
	uint64_t hash;
	int64_t id;
	char *text;
	size_t len;
};

static uint64_t hash_bytes(const char *s, size_t len)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */

	for (size_t i = 0; i < len; i++) {
		h ^= (unsigned char)s[i];
		h *= 1099511628211ULL;
	}
	return h;
}

int string_table_init(struct string_table *st, sqlite3 *db)
{
	memset(st, 0, sizeof(*st));
	st->db = db;
	st->cap = 1024;
	st->slots = calloc(st->cap, sizeof(*st->slots));
	st->insert = db_prepare(db, "INSERT INTO strings(text) VALUES (?)");
	st->lookup = db_prepare(db, "SELECT id FROM strings WHERE text = ?");
	if (!st->slots || !st->insert || !st->lookup) {
		string_table_release(st);
		return -1;
	}
	return 0;
}

static int string_table_grow(struct string_table *st)
{
	size_t ncap = st->cap * 2;
	struct string_slot *ns = calloc(ncap, sizeof(*ns));

	if (!ns)
		return -1;
	for (size_t i = 0; i < st->cap; i++) {
		struct string_slot *s = &st->slots[i];
		size_t j;

		if (!s->text)
			continue;
		for (j = s->hash & (ncap - 1); ns[j].text; j = (j + 1) & (ncap - 1))
			;
		ns[j] = *s;
	}
	free(st->slots);
	st->slots = ns;
	st->cap = ncap;
	return 0;
}

int64_t string_table_intern(struct string_table *st, const char *text, size_t len)
{
	uint64_t h = hash_bytes(text, len);
	size_t i;
	struct string_slot *slot;
	int64_t id = -1;

	for (i = h & (st->cap - 1); st->slots[i].text; i = (i + 1) & (st->cap - 1)) {
		slot = &st->slots[i];
		if (slot->hash == h && slot->len == len && memcmp(slot->text, text, len) == 0)
			return slot->id;
	}
	/* Not cached: the row may exist from an earlier writer of this file. */
	sqlite3_bind_text(st->lookup, 1, text, (int)len, SQLITE_STATIC);
	if (sqlite3_step(st->lookup) == SQLITE_ROW)
		id = sqlite3_column_int64(st->lookup, 0);
	sqlite3_reset(st->lookup);
	if (id < 0) {
		sqlite3_bind_text(st->insert, 1, text, (int)len, SQLITE_STATIC);
		if (db_step_done(st->db, st->insert) != 0)
			return -1;
		id = sqlite3_last_insert_rowid(st->db);
	}
	slot = &st->slots[i];
	slot->text = malloc(len + 1);
	if (!slot->text)
		return id;
	memcpy(slot->text, text, len);
	slot->text[len] = '\0';
	slot->len = len;
	slot->hash = h;
	slot->id = id;
	if (++st->used * 2 > st->cap)
		string_table_grow(st);
	return id;
}

void string_table_release(struct string_table *st)
{
	if (st->slots)
		for (size_t i = 0; i < st->cap; i++)
			free(st->slots[i].text);
	free(st->slots);
	sqlite3_finalize(st->insert);
	sqlite3_finalize(st->lookup);
	memset(st, 0, sizeof(*st));
}
