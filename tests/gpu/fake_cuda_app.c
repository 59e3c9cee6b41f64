/*
 * fake_cuda_app.c - test fixture: a "CUDA program" for the stand-in driver
 * (fake_cuda.c): loads libcuda.so.1 as the CUDA runtime does, calls cuInit,
 * launches N kernels and says how many.
 *   fake_cuda_app N
 */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100;
	void *cuda, *cxx;
	int (*init)(unsigned);
	uint32_t (*launch)(const char *);

	/* A CUDA program has the C++ runtime loaded (kernel names are C++). */
	cxx = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL);
	cuda = dlopen("libcuda.so.1", RTLD_NOW);
	if (!cuda || !cxx) {
		fprintf(stderr, "fake_cuda_app: %s\n", dlerror());
		return 1;
	}
	init = (int (*)(unsigned))dlsym(cuda, "cuInit");
	launch = (uint32_t (*)(const char *))dlsym(cuda, "fakeLaunchKernel");
	if (!init || !launch || init(0) != 0)
		return 1;
	for (int i = 0; i < n; i++)
		if (!launch(i % 2 ? "_Z6kernelv" : "_Z5otherPfi"))
			return 1;
	printf("fake_cuda_app: kernels=%d\n", n);
	return 0;
}
