/*
 * fuzz_recording.c - every reader of a recording on hostile files: open
 * (recording.c), the model and the rules (analyze), the four report
 * formats, the GPU model, the Chrome export, and the timeline of
 * `agprof view` (open, scan, render every lane, search, details).
 *
 * An input is either a whole file (it starts with the SQLite header: the
 * bytes are the recording) or a list of row mutations applied to a copy of
 * a real recording (base.agprof, from samples/py_function_step.py): change
 * a value (an id too) of one row or of all rows to an extreme integer, raw
 * bytes, NULL; delete a row, or copy one under a chosen id; drop an index or a table;
 * put a recursive view in place of a table; change the schema version.
 * Mutations reach the readers' logic; raw bytes reach SQLite's checks.
 */
#include "fuzz.h"
#include "analyze.h"
#include "chrome.h"
#include "gpu.h"
#include "model.h"
#include "recording.h"
#include "report.h"
#include "rules.h"
#include "strbuf.h"
#include "timeline.h"
#ifdef FUZZ_SQLITE_HEAP
#include "sqlite_heap.h"
#endif

#include <sqlite3.h>
#include <string.h>
#include <unistd.h>

/* The SQL is built from base.agprof's short table and column names, copied into bounded arrays. */
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic ignored "-Wformat-truncation"
#endif

#ifndef FUZZ_SOURCE_ROOT
#error "FUZZ_SOURCE_ROOT must name the source tree"
#endif

#define MAX_TABLES 32
#define MAX_COLS 24
#define MAX_OPS 12

struct table {
	char name[64];
	char cols[MAX_COLS][48];
	int ncols;
};

static struct table tables[MAX_TABLES];
static int ntables;
static char indexes[64][64];
static int nindexes;
static uint8_t *base;
static size_t base_len;
static char path[64];

/*
 * Once: the base recording's bytes, tables, columns and indexes.  The base
 * is tests/fuzz/base.agprof (schema 1: every connection also runs the
 * compat step), or the file named by $FUZZ_BASE (e.g. base-current.agprof).
 */
