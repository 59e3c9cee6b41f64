/*
 * merge.c - `agprof merge`: the recordings of a multi-worker job's workers,
 * one per process, into one recording with a rank per input.
 *
 * Two passes over the inputs, one open at a time: the first reads each
 * one's task, host and step ends (bounded: MERGE_CLOCK_MAX of them) and
 * estimates its clock offset; the second attaches it to the output and
 * copies it (merge_copy.c).  What is kept per input between the passes is
 * a few hundred bytes, so memory stays flat in the number and size of the
 * inputs.
 */
#include "builtin.h"
#include "db.h"
#include "json.h" /* strbuf_add_uri_path */
#include "merge.h"
#include "options.h"
#include "recid.h"
#include "recording.h"
#include "strbuf.h"
#include "util.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const merge_usage =
	"usage: agprof merge -o OUT [--clock auto|collectives|steps|none] [--force] RECORDING...\n"
	"\n"
	"Merge the recordings of the workers of one job (agprof run -o 'job-%r.agprof'\n"
	"on each) into OUT: one rank per input (its TF_CONFIG task index when every\n"
	"input has a distinct one, else its place on the command line), in\n"
	"processes.rank and the ranks table; ids and strings re-interned, pids\n"
	"moved when two inputs share one, times shifted to the first input's clock.\n"
	"\n"
	"options:\n";

static const char *const merge_epilogue =
	"\n"
	"--clock auto: inputs from the first input's host keep their times (one\n"
	"clock), the others are aligned on their collectives matched by group and\n"
	"instance keys, or, without keys, on their synchronous steps; collectives:\n"
	"align every input on its keyed collectives (else its steps); steps: align\n"
	"every input on its steps; none: keep every time as recorded.\n"
	"Exit codes: 0 merged, 2 usage error, an unreadable input or inputs of\n"
	"different schema versions, 3 cannot write OUT.\n";

enum { MO_CLOCK = OPT_KEY_BASE };

static const struct opt merge_options[] = {
	{ "output", 'o', "OUT", "the merged recording to write" },
	{ "force", 'f', NULL, "overwrite OUT if it exists" },
	{ "clock", MO_CLOCK, "HOW", "auto (default), collectives, steps or none: see below" },
	OPT_HELP,
	OPT_END,
};

enum clock_mode { CLOCK_AUTO, CLOCK_STEPS, CLOCK_NONE, CLOCK_COLLECTIVES };

struct merge_cmd {
	const char *output;
	int force;
	int clock;
	struct merge_input *in;
	int n;
	char *step_name;     /* the reference's step function */
	int64_t *ref_ends;   /* its first call ends */
	long nref;
	struct merge_keyed *ref_keys;  /* its keyed collectives (merge_clock_keyed) */
	long nref_keys;
};

static int merge_option(void *ctx, int key, const char *value)
{
	static const char *const clocks[] = { "auto", "steps", "none", "collectives", NULL };
	struct merge_cmd *c = ctx;

	if (key == 'o')
		c->output = value;
	else if (key == 'f')
		c->force = 1;
	else if ((c->clock = opt_choice("--clock", value, clocks)) < 0)
		return -1;
	return 0;
}

static void meta_copy(sqlite3 *db, const char *key, char *out, size_t len)
{
	char *v = db_meta_get(db, key);

	snprintf(out, len, "%s", v ? v : "");
	free(v);
}

