/*
 * fake_cuda.c - test fixture: a stand-in CUDA driver (built as libcuda.so.1)
 * that does what the real one does for agprof's injection: cuInit() loads
 * the library named by CUDA_INJECTION64_PATH and calls its
 * InitializeInjection().  cuLaunchKernel-like launches go to the stand-in
 * CUPTI (fake_cupti.c, $AGPROF_CUPTI_LIB), which writes the activity
 * records CUPTI would.  Lets `agprof run` be tested end to end without a GPU.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define EXPORT __attribute__((visibility("default")))

static int initialized;

EXPORT int cuInit(unsigned flags)
{
	const char *inj;

	(void)flags;
	if (initialized++)
		return 0;
	inj = getenv("CUDA_INJECTION64_PATH");
	if (inj && *inj) {
		void *h = dlopen(inj, RTLD_NOW);
		int (*init)(void) = h ? (int (*)(void))dlsym(h, "InitializeInjection") : NULL;
		if (init)
			init();
		else
			fprintf(stderr, "fake libcuda: cannot inject '%s'\n", inj);
	}
	return 0;
}

/* One kernel launch; returns its correlation id, 0 when CUPTI is not there. */
EXPORT uint32_t fakeLaunchKernel(const char *name)
{
	static uint32_t (*launch)(const char *, uint64_t *);

	if (!launch) {
		const char *lib = getenv("AGPROF_CUPTI_LIB");
		void *h = lib ? dlopen(lib, RTLD_NOW | RTLD_NOLOAD) : NULL;
		launch = h ? (uint32_t (*)(const char *, uint64_t *))dlsym(h, "fake_launch") : NULL;
		if (!launch)
			return 0;
	}
	return launch(name, NULL);
}
