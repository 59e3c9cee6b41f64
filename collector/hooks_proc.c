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

extern char **environ;

/* The launcher's variables: a child gets them from us, never from envp. */
static int is_ours(const char *entry)
{
#define STARTS(s, lit) (!strncmp((s), (lit), AGP_LITERAL_LEN(lit)))
	return STARTS(entry, "LD_PRELOAD=") || STARTS(entry, AGP_ENV_EQ(AGP_ENV_SHM)) ||
	       STARTS(entry, AGP_ENV_EQ(AGP_ENV_ORIG_PRELOAD)) || STARTS(entry, AGP_ENV_EQ(AGP_ENV_CUDA_INJECTION));
#undef STARTS
}

/* The value of name_eq ("NAME=") in envp, or NULL. */
static const char *env_value(char *const envp[], const char *name_eq)
{
	size_t n = strlen(name_eq);

	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], name_eq, n))
			return envp[i] + n;
	return NULL;
}

/* A longer LD_PRELOAD than this is passed on untouched (the child is not recorded). */
#define PRELOAD_MAX 32768

/*
 * The LD_PRELOAD a child gets: the collector, then what the child was asked
 * to preload (pre, NULL if nothing).  Written into out (room: see env_bytes).
 */
static void preload_value(char *out, const char *pre)
{
	size_t c = strlen(agp_env_preload), n = pre ? strlen(pre) : 0;

	if (pre && !strncmp(pre, agp_env_preload, c) && (pre[c] == ':' || pre[c] == ' ' || !pre[c]))
		c = 0;  /* already first in the list */
	memcpy(out, agp_env_preload, c);
	if (c && n)
		out[c++] = ':';
	memcpy(out + c, pre ? pre : "", n + 1);
}

/*
 * The launcher's variables, put back into a child's environment.  No
 * allocation: Python's subprocess runs execve in a vfork child, where malloc
 * could deadlock on a lock another thread of the parent held.  The caller
 * provides the vector (env_room entries) and the text (env_bytes), both on
 * its stack.
 */
static size_t env_room(char *const envp[])
{
	size_t n = 0;

	while (envp && envp[n])
		n++;
	return n + 6;
}

static size_t env_bytes(char *const envp[])
{
	const char *pre = env_value(envp, "LD_PRELOAD=");
	size_t n = pre ? strnlen(pre, PRELOAD_MAX + 1) : 0;

	return 2 * n + strlen(agp_env_preload) + strlen(agp_env_shm) + strlen(agp_env_cuda) + 160;
}

static char *env_put(char **at, const char *name_eq, const char *value)
{
	char *start = *at;
	size_t n = strlen(name_eq), v = strlen(value);

	memcpy(start, name_eq, n);
	memcpy(start + n, value, v + 1);
	*at = start + n + v + 1;
	return start;
}

static char **env_fill(char **out, char *text, char *const envp[])
{
	const char *pre = env_value(envp, "LD_PRELOAD=");
	size_t k = 0;

	if (pre && strnlen(pre, PRELOAD_MAX + 1) > PRELOAD_MAX)
		return (char **)envp;
	for (size_t i = 0; envp && envp[i]; i++)
		if (!is_ours(envp[i]))
			out[k++] = envp[i];
	/* what the child asked for comes after the collector, and is what it sees of LD_PRELOAD */
	memcpy(text, "LD_PRELOAD=", AGP_LITERAL_LEN("LD_PRELOAD="));
	preload_value(text + AGP_LITERAL_LEN("LD_PRELOAD="), pre);
	out[k++] = text;
	text += strlen(text) + 1;
	out[k++] = env_put(&text, AGP_ENV_EQ(AGP_ENV_SHM), agp_env_shm);
	out[k++] = env_put(&text, AGP_ENV_EQ(AGP_ENV_ORIG_PRELOAD), pre ? pre : AGP_PRELOAD_UNSET);
	/* a CUDA_INJECTION64_PATH the child was given is its own: keep it, add none */
	if (agp_env_cuda[0] && !env_value(envp, "CUDA_INJECTION64_PATH=")) {
		out[k++] = env_put(&text, "CUDA_INJECTION64_PATH=", agp_env_cuda);
		out[k++] = env_put(&text, AGP_ENV_EQ(AGP_ENV_CUDA_INJECTION), "1");
	}
	out[k] = NULL;
	return out;
}

