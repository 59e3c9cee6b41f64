/*
 * ingest.c - the launcher's writer alone, fed by a synthetic producer
 * through the real ring (issue 11: >= 2 M events/s, <= 0.5 us of writer CPU
 * per event).
 *
 * The main thread emits eager-op spans with the collector's own
 * agp_emit_span into its shared-memory ring (a few op names and call sites,
 * as an eager loop does), paced to RATE events/s; a second thread is the
 * launcher: run_writer_poll then run_writer_idle_us's pause, as cmd/agprof/run.c does.
 * Prints the events stored and dropped, the writer's CPU per stored event
 * (CLOCK_THREAD_CPUTIME_ID of the draining thread, the finish apart) and
 * the stored events per second of writer CPU (its ingest capacity).
 * Run it alternated with another build's binary for side-by-side figures.
 *
 * With RATE 0 (the default) the producer runs in the main thread between
 * polls instead (see inline_run): deterministic, no drops, callgrind-able.
 *
 * MAX_EVENTS is the recording's budget (run --max-events; default 0: every
 * event a row): past it the events are aggregated (eager_op_buckets), and
 * the CPU is per event handled, row or aggregate.
 *
 * KIND is what the producer emits: eager (ops, the default), call (graph
 * function calls of four functions, none kernel-sampled: past the budget
 * function_call_buckets), blackbox (py_function runs: blackbox_buckets) or
 * kernel (sampled calls of KERNELS_PER_CALL kernels each, the call after
 * its kernels as the collector writes them; EVENTS counts the kernels and
 * the CPU is per kernel, its call's share included).
 *
 * usage: ingest [EVENTS [RATE [MAX_EVENTS [KIND]]]]   (defaults: 2000000 events, RATE 0, MAX_EVENTS 0, eager)
 */
#include "../collector/collector.h"
#include "../writer/run_writer.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static long events = 2000000, rate;
static uint16_t kind = AGP_REC_EAGER;
#define KERNELS_PER_CALL 8
static uint32_t op_type;  /* a black box's op type (KIND blackbox) */
static volatile int producer_done;

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* This thread's system CPU so far (write(2), fsync, page faults: the share SQLite's I/O costs). */
static uint64_t sys_ns(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return (uint64_t)ru.ru_stime.tv_sec * 1000000000ull + (uint64_t)ru.ru_stime.tv_usec * 1000ull;
}

struct producer {
	struct agp_thread *t;
	uint32_t name[4], site[4], call;
	long next;
};

/* The ids of a few op names and call sites, as an eager loop defines them. */
static int producer_init(struct producer *p)
{
	static const char *const ops[] = { "MatMul", "AddV2", "Relu", "Mul" };
	uint32_t file, func;

	if (!(p->t = agp_thread_get()))
		return -1;
	file = agp_intern(p->t, "/src/train.py", 13);
	func = agp_intern(p->t, "step", 4);
	for (int i = 0; i < 4; i++) {
		p->name[i] = agp_intern(p->t, ops[i], strlen(ops[i]));
		p->site[i] = agp_site_define(p->t, file, func, 40 + (uint32_t)i, 0, 0);
	}
	op_type = agp_intern(p->t, "EagerPyFunc", 11);
	p->call = agp_intern(p->t, "__inference_step_42", 19);
	p->next = 0;
	return 0;
}

/* KIND kernel: kernel i of call i / KERNELS_PER_CALL, then the call after its last kernel. */
static void produce_kernel(struct producer *p, long i, uint64_t now)
{
	uint64_t seq = (uint64_t)(i / KERNELS_PER_CALL) + 1;

	agp_emit_kernel(p->t, p->name[i & 3], p->name[i & 3], now, now + 900, (uint32_t)seq, 0);
	if (i % KERNELS_PER_CALL == KERNELS_PER_CALL - 1)
		agp_emit_span(p->t, AGP_REC_CALL, p->call, now - 9000, now + 1000, 0, p->site[0], AGP_SPAN_KERNEL_DETAIL,
			      0, seq);
}

static void produce(struct producer *p, long n)
{
	for (long end = p->next + n; p->next < end && p->next < events; p->next++) {
		uint64_t now = agp_now_ns();
		long i = p->next;

		if (kind == AGP_REC_KERNEL) {
			produce_kernel(p, i, now);
			continue;
		}
		agp_emit_span(p->t, kind, p->name[i & 3], now, now + 900, kind == AGP_REC_BLACKBOX ? op_type : 0,
			      p->site[i & 3], 0, 0, (uint64_t)i + 1);
	}
}

/*
 * RATE > 0: the main thread, batches of 1000 spans, each waiting for its
 * time.  The main thread, as in an eager loop, so that it has the main
 * thread's ring (AGP_RING_MAIN_BYTES): another thread's is a sixteenth of
 * it, 3 ms of events at 2 M/s, less than the 5 ms between polls.
 */
static void producer(void)
{
	struct producer p;
	uint64_t t0 = agp_now_ns();

	if (producer_init(&p) == 0)
		while (p.next < events) {
			while (agp_now_ns() < t0 + (uint64_t)((double)p.next * 1e9 / (double)rate))
				usleep(200);
			produce(&p, 1000);
		}
	producer_done = 1;
}

