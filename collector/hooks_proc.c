/*
 * hooks_proc.c - process lifecycle hooks: exec (so that exec'd children are
 * recorded too, although the launcher's variables are hidden from the
 * workload's own environment) and _exit (to record the exit status of
 * processes that leave without running atexit handlers, e.g. forked Python
 * multiprocessing workers).
 */
#include "collector.h"

#include <dlfcn.h>
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
 * A copy of envp with the launcher's variables put back.  Returns envp itself
 * when the collector is not active (nothing to pass on) or memory is short.
 */
static char **env_with_collector(char *const envp[])
{
	size_t n = 0, k = 0;
	char **out;

	if (!agp_env_shm[0])
		return (char **)envp;
	while (envp && envp[n])
		n++;
	out = malloc((n + 6) * sizeof(*out));
	if (!out)
		return (char **)envp;
	for (size_t i = 0; i < n; i++)
		if (!is_ours(envp[i]))
			out[k++] = envp[i];
	if (asprintf(&out[k], "LD_PRELOAD=%s", agp_env_preload) > 0)
		k++;
	if (asprintf(&out[k], "AGPROF_SHM=%s", agp_env_shm) > 0)
		k++;
	if (asprintf(&out[k], "AGPROF_ORIG_LD_PRELOAD=%s", agp_env_orig) > 0)
		k++;
	if (agp_env_cuda[0] && asprintf(&out[k], "CUDA_INJECTION64_PATH=%s", agp_env_cuda) > 0)
		k++;
	if (agp_env_cuda[0] && asprintf(&out[k], "AGPROF_CUDA_INJECTION=1") > 0)
		k++;
	out[k] = NULL;
	return out;
}

#define REAL(name) \
	static __typeof__(name) *real_##name; \
	if (!real_##name) \
		real_##name = (__typeof__(name) *)dlsym(RTLD_NEXT, #name)

AGP_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	REAL(execve);
	return real_execve(path, argv, env_with_collector(envp));
}

AGP_EXPORT int execv(const char *path, char *const argv[])
{
	REAL(execve);
	return real_execve(path, argv, env_with_collector(environ));
}

AGP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	REAL(execvpe);
	return real_execvpe(file, argv, env_with_collector(envp));
}

AGP_EXPORT int execvp(const char *file, char *const argv[])
{
	REAL(execvpe);
	return real_execvpe(file, argv, env_with_collector(environ));
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
	REAL(posix_spawn);
	return real_posix_spawn(pid, path, fa, attr, argv, env_with_collector(envp));
}

AGP_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	REAL(posix_spawnp);
	return real_posix_spawnp(pid, file, fa, attr, argv, env_with_collector(envp));
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
