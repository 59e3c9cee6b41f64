/*
 * cupti_loader.c - find libcupti and resolve the functions we call.
 *
 * Search order, first success wins:
 *  1. a libcupti the process has already loaded (PyTorch links one; a second
 *     copy of CUPTI in one process would fight the first over the driver);
 *  2. $AGPROF_CUPTI_LIB, an explicit file;
 *  3. beside the CUDA libraries the process has loaded: the toolkit layout
 *     (<prefix>/lib64/libcudart.so -> <prefix>/lib64, <prefix>/extras/CUPTI/lib64)
 *     and the pip wheel layout (site-packages/nvidia/<pkg>/lib/libcupti.so.*);
 *  4. $CUDA_HOME and $CUDA_PATH (lib64/, extras/CUPTI/lib64/);
 *  5. the dynamic linker's own search (LD_LIBRARY_PATH, ld.so.cache);
 *  6. /usr/local/cuda.
 */
#include "cupti_loader.h"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cupti_error(const struct cupti_api *api, CUptiResult rc)
{
	static __thread char num[32];
	const char *s = NULL;

	if (api->GetResultString && api->GetResultString(rc, &s) == CUPTI_SUCCESS && s)
		return s;
	snprintf(num, sizeof(num), "CUPTI error %d", (int)rc);
	return num;
}

/* Paths of loaded objects whose file name starts with prefix. */
struct loaded_search {
	const char *prefix;
	char found[8][PATH_MAX];
	int n;
};

static int collect_loaded(struct dl_phdr_info *info, size_t size, void *data)
{
	struct loaded_search *s = data;
	const char *base;

	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0] || s->n >= 8)
		return 0;
	base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, s->prefix, strlen(s->prefix)) == 0)
		snprintf(s->found[s->n++], PATH_MAX, "%s", info->dlpi_name);
	return 0;
}

static void find_loaded(struct loaded_search *s, const char *prefix)
{
	memset(s, 0, sizeof(*s));
	s->prefix = prefix;
	dl_iterate_phdr(collect_loaded, s);
}

#define RESOLVE(api, name, required)                                          \
	do {                                                                   \
		*(void **)&(api)->name = dlsym((api)->handle, "cupti" #name);  \
		if (!(api)->name && (required)) {                              \
			snprintf(why, whylen, "'%s' lacks cupti" #name, path);  \
			return -1;                                             \
		}                                                              \
	} while (0)

static int resolve(struct cupti_api *api, const char *path, char *why, size_t whylen)
{
	RESOLVE(api, GetVersion, 1);
	RESOLVE(api, GetResultString, 1);
	RESOLVE(api, GetTimestamp, 1);
	RESOLVE(api, Subscribe, 1);
	RESOLVE(api, Unsubscribe, 1);
	RESOLVE(api, GetCallbackName, 1);
	RESOLVE(api, ActivityRegisterCallbacks, 1);
	RESOLVE(api, ActivityEnable, 1);
	RESOLVE(api, ActivityDisable, 1);
	RESOLVE(api, ActivityGetNextRecord, 1);
	RESOLVE(api, ActivityGetNumDroppedRecords, 1);
	RESOLVE(api, ActivityFlushAll, 1);
	RESOLVE(api, ActivityPushExternalCorrelationId, 1);
	RESOLVE(api, ActivityPopExternalCorrelationId, 1);
	RESOLVE(api, ActivityRegisterTimestampCallback, 0);
	RESOLVE(api, SetThreadIdType, 0);
	RESOLVE(api, ActivityEnableRuntimeApi, 0);
	RESOLVE(api, ActivityEnableDriverApi, 0);
	if (api->GetVersion(&api->version) != CUPTI_SUCCESS) {
		snprintf(why, whylen, "cuptiGetVersion failed in '%s'", path);
		return -1;
	}
	return 0;
}

/* Try one file; 1 when loaded, 0 when absent, -1 when present but unusable. */
static int try_path(struct cupti_api *api, const char *path, int flags, char *why, size_t whylen)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | flags);

	if (!h)
		return 0;
	memset(api, 0, sizeof(*api));
	api->handle = h;
	if (resolve(api, path, why, whylen) < 0) {
		dlclose(h);
		api->handle = NULL;
		return -1;
	}
	/* Record the file actually loaded, not the name asked for. */
	if (dlinfo(h, RTLD_DI_ORIGIN, api->path) == 0) {
		const char *base = strrchr(path, '/');
		size_t n = strlen(api->path);
		snprintf(api->path + n, sizeof(api->path) - n, "/%s", base ? base + 1 : path);
	} else {
		snprintf(api->path, sizeof(api->path), "%s", path);
	}
	return 1;
}