/* Pass 1 for one input: its facts, and the reference's step ends when it is the first. */
static int read_input(struct merge_cmd *c, int i)
{
	struct merge_input *in = &c->in[i];
	struct recording rec;
	sqlite3_stmt *s;
	char idx[32];

	if (recording_open(&rec, in->path) != 0)
		return -1;
	s = db_prepare(rec.db, "PRAGMA user_version");
	in->version = s && sqlite3_step(s) == SQLITE_ROW ? sqlite3_column_int(s, 0) : -1;
	sqlite3_finalize(s);
	meta_copy(rec.db, "tf_task_type", in->task_type, sizeof(in->task_type));
	meta_copy(rec.db, "tf_task_index", idx, sizeof(idx));
	in->task_index = idx[0] ? strtol(idx, NULL, 10) : -1;
	meta_copy(rec.db, "host", in->host, sizeof(in->host));
	if (i == 0 && c->clock != CLOCK_NONE)
		c->nref = merge_clock_reference(rec.db, &c->step_name, c->ref_ends);
	if (i == 0 && c->clock != CLOCK_NONE && c->clock != CLOCK_STEPS)
		c->nref_keys = merge_clock_keyed(rec.db, c->ref_keys);
	if (i == 0) {
		in->clock_method = "reference";
		in->clock_residual_ns = 0;
		in->clock_matches = c->nref;
	} else if (c->clock == CLOCK_NONE) {
		in->clock_method = "none";
		in->clock_residual_ns = -1;
	} else {
		int same_host = c->clock == CLOCK_AUTO && !strcmp(in->host, c->in[0].host);

		if (c->clock == CLOCK_STEPS || merge_clock_estimate_keyed(rec.db, c->ref_keys, c->nref_keys, same_host, in) == 0)
			merge_clock_estimate(rec.db, c->step_name, c->ref_ends, c->nref, same_host, in);
	}
	recording_close(&rec);
	if (in->version != c->in[0].version)
		return error("cannot merge recordings of different schema versions: '%s' is version %d, '%s' version %d",
			     c->in[0].path, c->in[0].version, in->path, in->version);
	return 0;
}

/* Ranks are the task indices when they name every input once (one task type), else the input order. */
static void assign_ranks(struct merge_cmd *c)
{
	int by_task = 1;

	for (int i = 0; i < c->n && by_task; i++) {
		const struct merge_input *a = &c->in[i];

		by_task = a->task_index >= 0 && a->task_index < c->n && !strcmp(a->task_type, c->in[0].task_type);
		for (int j = 0; j < i && by_task; j++)
			by_task = c->in[j].task_index != a->task_index;
	}
	for (int i = 0; i < c->n; i++)
		c->in[i].rank = by_task ? (int)c->in[i].task_index : i;
}

static int add_rank_row(sqlite3 *db, const struct merge_input *in)
{
	sqlite3_stmt *s = db_prepare(db, "INSERT INTO ranks (rank, source, task_type, task_index, host, pid_shift,"
					 " clock_offset_ns, clock_method, clock_residual_ns, clock_matches)"
					 " VALUES (?, ?, nullif(?, ''), ?, nullif(?, ''), ?, ?, ?, ?, ?)");
	int rc;

	if (!s)
		return -1;
	sqlite3_bind_int(s, 1, in->rank);
	sqlite3_bind_text(s, 2, in->path, -1, SQLITE_STATIC);
	sqlite3_bind_text(s, 3, in->task_type, -1, SQLITE_STATIC);
	if (in->task_index >= 0)
		sqlite3_bind_int64(s, 4, in->task_index);
	sqlite3_bind_text(s, 5, in->host, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s, 6, in->pid_shift);
	sqlite3_bind_int64(s, 7, in->clock_offset_ns);
	sqlite3_bind_text(s, 8, in->clock_method, -1, SQLITE_STATIC);
	if (in->clock_residual_ns >= 0)
		sqlite3_bind_int64(s, 9, in->clock_residual_ns);
	sqlite3_bind_int64(s, 10, in->clock_matches);
	rc = db_step_done(db, s);
	sqlite3_finalize(s);
	return rc;
}

static int uri_attach;  /* SQLite takes URI file names (set before its first use) */

