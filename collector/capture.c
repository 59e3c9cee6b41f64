/*
 * capture.c - the collector's part of the capture window (docs/collector.md,
 * "Capture windows"): the --capture FUNCTION:FROM-TO call counter and
 * agprof.start()/agprof.stop() under `agprof run`.
 *
 * The window itself is agp_shm_header.capture_off, one word with a "closed"
 * bit per owner; the launcher owns AGP_CAPTURE_LAUNCHER (--delay,
 * --duration, SIGUSR2) and writes it from outside, this file owns the other
 * bits.  The hot path only reads the word (agp_capture_open, collector.h).
 * Every change of this file's bits is written as an AGP_SIDE_CAPTURE record
 * (rare: twice per window), so that the launcher knows the windows' times.
 *
 * A FUNCTION:FROM-TO window opens just before the FROM-th call of FUNCTION
 * starts and closes just after the TO-th call's record is written, so both
 * calls and everything they run (black boxes inside them) are in it.
 */
#include "collector.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static struct {
	int configured;          /* AGPROF_CAPTURE was given */
	char function[256];      /* FUNCTION of FUNCTION:FROM-TO, "" for none */
	uint64_t from, to;
	_Atomic uint64_t calls;  /* calls of FUNCTION so far (a forked child goes on counting) */
	uint32_t bits;           /* the header's value to start a new process image with */
} cap;

/* "FUNCTION:FROM-TO" or "api"; 0 or -1 (then nothing is gated by the collector). */
static int parse_spec(const char *spec)
{
	const char *colon = strrchr(spec, ':');
	unsigned long long from, to;
	char tail;

	if (!strcmp(spec, "api")) {
		cap.bits |= AGP_CAPTURE_API;
		return 0;
	}
	if (!colon || colon == spec || (size_t)(colon - spec) >= sizeof(cap.function) ||
	    sscanf(colon + 1, "%llu-%llu%c", &from, &to, &tail) != 2 || from < 1 || to < from)
		return -1;
	memcpy(cap.function, spec, (size_t)(colon - spec));
	cap.function[colon - spec] = '\0';
	cap.from = from;
	cap.to = to;
	cap.bits |= AGP_CAPTURE_FUNCTION;
	return 0;
}

/* Tell the launcher this process's own bits from ns on. */
static void capture_record(uint32_t bits, const char *why, uint64_t ns)
{
	struct agp_side s;

	agp_side_begin(&s, AGP_SIDE_CAPTURE);
	agp_side_int(&s, AGP_F_CAPTURE_OFF, bits & ~AGP_CAPTURE_LAUNCHER);
	agp_side_int(&s, AGP_F_START, (int64_t)ns);
	agp_side_text(&s, AGP_F_CAPTURE_WHY, why);
	agp_side_int(&s, AGP_F_CAPTURE_CALLS, (int64_t)atomic_load(&cap.calls));
	agp_side_end(&s);
}

void agp_capture_read_env(void)
{
	const char *spec = getenv(AGP_ENV_CAPTURE);
	const char *off = getenv(AGP_ENV_CAPTURE_OFF);

	cap.bits = off && !strcmp(off, "1") ? AGP_CAPTURE_LAUNCHER : 0;
	if (spec && *spec && parse_spec(spec) == 0)
		cap.configured = 1;
}

void agp_capture_fork(void)
{
	if (agp_proc.shm)
		cap.bits = atomic_load(&agp_proc.shm->capture_off);
}

void agp_capture_start(void)
{
	atomic_store(&agp_proc.shm->capture_off, cap.bits);
	if (cap.configured)
		capture_record(cap.bits, "start", agp_proc.shm->start_ns);  /* from the process's first instant */
}

int agp_capture_match(const char *name)
{
	size_t n = strlen(cap.function);
	const char *p;

	if (!n)
		return 0;
	if (!strcmp(name, cap.function))
		return 1;
	/* tf.function's concrete functions: __inference_<name>_<digits> */
	if (strncmp(name, "__inference_", 12) || strncmp(name + 12, cap.function, n) || name[12 + n] != '_')
		return 0;
	p = name + 12 + n + 1;
	if (!*p)
		return 0;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

/* Change this file's bits: set `set`, clear `clear`; recorded when they changed. */
static void capture_change(uint32_t set, uint32_t clear, const char *why)
{
	uint32_t old, now;

	if (!agp_proc.enabled || !agp_proc.shm)
		return;
	if (set)
		old = atomic_fetch_or(&agp_proc.shm->capture_off, set);
	else
		old = atomic_fetch_and(&agp_proc.shm->capture_off, ~clear);
	now = (old | set) & ~clear;
	if (now != old)
		capture_record(now, why, agp_now_ns());
}

uint64_t agp_capture_call_begin(void)
{
	uint64_t n = atomic_fetch_add(&cap.calls, 1) + 1;
	char why[300];

	if (n == cap.from) {
		snprintf(why, sizeof(why), "call %llu of %s", (unsigned long long)n, cap.function);
		capture_change(0, AGP_CAPTURE_FUNCTION, why);
	}
	return n;
}

void agp_capture_call_end(uint64_t n)
{
	char why[300];

	if (n != cap.to)
		return;
	snprintf(why, sizeof(why), "call %llu of %s", (unsigned long long)n, cap.function);
	capture_change(AGP_CAPTURE_FUNCTION, 0, why);
}

/*
 * agprof.start() (on != 0) / agprof.stop() under `agprof run`
 * (python/agprof/_record.py reaches it with ctypes).  Returns 0, or 1 when
 * this process is not being recorded.
 */
AGP_EXPORT int agprof_capture(int on);
AGP_EXPORT int agprof_capture(int on)
{
	if (!agp_proc.enabled || !agp_proc.shm)
		return 1;
	if (on)
		capture_change(0, AGP_CAPTURE_API, "agprof.start()");
	else
		capture_change(AGP_CAPTURE_API, 0, "agprof.stop()");
	return 0;
}