/* Try every match of a glob pattern, newest version (last in sort order) first. */
static int try_glob(struct cupti_api *api, const char *pattern, char *why, size_t whylen)
{
	glob_t g;
	int rc = 0;

	if (glob(pattern, 0, NULL, &g) != 0)
		return 0;
	for (size_t i = g.gl_pathc; i-- > 0 && rc <= 0;)
		rc = try_path(api, g.gl_pathv[i], 0, why, whylen) > 0 ? 1 : rc;
	globfree(&g);
	return rc;
}

static int try_prefix(struct cupti_api *api, const char *prefix, char *why, size_t whylen)
{
	static const char *const subdirs[] = { "lib64", "extras/CUPTI/lib64", "lib" };
	char pat[PATH_MAX + 64];

	for (size_t i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++) {
		int n = snprintf(pat, sizeof(pat), "%s/%s/libcupti.so*", prefix, subdirs[i]);
		if (n < 0 || (size_t)n >= sizeof(pat))
			continue;
		if (try_glob(api, pat, why, whylen) > 0)
			return 1;
	}
	return 0;
}

/* Directory part of path, in place. */
static void dir_of(char *path)
{
	char *slash = strrchr(path, '/');

	if (slash)
		*slash = '\0';
}

static int try_beside_loaded(struct cupti_api *api, char *why, size_t whylen)
{
	static const char *const libs[] = { "libcudart.so", "libcuda.so", "libnvrtc.so", "libcublas.so" };
	struct loaded_search s;
	char dir[PATH_MAX], pat[PATH_MAX + 64];

	for (size_t l = 0; l < sizeof(libs) / sizeof(libs[0]); l++) {
		find_loaded(&s, libs[l]);
		for (int i = 0; i < s.n; i++) {
			char *sp;

			snprintf(dir, sizeof(dir), "%s", s.found[i]);
			dir_of(dir);
			/* Wheel: .../site-packages/nvidia/<pkg>/lib/libcudart.so.12 */
			sp = strstr(dir, "/nvidia/");
			if (sp) {
				sp[strlen("/nvidia")] = '\0';
				snprintf(pat, sizeof(pat), "%s/*/lib/libcupti.so*", dir);
				if (try_glob(api, pat, why, whylen) > 0)
					return 1;
				continue;
			}
			/* Toolkit: <prefix>/lib64/libcudart.so */
			snprintf(pat, sizeof(pat), "%s/libcupti.so*", dir);
			if (try_glob(api, pat, why, whylen) > 0)
				return 1;
			dir_of(dir);
			if (try_prefix(api, dir, why, whylen) > 0)
				return 1;
		}
	}
	return 0;
}

int cupti_load(struct cupti_api *api, char *why, size_t whylen)
{
	static const char *const sonames[] = { "libcupti.so", "libcupti.so.13", "libcupti.so.12" };
	struct loaded_search s;
	const char *env;

	why[0] = '\0';
	find_loaded(&s, "libcupti.so");
	for (int i = 0; i < s.n; i++)
		if (try_path(api, s.found[i], RTLD_NOLOAD, why, whylen) > 0)
			return 0;
	env = getenv("AGPROF_CUPTI_LIB");
	if (env && *env) {
		if (try_path(api, env, 0, why, whylen) > 0)
			return 0;
		if (!why[0])
			snprintf(why, whylen, "cannot load AGPROF_CUPTI_LIB='%s': %s", env, dlerror());
		return -1;
	}
	if (try_beside_loaded(api, why, whylen) > 0)
		return 0;
	for (const char *const *v = (const char *const[]){ "CUDA_HOME", "CUDA_PATH", NULL }; *v; v++) {
		env = getenv(*v);
		if (env && *env && try_prefix(api, env, why, whylen) > 0)
			return 0;
	}
	for (size_t i = 0; i < sizeof(sonames) / sizeof(sonames[0]); i++)
		if (try_path(api, sonames[i], 0, why, whylen) > 0)
			return 0;
	if (try_prefix(api, "/usr/local/cuda", why, whylen) > 0)
		return 0;
	if (!why[0])
		snprintf(why, whylen, "CUPTI library not found (libcupti.so: set CUDA_HOME or AGPROF_CUPTI_LIB)");
	return -1;
}