static void setup(void)
{
	const char *base_path = getenv("FUZZ_BASE") ? getenv("FUZZ_BASE") : FUZZ_SOURCE_ROOT "/tests/fuzz/base.agprof";
	sqlite3 *db;
	sqlite3_stmt *st;
	FILE *f;

	if (base)
		return;
#ifdef FUZZ_SQLITE_HEAP
	fuzz_check(fuzz_sqlite_heap() == 0, "SQLite takes the pool before its first use");
	/* one schema parse per input, not one per connection (an analysis opens several): 15% of an input */
	sqlite3_enable_shared_cache(1);
#endif
	f = fopen(base_path, "rb");
	fuzz_check(f != NULL, "the base recording is readable");
	base = malloc(1 << 22);
	base_len = fread(base, 1, 1 << 22, f);
	fclose(f);
	snprintf(path, sizeof(path), "/dev/shm/agprof-fuzz-%d.agprof", (int)getpid());
	setenv("AGPROF_SCAN_THREADS", "1", 1);
	setenv("AGPROF_RULES_DIR", FUZZ_SOURCE_ROOT "/rules", 1);
	setenv("AGPROF_READ_BUDGET", "20000000", 1); /* a runaway query costs a fraction of a second */
	fuzz_check(sqlite3_open_v2(base_path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK,
		   "base.agprof opens");
	sqlite3_prepare_v2(db, "SELECT type, name FROM sqlite_schema WHERE type IN ('table', 'index') ORDER BY name", -1,
			   &st, NULL);
	while (sqlite3_step(st) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(st, 0), *name = (const char *)sqlite3_column_text(st, 1);

		if (!strncmp(name, "sqlite_", 7))
			continue;
		if (!strcmp(type, "index") && nindexes < 64)
			snprintf(indexes[nindexes++], sizeof(indexes[0]), "%s", name);
		else if (!strcmp(type, "table") && ntables < MAX_TABLES)
			snprintf(tables[ntables++].name, sizeof(tables[0].name), "%s", name);
	}
	sqlite3_finalize(st);
	for (int t = 0; t < ntables; t++) {
		char sql[128];

		snprintf(sql, sizeof(sql), "SELECT name FROM pragma_table_info('%s')", tables[t].name);
		sqlite3_prepare_v2(db, sql, -1, &st, NULL);
		while (sqlite3_step(st) == SQLITE_ROW && tables[t].ncols < MAX_COLS)
			snprintf(tables[t].cols[tables[t].ncols++], sizeof(tables[0].cols[0]), "%s",
				 (const char *)sqlite3_column_text(st, 0));
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
}

/* The mutation script: bytes read in order, 0 once they run out. */
struct script {
	const uint8_t *p, *end;
};

static unsigned byte(struct script *s)
{
	return s->p < s->end ? *s->p++ : 0;
}

static int64_t int64_of(struct script *s)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | byte(s);
	return (int64_t)v;
}

/* Bind a hostile value: extreme integers, raw bytes (not UTF-8, controls), NULL, a real, a blob. */
static void bind_value(struct script *s, sqlite3_stmt *st, int col)
{
	static const int64_t special[] = {
		0, -1, 1, INT64_MAX, INT64_MIN, (int64_t)1 << 61, ((int64_t)1 << 62) + 1, 0xffffffffLL,
		(int64_t)1 << 32, -((int64_t)1 << 62), 1000000000000000000LL, 2,
	};
	unsigned kind = byte(s) % 6, n;
	double d;
	int64_t v;

	switch (kind) {
	case 0:
		sqlite3_bind_int64(st, col, special[byte(s) % (sizeof(special) / sizeof(special[0]))]);
		break;
	case 1:
		sqlite3_bind_int64(st, col, int64_of(s));
		break;
	case 2:
	case 5:
		n = byte(s) % 48;
		if ((size_t)(s->end - s->p) < n)
			n = (unsigned)(s->end - s->p);
		if (kind == 2)
			sqlite3_bind_text(st, col, (const char *)s->p, (int)n, SQLITE_TRANSIENT);
		else
			sqlite3_bind_blob(st, col, s->p, (int)n, SQLITE_TRANSIENT);
		s->p += n;
		break;
	case 3:
		sqlite3_bind_null(st, col);
		break;
	case 4:
		v = int64_of(s);
		memcpy(&d, &v, sizeof(d));
		sqlite3_bind_double(st, col, d);
		break;
	}
}

static void run_sql(sqlite3 *db, const char *sql, struct script *s, int nvalues, int offset_param)
{
	sqlite3_stmt *st;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK)
		return;
	for (int i = 1; i <= nvalues; i++)
		bind_value(s, st, i);
	if (offset_param)
		sqlite3_bind_int(st, offset_param, (int)byte(s));
	while (sqlite3_step(st) == SQLITE_ROW)
		;
	sqlite3_finalize(st);
}

