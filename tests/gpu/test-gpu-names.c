/* test-gpu-names.c - kernel name demangling and its cache. */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_internal.h"

Test(names, kept_as_is_without_a_demangler)
{
	struct gpu_names n;

	gpu_names_init(&n, NULL);
	cr_assert_str_eq(gpu_names_get(&n, "_Z10add_kernelPfi"), "_Z10add_kernelPfi");
	cr_assert_null(gpu_names_get(&n, NULL));
	gpu_names_release(&n);
}

Test(names, demangled_with_the_cxx_runtime)
{
	struct gpu_names n;
	/* A C test program has no C++ runtime; load it as a CUDA program would have. */
	void *h = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL);
	cr_assert_not_null(h, "libstdc++.so.6: %s", dlerror());

	gpu_demangle_fn fn = gpu_demangler();
	cr_assert_not_null(fn);
	gpu_names_init(&n, fn);
	cr_assert_str_eq(gpu_names_get(&n, "_Z10add_kernelPfi"), "add_kernel(float*, int)");
	cr_assert_str_eq(gpu_names_get(&n, "_ZN5cudnn4gemm6kernelILi4EEEvPKfPf"),
			 "void cudnn::gemm::kernel<4>(float const*, float*)");
	/* Not a C++ name, or not a valid one: kept. */
	cr_assert_str_eq(gpu_names_get(&n, "my_c_kernel"), "my_c_kernel");
	cr_assert_str_eq(gpu_names_get(&n, "_Zbroken"), "_Zbroken");
	gpu_names_release(&n);
}

static int demangle_calls;

static char *counting_demangle(const char *m, char *out, size_t *len, int *status)
{
	(void)out; (void)len;
	demangle_calls++;
	*status = 0;
	char *r = malloc(strlen(m) + 3);
	strcpy(r, "D:");
	strcat(r, m);
	return r;
}

Test(names, one_demangling_per_kernel)
{
	struct gpu_names n;
	char a[] = "_Z1av", b[] = "_Z1bv";

	gpu_names_init(&n, counting_demangle);
	for (int i = 0; i < 1000; i++) {
		cr_assert_str_eq(gpu_names_get(&n, a), "D:_Z1av");
		cr_assert_str_eq(gpu_names_get(&n, b), "D:_Z1bv");
	}
	cr_assert_eq(demangle_calls, 2);
	gpu_names_release(&n);
}

Test(names, reused_address_is_noticed)
{
	struct gpu_names n;
	char buf[16] = "_Z1av";

	gpu_names_init(&n, counting_demangle);
	cr_assert_str_eq(gpu_names_get(&n, buf), "D:_Z1av");
	strcpy(buf, "_Z1cv");          /* CUPTI freed the name and reused the memory */
	cr_assert_str_eq(gpu_names_get(&n, buf), "D:_Z1cv");
	gpu_names_release(&n);
}

Test(names, many_kernels_grow_the_cache)
{
	struct gpu_names n;
	static char keys[500][16];

	gpu_names_init(&n, NULL);
	for (int i = 0; i < 500; i++) {
		snprintf(keys[i], sizeof(keys[i]), "kernel_%d", i);
		cr_assert_str_eq(gpu_names_get(&n, keys[i]), keys[i]);
	}
	for (int i = 0; i < 500; i++)
		cr_assert_str_eq(gpu_names_get(&n, keys[i]), keys[i]);
	cr_assert_eq(n.used, 500);
	gpu_names_release(&n);
}
