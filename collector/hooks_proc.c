/*
 * hooks_proc.c - process lifecycle hooks: exec (so that exec'd children are
 * recorded too, although the launcher's variables are hidden from the
 * workload's own environment) and _exit (to record the exit status of
 * processes that leave without running atexit handlers, e.g. forked Python
 * multiprocessing workers).
 */
#include "collector.h"

#include <alloca.h>
#include <dlfcn.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char agp_env_preload[] AGP_HIDDEN;
extern char agp_env_shm[] AGP_HIDDEN;
extern char agp_env_orig[] AGP_HIDDEN;
extern char agp_env_cuda[] AGP_HIDDEN;
extern char **environ;
void agp_exit_record(int status) AGP_HIDDEN;

static int is_ours(const char *entry)
{
	return !strncmp(entry, "LD_PRELOAD=", 11) || !strncmp(entry, "AGPROF_SHM=", 11) ||
	       !strncmp(entry, "AGPROF_ORIG_LD_PRELOAD=", 23) ||
	       (agp_env_cuda[0] && (!strncmp(entry, "CUDA_INJECTION64_PATH=", 22) ||
				    !strncmp(entry, "AGPROF_CUDA_INJECTION=", 22)));
}

/*
 * The launcher's variables, put back into a child's environment.  No
 * allocation: Python's subprocess runs execve in a vfork child, where malloc
 * could deadlock on a lock another thread of the parent held.  The caller
 * provides the vector (env_room entries, on its stack) and the strings.
 */
struct env_strings {
	char preload[16 + PATH_MAX * 2];
	char shm[16 + PATH_MAX];
	char orig[32 + PATH_MAX * 2];
	char cuda[32 + PATH_MAX];
	char cuda_flag[32];
};

static size_t env_room(char *const envp[])
{
	size_t n = 0;

	while (envp && envp[n])
		n++;
	return n + 6;
}

static char **env_fill(char **out, struct env_strings *s, char *const envp[])
{
	size_t k = 0;

	for (size_t i = 0; envp && envp[i]; i++)
		if (!is_ours(envp[i]))
			out[k++] = envp[i];
	snprintf(s->preload, sizeof(s->preload), "LD_PRELOAD=%s", agp_env_preload);
	snprintf(s->shm, sizeof(s->shm), "AGPROF_SHM=%s", agp_env_shm);
	snprintf(s->orig, sizeof(s->orig), "AGPROF_ORIG_LD_PRELOAD=%s", agp_env_orig);
	out[k++] = s->preload;
	out[k++] = s->shm;
	out[k++] = s->orig;
	if (agp_env_cuda[0]) {
		snprintf(s->cuda, sizeof(s->cuda), "CUDA_INJECTION64_PATH=%s", agp_env_cuda);
		snprintf(s->cuda_flag, sizeof(s->cuda_flag), "AGPROF_CUDA_INJECTION=1");
		out[k++] = s->cuda;
		out[k++] = s->cuda_flag;
	}
	out[k] = NULL;
	return out;
}

/* envp with the collector's variables, in the calling frame's stack. */
#define COLLECTOR_ENV(envp)                                                              \
	(agp_env_shm[0] ? env_fill(alloca(env_room(envp) * sizeof(char *)), &env_strings_, (envp)) \
			: (char **)(envp))

/* The real functions, resolved at start-up (and lazily, should a hook run first). */
static __typeof__(execve) *real_execve;
static __typeof__(execvpe) *real_execvpe;
static __typeof__(posix_spawn) *real_posix_spawn;
static __typeof__(posix_spawnp) *real_posix_spawnp;
static __typeof__(system) *real_system;
static __typeof__(popen) *real_popen;
static __typeof__(getenv) *real_getenv;
static __typeof__(secure_getenv) *real_secure_getenv;
static __typeof__(_exit) *real__exit;

#define REAL(name) \
	if (!real_##name) \
		real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

AGP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	struct env_strings env_strings_;

	REAL(execve);
	return real_execve(path, argv, COLLECTOR_ENV(envp));
}

AGP_EXPORT int execv(const char *path, char *const argv[])
{
	struct env_strings env_strings_;

	REAL(execve);
	return real_execve(path, argv, COLLECTOR_ENV(environ));
}

AGP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	struct env_strings env_strings_;

	REAL(execvpe);
	return real_execvpe(file, argv, COLLECTOR_ENV(envp));
}

AGP_EXPORT int execvp(const char *file, char *const argv[])
{
	struct env_strings env_strings_;

	REAL(execvpe);
	return real_execvpe(file, argv, COLLECTOR_ENV(environ));
}

/*
 * Resolve the real exec functions at start-up: dlsym in a vfork child could
 * take the loader's lock.
 */
