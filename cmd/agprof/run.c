/*
 * run.c - `agprof run`: start a program under the collector, forward
 * signals, drain the collector's buffers into the recording while it runs,
 * and exit with the program's own status.
 */
#include "builtin.h"
#include "check.h"
#include "config.h"
#include "recording.h"
#include "run_writer.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dirent.h>

static const char *const run_usage =
	"usage: agprof run [OPTIONS] [--] PROGRAM [ARGS...]\n"
	"\n"
	"Run PROGRAM under the agprof collector and record its TensorFlow activity\n"
	"(traces, graph-function calls, eager ops, black boxes, GPU) into one\n"
	"SQLite recording.  PROGRAM keeps its stdin, stdout, stderr, working\n"
	"directory and environment; forks and exec'd children are recorded too.\n"
	"\n"
	"options:\n"
	"  -o, --output FILE   write the recording to FILE (default: the first free\n"
	"                      agprof-N.agprof in the working directory)\n"
	"  -f, --force         overwrite FILE if it exists\n"
	"  -q, --quiet         do not print the summary line on stderr\n"
	"  --check [THRESHOLDS]\n"
	"                      after the run, check the recording as 'agprof check'\n"
	"                      does, with the threshold options below; the exit\n"
	"                      status is the program's own when it failed, else\n"
	"                      the check's (0 all hold, 1 one crossed)\n"
	"  -h, --help          show this help\n"
	"\n"
	"exit status: PROGRAM's own status; 128+N when it was killed by signal N;\n"
	"126 PROGRAM not executable; 127 PROGRAM not found; 2 usage error or the\n"
	"recording cannot be written (PROGRAM is then not started); 3 internal error.\n"
	"SIGINT, SIGTERM and SIGHUP sent to agprof are forwarded to PROGRAM.\n"
	"\n"
	"environment: AGPROF_COLLECTOR overrides the collector library's path;\n"
	"AGPROF_NO_GOT_PATCH=1 turns off GOT patching (docs/collector.md).\n"
	"\n"
	"--check ";

struct run_state {
	const char *output;
	int force, quiet;
	char **argv;             /* PROGRAM ARGS... */
	char *program_path;
	char *collector;
	int check;               /* --check: thresholds follow in check_argv */
	char **check_argv;
	int check_argc;
	char shm_dir[PATH_MAX];
	char output_path[PATH_MAX];
	pid_t child;
};

static volatile sig_atomic_t child_pid;

/* Forward signals sent to agprof; a terminal's own signal already reached the group. */
static void forward_signal(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	if (child_pid > 0 && (si->si_code == SI_USER || si->si_code == SI_QUEUE || si->si_pid != 0))
		kill(child_pid, sig);
}

static int install_forwarding(void)
{
	struct sigaction sa;
	const int sigs[] = { SIGINT, SIGTERM, SIGHUP };

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = forward_signal;
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL) != 0)
			return -1;
	return 0;
}

/* execvp's search, done up front so that 126/127 are reported clearly. */
static int resolve_program(const char *name, char **out)
{
	const char *path = getenv("PATH");
	int found_not_exec = 0;
	char buf[PATH_MAX];

	if (strchr(name, '/')) {
		if (access(name, F_OK) != 0)
			return 127;
		if (access(name, X_OK) != 0)
			return 126;
		*out = strdup(name);
		return 0;
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t n = strcspn(path, ":");
		struct stat st;

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)(n ? n : 1), n ? path : ".", name);
		if (stat(buf, &st) == 0 && S_ISREG(st.st_mode)) {
			if (access(buf, X_OK) == 0) {
				*out = strdup(buf);
				return 0;
			}
			found_not_exec = 1;
		}
		path += n;
		if (*path == ':')
			path++;
	}
	return found_not_exec ? 126 : 127;
}

static char *find_collector(void)
{
	static const char *const candidates[] = {
		"../../collector/libagprof-collector.so",                 /* build tree */
		"../" AGPROF_LIBDIR_REL "/agprof/libagprof-collector.so", /* installed */
		"../lib/agprof/libagprof-collector.so",
		NULL,
	};
	const char *env = getenv("AGPROF_COLLECTOR");

	if (env && *env)
		return access(env, R_OK) == 0 ? realpath(env, NULL) : NULL;
	return agprof_find_file(candidates);
}

static int choose_output(struct run_state *rs)
{
	if (rs->output) {
		snprintf(rs->output_path, sizeof(rs->output_path), "%s", rs->output);
		if (access(rs->output_path, F_OK) == 0) {
			if (!rs->force)
				return error("'%s' exists; use --force to overwrite it", rs->output_path);
			if (unlink(rs->output_path) != 0)
				return error("cannot overwrite '%s': %s", rs->output_path, strerror(errno));
		}
		return 0;
	}
	for (int n = 1; n < 100000; n++) {
		snprintf(rs->output_path, sizeof(rs->output_path), "agprof-%d.agprof", n);
		if (access(rs->output_path, F_OK) != 0)
			return 0;
	}
	return error("no free agprof-N.agprof name in the working directory");
}

