/*
 * test-gpu-analyzer.c - the GPU part of the model, its metric sources and
 * the GPU rules, on recordings written here with known numbers.
 *
 * The dispatch-bound recording: a 10 ms run; 100 eager MatMul ops 50 us
 * apart (train.py:42, step), each launching through cudaLaunchKernel
 * (10..15 us into the op) one 2 us kernel k_small 30 us into the op; one
 * synchronous 1 MB DtoH cudaMemcpy at 7 ms; ten cudaStreamSynchronize
 * calls issued from MatMul ops at 8.0..8.9 ms (the first with a nested
 * cuStreamSynchronize); one 400 us kernel k_big at 9.5 ms.  Every expected
 * number below is worked out from those.
 */
#include <criterion/criterion.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "gpu.h"
#include "model.h"
#include "recording.h"
#include "rules.h"

static char path[256];

/*
 * Pull gpu_metrics.o out of the analyzer's static library whatever kind of
 * reference model.c holds (a weak one would not; docs/gpu.md, "Integration").
 */
int (*const keep_gpu_metrics)(struct model *) = gpu_metrics_register;

static void exec_sql(sqlite3 *db, const char *sql)
{
	char *err = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		cr_assert_fail("%s in '%s'", err, sql);
}

static sqlite3 *new_recording(void)
{
	char err[256];
	sqlite3 *db;

	snprintf(path, sizeof(path), "/tmp/agprof-test-gpu-%d.agprof", (int)getpid());
	unlink(path);
	cr_assert_eq(db_create_recording(path, &db, err, sizeof(err)), 0, "%s", err);
	exec_sql(db, "INSERT INTO meta VALUES ('start_ns', '0'), ('end_ns', '10000000'),"
		     " ('gpu_status', 'on'), ('gpu_detail', 'CUPTI 130001'), ('tf_status', 'hooked');"
		     "INSERT INTO processes (pid, start_ns, end_ns, tf_status, gpu_status, gpu_detail)"
		     " VALUES (1, 0, 10000000, 'hooked', 'on', 'CUPTI 130001');");
	return db;
}