/* Pass 2 for one input: attach it read-only, copy it, detach it. */
static int copy_input(sqlite3 *db, struct merge_input *in, int first)
{
	struct strbuf uri = STRBUF_INIT;
	sqlite3_stmt *s;
	int rc = -1;

	/* a URI, so that the input is opened read-only (nothing written into it) */
	if (uri_attach) {
		strbuf_addstr(&uri, "file:");
		strbuf_add_uri_path(&uri, in->path);
		strbuf_addstr(&uri, "?mode=ro");
	} else {
		strbuf_addstr(&uri, in->path);
	}
	s = db_prepare(db, "ATTACH ? AS src");
	if (s && !strbuf_failed(&uri)) {
		sqlite3_bind_text(s, 1, uri.buf, -1, SQLITE_STATIC);
		if (db_step_quiet(db, s) != 0)
			error("cannot read '%s': %s", in->path, sqlite3_errmsg(db));
		else
			rc = merge_copy(db, in);
		if (rc == 0 && (add_rank_row(db, in) != 0 ||
				(first && db_exec(db, "INSERT OR REPLACE INTO main.meta SELECT key, value FROM src.meta"
						      " WHERE key IS NOT NULL") != 0)))
			rc = -2;
	}
	sqlite3_finalize(s);
	strbuf_release(&uri);
	if (sqlite3_exec(db, "DETACH src", NULL, NULL, NULL) != SQLITE_OK && rc == 0)
		rc = error("cannot detach '%s': %s", in->path, sqlite3_errmsg(db));
	return rc;
}

/*
 * The merged recording's meta: the first input's, as the reference, with
 * the session span over every rank and the facts of the merge; the
 * per-input facts (task, host, clock) are in ranks.  The budget's keys are
 * every rank's (a float sum, clamped: a hostile count must not overflow): a
 * rank past its budget shows in the merged report even
 * when the first did not switch.
 */
static int write_meta(sqlite3 *db, const struct merge_cmd *c)
{
	char n[32], id[RECID_LEN];

	snprintf(n, sizeof(n), "%d", c->n);
	/* a new recording: its own id, not the first input's (docs/fleet.md) */
	if (recid_new(id) != 0)
		id[0] = '\0';
	return db_meta_set_int(db, "schema_version", AGPROF_SCHEMA_VERSION) || db_meta_set(db, "merged_ranks", n) ||
	       db_meta_set(db, "recording_id", id[0] ? id : NULL) ||
	       db_meta_set(db, "clock_step_function", c->step_name) ||
	       db_exec(db, "INSERT OR REPLACE INTO meta SELECT 'start_ns', min(start_ns) FROM processes;"
			   "INSERT OR REPLACE INTO meta SELECT 'end_ns', max(end_ns) FROM processes;"
			   "DELETE FROM meta WHERE key IN ('tf_task_index', 'tf_task_type');"
			   "INSERT OR REPLACE INTO meta SELECT 'clock_residual_ns', max(clock_residual_ns) FROM ranks;"
			   "INSERT OR REPLACE INTO meta SELECT 'aggregated_eager_ops', CAST(min(total(count), 9e18) AS INTEGER)"
			   " FROM eager_op_buckets"
			   " GROUP BY NULL;"
			   "INSERT OR REPLACE INTO meta SELECT 'aggregated_calls', CAST(min(total(count), 9e18) AS INTEGER)"
			   " FROM function_call_buckets GROUP BY NULL;"
			   "INSERT OR REPLACE INTO meta SELECT 'aggregated_blackbox_execs', CAST(min(total(count), 9e18) AS INTEGER)"
			   " FROM blackbox_buckets GROUP BY NULL;"
			   "INSERT OR REPLACE INTO meta SELECT 'aggregate_from_ns', min(start_ns) FROM (SELECT start_ns FROM"
			   " eager_op_buckets UNION ALL SELECT start_ns FROM function_call_buckets UNION ALL SELECT start_ns"
			   " FROM blackbox_buckets) GROUP BY NULL;"
			   "INSERT OR IGNORE INTO meta SELECT 'aggregate_reason', 'a rank reached its budget (its recording says which)'"
			   " WHERE EXISTS (SELECT 1 FROM eager_op_buckets) OR EXISTS (SELECT 1 FROM function_call_buckets)"
			   " OR EXISTS (SELECT 1 FROM blackbox_buckets);") ? -1 : 0;
}

