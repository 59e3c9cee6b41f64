/*
 * run_finish.c - the recording's end: the last drain, the links only the
 * whole recording tells (links.c), meta, and the WAL folded back into one
 * file.
 */
#include "run_writer_int.h"
#include "parse_source.h"
#include "links.h"
#include "shm_guard.h"
#include "srcfile.h"
#include "tfconfig.h"
#include "trust.h"
#include "util.h"
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Kernels a stream's threads did not record (kept apart: they never cost an exact count). */
static void count_dropped_kernels(struct run_writer *w, struct stream *s)
{
	uint64_t d = 0, v;
	sqlite3_stmt *st;

	for (uint32_t t = 0; t < AGP_MAX_THREADS && !s->damaged; t++)
		if (SHM_LOAD(&s->shm->threads[t].dropped_kernels, &v) == 0)
			d = d + v < d ? UINT64_MAX : d + v;
	if (d > INT64_MAX)
		d = INT64_MAX;
	if (!d || !(st = db_prepare(w->db, "UPDATE processes SET dropped_kernels = dropped_kernels + ? WHERE pid = ?")))
		return;
	sqlite3_bind_int64(st, 1, (int64_t)d);
	sqlite3_bind_int(st, 2, s->pid);
	writer_step(w, st);
	sqlite3_finalize(st);
	w->totals.dropped_kernels = w->totals.dropped_kernels + d < d ? UINT64_MAX : w->totals.dropped_kernels + d;
}

/* The caps a hostile or huge workload reached (docs/collector.md, "Caps"): in meta.incomplete. */
static void note_caps(struct run_writer *w, uint64_t no_slot, size_t processes)
{
	if (no_slot)
		writer_note(w, "%llu events of threads that got no buffer were not recorded (%zu process%s past "
			    "%d threads at once, or the buffer folder full)", (unsigned long long)no_slot, processes,
			    processes == 1 ? "" : "es", AGP_MAX_THREADS);
	if (w->streams_refused)
		writer_note(w, "%zu processes past the first %d were not recorded", w->streams_refused,
			    WRITER_MAX_STREAMS);
}

/* Drain every stream a last time and store the events each lost; their sum. */
static uint64_t drain_all_and_count_drops(struct run_writer *w)
{
	uint64_t dropped = 0, no_slot = 0;
	size_t short_of_slots = 0;
	sqlite3_stmt *st;

	writer_scan_streams(w);
	for (size_t i = 0; i < w->nstreams; i++) {
		struct stream *s = w->streams[i];
		uint64_t d = 0, v;

		writer_drain_stream(w, s);
		if (!s->damaged && SHM_LOAD(&s->shm->dropped_no_slot, &v) == 0 && v) {
			d = v;
			no_slot = no_slot + v < no_slot ? UINT64_MAX : no_slot + v;
			short_of_slots++;
		}
		for (uint32_t t = 0; t < AGP_MAX_THREADS && !s->damaged; t++)
			if (SHM_LOAD(&s->shm->threads[t].dropped, &v) == 0)
				d = d + v < d ? UINT64_MAX : d + v;  /* the workload's numbers: saturate */
		if (d > INT64_MAX)
			d = INT64_MAX;
		writer_read_kernel_totals(w, s);
		count_dropped_kernels(w, s);
		if (d && (st = db_prepare(w->db, "UPDATE processes SET dropped_events = dropped_events + ? WHERE pid = ?"))) {
			sqlite3_bind_int64(st, 1, (int64_t)d);
			sqlite3_bind_int(st, 2, s->pid);
			writer_step(w, st);
			sqlite3_finalize(st);
		}
		dropped = dropped + d < dropped ? INT64_MAX : dropped + d;
	}
	note_caps(w, no_slot, short_of_slots);
	return dropped > INT64_MAX ? INT64_MAX : dropped;
}

/* Calls after a process's kernel budget ran out hold counts only: not detailed. */
static int unmark_refused_calls(struct run_writer *w)
{
	sqlite3_stmt *st = db_prepare(w->db, "UPDATE function_calls SET kernel_detail = 0 WHERE id IN"
				      " (SELECT call_id FROM temp.call_seq WHERE pid = ? AND seq > ?)");
	int rc = st ? 0 : -1;

	for (size_t i = 0; st && i < w->nstreams; i++) {
		if (!w->streams[i]->kernel_capped)
			continue;
		sqlite3_bind_int(st, 1, w->streams[i]->pid);
		sqlite3_bind_int64(st, 2, w->streams[i]->kernel_seq_cap);
		writer_step(w, st);
		sqlite3_reset(st);
	}
	sqlite3_finalize(st);
	if (w->kernels_refused)
		db_meta_set_int(w->db, "kernels_refused", (int64_t)(w->kernels_refused > INT64_MAX ? INT64_MAX : w->kernels_refused));
	if (w->kernels_capped_ns)
		db_meta_set_int(w->db, "kernels_capped_ns", (int64_t)(w->kernels_capped_ns & INT64_MAX));
	if (w->kernel_cut_calls)
		db_meta_set_int(w->db, "kernel_cut_calls", (int64_t)(w->kernel_cut_calls & INT64_MAX));
	return rc;
}

