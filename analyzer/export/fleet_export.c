/*
 * fleet_export.c - see fleet_export.h: the folder and its append-only
 * protocol.  Every recording is named before anything is written (so that
 * a refusal leaves DIR as it was); each is then written into a hidden
 * folder of DIR and its files renamed into their partitions, the
 * recordings partition's _sha256 last: a partition without it is an export
 * that did not finish, which the next export of that recording replaces.
 */
#include "fleet_export.h"
#include "fleet_internal.h"
#include "db.h"
#include "recid.h"
#include "recording.h"
#include "util.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SHA_HEX (2 * RECID_DIGEST + 1)

struct item {
	const char *path;
	char id[RECID_LEN];
	char sha[SHA_HEX];
	int from_content; /* no valid meta recording_id: named by its content */
	int unchanged;    /* DIR holds it already, from the same content */
};

static FILE *create_file(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		error("cannot create '%s': %s", path, strerror(errno));
	else
		setvbuf(f, NULL, _IOFBF, 1 << 20);
	return f;
}

/* Close f, written to path: 0, or FLEET_WRITE_FAILED after an error line. */
static int close_file(FILE *f, const char *path)
{
	if (ferror(f) | fclose(f))
		return error("cannot write '%s': %s", path, strerror(errno ? errno : EIO)), FLEET_WRITE_FAILED;
	return 0;
}

static int make_dir(const char *path)
{
	if (mkdir(path, 0777) != 0 && errno != EEXIST)
		return error("cannot create '%s': %s", path, strerror(errno)), FLEET_WRITE_FAILED;
	return 0;
}

/*
 * path holds text: written when missing (through a temporary file and a
 * rename, so that a reader sees all of it or none), left alone when it
 * holds the same; refused when it holds other text (another agprof
 * schema's folder).  0 or FLEET_*.
 */
static int put_fixed_file(const char *path, const char *text)
{
	size_t len = strlen(text);
	char *old = malloc(len + 2), tmp[4300];
	ssize_t n = old ? read_small_file(path, old, len + 2) : -1;
	int same = n >= 0 && (size_t)n == len && !memcmp(old, text, len);
	FILE *f;

	free(old);
	if (same)
		return 0;
	if (n >= 0)
		return error("'%s' was written by another agprof schema: export into a new folder", path), FLEET_BAD_INPUT;
	snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	if (!(f = create_file(tmp)))
		return FLEET_WRITE_FAILED;
	fputs(text, f);
	if (close_file(f, tmp) != 0)
		return FLEET_WRITE_FAILED;
	if (rename(tmp, path) != 0)
		return error("cannot create '%s': %s", path, strerror(errno)), FLEET_WRITE_FAILED;
	return 0;
}

/* DIR/TABLE/_schema.ddl of every table, and DIR/_load's views. */
static int write_schema_files(const char *dir, const struct fleet_table *all, size_t n, const struct fleet_table *index)
{
	char path[4300];
	int rc = 0;

	for (size_t i = 0; i <= n && rc == 0; i++) {
		const struct fleet_table *t = i < n ? &all[i] : index;
		char *ddl = NULL;

		snprintf(path, sizeof(path), "%s/%s", dir, t->name);
		if ((rc = make_dir(path)) != 0)
			break;
		snprintf(path, sizeof(path), "%s/%s/_schema.ddl", dir, t->name);
		if (asprintf(&ddl, "%s\n", t->ddl) < 0)
			return error("out of memory"), FLEET_WRITE_FAILED;
		rc = put_fixed_file(path, ddl);
		free(ddl);
	}
	snprintf(path, sizeof(path), "%s/_load", dir);
	if (rc == 0)
		rc = make_dir(path);
	for (int spark = 0; spark <= 1 && rc == 0; spark++) {
		char *text = fleet_loader(spark, all, n, index);

		snprintf(path, sizeof(path), "%s/_load/%s.sql", dir, spark ? "spark" : "duckdb");
		rc = text ? put_fixed_file(path, text) : (error("out of memory"), FLEET_WRITE_FAILED);
		free(text);
	}
	return rc;
}

/* it's id and SHA-256: the recording is opened (any damage but truncation refuses it) and hashed. */
static int name_recording(struct item *it)
{
	unsigned char d[RECID_DIGEST];
	struct recording rec;
	char damage[600], *id;

	if (recording_open_salvage(&rec, it->path, damage, sizeof(damage)) != 0)
		return FLEET_BAD_INPUT;
	id = db_meta_get(rec.db, "recording_id");
	recording_close(&rec);
	if (recid_file_digest(it->path, d) != 0) {
		free(id);
		return error("cannot read '%s': %s", it->path, strerror(errno)), FLEET_BAD_INPUT;
	}
	recid_hex(d, it->sha);
	it->from_content = !recid_valid(id);
	if (it->from_content)
		recid_from_digest(d, it->id);
	else
		memcpy(it->id, id, RECID_LEN);
	free(id);
	return 0;
}

