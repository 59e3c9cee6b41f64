/*
 * pyonce.c - the one-time set-up of the collector's Python parts (pytrace.py
 * in its namespace, the watch's pointers), safe when threads race into it.
 * A set-up runs Python, which hands the GIL to other threads every few
 * milliseconds: a second thread starting a trace then found it under way
 * and gave up, and its trace went unrecorded (three threads tracing their
 * own functions five times each: 13 or 14 traces recorded of TensorFlow's
 * 15).  Now it waits, the GIL released, for the set-up to finish.
 */
#include "collector.h"

#include <dlfcn.h>
#include <time.h>

enum { ONCE_UNTRIED, ONCE_READY, ONCE_FAILED, ONCE_RUNNING };

/* Set while this thread runs a set-up: a set-up that re-enters (a graph made inside it) does not wait for itself. */
static __thread int in_setup __attribute__((tls_model("initial-exec")));

/* Wait with the GIL released until the set-up another thread runs is over. */
static void wait_released(atomic_int *state)
{
	int (*ensure)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "PyGILState_Ensure");
	void (*release)(int) = (void (*)(int))dlsym(RTLD_DEFAULT, "PyGILState_Release");
	void *(*save)(void) = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyEval_SaveThread");
	void (*restore)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "PyEval_RestoreThread");
	const struct timespec ms = { 0, 1000000 };
	void *ts;
	int gil;

	if (!ensure || !release || !save || !restore)
		return;
	gil = ensure();
	ts = save();
	while (atomic_load_explicit(state, memory_order_acquire) == ONCE_RUNNING)
		nanosleep(&ms, NULL);
	restore(ts);
	release(gil);
}

int agp_py_once(atomic_int *state, int (*setup)(void))
{
	int s = atomic_load_explicit(state, memory_order_acquire), ok;

	if (s == ONCE_READY || s == ONCE_FAILED)
		return s == ONCE_READY;
	if (s == ONCE_UNTRIED && atomic_compare_exchange_strong(state, &s, ONCE_RUNNING)) {
		in_setup++;
		ok = setup();
		in_setup--;
		atomic_store_explicit(state, ok ? ONCE_READY : ONCE_FAILED, memory_order_release);
		return ok;
	}
	if (!in_setup)
		wait_released(state);
	return atomic_load_explicit(state, memory_order_acquire) == ONCE_READY;
}