/* The links between rows that only the whole recording tells; 0 or -1. */
static int link_rows(struct run_writer *w, const struct run_session *sess)
{
	sqlite3_stmt *st;
	int rc = 0;

	if (links_calls(w->db, w->kernel_cut_calls != 0) != 0 || unmark_refused_calls(w) != 0 ||
	    links_graph(w->db) != 0 || db_create_late_indexes(w->db) != 0)
		rc = -1;
	/* The main process's status is the one waitpid saw (none when attached: nobody waited for it). */
	if ((st = db_prepare(w->db, "UPDATE processes SET exit_status = ?, end_ns = coalesce(end_ns, ?) WHERE pid = ?"))) {
		if (sess->attached)
			sqlite3_bind_null(st, 1);
		else
			sqlite3_bind_int(st, 1, sess->exit_status);
		sqlite3_bind_int64(st, 2, (int64_t)sess->end_ns);
		sqlite3_bind_int(st, 3, sess->main_pid);
		writer_step(w, st);
		sqlite3_finalize(st);
	}
	return rc;
}

static const char meta_from_processes_sql[] =
	"INSERT OR REPLACE INTO meta SELECT 'python_version', python_version FROM processes"
	" WHERE python_version IS NOT NULL ORDER BY start_ns LIMIT 1;"
	"INSERT OR REPLACE INTO meta SELECT 'tf_version', tf_version FROM processes"
	" WHERE tf_version IS NOT NULL ORDER BY start_ns LIMIT 1;"
	"INSERT OR REPLACE INTO meta VALUES ('tf_status', coalesce("
	" (SELECT 'hooked' FROM processes WHERE tf_status = 'hooked' LIMIT 1),"
	" (SELECT 'mismatch' FROM processes WHERE tf_status = 'mismatch' LIMIT 1), 'not-loaded'));"
	"INSERT OR REPLACE INTO meta VALUES ('gpu_status', coalesce("
	" (SELECT 'on' FROM processes WHERE gpu_status = 'on' LIMIT 1), 'off'));"
	"INSERT OR REPLACE INTO meta SELECT 'gpu_detail', gpu_detail FROM processes"
	" WHERE gpu_detail IS NOT NULL ORDER BY start_ns LIMIT 1;";

/* meta.command_mac: proof that this user's agprof recorded this command here (trust.h); none without a key. */
static void write_command_mac(sqlite3 *db, const char *argv_json, const char *cwd)
{
	char mac[COMMAND_MAC_HEX];

	if (!command_mac(argv_json, cwd, mac))
		db_meta_set(db, "command_mac", mac);
}

/* The meta table: the run as the launcher saw it. */
static void write_meta(struct run_writer *w, const struct run_session *sess, uint64_t dropped)
{
	struct strbuf argv = STRBUF_INIT;
	char host[256] = "";

	strbuf_add_json_argv(&argv, sess->argv);
	gethostname(host, sizeof(host) - 1);
	db_meta_set(w->db, "agprof_version", AGPROF_VERSION);
	db_meta_set(w->db, "argv", strbuf_failed(&argv) ? "[]" : argv.buf);
	db_meta_set(w->db, "cwd", sess->cwd);
	write_command_mac(w->db, strbuf_failed(&argv) ? "[]" : argv.buf, sess->cwd);
	srcfile_record(w->db, sess->cwd); /* best effort: a missing fingerprint only loses "file changed" */
	code_facts_record(w->db, sess->cwd, w->python_exe); /* best effort too: without facts, advice as before */
	db_meta_set(w->db, "host", host);
	db_meta_set_int(w->db, "start_wall_ns", (int64_t)sess->start_wall_ns);
	db_meta_set_int(w->db, "start_ns", (int64_t)sess->start_ns);
	db_meta_set_int(w->db, "end_ns", (int64_t)sess->end_ns);
	/* an attached recording ends before the program, or sees it end without its status: none */
	if (!sess->attached) {
		db_meta_set_int(w->db, "exit_status", sess->exit_status);
		db_meta_set_int(w->db, "exit_signal", sess->exit_signal);
	} else {
		db_meta_set(w->db, "attached", sess->attached);
	}
	if (sess->tf) {
		db_meta_set(w->db, "tf_task_type", sess->tf->task_type[0] ? sess->tf->task_type : NULL);
		if (sess->tf->task_index >= 0)
			db_meta_set_int(w->db, "tf_task_index", sess->tf->task_index);
		db_meta_set_int(w->db, "tf_cluster_size", sess->tf->cluster_size);
	}
	db_meta_set_int(w->db, "dropped_events", (int64_t)dropped);
	if (w->notes.len)
		db_meta_set(w->db, "incomplete", w->notes.buf);
	db_exec(w->db, meta_from_processes_sql);
	strbuf_release(&argv);
}