static void remove_shm_dir(const char *dir);

/*
 * Buffer directories left by an agprof that was itself killed (its pid,
 * in the name, is gone): remove them so they do not pile up in /dev/shm.
 */
static void remove_stale_shm_dirs(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *de;
	char path[PATH_MAX];

	if (!d)
		return;
	while ((de = readdir(d))) {
		int pid;
		char rest[64];

		if (sscanf(de->d_name, "agprof-%d-%63s", &pid, rest) != 2 || pid <= 0 || pid == getpid())
			continue;
		if (kill(pid, 0) == 0 || errno != ESRCH)
			continue;  /* still running, or not ours to judge */
		snprintf(path, sizeof(path), "%s/%s", base, de->d_name);
		remove_shm_dir(path);
	}
	closedir(d);
}

static int make_shm_dir(struct run_state *rs)
{
	const char *bases[] = { "/dev/shm", getenv("TMPDIR"), "/tmp" };

	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		if (!bases[i] || access(bases[i], W_OK) != 0)
			continue;
		remove_stale_shm_dirs(bases[i]);
		snprintf(rs->shm_dir, sizeof(rs->shm_dir), "%s/agprof-%d-XXXXXX", bases[i], (int)getpid());
		if (mkdtemp(rs->shm_dir))
			return 0;
	}
	return error("cannot create a buffer directory in /dev/shm or /tmp: %s", strerror(errno));
}

static void remove_shm_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char path[PATH_MAX + 256];

	if (!d)
		return;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
			unlink(path);
		}
	closedir(d);
	rmdir(dir);
}

