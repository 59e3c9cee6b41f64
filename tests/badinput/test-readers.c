/*
 * test-readers.c - the helpers every reader of untrusted input uses
 * (common/idmap, common/checked.h, the escapers and the sanitizer of
 * common/strbuf, db_open_readonly()'s guards), on the values issue 14
 * found: ids of 2^61, multiplications that wrap, timestamps at INT64_MAX,
 * bytes that are not UTF-8, terminal control sequences, runaway queries.
 */
#include "checked.h"
#include "db.h"
#include "idmap.h"
#include "strbuf.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

Test(idmap, huge_and_negative_ids_cost_one_slot_each)
{
	static const int64_t ids[] = { (int64_t)1 << 61, INT64_MAX, INT64_MIN, -1, 0, 1, 4611686018427387905LL };
	struct idmap m = IDMAP_INIT;
	size_t v;

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		cr_assert_eq(idmap_put(&m, ids[i], i), 0);
	cr_assert_eq(idmap_put(&m, INT64_MAX, 99), 1, "a duplicate id keeps the first value");
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		cr_assert_eq(idmap_get(&m, ids[i], &v), 1);
		cr_assert_eq(v, i);
	}
	cr_assert_eq(idmap_get(&m, 2, &v), 0);
	cr_assert_lt(m.cap, 64 + 1, "memory follows the entries, not the ids");
	idmap_release(&m);
	cr_assert_eq(idmap_get(&m, 0, &v), 0, "a released map is empty");
}

Test(idmap, many_sequential_ids)
{
	struct idmap m = IDMAP_INIT;
	size_t v;

	for (int64_t i = 0; i < 100000; i++)
		cr_assert_eq(idmap_put(&m, i * 7919, (size_t)i), 0);
	for (int64_t i = 0; i < 100000; i += 37) {
		cr_assert_eq(idmap_get(&m, i * 7919, &v), 1);
		cr_assert_eq(v, (size_t)i);
	}
	idmap_release(&m);
}

/* Rowids in order go to the dense array; gaps, holes and strays keep the map's meaning. */
Test(idmap, dense_rowids_with_gaps_and_strays)
{
	struct idmap m = IDMAP_INIT;
	size_t v;

	for (int64_t id = 10; id < 20000; id += (id % 7) ? 1 : 3)
		cr_assert_eq(idmap_put(&m, id, (size_t)id * 2), 0);
	cr_assert_eq(m.cap, 0, "ascending rowids with narrow gaps stay dense");
	cr_assert_eq(idmap_get(&m, 13, &v), 1);
	cr_assert_eq(v, 26);
	cr_assert_eq(idmap_get(&m, 9, &v), 0, "before the first id");
	cr_assert_eq(idmap_get(&m, 15, &v), 0, "a gap (14 is followed by 17)");
	cr_assert_eq(idmap_put(&m, 13, 1), 1, "a duplicate keeps the first value");
	cr_assert_eq(idmap_set(&m, 13, 1), 0);
	cr_assert(idmap_get(&m, 13, &v) && v == 1, "set replaces");
	/* a wide jump and an id below the range: hashed, and the range is frozen */
	cr_assert_eq(idmap_put(&m, (int64_t)1 << 40, 5), 0);
	cr_assert_eq(idmap_put(&m, -3, 6), 0);
	cr_assert_eq(idmap_put(&m, 19999 + 1, 7), 0);
	cr_assert_eq(idmap_put(&m, 15, 8), 0, "a hole in the range is filled");
	cr_assert(idmap_get(&m, (int64_t)1 << 40, &v) && v == 5);
	cr_assert(idmap_get(&m, -3, &v) && v == 6);
	cr_assert(idmap_get(&m, 20000, &v) && v == 7);
	cr_assert(idmap_get(&m, 15, &v) && v == 8);
	cr_assert_eq(m.used, 3, "the hole went to the array, not the table");
	cr_assert_eq(idmap_put(&m, 20000, 9), 1, "a hashed id is not also dense");
	cr_assert(idmap_get(&m, 19999, &v) && v == 39998);
	idmap_release(&m);
}

Test(checked, allocations_refuse_wrapping_sizes)
{
	void *p;

	/* (2^61 + 1) * 8 wraps to 8: the timeline's old malloc(n * 8) */
	cr_assert_null(alloc_array(((size_t)1 << 61) + 1, 8));
	cr_assert_null(alloc_zeroed(SIZE_MAX / 2, 3));
	p = malloc(16);
	cr_assert_null(realloc_array(p, SIZE_MAX, 2));
	free(p); /* untouched by the failed realloc */
	p = alloc_zeroed(0, 8);
	cr_assert_not_null(p, "an empty array is a valid block");
	free(p);
}