static void mutate(sqlite3 *db, struct script *s)
{
	const struct table *t = &tables[byte(s) % ntables];
	const char *col = t->cols[byte(s) % t->ncols];
	char sql[1024];
	int n;

	switch (byte(s) % 7) {
	case 0: /* one row's value */
		snprintf(sql, sizeof(sql),
			 "UPDATE %s SET %s = ?1 WHERE rowid = (SELECT rowid FROM %s ORDER BY rowid LIMIT 1 OFFSET ?2)",
			 t->name, col, t->name);
		run_sql(db, sql, s, 1, 2);
		break;
	case 1: /* every row's value */
		/* text made distinct by the rowid: UNIQUE columns (strings.text) take it too */
		snprintf(sql, sizeof(sql),
			 "UPDATE OR IGNORE %s SET %s = CASE WHEN typeof(?1) = 'text' THEN ?1 || rowid ELSE ?1 END", t->name,
			 col);
		run_sql(db, sql, s, 1, 0);
		break;
	case 2:
		snprintf(sql, sizeof(sql),
			 "DELETE FROM %s WHERE rowid = (SELECT rowid FROM %s ORDER BY rowid LIMIT 1 OFFSET ?1)", t->name,
			 t->name);
		run_sql(db, sql, s, 0, 1);
		break;
	case 3: /* a copy of a row with a chosen first column (the id) */
		n = snprintf(sql, sizeof(sql), "INSERT OR IGNORE INTO %s SELECT ?1", t->name);
		for (int c = 1; c < t->ncols; c++)
			n += snprintf(sql + n, sizeof(sql) - (size_t)n, ", %s", t->cols[c]);
		snprintf(sql + n, sizeof(sql) - (size_t)n, " FROM %s ORDER BY rowid LIMIT 1 OFFSET ?2", t->name);
		run_sql(db, sql, s, 1, 2);
		break;
	case 4:
		if (nindexes) {
			snprintf(sql, sizeof(sql), "DROP INDEX IF EXISTS %s", indexes[byte(s) % nindexes]);
			sqlite3_exec(db, sql, NULL, NULL, NULL);
		}
		break;
	case 5: /* a table gone, or a never-ending view in its place */
		snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS %s", t->name);
		sqlite3_exec(db, sql, NULL, NULL, NULL);
		if (byte(s) & 1) {
			n = snprintf(sql, sizeof(sql), "CREATE VIEW %s AS WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT x", t->name);
			for (int c = 1; c < t->ncols; c++)
				n += snprintf(sql + n, sizeof(sql) - (size_t)n, ", x AS %s", t->cols[c]);
			snprintf(sql + n, sizeof(sql) - (size_t)n, " FROM r");
			sqlite3_exec(db, sql, NULL, NULL, NULL);
		}
		break;
	case 6:
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", (int)(byte(s) % 4));
		sqlite3_exec(db, sql, NULL, NULL, NULL);
		break;
	}
}

/* Write the input as the recording file: raw, or the base with mutations. */
static int make_file(const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "wb");
	sqlite3 *db;
	struct script s = { data, data + size };

	if (!f)
		return -1;
	if (size >= 16 && !memcmp(data, "SQLite format 3", 16))
		fwrite(data, 1, size, f);
	else
		fwrite(base, 1, base_len, f);
	fclose(f);
	if (size >= 16 && !memcmp(data, "SQLite format 3", 16))
		return 0;
	if (sqlite3_open(path, &db) != SQLITE_OK) {
		sqlite3_close(db);
		return -1;
	}
	sqlite3_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; PRAGMA foreign_keys=OFF", NULL, NULL, NULL);
	for (int i = 0; i < MAX_OPS && s.p < s.end; i++)
		mutate(db, &s);
	sqlite3_close(db);
	return 0;
}

/* JSON from the printers: valid UTF-8 with no raw control character. */
static void check_json(const struct strbuf *sb)
{
	for (size_t i = 0; i < sb->len;) {
		uint32_t c;
		size_t n = utf8_seq((const unsigned char *)sb->buf + i, sb->len - i, &c);

		fuzz_check(n > 0, "JSON output is UTF-8");
		fuzz_check(c >= 0x20 || c == '\n', "JSON output holds no raw control character");
		i += n;
	}
}

/* Text and CSV after the sanitizer: nothing a terminal would obey. */
static void check_text(const struct strbuf *sb)
{
	for (size_t i = 0; i < sb->len;) {
		uint32_t c;
		size_t n = utf8_seq((const unsigned char *)sb->buf + i, sb->len - i, &c);

		fuzz_check(n > 0, "text output is UTF-8");
		fuzz_check(c >= 0x20 || c == '\n' || c == '\t' || c == '\r', "text output holds no control character");
		fuzz_check(c < 0x7f || c > 0x9f, "text output holds no C1 control");
		i += n;
	}
}