/* Create OUT, copy every input into it, index it; an exit code. */
static int merge_all(struct merge_cmd *c)
{
	char err[512];
	sqlite3 *db;
	int rc = 0;

	if (c->force)
		db_remove(c->output);
	if (db_create_recording(c->output, &db, err, sizeof(err)) != 0) {
		error("%s", err);
		db_remove(c->output);
		return EXIT_INTERNAL;
	}
	sqlite3_db_config(db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);  /* the inputs' schemas are not ours */
	if (merge_check_table_list(db) != 0)
		rc = EXIT_INTERNAL;
	for (int i = 0; i < c->n && !rc; i++) {
		int copied = copy_input(db, &c->in[i], i == 0);

		rc = copied == 0 ? 0 : copied == -2 ? EXIT_INTERNAL : EXIT_USAGE;
	}
	if (!rc && (write_meta(db, c) != 0 || db_create_indexes(db) != 0 || db_create_late_indexes(db) != 0))
		rc = EXIT_INTERNAL;
	/* write failures are kept quiet where they happen (db.h): said here, once */
	if (rc == EXIT_INTERNAL && merge_write_error(db))
		error("cannot write '%s': %s", c->output, merge_write_error(db));
	if (sqlite3_close(db) != SQLITE_OK && !rc) {
		error("cannot close '%s'", c->output);
		rc = EXIT_INTERNAL;
	}
	if (rc)
		db_remove(c->output);
	return rc;
}

/* 1 when a and b name one existing file (--force must never delete an input). */
static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int cmd_merge(int argc, char **argv)
{
	struct merge_cmd c = { 0 };
	struct opt_cmd cmd = { "merge", merge_usage, merge_epilogue, 0, { { merge_options, merge_option, &c } } };
	int first, rc = 0;

	uri_attach = sqlite3_config(SQLITE_CONFIG_URI, 1) == SQLITE_OK;
	signal(SIGXFSZ, SIG_IGN);  /* past a file size limit a write fails (EFBIG): exit 3, not a signal */
	first = opt_parse(&cmd, argc, argv);
	if (first < 0)
		return first == OPT_DONE ? EXIT_OK : EXIT_USAGE;
	if (!c.output || first >= argc) {
		error(!c.output ? "no output given (-o OUT); see 'agprof merge --help'"
				: "no recording to merge; see 'agprof merge --help'");
		return EXIT_USAGE;
	}
	if (!c.force && access(c.output, F_OK) == 0) {
		error("'%s' exists; use --force to overwrite it", c.output);
		return EXIT_USAGE;
	}
	c.n = argc - first;
	c.in = calloc((size_t)c.n, sizeof(*c.in));
	c.ref_ends = malloc(MERGE_CLOCK_MAX * sizeof(*c.ref_ends));
	c.ref_keys = malloc(MERGE_CLOCK_MAX * sizeof(*c.ref_keys));
	if (!c.in || !c.ref_ends || !c.ref_keys) {
		error("out of memory");
		rc = EXIT_INTERNAL;
	}
	for (int i = 0; i < c.n && !rc; i++) {
		c.in[i].path = argv[first + i];
		if (same_file(c.in[i].path, c.output))
			error("'%s' is both an input and the output", c.output);
		if (same_file(c.in[i].path, c.output) || read_input(&c, i) != 0)
			rc = EXIT_USAGE;
	}
	if (!rc) {
		assign_ranks(&c);
		rc = merge_all(&c);
	}
	free(c.in);
	free(c.ref_ends);
	free(c.ref_keys);
	free(c.step_name);
	return rc;
}