/* envp with the collector's variables, in the calling frame's stack. */
#define COLLECTOR_ENV(envp)                                                                   \
	(agp_env_shm[0] ? env_fill(alloca(env_room(envp) * sizeof(char *)), alloca(env_bytes(envp)), (envp)) \
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
	REAL(execve);
	return real_execve(path, argv, COLLECTOR_ENV(envp));
}

AGP_EXPORT int execv(const char *path, char *const argv[])
{
	REAL(execve);
	return real_execve(path, argv, COLLECTOR_ENV(environ));
}

AGP_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	REAL(execvpe);
	return real_execvpe(file, argv, COLLECTOR_ENV(envp));
}

AGP_EXPORT int execvp(const char *file, char *const argv[])
{
	REAL(execvpe);
	return real_execvpe(file, argv, COLLECTOR_ENV(environ));
}

/*
 * Resolve the real exec functions at start-up: dlsym in a vfork child could
 * take the loader's lock.
 */
void agp_proc_hooks_init(void)
{
	REAL(execve);
	REAL(execvpe);
	REAL(posix_spawn);
	REAL(posix_spawnp);
	REAL(system);
	REAL(popen);
	REAL(secure_getenv);
	REAL(getenv);
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
	REAL(posix_spawn);
	return real_posix_spawn(pid, path, fa, attr, argv, COLLECTOR_ENV(envp));
}

AGP_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
			    const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
	REAL(posix_spawnp);
	return real_posix_spawnp(pid, file, fa, attr, argv, COLLECTOR_ENV(envp));
}

/*
 * system() and popen() spawn through glibc internals: lend them the
 * environment, then put back exactly what the workload had (its own
 * LD_PRELOAD included, whatever it set since start-up).  Not async-signal-
 * safe, as system() and popen() themselves are not.
 */
static const char *const lent_names[] = {
	"LD_PRELOAD", AGP_ENV_SHM, AGP_ENV_ORIG_PRELOAD, "CUDA_INJECTION64_PATH", AGP_ENV_CUDA_INJECTION,
};
#define NLENT (sizeof(lent_names) / sizeof(lent_names[0]))

struct env_saved {
	int lent;
	char *value[NLENT];  /* NULL: was unset */
};

static void env_lend(struct env_saved *sv)
{
	char *preload;
	const char *pre;

	memset(sv, 0, sizeof(*sv));
	if (!agp_env_shm[0])
		return;
	REAL(getenv);  /* ours would show the launcher's CUDA path */
	for (size_t i = 0; i < NLENT; i++) {
		const char *v = real_getenv(lent_names[i]);

		if (v && !(sv->value[i] = strdup(v)))
			goto undo;
	}
	pre = sv->value[0];
	if (pre && strlen(pre) > PRELOAD_MAX)
		goto undo;  /* as env_fill: passed on untouched */
	preload = malloc(strlen(agp_env_preload) + (pre ? strlen(pre) : 0) + 2);
	if (!preload)
		goto undo;
	preload_value(preload, pre);
	setenv("LD_PRELOAD", preload, 1);
	free(preload);
	setenv(AGP_ENV_SHM, agp_env_shm, 1);
	setenv(AGP_ENV_ORIG_PRELOAD, pre ? pre : AGP_PRELOAD_UNSET, 1);
	if (agp_env_cuda[0] && !sv->value[3]) {
		setenv("CUDA_INJECTION64_PATH", agp_env_cuda, 1);
		setenv(AGP_ENV_CUDA_INJECTION, "1", 1);
	}
	sv->lent = 1;
	return;
undo:
	for (size_t i = 0; i < NLENT; i++)
		free(sv->value[i]);
	memset(sv, 0, sizeof(*sv));
}

static void env_take_back(struct env_saved *sv)
{
	if (!sv->lent)
		return;
	for (size_t i = 0; i < NLENT; i++) {
		if (sv->value[i])
			setenv(lent_names[i], sv->value[i], 1);
		else
			unsetenv(lent_names[i]);
		free(sv->value[i]);
	}
	sv->lent = 0;
}

AGP_EXPORT int system(const char *command)
{
	struct env_saved sv;
	int rc;

	REAL(system);
	env_lend(&sv);
	rc = real_system(command);
	env_take_back(&sv);
	return rc;
}

AGP_EXPORT FILE *popen(const char *command, const char *type)
{
	struct env_saved sv;
	FILE *f;

	REAL(popen);
	env_lend(&sv);
	f = real_popen(command, type);
	env_take_back(&sv);
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