static void set_child_environment(const struct run_state *rs)
{
	const char *pre = getenv("LD_PRELOAD");
	char *value;

	setenv("AGPROF_ORIG_LD_PRELOAD", pre ? pre : "\001unset", 1);
	if (pre && *pre && asprintf(&value, "%s:%s", rs->collector, pre) > 0)
		setenv("LD_PRELOAD", value, 1);
	else
		setenv("LD_PRELOAD", rs->collector, 1);
	setenv("AGPROF_SHM", rs->shm_dir, 1);
	/* The CUDA driver loads the collector's CUPTI part from here at cuInit. */
	if (!getenv("CUDA_INJECTION64_PATH")) {
		setenv("CUDA_INJECTION64_PATH", rs->collector, 1);
		setenv("AGPROF_CUDA_INJECTION", "1", 1);  /* the collector hides it again */
	}
}

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Start the program; returns its pid, or -status (126/127) when exec failed. */
static pid_t start_program(struct run_state *rs)
{
	int pipefd[2], err = 0;
	pid_t pid;
	ssize_t n;

	if (pipe2(pipefd, O_CLOEXEC) != 0)
		return -EXIT_INTERNAL;
	pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -EXIT_INTERNAL;
	}
	if (pid == 0) {
		close(pipefd[0]);
		set_child_environment(rs);
		execv(rs->program_path, rs->argv);
		err = errno;
		if (write(pipefd[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(err == ENOENT ? 127 : 126);
	}
	close(pipefd[1]);
	n = read(pipefd[0], &err, sizeof(err));
	close(pipefd[0]);
	if (n == (ssize_t)sizeof(err)) {
		waitpid(pid, NULL, 0);
		error("cannot execute '%s': %s", rs->argv[0], strerror(err));
		return err == ENOENT ? -127 : -126;
	}
	return pid;
}

/* Threshold options of `agprof check` (analyzer/check.h) that take a value. */
static int is_check_option(const char *a, int *has_value)
{
	static const char *const with_value[] = { "--max-traces", "--max-eager-share", "--forbid", "--fail-on",
						  "--format", "--rules", "--set", NULL };

	for (int i = 0; with_value[i]; i++) {
		size_t n = strlen(with_value[i]);

		if (!strcmp(a, with_value[i])) {
			*has_value = 1;
			return 1;
		}
		if (!strncmp(a, with_value[i], n) && a[n] == '=') {
			*has_value = 0;
			return 1;
		}
	}
	return 0;
}

static int parse_options(struct run_state *rs, int argc, char **argv)
{
	int i, has_value;

	rs->check_argv = calloc((size_t)argc + 1, sizeof(*rs->check_argv));
	if (!rs->check_argv)
		return error("out of memory");
	for (i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "--")) {
			i++;
			break;
		}
		if (a[0] != '-')
			break;
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(run_usage, stdout);
			fputs(check_options_help, stdout);
			exit(EXIT_OK);
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (++i >= argc)
				return error("option '%s' needs a file name", a);
			rs->output = argv[i];
		} else if (!strncmp(a, "--output=", 9)) {
			rs->output = a + 9;
		} else if (!strcmp(a, "-f") || !strcmp(a, "--force")) {
			rs->force = 1;
		} else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
			rs->quiet = 1;
		} else if (!strcmp(a, "--check")) {
			rs->check = 1;
		} else if (is_check_option(a, &has_value)) {
			if (!rs->check)
				return error("option '%s' needs --check before it", a);
			rs->check_argv[rs->check_argc++] = argv[i];
			if (has_value) {
				if (++i >= argc)
					return error("option '%s' needs a value", a);
				rs->check_argv[rs->check_argc++] = argv[i];
			}
		} else {
			return error("unknown option '%s'; see 'agprof run --help'", a);
		}
	}
	if (i >= argc)
		return error("no program to run; see 'agprof run --help'");
	rs->argv = argv + i;
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_state rs;
	struct run_writer *w = NULL;
	struct run_session sess;
	struct run_totals totals;
	char err[512], cwd[PATH_MAX] = "";
	int status = 0, rc;
	pid_t pid;

	memset(&rs, 0, sizeof(rs));
	if (parse_options(&rs, argc, argv) != 0) {
		rc = EXIT_USAGE;
		goto cleanup;
	}
	rc = resolve_program(rs.argv[0], &rs.program_path);
	if (rc) {
		error(rc == 127 ? "'%s': command not found" : "'%s': permission denied (not executable)", rs.argv[0]);
		goto cleanup;
	}
	if (!(rs.collector = find_collector())) {
		error("cannot find the collector library libagprof-collector.so (set AGPROF_COLLECTOR)");
		rc = EXIT_INTERNAL;
		goto cleanup;
	}
	if (choose_output(&rs) != 0 || make_shm_dir(&rs) != 0) {
		rc = EXIT_USAGE;
		goto cleanup;
	}
	w = run_writer_create(rs.output_path, rs.shm_dir, err, sizeof(err));
	if (!w) {
		error("%s", err);
		remove_shm_dir(rs.shm_dir);
		rc = EXIT_USAGE;
		goto cleanup;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	memset(&sess, 0, sizeof(sess));
	sess.argv = rs.argv;
	sess.cwd = cwd;
	sess.start_wall_ns = clock_ns(CLOCK_REALTIME);
	sess.start_ns = clock_ns(CLOCK_MONOTONIC);
	install_forwarding();
	pid = start_program(&rs);
	if (pid < 0) {
		sess.exit_status = (int)-pid;
	} else {
		child_pid = pid;
		sess.main_pid = pid;
		for (;;) {
			pid_t r = waitpid(pid, &status, WNOHANG);

			if (r == pid)
				break;
			if (r < 0 && errno != EINTR)
				break;
			run_writer_poll(w);
			usleep(5000);
		}
		child_pid = 0;
		if (WIFSIGNALED(status)) {
			sess.exit_signal = WTERMSIG(status);
			sess.exit_status = 128 + WTERMSIG(status);
		} else {
			sess.exit_status = WEXITSTATUS(status);
		}
	}
	sess.end_ns = clock_ns(CLOCK_MONOTONIC);
	if (run_writer_finish(w, &sess, &totals) != 0)
		error("the recording '%s' may be incomplete", rs.output_path);
	remove_shm_dir(rs.shm_dir);
	if (!rs.quiet) {
		fprintf(stderr, "agprof: recorded %llu events (%llu traces, %llu graph-function calls, %llu eager ops",
			(unsigned long long)totals.events, (unsigned long long)totals.traces,
			(unsigned long long)totals.calls, (unsigned long long)totals.eager_ops);
		if (totals.blackbox)
			fprintf(stderr, ", %llu black-box runs", (unsigned long long)totals.blackbox);
		if (totals.gpu)
			fprintf(stderr, ", %llu GPU activities", (unsigned long long)totals.gpu);
		if (totals.session_runs)
			fprintf(stderr, ", %llu Session runs", (unsigned long long)totals.session_runs);
		fprintf(stderr, ") from %d process%s into '%s'\n", totals.processes,
			totals.processes == 1 ? "" : "es", rs.output_path);
		if (totals.dropped)
			fprintf(stderr, "agprof: warning: %llu events were dropped (buffers full)\n",
				(unsigned long long)totals.dropped);
	}
	rc = sess.exit_status;
	if (rs.check && rc == 0) {
		struct recording rec;

		/* The program succeeded: the check decides. */
		fflush(stderr);
		if (recording_open(&rec, rs.output_path) != 0) {
			rc = EXIT_USAGE;
		} else {
			rc = check_run(&rec, rs.check_argc, rs.check_argv);
			recording_close(&rec);
		}
	}
cleanup:
	free(rs.check_argv);
	free(rs.program_path);
	free(rs.collector);
	return rc;
}