/* The capture windows (capture_log.h) and what made them: meta.capture, meta.capture_calls. */
static void write_capture(struct run_writer *w, const struct run_session *sess)
{
	if (!w->capture.used)
		return;
	if (capture_log_write(&w->capture, w->db, sess->end_ns) != 0)
		writer_note(w, "the capture windows could not be stored");
	db_meta_set(w->db, "capture", w->capture_desc ? w->capture_desc : "agprof.start/stop");
	db_meta_set_int(w->db, "capture_calls", w->capture.calls);
	db_meta_set_int(w->db, "capture_windows", w->capture.windows);
	w->totals.capture_used = 1;
	w->totals.capture_windows = w->capture.windows;
	w->totals.capture_calls = w->capture.calls;
}

/* After a write failure: keep what was committed, write nothing more. */
static void keep_committed(struct run_writer *w)
{
	if (!sqlite3_get_autocommit(w->db))
		sqlite3_exec(w->db, "ROLLBACK", NULL, NULL, NULL);
	w->committed.dropped = w->totals.dropped;
	w->committed.processes = w->totals.processes;
	w->committed.damaged = w->totals.damaged;
	/*
	 * No checkpoint: on a full disk it would stop half-way, leaving a
	 * main file whose header no longer matches its size.  The main file
	 * stays as the last checkpoint left it and the WAL beside it holds
	 * the committed rows; any SQLite reader joins the two.
	 */
	sqlite3_db_config(w->db, SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE, 1, NULL);
}

/* Close the database and free w; 0 or -1. */
int writer_release(struct run_writer *w)
{
	int rc = 0;

	checkpointer_stop(w->ckpt);
	w->ckpt = NULL;
	strbuf_release(&w->notes);
	capture_log_release(&w->capture);
	eager_buckets_release(&w->buckets);
	eager_buckets_release(&w->call_buckets);
	eager_buckets_release(&w->bb_buckets);
	eager_keys_release(&w->keys);
	eager_blocks_release(&w->blocks);
	cpu_wait_release(&w->cpu);
	free(w->capture_desc);
	free(w->rec);
	free(w->lost_why);
	db_forget_write_failure(w->db);
	string_table_release(&w->st);
	for (sqlite3_stmt *p = sqlite3_next_stmt(w->db, NULL); p; p = sqlite3_next_stmt(w->db, NULL))
		sqlite3_finalize(p);
	if (sqlite3_close(w->db) != SQLITE_OK)
		rc = -1;
	for (size_t i = 0; i < w->nstreams; i++) {
		if (!w->streams[i]->borrowed)
			munmap(w->streams[i]->shm, AGP_SHM_FILE_BYTES);
		if (w->streams[i]->side_fd >= 0)
			close(w->streams[i]->side_fd);
		free(w->streams[i]->side_buf);
		idmap_release(&w->streams[i]->strings);
		idmap_release(&w->streams[i]->sites);
		idmap_release(&w->streams[i]->kernel_nodes);
		idmap_release(&w->streams[i]->fn_rows);
		free(w->streams[i]);
	}
	free(w->streams);
	free(w->shm_dir);
	free(w);
	return rc;
}