static void reports(struct recording *rec)
{
	struct analyze_opts ao = { 0 };
	struct model m;
	struct ruleset rs;
	struct report_opts ro = { .top = 10 };
	struct strbuf out = STRBUF_INIT;

	ao.allow_empty = 1;
	if (analyze(&m, &rs, rec, &ao))
		return;
	ro.gpu = gpu_metrics_model(&m);
	ro.recording = rec->path;
	report_json(&out, &m, &ro);
	check_json(&out);
	strbuf_reset(&out);
	report_sarif(&out, &m, &rs);
	check_json(&out);
	strbuf_reset(&out);
	report_text(&out, &m, &ro);
	strbuf_sanitize_text(&out, 0, 0);
	check_text(&out);
	strbuf_reset(&out);
	report_csv(&out, &m, &ro);
	strbuf_sanitize_text(&out, 0, 0);
	check_text(&out);
	strbuf_release(&out);
	model_release(&m);
	ruleset_release(&rs);
}

static void export_chrome(struct recording *rec)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct strbuf sb = STRBUF_INIT;

	if (!f)
		return;
	if (chrome_export(rec, f) == 0) {
		fclose(f);
		sb.buf = buf, sb.len = len;
		check_json(&sb);
	} else {
		fclose(f);
	}
	free(buf);
}

static void view(struct recording *rec)
{
	struct timeline tl;
	struct tl_render r = { 0 };
	struct tl_slice *found = NULL, s;
	struct tl_detail *d = NULL;
	ptrdiff_t n;

	if (timeline_open(&tl, rec, 4096))
		return;
	timeline_wait(&tl);
	for (size_t i = 0; i < tl.nlanes; i++) {
		struct tl_window w = { tl.start_ns, tl.end_ns, 80 };
		struct tl_window narrow = { tl.start_ns, tl.start_ns + (tl.end_ns - tl.start_ns) / 1000 + 1, 80 };

		timeline_lane_render(&tl, i, &w, 0, &r);
		timeline_lane_render(&tl, i, &narrow, 0, &r);
		if (timeline_lane_step(&tl, i, tl.start_ns, 1, 0, &s) == 1 && (n = timeline_details(&tl, &s, &d)) >= 0)
			tl_details_free(d, (size_t)n);
	}
	if ((n = timeline_search(&tl, "a", TL_ALL_KINDS, 50, &found)) > 0 && (n = timeline_details(&tl, &found[0], &d)) >= 0)
		tl_details_free(d, (size_t)n);
	free(found);
	tl_render_release(&r);
	timeline_release(&tl);
}

/*
 * Which readers run (fuzz.sh builds one binary per stage: a whole input
 * through every reader took 40 to 300 ms under the fuzzer's sanitizers,
 * most of it SQL preparation; one stage a run is several times faster).
 */
#define STAGE_REPORTS 1
#define STAGE_CHROME 2
#define STAGE_VIEW 4
#ifndef FUZZ_STAGES
#define FUZZ_STAGES (STAGE_REPORTS | STAGE_CHROME | STAGE_VIEW)
#endif

#ifdef FUZZ_SQLITE_HEAP
/* strstr() unchecked: ASan's wrapper measures the 23 KB schema on every connection (14% of an input) */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "intercept_strstr=0";
}
#endif

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct recording rec;
#ifdef FUZZ_SQLITE_HEAP
	long live;
#endif

	setup();
#ifdef FUZZ_SQLITE_HEAP
	live = fuzz_sqlite_live();
#endif
	if (make_file(data, size) == 0 && recording_open(&rec, path) == 0) {
		if (FUZZ_STAGES & STAGE_REPORTS)
			reports(&rec);
		if (FUZZ_STAGES & STAGE_CHROME)
			export_chrome(&rec);
		if (FUZZ_STAGES & STAGE_VIEW)
			view(&rec);
		recording_close(&rec);
	}
	if (!getenv("FUZZ_KEEP")) /* FUZZ_KEEP=1: leave the file to reproduce with agprof */
		unlink(path);
#ifdef FUZZ_SQLITE_HEAP
	/* LeakSanitizer does not see the pool: every statement finalized, every connection closed */
	fuzz_check(fuzz_sqlite_live() <= live, "an input leaves no SQLite allocation behind");
#endif
	return 0;
}