/* RATE > 0: the launcher's loop in a thread of its own (poll, pause); its CPU and system time, its longest poll. */
struct poller {
	struct run_writer *w;
	uint64_t cpu, sys;
	uint64_t longest_ns;   /* the longest poll: the ring must hold the events of that long */
};

static void *poller(void *arg)
{
	struct poller *p = arg;
	uint64_t c0 = cpu_ns(), s0 = sys_ns();

	while (!producer_done) {
		uint64_t t0 = agp_now_ns(), took;

		run_writer_poll(p->w);
		took = agp_now_ns() - t0;
		if (took > p->longest_ns)
			p->longest_ns = took;
		if (run_writer_idle_us(p->w))
			usleep(run_writer_idle_us(p->w));
	}
	run_writer_poll(p->w);
	p->cpu = cpu_ns() - c0;
	p->sys = sys_ns() - s0;
	return NULL;
}

/*
 * RATE 0: the main thread alternates batches of BATCH spans (less than a
 * ring holds: nothing dropped) with polls, and only the polls' CPU counts:
 * deterministic, and what callgrind --toggle-collect=run_writer_poll counts.
 */
#define BATCH 10000
static uint64_t inline_run(struct run_writer *w)
{
	struct producer p;
	uint64_t cpu = 0;

	if (producer_init(&p) != 0)
		return 0;
	while (p.next < events) {
		uint64_t c0;

		produce(&p, BATCH);
		c0 = cpu_ns();
		run_writer_poll(w);
		cpu += cpu_ns() - c0;
	}
	return cpu;
}

int main(int argc, char **argv)
{
	char dir[] = "/tmp/agprof-ingest-XXXXXX", db[600], err[256], cmd[4 * sizeof(db) + 64];
	char *pargv[] = { "ingest", NULL };
	struct run_session sess;
	struct run_totals tot;
	struct run_writer *w;
	pthread_t th;
	uint64_t c0, c1, c2, f0, w0, w1, s0, s1, n, longest = 0;
	struct run_budget budget = { 0, 0 };

	if (argc > 1)
		events = atol(argv[1]);
	if (argc > 2)
		rate = atol(argv[2]);
	if (argc > 3)
		budget.max_events = strtoull(argv[3], NULL, 10);
	if (argc > 4)
		kind = !strcmp(argv[4], "call")       ? AGP_REC_CALL
		       : !strcmp(argv[4], "blackbox") ? AGP_REC_BLACKBOX
		       : !strcmp(argv[4], "kernel")   ? AGP_REC_KERNEL
						      : AGP_REC_EAGER;
	if (!mkdtemp(dir) || agp_start(dir) != 0)
		return perror("ingest: session folder"), 1;
	snprintf(db, sizeof(db), "%s.agprof", dir);
	if (!(w = run_writer_create(db, dir, err, sizeof(err))))
		return fprintf(stderr, "ingest: %s\n", err), 1;
	run_writer_budget(w, &budget);
	run_writer_poll(w);
	w0 = agp_now_ns();
	c0 = cpu_ns();
	s0 = sys_ns();
	if (rate > 0) {
		struct poller pl = { w, 0, 0, 0 };

		if (pthread_create(&th, NULL, poller, &pl) != 0)
			return fprintf(stderr, "ingest: cannot start the poller\n"), 1;
		producer();
		pthread_join(th, NULL);
		c1 = c0 + pl.cpu;
		s1 = s0 + pl.sys;
		longest = pl.longest_ns;
	} else {
		c1 = c0 + inline_run(w);
		s1 = sys_ns();
	}
	w1 = agp_now_ns();
	memset(&sess, 0, sizeof(sess));
	sess.argv = pargv;
	sess.cwd = "/";
	sess.main_pid = getpid();
	sess.end_ns = w1;
	f0 = cpu_ns();  /* the finish runs on this thread: its own clock */
	if (run_writer_finish(w, &sess, &tot) != 0)
		return fprintf(stderr, "ingest: finish failed\n"), 1;
	c2 = cpu_ns();
	n = tot.eager_ops + tot.eager_aggregated + tot.calls + tot.calls_aggregated + tot.blackbox + tot.blackbox_aggregated;
	if (kind == AGP_REC_KERNEL)
		n = tot.kernels;  /* per kernel, its call's row included */
	printf("ingest: %s: stored %llu (%llu as rows, %llu aggregated: %s) dropped %llu in %.2f s wall; writer cpu %.3f us/event"
	       " (%.2f M events/s of cpu), thread sys %.3f s, finish %.3f s, longest poll %.1f ms\n",
	       argc > 4 ? argv[4] : "eager", (unsigned long long)n,
	       (unsigned long long)(tot.eager_ops + tot.calls + tot.blackbox),
	       (unsigned long long)(tot.eager_aggregated + tot.calls_aggregated + tot.blackbox_aggregated),
	       tot.aggregate_why ? tot.aggregate_why : "none",
	       (unsigned long long)tot.dropped, (double)(w1 - w0) / 1e9, n ? (double)(c1 - c0) / 1e3 / (double)n : 0.0,
	       c1 > c0 ? (double)n / ((double)(c1 - c0) / 1e3) : 0.0, (double)(s1 - s0) / 1e9, (double)(c2 - f0) / 1e9, (double)longest / 1e6);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s' '%s' '%s-wal' '%s-shm'", dir, db, db, db);
	return system(cmd) != 0;
}