void agp_proc_hooks_init(void) AGP_HIDDEN;
void agp_proc_hooks_init(void)
{
	REAL(execve);
	REAL(execvpe);
	REAL(posix_spawn);
	REAL(posix_spawnp);
	REAL(system);
	REAL(popen);
	REAL(secure_getenv);
	REAL(_exit);
}

/* execl family: gather the variadic arguments into an argv. */
static char **collect_args(const char *arg0, va_list ap, char ***envp_out)
{
	size_t n = 1, cap = 16;
	char **argv = malloc(cap * sizeof(*argv));
	char *a;

	if (!argv)
		return NULL;
	argv[0] = (char *)arg0;
	while ((a = va_arg(ap, char *)) != NULL) {
		if (n + 1 >= cap) {
			char **nv = realloc(argv, (cap *= 2) * sizeof(*argv));

			if (!nv) {
				free(argv);
				return NULL;
			}
			argv = nv;
		}
		argv[n++] = a;
	}
	argv[n] = NULL;
	if (envp_out)
		*envp_out = va_arg(ap, char **);
	return argv;
}

AGP_EXPORT int execl(const char *path, const char *arg, ...)
{
	va_list ap;
	char **argv;

	va_start(ap, arg);
	argv = collect_args(arg, ap, NULL);
	va_end(ap);
	return argv ? execv(path, argv) : -1;
}

AGP_EXPORT int execlp(const char *file, const char *arg, ...)
{
	va_list ap;
	char **argv;

	va_start(ap, arg);
	argv = collect_args(arg, ap, NULL);
	va_end(ap);
	return argv ? execvp(file, argv) : -1;
}

AGP_EXPORT int execle(const char *path, const char *arg, ...)
{
	va_list ap;
	char **argv, **envp = NULL;

	va_start(ap, arg);
	argv = collect_args(arg, ap, &envp);
	va_end(ap);
	return argv ? execve(path, argv, envp) : -1;
}

AGP_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
			   const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	struct env_strings env_strings_;

	REAL(posix_spawn);
	return real_posix_spawn(pid, path, fa, attr, argv, COLLECTOR_ENV(envp));
}

AGP_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	struct env_strings env_strings_;

	REAL(posix_spawnp);
	return real_posix_spawnp(pid, file, fa, attr, argv, COLLECTOR_ENV(envp));
}

/* system() and popen() spawn through glibc internals: lend them the environment. */
static void env_lend(void)
{
	if (!agp_env_shm[0])
		return;
	setenv("LD_PRELOAD", agp_env_preload, 1);
	setenv("AGPROF_SHM", agp_env_shm, 1);
	setenv("AGPROF_ORIG_LD_PRELOAD", agp_env_orig, 1);
	if (agp_env_cuda[0]) {
		setenv("CUDA_INJECTION64_PATH", agp_env_cuda, 1);
		setenv("AGPROF_CUDA_INJECTION", "1", 1);
	}
}

static void env_take_back(void)
{
	if (!agp_env_shm[0])
		return;
	if (strcmp(agp_env_orig, "\001unset") != 0)
		setenv("LD_PRELOAD", agp_env_orig, 1);
	else
		unsetenv("LD_PRELOAD");
	unsetenv("AGPROF_SHM");
	unsetenv("AGPROF_ORIG_LD_PRELOAD");
	if (agp_env_cuda[0]) {
		unsetenv("CUDA_INJECTION64_PATH");
		unsetenv("AGPROF_CUDA_INJECTION");
	}
}

AGP_EXPORT int system(const char *command)
{
	int rc;

	REAL(system);
	env_lend();
	rc = real_system(command);
	env_take_back();
	return rc;
}

AGP_EXPORT FILE *popen(const char *command, const char *type)
{
	FILE *f;

	REAL(popen);
	env_lend();
	f = real_popen(command, type);
	env_take_back();
	return f;
}

/*
 * The CUDA driver reads CUDA_INJECTION64_PATH with getenv at cuInit; the
 * workload's own view of its environment (environ, os.environ) does not
 * show it.
 */
AGP_EXPORT char *getenv(const char *name)
{
	REAL(getenv);
	if (agp_env_cuda[0] && !strcmp(name, "CUDA_INJECTION64_PATH"))
		return agp_env_cuda;
	return real_getenv(name);
}

AGP_EXPORT char *secure_getenv(const char *name)
{
	REAL(secure_getenv);
	if (agp_env_cuda[0] && !strcmp(name, "CUDA_INJECTION64_PATH"))
		return agp_env_cuda;
	return real_secure_getenv(name);
}

AGP_EXPORT void _exit(int status)
{
	REAL(_exit);
	agp_exit_record(status);
	real__exit(status);
	__builtin_unreachable();
}