static void add(sqlite3 *db, const char *fmt, ...)
{
	char sql[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(sql, sizeof(sql), fmt, ap);
	va_end(ap);
	exec_sql(db, sql);
}

static void write_dispatch_bound(void)
{
	sqlite3 *db = new_recording();

	exec_sql(db, "BEGIN;"
		     "INSERT INTO strings VALUES (1, 'k_small'), (2, 'k_big'), (3, 'cudaLaunchKernel'),"
		     " (4, 'MatMul'), (5, 'cudaMemcpy'), (6, 'cudaStreamSynchronize'), (7, 'train.py'),"
		     " (8, 'step'), (9, 'cudaMemcpyAsync'), (10, 'cuStreamSynchronize');"
		     "INSERT INTO callsites(id, file_id, line, func_id) VALUES (1, 7, 42, 8);");
	for (int i = 0; i < 100; i++) {
		long s = 1000000 + 50000L * i;
		add(db, "INSERT INTO eager_ops (id, pid, tid, start_ns, end_ns, op_id, callsite_id)"
			" VALUES (%d, 1, 1, %ld, %ld, 4, 1)", i + 1, s, s + 40000);
		add(db, "INSERT INTO gpu_external_ids VALUES (1, %d, 'eager_ops', %d)", i + 1, i + 1);
		add(db, "INSERT INTO gpu_api_calls (pid, tid, api, name_id, start_ns, end_ns, correlation_id, external_id)"
			" VALUES (1, 1, 'runtime', 3, %ld, %ld, %d, %d)", s + 10000, s + 15000, i + 1, i + 1);
		add(db, "INSERT INTO gpu_activity (pid, kind, name_id, device, stream, start_ns, end_ns, correlation_id)"
			" VALUES (1, 'kernel', 1, 0, 7, %ld, %ld, %d)", s + 30000, s + 32000, i + 1);
	}
	/* The synchronous copy, and an async one outside the span that must not count as sync. */
	add(db, "INSERT INTO gpu_api_calls (pid, tid, api, name_id, start_ns, end_ns, correlation_id, external_id)"
		" VALUES (1, 1, 'runtime', 5, 7000000, 7100000, 1000, 0)");
	add(db, "INSERT INTO gpu_activity (pid, kind, device, stream, start_ns, end_ns, correlation_id, bytes, copy_kind)"
		" VALUES (1, 'memcpy', 0, 8, 7050000, 7060000, 1000, 1000000, 'DtoH')");
	add(db, "INSERT INTO gpu_api_calls (pid, tid, api, name_id, start_ns, end_ns, correlation_id, external_id)"
		" VALUES (1, 1, 'runtime', 9, 9950000, 9951000, 1001, 0)");
	for (int k = 0; k < 10; k++) {
		long s = 8000000 + 100000L * k;
		add(db, "INSERT INTO gpu_api_calls (pid, tid, api, name_id, start_ns, end_ns, correlation_id, external_id)"
			" VALUES (1, 1, 'runtime', 6, %ld, %ld, %d, %d)", s, s + 50000, 3000 + k, k + 1);
	}
	add(db, "INSERT INTO gpu_api_calls (pid, tid, api, name_id, start_ns, end_ns, correlation_id, external_id)"
		" VALUES (1, 1, 'driver', 10, 8000010, 8049990, 4000, 1)");
	add(db, "INSERT INTO gpu_api_calls (pid, tid, api, name_id, start_ns, end_ns, correlation_id, external_id)"
		" VALUES (1, 1, 'runtime', 3, 9400000, 9405000, 2000, 0)");
	add(db, "INSERT INTO gpu_activity (pid, kind, name_id, device, stream, start_ns, end_ns, correlation_id)"
		" VALUES (1, 'kernel', 2, 0, 7, 9500000, 9900000, 2000)");
	exec_sql(db, "COMMIT");
	sqlite3_close(db);
}

static void teardown(void)
{
	char p[300];

	unlink(path);
	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
}

TestSuite(gpu_model, .fini = teardown);

static void load(struct recording *rec, struct gpu_model *g)
{
	cr_assert_eq(recording_open(rec, path), 0);
	cr_assert_eq(gpu_model_load(g, rec, NULL), 0);
}

Test(gpu_model, totals_busy_and_idle)
{
	struct recording rec;
	struct gpu_model g;

	write_dispatch_bound();
	load(&rec, &g);
	cr_assert_eq(g.has_data, 1);
	cr_assert_str_eq(g.status, "on");
	cr_assert_eq(g.kernels, 101);
	cr_assert_eq(g.kernel_ns, 600000);
	cr_assert_eq(g.copies, 1);
	cr_assert_eq(g.copy_bytes, 1000000);
	cr_assert_eq(g.first_ns, 1030000);
	cr_assert_eq(g.last_ns, 9900000);
	cr_assert_eq(g.busy_ns, 610000);
	cr_assert_eq(g.idle_ns, 8260000);
	cr_assert_eq(g.gaps, 101);
	/* Each short gap: 8 us of the op before it, 30 us of the next; the 1.07 ms gap:
	 * the end of the last op (8 us) and the cudaMemcpy call (50 us). */
	cr_assert_eq(g.host_in_idle_ns, 99 * 38000 + 58000 + 545000);
	cr_assert_eq(g.idle_gap_p50_ns, 48000);
	cr_assert_eq(g.correlated, 102, "every kernel and copy has its launching call");
	cr_assert_float_eq(gpu_idle_share(&g), 8260000.0 / 8870000.0, 1e-9);
	gpu_model_release(&g);
	recording_close(&rec);
}

Test(gpu_model, kernels_and_launches)
{
	struct recording rec;
	struct gpu_model g;

	write_dispatch_bound();
	load(&rec, &g);
	cr_assert_eq(g.nkernel_stats, 2);
	const struct gpu_kernel_stat *big = &g.kernel_stats[0], *small = &g.kernel_stats[1];
	cr_assert_str_eq(big->name, "k_big", "largest total first");
	cr_assert_eq(big->total_ns, 400000);
	cr_assert_float_eq(big->share, 2.0 / 3.0, 1e-9);
	cr_assert_eq(big->latency_ns, 100000);
	cr_assert_eq(big->short_count, 0);
	cr_assert_str_eq(small->name, "k_small");
	cr_assert_eq(small->count, 100);
	cr_assert_float_eq(small->mean_ns, 2000.0, 1e-9);
	cr_assert_eq(small->min_ns, 2000);
	cr_assert_eq(small->launched, 100);
	cr_assert_eq(small->launch_ns, 500000);
	cr_assert_eq(small->latency_ns, 2000000);
	cr_assert_eq(small->short_count, 100);
	cr_assert_eq(g.short_kernels, 100);
	cr_assert_eq(g.latency.count, 101);
	cr_assert_eq(g.latency.p50_ns, 20000);
	cr_assert_eq(g.latency.p95_ns, 20000);
	cr_assert_eq(g.latency.max_ns, 100000);
	cr_assert_float_eq(g.latency.mean_ns, 2100000.0 / 101, 1e-6);
	/* Kernels by host op, through the external ids. */
	cr_assert_eq(g.nop_stats, 1);
	cr_assert_str_eq(g.op_stats[0].op, "MatMul");
	cr_assert_str_eq(g.op_stats[0].table, "eager_ops");
	cr_assert_eq(g.op_stats[0].kernels, 100);
	cr_assert_eq(g.op_stats[0].kernel_ns, 200000);
	gpu_model_release(&g);
	recording_close(&rec);
}

Test(gpu_model, copies_streams_buckets)
{
	struct recording rec;
	struct gpu_model g;

	write_dispatch_bound();
	load(&rec, &g);
	cr_assert_eq(g.ncopy_stats, 1);
	cr_assert_str_eq(g.copy_stats[0].kind, "DtoH");
	cr_assert_eq(g.copy_stats[0].sync_count, 1);
	cr_assert_eq(g.copy_stats[0].sync_ns, 100000);
	cr_assert_float_eq(g.copy_stats[0].gbps, 100.0, 1e-9);
	cr_assert_eq(g.nstreams, 2);
	cr_assert_eq(g.streams[0].stream, 7);
	cr_assert_eq(g.streams[0].kernels, 101);
	cr_assert_eq(g.streams[1].stream, 8);
	cr_assert_eq(g.streams[1].copies, 1);
	cr_assert_eq(g.nbuckets, 100);
	cr_assert_eq(g.bucket_ns, 100000);
	cr_assert_float_eq(g.buckets[0].util, 0.0, 1e-9);
	cr_assert_float_eq(g.buckets[10].util, 0.04, 1e-9);
	cr_assert_float_eq(g.buckets[95].util, 1.0, 1e-9);
	cr_assert_float_eq(g.buckets[99].util, 0.0, 1e-9);
	gpu_model_release(&g);
	recording_close(&rec);
}

Test(gpu_model, gaps_with_host_activity)
{
	struct recording rec;
	struct gpu_model g;

	write_dispatch_bound();
	load(&rec, &g);
	cr_assert_eq(g.ntop_gaps, 10);
	const struct gpu_gap *p = &g.top_gaps[0];
	cr_assert_eq(p->start_ns, 7060000, "longest first");
	cr_assert_eq(p->end_ns, 9500000);
	cr_assert_eq(p->host_ns, 545000);
	cr_assert_eq(p->eager_ops, 0);
	cr_assert_eq(p->api_calls, 13);
	cr_assert_str_eq(p->top_api, "cudaStreamSynchronize");
	p = &g.top_gaps[1];
	cr_assert_eq(p->end_ns - p->start_ns, 1068000);
	cr_assert_str_eq(p->top_api, "cudaMemcpy");
	cr_assert_eq(p->host_ns, 58000);
	cr_assert_eq(p->eager_ops, 1);
	p = &g.top_gaps[2];
	cr_assert_eq(p->start_ns, 1032000, "ties: earliest first");
	cr_assert_eq(p->end_ns, 1080000);
	cr_assert_eq(p->eager_ops, 2);
	cr_assert_eq(p->api_calls, 1);
	cr_assert_eq(p->host_ns, 38000);
	cr_assert_str_eq(p->top_op, "MatMul");
	cr_assert_str_eq(p->site.file, "train.py");
	cr_assert_eq(p->site.line, 42);
	cr_assert_str_eq(p->site.func, "step");
	gpu_model_release(&g);
	recording_close(&rec);
}

Test(gpu_model, synchronous_calls)
{
	struct recording rec;
	struct gpu_model g;

	write_dispatch_bound();
	load(&rec, &g);
	cr_assert_eq(g.nsync_stats, 2, "the nested driver call and the async copy do not count");
	const struct gpu_sync_stat *y = &g.sync_stats[0];
	cr_assert_str_eq(y->api, "cudaStreamSynchronize");
	cr_assert_eq(y->is_copy, 0);
	cr_assert_eq(y->count, 10);
	cr_assert_eq(y->total_ns, 500000);
	cr_assert_eq(y->with_op, 10);
	cr_assert_str_eq(y->top_op, "MatMul");
	cr_assert_str_eq(y->site.file, "train.py");
	cr_assert_eq(y->site.line, 42);
	cr_assert_eq(y->first_ns, 8000000);
	cr_assert_eq(y->last_ns, 8950000);
	y = &g.sync_stats[1];
	cr_assert_str_eq(y->api, "cudaMemcpy");
	cr_assert_eq(y->is_copy, 1);
	cr_assert_eq(y->count, 1);
	cr_assert_null(y->top_op);
	gpu_model_release(&g);
	recording_close(&rec);
}

Test(gpu_model, sync_kind_by_name)
{
	cr_assert_eq(gpu_sync_kind("cudaMemcpy"), 1);
	cr_assert_eq(gpu_sync_kind("cudaMemcpy2D"), 1);
	cr_assert_eq(gpu_sync_kind("cuMemcpyDtoH_v2"), 1);
	cr_assert_eq(gpu_sync_kind("cudaMemcpyAsync"), 0);
	cr_assert_eq(gpu_sync_kind("cuMemcpyHtoDAsync_v2"), 0);
	cr_assert_eq(gpu_sync_kind("cudaDeviceSynchronize"), 2);
	cr_assert_eq(gpu_sync_kind("cuCtxSynchronize"), 2);
	cr_assert_eq(gpu_sync_kind("cuStreamSynchronize_ptsz"), 2);
	cr_assert_eq(gpu_sync_kind("cudaLaunchKernel"), 0);
	cr_assert_eq(gpu_sync_kind("cudaStreamSynchronizeX"), 0);
	cr_assert_eq(gpu_sync_kind(NULL), 0);
}

Test(gpu_model, no_gpu_data)
{
	struct recording rec;
	struct gpu_model g;
	sqlite3 *db = new_recording();

	exec_sql(db, "UPDATE processes SET gpu_status = 'off', gpu_detail = 'no CUDA driver (libcuda.so.1 not found)'");
	sqlite3_close(db);
	load(&rec, &g);
	cr_assert_eq(g.has_data, 0);
	cr_assert_str_eq(g.status, "off");
	cr_assert_str_eq(g.detail, "no CUDA driver (libcuda.so.1 not found)");
	cr_assert_eq(g.kernels, 0);
	cr_assert_eq(g.nkernel_stats + g.ntop_gaps + g.nsync_stats, 0);
	cr_assert_float_eq(gpu_idle_share(&g), 0.0, 1e-12);
	gpu_model_release(&g);
	recording_close(&rec);
}

/* ---- through the model, the metric sources and the rules ------------- */

static double num(const struct model *m, const char *source, size_t row, const char *field)
{
	const struct metric_source *s = model_find_source(m, source);
	struct metric_value v;

	cr_assert_not_null(s, "no source '%s'", source);
	cr_assert_eq(s->get(m, s->data, row, field, &v), 0, "%s has no field '%s'", source, field);
	cr_assert_eq(v.type, METRIC_NUM, "%s.%s is not a number", source, field);
	return v.num;
}

static const struct finding *finding(const struct model *m, const char *rule)
{
	for (size_t i = 0; i < m->nfindings; i++)
		if (!strcmp(m->findings[i].rule, rule))
			return &m->findings[i];
	return NULL;
}

static void run_gpu_rules(struct model *m)
{
	static const char *const files[] = { "gpu-idle.rule", "launch-bound.rule", "host-device-sync.rule" };
	const char *dir = getenv("AGPROF_RULES_DIR");
	struct ruleset rs;
	char p[512];

	cr_assert_not_null(dir);
	ruleset_init(&rs);
	for (size_t i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, files[i]);
		cr_assert_eq(ruleset_load_file(&rs, p), 0, "cannot load %s", p);
	}
	rules_run(&rs, m);
	cr_assert_eq(rs.errors, 0);
	ruleset_release(&rs);
}