static int by_id(const void *a, const void *b)
{
	const struct item *x = *(struct item *const *)a, *y = *(struct item *const *)b;

	return strcmp(x->id, y->id);
}

/* No two items with one id, and none that DIR holds from other content; 0 or FLEET_BAD_INPUT. */
static int check_ids(const char *dir, struct item *items, int n)
{
	struct item **sorted = calloc((size_t)n, sizeof(*sorted));
	char path[4300], sha[SHA_HEX + 8];
	int rc = 0;

	if (!sorted)
		return error("out of memory"), FLEET_WRITE_FAILED;
	for (int i = 0; i < n; i++)
		sorted[i] = &items[i];
	qsort(sorted, (size_t)n, sizeof(*sorted), by_id);
	for (int i = 1; i < n && rc == 0; i++)
		if (!strcmp(sorted[i - 1]->id, sorted[i]->id))
			rc = (error("'%s' and '%s' have the same recording id %s: a fleet needs one id per recording",
				    sorted[i - 1]->path, sorted[i]->path, sorted[i]->id), FLEET_BAD_INPUT);
	for (int i = 0; i < n && rc == 0; i++) {
		struct item *it = &items[i];

		snprintf(path, sizeof(path), "%s/recordings/recording=%s/_sha256", dir, it->id);
		if (read_small_file(path, sha, sizeof(sha)) < 0)
			continue;
		if (strncmp(sha, it->sha, SHA_HEX - 1) != 0)
			rc = (error("'%s' has the recording id %s, which '%s' holds from another recording",
				    it->path, it->id, dir), FLEET_BAD_INPUT);
		it->unchanged = 1;
	}
	free(sorted);
	return rc;
}

/* Move tmp/TABLE.csv to DIR/TABLE/recording=ID/part-0.csv (name: part-0.csv or _sha256). */
static int publish(const char *dir, const char *tmp, const char *table, const char *id, const char *name)
{
	char from[4300], part[4300], to[4400];
	int rc;

	snprintf(from, sizeof(from), "%s/%s%s", tmp, table, strcmp(name, "_sha256") ? ".csv" : ".sha256");
	snprintf(part, sizeof(part), "%s/%s/recording=%s", dir, table, id);
	snprintf(to, sizeof(to), "%s/%s", part, name);
	if ((rc = make_dir(part)) != 0)
		return rc;
	if (rename(from, to) != 0)
		return error("cannot create '%s': %s", to, strerror(errno)), FLEET_WRITE_FAILED;
	return 0;
}

/* A damage message less its "'PATH' is ": the same wherever the file lies. */
static const char *damage_text(const char *damage, const char *path)
{
	size_t n = strlen(path);

	if (damage[0] == '\'' && !strncmp(damage + 1, path, n) && damage[n + 1] == '\'' && damage[n + 2] == ' ')
		damage += n + 3;
	return strncmp(damage, "is ", 3) ? damage : damage + 3;
}

struct index_facts {
	const struct item *it;
	const char *status, *problem;
	const struct fleet_counts *counts;
};

/* "YYYY-MM-DD" (UTC) of a Unix time in ns, or NULL when the recording's value is not a time. */
static const char *day_of(const char *ns, char *buf, size_t len)
{
	char *end;
	long long v = ns ? strtoll(ns, &end, 10) : -1;
	time_t secs;
	struct tm tm;

	if (!ns || *end || v <= 0) /* any positive 64-bit ns is a time before 2262 */
		return NULL;
	secs = (time_t)(v / 1000000000LL);
	if (!gmtime_r(&secs, &tm) || !strftime(buf, len, "%Y-%m-%d", &tm))
		return NULL;
	return buf;
}

static void bind_int_text(sqlite3_stmt *s, int i, const char *v)
{
	char *end;
	long long n = v ? strtoll(v, &end, 10) : 0;

	if (v && *v && !*end)
		sqlite3_bind_int64(s, i, n);
}

