/* shm_guard.c - see shm_guard.h. */
#include "shm_guard.h"

#include <setjmp.h>
#include <signal.h>
#include <string.h>

static sigjmp_buf shm_fault_jmp;
static volatile sig_atomic_t shm_fault_armed;

static void on_shm_fault(int sig, siginfo_t *si, void *uctx)
{
	(void)si, (void)uctx;
	if (shm_fault_armed) {
		shm_fault_armed = 0;
		siglongjmp(shm_fault_jmp, 1);
	}
	signal(sig, SIG_DFL);  /* not ours: the faulting access repeats and kills us as before */
}

void shm_guard_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_shm_fault;
	sa.sa_flags = SA_SIGINFO | SA_NODEFER;  /* NODEFER: no mask to restore after the jump */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

int shm_copy(void *dst, const void *src, size_t n)
{
	if (sigsetjmp(shm_fault_jmp, 0))
		return -1;
	shm_fault_armed = 1;
	memcpy(dst, src, n);
	shm_fault_armed = 0;
	return 0;
}

/* One reader for the 64-bit counters, the 32-bit thread count and the signed tids. */
int shm_load(void *p, void *out, size_t size)
{
	uint64_t v64 = 0;
	uint32_t v32 = 0;

	if (sigsetjmp(shm_fault_jmp, 0))
		return -1;
	shm_fault_armed = 1;
	if (size == sizeof(v64))
		v64 = atomic_load_explicit((_Atomic uint64_t *)p, memory_order_acquire);
	else
		v32 = atomic_load_explicit((_Atomic uint32_t *)p, memory_order_acquire);
	shm_fault_armed = 0;
	if (size == sizeof(v64))
		memcpy(out, &v64, sizeof(v64));
	else
		memcpy(out, &v32, sizeof(v32));
	return 0;
}

int shm_store64(_Atomic uint64_t *p, uint64_t v)
{
	if (sigsetjmp(shm_fault_jmp, 0))
		return -1;
	shm_fault_armed = 1;
	atomic_store_explicit(p, v, memory_order_release);
	shm_fault_armed = 0;
	return 0;
}

int shm_zero(void *dst, size_t n)
{
	if (sigsetjmp(shm_fault_jmp, 0))
		return -1;
	shm_fault_armed = 1;
	memset(dst, 0, n);
	shm_fault_armed = 0;
	return 0;
}

int shm_cas32(_Atomic uint32_t *p, uint32_t expect, uint32_t want)
{
	int swapped;

	if (sigsetjmp(shm_fault_jmp, 0))
		return -1;
	shm_fault_armed = 1;
	swapped = atomic_compare_exchange_strong_explicit(p, &expect, want, memory_order_release, memory_order_relaxed);
	shm_fault_armed = 0;
	return swapped;
}

int shm_add32(_Atomic uint32_t *p, uint32_t v)
{
	if (sigsetjmp(shm_fault_jmp, 0))
		return -1;
	shm_fault_armed = 1;
	atomic_fetch_add_explicit(p, v, memory_order_relaxed);
	shm_fault_armed = 0;
	return 0;
}

int shm_bits32(_Atomic uint32_t *p, uint32_t set, uint32_t clear)
{
	if (sigsetjmp(shm_fault_jmp, 0))
		return -1;
	shm_fault_armed = 1;
	if (set)
		atomic_fetch_or_explicit(p, set, memory_order_relaxed);
	if (clear)
		atomic_fetch_and_explicit(p, ~clear, memory_order_relaxed);
	shm_fault_armed = 0;
	return 0;
}