Test(gpu_model, metric_sources)
{
	struct recording rec;
	struct model m;

	write_dispatch_bound();
	cr_assert_eq(recording_open(&rec, path), 0);
	cr_assert_eq(model_load(&m, &rec), 0);
	cr_assert_eq(gpu_metrics_register(&m), 0);
	cr_assert_eq(num(&m, "gpu", 0, "kernels"), 101);
	cr_assert_float_eq(num(&m, "gpu", 0, "idle_share"), 8260000.0 / 8870000.0, 1e-9);
	cr_assert_float_eq(num(&m, "gpu", 0, "dispatch_share"), 4365000.0 / 8260000.0, 1e-9);
	cr_assert_float_eq(num(&m, "gpu", 0, "short_share"), 100.0 / 101.0, 1e-9);
	cr_assert_float_eq(num(&m, "gpu", 0, "correlated_share"), 1.0, 1e-9);
	cr_assert_eq(num(&m, "gpu_kernels", 1, "launch_excess_ns"), 500000 - 200000);
	cr_assert_float_eq(num(&m, "gpu_syncs", 0, "spread"), 950000.0 / 8870000.0, 1e-9);
	cr_assert_eq(num(&m, "gpu_gaps", 0, "dur_ns"), 2440000);
	model_release(&m);
	recording_close(&rec);
}