/* The recording's row of DIR/recordings into tmp/recordings.csv. */
static int write_index(sqlite3 *db, const char *tmp, const struct index_facts *f)
{
	static const char *const keys[] = { "schema_version", "agprof_version", "host", "start_wall_ns" };
	const struct fleet_table *t = fleet_index_table();
	struct fleet_counts counts = *f->counts;
	char *meta[4], path[4400], day[32], problem[256];
	const char *base = strrchr(f->it->path, '/');
	sqlite3_stmt *s;
	FILE *out;
	int rc = FLEET_WRITE_FAILED;

	if (!t || !(s = db_prepare(db, t->select)))
		return error("cannot write the index of '%s'", f->it->path), FLEET_WRITE_FAILED;
	for (int i = 0; i < 4; i++)
		meta[i] = db_meta_get(db, keys[i]);
	sqlite3_bind_text(s, 1, f->it->from_content ? "content" : "meta", -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 2, f->it->sha, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, base ? base + 1 : f->it->path, -1, SQLITE_STATIC);
	bind_int_text(s, 4, meta[0]);
	sqlite3_bind_text(s, 5, meta[1], -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 6, meta[2], -1, SQLITE_STATIC);
	bind_int_text(s, 7, meta[3]);
	sqlite3_bind_text(s, 8, day_of(meta[3], day, sizeof(day)), -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 9, f->status, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 10, f->problem, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 11, counts.rows);
	sqlite3_bind_int64(s, 12, counts.nulled);
	sqlite3_bind_int64(s, 13, counts.cut);
	snprintf(path, sizeof(path), "%s/recordings.csv", tmp);
	if ((out = create_file(path))) {
		fleet_write_rows(db, s, t, out, &counts, problem, sizeof(problem));
		rc = close_file(out, path);
	}
	sqlite3_finalize(s);
	for (int i = 0; i < 4; i++)
		free(meta[i]);
	snprintf(path, sizeof(path), "%s/recordings.sha256", tmp);
	if (rc == 0 && (out = create_file(path))) {
		fprintf(out, "%s\n", f->it->sha);
		rc = close_file(out, path);
	}
	return rc;
}

/* Every table of rec into tmp/TABLE.csv; the first problem met into problem. */
static int write_tables(struct recording *rec, const char *tmp, const struct fleet_table *all, size_t n,
			struct fleet_counts *counts, char *problem, size_t len)
{
	char path[4400], why[512];

	for (size_t i = 0; i < n; i++) {
		FILE *out;

		snprintf(path, sizeof(path), "%s/%s.csv", tmp, all[i].name);
		if (!(out = create_file(path)))
			return FLEET_WRITE_FAILED;
		if (fleet_write_table(rec->db, &all[i], out, counts, why, sizeof(why)) != 0 && !problem[0])
			snprintf(problem, len, "%s", why);
		if (close_file(out, path) != 0)
			return FLEET_WRITE_FAILED;
	}
	return 0;
}

/* Write it into DIR through the hidden folder tmp; 0 or FLEET_*. */
static int export_one(const char *dir, const struct item *it, const struct fleet_table *all, size_t n,
		      struct fleet_stats *st)
{
	struct fleet_counts counts = { 0 };
	struct recording rec;
	char tmp[4300], damage[600], problem[700] = "";
	int rc;

	if (recording_open_salvage(&rec, it->path, damage, sizeof(damage)) != 0)
		return FLEET_BAD_INPUT;
	snprintf(tmp, sizeof(tmp), "%s/.export-%s-%ld", dir, it->id, (long)getpid());
	snprintf(problem, sizeof(problem), "%s", damage_text(damage, it->path));
	rc = make_dir(tmp);
	if (rc == 0)
		rc = write_tables(&rec, tmp, all, n, &counts, problem, sizeof(problem));
	if (rc == 0) {
		char *cut = db_meta_get(rec.db, "cut_short");
		struct index_facts f = { it, problem[0] ? "damaged" : cut ? "cut_short" : "complete",
					 problem[0] ? problem : NULL, &counts };

		rc = write_index(rec.db, tmp, &f);
		free(cut);
	}
	recording_close(&rec);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = publish(dir, tmp, all[i].name, it->id, "part-0.csv");
	if (rc == 0 && (rc = publish(dir, tmp, "recordings", it->id, "part-0.csv")) == 0)
		rc = publish(dir, tmp, "recordings", it->id, "_sha256");
	rmdir(tmp);
	if (rc == 0 && problem[0]) {
		warning("'%s' is damaged (%s): exported as far as it reads, status 'damaged' in recordings", it->path,
			problem);
		st->flagged++;
	}
	return rc;
}

int fleet_export(const char *dir, const char *const *paths, int n, struct fleet_stats *st)
{
	const struct fleet_table *all;
	struct item *items;
	size_t ntables;
	int rc = 0;

	memset(st, 0, sizeof(*st));
	if (fleet_tables_load(&all, &ntables) != 0 || !fleet_index_table())
		return FLEET_WRITE_FAILED;
	if (!(items = calloc((size_t)n, sizeof(*items))))
		return error("out of memory"), FLEET_WRITE_FAILED;
	for (int i = 0; i < n && rc == 0; i++) {
		items[i].path = paths[i];
		rc = name_recording(&items[i]);
	}
	if (rc == 0)
		rc = make_dir(dir);
	if (rc == 0)
		rc = check_ids(dir, items, n);
	if (rc == 0)
		rc = write_schema_files(dir, all, ntables, fleet_index_table());
	for (int i = 0; i < n && rc == 0; i++) {
		if (items[i].unchanged) {
			st->unchanged++;
			continue;
		}
		if ((rc = export_one(dir, &items[i], all, ntables, st)) == 0)
			st->exported++;
	}
	free(items);
	return rc;
}