Test(checked, arithmetic_saturates)
{
	cr_assert_eq(sat_add64(INT64_MAX, 1), INT64_MAX);
	cr_assert_eq(sat_add64(INT64_MIN, -1), INT64_MIN);
	cr_assert_eq(sat_sub64(INT64_MAX, -5), INT64_MAX);
	cr_assert_eq(sat_sub64(INT64_MIN + 1, 9), INT64_MIN);
	cr_assert_eq(sat_mul64(16, (int64_t)1 << 62), INT64_MAX);
	cr_assert_eq(sat_mul64(-16, (int64_t)1 << 62), INT64_MIN);
	cr_assert_eq(span_ns(-INT64_MAX, INT64_MAX), INT64_MAX);
	cr_assert_eq(span_ns(10, 5), 0);
	cr_assert_eq(ts_clamp(INT64_MIN), 0);
	cr_assert_eq(ts_clamp(INT64_MAX), TS_MAX_NS);
	cr_assert_eq(sat_sub64(ts_clamp(INT64_MAX), ts_clamp(INT64_MIN)), TS_MAX_NS, "clamped values never overflow");
}

/* Whether s is valid UTF-8 (Python's rules: no overlong, no surrogates). */
static int valid_utf8(const char *s, size_t len)
{
	uint32_t c;

	for (size_t i = 0, n; i < len; i += n)
		if (!(n = utf8_seq((const unsigned char *)s + i, len - i, &c)))
			return 0;
	return 1;
}

Test(escape, json_is_valid_for_any_bytes)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_add_json_string(&sb, "f\xff\xfe\xc0\xaf\xed\xa0\x80\xf4\x90\x80\x80\xe2\x82");
	cr_assert_str_eq(sb.buf, "\"f\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\\ufffd\"");
	strbuf_reset(&sb);
	strbuf_add_json_string(&sb, "\x1b[2J\x07\xc2\x9b q\"\\ \xe2\x80\xa8 \xc3\xa9 \xf0\x9f\x98\x80");
	cr_assert_str_eq(sb.buf, "\"\\u001b[2J\\u0007\\u009b q\\\"\\\\ \\u2028 \xc3\xa9 \xf0\x9f\x98\x80\"");
	cr_assert(valid_utf8(sb.buf, sb.len));
	strbuf_release(&sb);
}

Test(escape, xml_holds_no_forbidden_character)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_add_xml_escaped(&sb, "a\x01<b>\xff\r\n&");
	cr_assert_str_eq(sb.buf, "a?&lt;b&gt;\xef\xbf\xbd&#13;\n&amp;");
	strbuf_release(&sb);
}

Test(sanitize, control_sequences_never_reach_the_terminal)
{
	struct strbuf sb = STRBUF_INIT;

	strbuf_addstr(&sb, "keep\x1b]0;pwned\x07\x1b[2J\rx\r\n\tc\xc2\x9b" "31m\xff\x7f \xc3\xa9\n");
	strbuf_sanitize_text(&sb, 2, 0);
	cr_assert_str_eq(sb.buf, "keep?]0;pwned??[2J?x\r\n\tc?31m\xef\xbf\xbd? \xc3\xa9\n");
	strbuf_reset(&sb);
	strbuf_addstr(&sb, "\x1b[1mbold\x1b[0m \x1b[2J \x1b]8;;x\x1b\\");
	strbuf_sanitize_text(&sb, 0, 1);
	cr_assert_str_eq(sb.buf, "\x1b[1mbold\x1b[0m ?[2J ?]8;;x?\\", "colours kept, nothing else: %s", sb.buf);
	strbuf_release(&sb);
}

Test(db, the_reader_accepts_the_schema_version_it_writes)
{
	const char *p = strstr(agprof_schema_sql, "PRAGMA user_version = ");

	cr_assert_not_null(p);
	cr_assert_eq(atoi(p + strlen("PRAGMA user_version = ")), AGPROF_SCHEMA_VERSION,
		     "db.h's AGPROF_SCHEMA_VERSION must follow common/schema.sql");
}

/* A runaway statement (here a recursive CTE: views are off) ends with "interrupted". */
Test(db, the_step_budget_stops_a_runaway_query)
{
	char path[] = "/tmp/agprof-budget-XXXXXX";
	int fd = mkstemp(path);
	sqlite3 *db;
	sqlite3_stmt *st;
	int rc;

	cr_assert_geq(fd, 0);
	close(fd);
	cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_exec(db, "CREATE TABLE t(x); CREATE VIEW v AS SELECT x FROM t", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);

	setenv("AGPROF_READ_BUDGET", "5000000", 1);
	cr_assert_eq(db_open_readonly(path, 0, &db), SQLITE_OK);
	cr_assert_eq(sqlite3_prepare_v2(db, "WITH RECURSIVE r(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM r) SELECT max(x) FROM r",
					-1, &st, NULL),
		     SQLITE_OK);
	rc = sqlite3_step(st);
	cr_assert_eq(rc, SQLITE_INTERRUPT, "got %d: %s", rc, sqlite3_errmsg(db));
	sqlite3_finalize(st);
	/* the next statement starts with a full budget */
	cr_assert_eq(sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &st, NULL), SQLITE_OK);
	cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
	sqlite3_finalize(st);
	/* views do not run at all */
	cr_assert_neq(sqlite3_prepare_v2(db, "SELECT * FROM v", -1, &st, NULL), SQLITE_OK);
	sqlite3_finalize(st);
	sqlite3_close(db);
	unsetenv("AGPROF_READ_BUDGET");
	cr_assert_gt(db_step_budget(1 << 30), (int64_t)1 << 39, "a 1 GiB file gets a generous budget");
	unlink(path);
}