Test(gpu_model, rules_on_a_dispatch_bound_run)
{
	struct recording rec;
	struct model m;
	const struct finding *f;

	write_dispatch_bound();
	cr_assert_eq(recording_open(&rec, path), 0);
	cr_assert_eq(model_load(&m, &rec), 0);
	cr_assert_eq(gpu_metrics_register(&m), 0);
	run_gpu_rules(&m);
	f = finding(&m, "gpu-idle");
	cr_assert_not_null(f, "gpu-idle did not fire");
	cr_assert_eq(f->severity, SEV_ERROR, "93%% idle is past error_idle");
	cr_assert_eq(f->cost_ns, 8260000);
	cr_assert(strstr(f->message, "idle 93.1% of its active span"), "message: %s", f->message);
	cr_assert(strstr(f->recommendation, "tf.function"));
	/* 100 launches at 5 us for 2 us kernels: 300 us of excess, under the 1 ms default. */
	cr_assert_null(finding(&m, "launch-bound"));
	/* The syncs span 0.95 ms of an 8.87 ms GPU span: not spread through the run. */
	cr_assert_null(finding(&m, "host-device-sync"));
	model_release(&m);
	recording_close(&rec);
}

Test(gpu_model, rules_thresholds_lowered)
{
	struct recording rec;
	struct model m;
	struct ruleset rs;
	const char *dir = getenv("AGPROF_RULES_DIR");
	const struct finding *f;
	char p[512];

	write_dispatch_bound();
	cr_assert_eq(recording_open(&rec, path), 0);
	cr_assert_eq(model_load(&m, &rec), 0);
	cr_assert_eq(gpu_metrics_register(&m), 0);
	ruleset_init(&rs);
	snprintf(p, sizeof(p), "%s/launch-bound.rule", dir);
	cr_assert_eq(ruleset_load_file(&rs, p), 0);
	snprintf(p, sizeof(p), "%s/host-device-sync.rule", dir);
	cr_assert_eq(ruleset_load_file(&rs, p), 0);
	cr_assert_eq(ruleset_set(&rs, "launch-bound.min_excess=100us"), 0);
	cr_assert_eq(ruleset_set(&rs, "host-device-sync.min_spread=10%"), 0);
	rules_run(&rs, &m);
	f = finding(&m, "launch-bound");
	cr_assert_not_null(f);
	cr_assert(strstr(f->message, "k_small ran 100 times"), "message: %s", f->message);
	cr_assert_eq(f->cost_ns, 300000);
	f = finding(&m, "host-device-sync");
	cr_assert_not_null(f);
	cr_assert(strstr(f->message, "cudaStreamSynchronize (sync) was called 10 times"), "message: %s", f->message);
	cr_assert_str_eq(f->loc.file, "train.py");
	cr_assert_eq(f->loc.line, 42);
	cr_assert_eq(m.nfindings, 2, "only the stream syncs: one cudaMemcpy is not a loop");
	ruleset_release(&rs);
	model_release(&m);
	recording_close(&rec);
}