/* Every open bucket written; when and why the switch happened (meta.aggregate_*). */
static void finish_budget(struct run_writer *w)
{
	eager_buckets_close(&w->buckets, INT64_MAX);
	eager_buckets_close(&w->call_buckets, INT64_MAX);
	eager_buckets_close(&w->bb_buckets, INT64_MAX);
	writer_count_aggregated(w);
	if (w->buckets.refused + w->call_buckets.refused + w->bb_buckets.refused)
		writer_note(w, "%lld aggregated eager ops, %lld graph calls, %lld black-box runs could not be stored",
			 (long long)w->buckets.refused, (long long)w->call_buckets.refused,
			 (long long)w->bb_buckets.refused);
	if (w->budget.max_events)
		db_meta_set_int(w->db, "max_events", (int64_t)w->budget.max_events);
	if (w->budget.max_bytes)
		db_meta_set_int(w->db, "max_size_bytes", (int64_t)w->budget.max_bytes);
	if (!w->aggregating)
		return;
	db_meta_set(w->db, "aggregate_reason", w->aggregate_why);
	if (w->aggregate_from_ns)
		db_meta_set_int(w->db, "aggregate_from_ns", w->aggregate_from_ns);
	db_meta_set_int(w->db, "aggregated_eager_ops", w->buckets.stored);
	db_meta_set_int(w->db, "aggregated_calls", w->call_buckets.stored);
	db_meta_set_int(w->db, "aggregated_blackbox_execs", w->bb_buckets.stored);
}

/* AGPROF_TIMING=1: how long each step of the finish took (bench/long_run.py). */
static void finish_timing(const char *step, uint64_t *t)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	if (getenv("AGPROF_TIMING"))
		fprintf(stderr, "agprof: timing: finish %-12s %.3f s\n", step, (double)(now - *t) / 1e9);
	*t = now;
}

/*
 * AGPROF_TIMING=statements: each statement of the finish that took 1 ms or
 * more, its first words on one line (the schema's statements open with
 * comment lines).
 */
static int finish_statement_timing(unsigned type, void *ctx, void *stmt, void *ns)
{
	const char *sql = sqlite3_sql(stmt);
	int64_t took = *(int64_t *)ns;
	size_t len;

	(void)ctx;
	if (type != SQLITE_TRACE_PROFILE || took < 1000000)
		return 0;
	while (sql && (sql += strspn(sql, " \t\n"), !strncmp(sql, "--", 2)))
		sql += strcspn(sql, "\n");
	len = sql ? strcspn(sql, "\n") : 0;
	fprintf(stderr, "agprof: timing: statement %7.3f s %.*s\n", (double)took / 1e9, (int)(len < 110 ? len : 110),
		sql ? sql : "?");
	return 0;
}

int run_writer_finish(struct run_writer *w, const struct run_session *sess, struct run_totals *totals)
{
	uint64_t t = clock_ns(CLOCK_MONOTONIC), cpu = clock_ns(CLOCK_PROCESS_CPUTIME_ID);
	const char *timing = getenv("AGPROF_TIMING");
	int rc = 0;

	if (timing && !strcmp(timing, "statements"))
		sqlite3_trace_v2(w->db, SQLITE_TRACE_PROFILE, finish_statement_timing, NULL);

	checkpointer_stop(w->ckpt);  /* the final checkpoint below is the writer's (or none, on a write failure) */
	w->ckpt = NULL;
	if (!db_write_failure(w->db)) {
		cpu_wait_tick(w, t, 1);  /* an in-process recording's last interval (a launcher's child has ended) */
		w->totals.dropped = drain_all_and_count_drops(w);
		writer_flush_batches(w);
		finish_budget(w);
		if (run_writer_stopping)
			writer_note(w, "agprof was interrupted before it had read every buffer");
		if (w->lost_rows)
			writer_note(w, "%llu rows could not be stored (%s)", (unsigned long long)w->lost_rows,
				 w->lost_why ? w->lost_why : "?");
		finish_timing("drain", &t);
		rc = link_rows(w, sess);
		finish_timing("links", &t);
		write_capture(w, sess);
		write_meta(w, sess, w->totals.dropped);
		if (db_exec(w->db, "COMMIT") != 0)
			rc = -1;
		else
			w->committed = w->totals;
		finish_timing("meta", &t);
	}
	if (db_write_failure(w->db)) {
		rc = -1;
		keep_committed(w);
	} else {
		/* One self-contained file: fold the WAL back in. */
		db_exec(w->db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode=DELETE;");
		finish_timing("checkpoint", &t);
	}
	/* the launcher's CPU in it: on a loaded machine the steps' wall above is mostly waiting for a CPU */
	if (timing)
		fprintf(stderr, "agprof: timing: finish %-12s %.3f s\n", "cpu",
			(double)(clock_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu) / 1e9);
	if (totals) {
		*totals = w->committed;
		totals->error = db_write_failure(w->db) ? sqlite3_errstr(db_write_failure(w->db)) : NULL;
		snprintf(totals->note, sizeof(totals->note), "%s", w->notes.len ? w->notes.buf : "");
	}
	return writer_release(w) || rc ? -1 : 0;
}