Test(gpu_model, rules_quiet_on_a_compute_bound_run)
{
	struct recording rec;
	struct model m;
	sqlite3 *db = new_recording();

	/* 200 kernels of 40 us back to back with 1 us gaps: busy, not dispatch-bound. */
	exec_sql(db, "BEGIN; INSERT INTO strings VALUES (1, 'gemm'), (3, 'cudaLaunchKernel');");
	for (int i = 0; i < 200; i++) {
		long s = 1000000 + 41000L * i;
		add(db, "INSERT INTO gpu_api_calls (pid, tid, api, name_id, start_ns, end_ns, correlation_id)"
			" VALUES (1, 1, 'runtime', 3, %ld, %ld, %d)", s - 500000, s - 495000, i + 1);
		add(db, "INSERT INTO gpu_activity (pid, kind, name_id, device, stream, start_ns, end_ns, correlation_id)"
			" VALUES (1, 'kernel', 1, 0, 7, %ld, %ld, %d)", s, s + 40000, i + 1);
	}
	exec_sql(db, "COMMIT");
	sqlite3_close(db);
	cr_assert_eq(recording_open(&rec, path), 0);
	cr_assert_eq(model_load(&m, &rec), 0);
	cr_assert_eq(gpu_metrics_register(&m), 0);
	cr_assert(num(&m, "gpu", 0, "utilisation") > 0.97);
	run_gpu_rules(&m);
	cr_assert_eq(m.nfindings, 0, "first finding: %s", m.nfindings ? m.findings[0].rule : "");
	model_release(&m);
	recording_close(&rec);
}
