/*
 * run.c - `agprof run`: start a program under the collector, forward
 * signals, drain the collector's buffers into the recording while it runs,
 * and exit with the program's own status.
 */
#include "builtin.h"
#include "agp_protocol.h"
#include "check.h"
#include "options.h"
#include "config.h"
#include "db.h"
#include "keeper.h"
#include "publish.h"
#include "recording.h"
#include "run_attach.h"
#include "run_writer.h"
#include "strbuf.h"
#include "tfconfig.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
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
	"options:\n";

static const char *const run_epilogue =
	"\n"
	"exit status: PROGRAM's own status; 128+N when it was killed by signal N;\n"
	"126 PROGRAM not executable; 127 PROGRAM not found; 2 usage error or the\n"
	"recording cannot be created (PROGRAM is then not started); 3 the recording\n"
	"failed during the run (disk full, I/O error: it keeps what was stored\n"
	"before) or internal error.  PROGRAM's own failure takes precedence.\n"
	"The recording is written to a hidden file beside FILE and renamed to FILE\n"
	"once PROGRAM ran: a program that cannot start leaves FILE as it was.\n"
	"If agprof itself is killed (SIGKILL, a crash), a small keeper process it\n"
	"started moves the recording to FILE, marked cut short (no exit status:\n"
	"nobody saw PROGRAM end), with what was committed until then (rows of the\n"
	"last half second can be missing).  Only if the keeper is killed too does\n"
	"it stay in the hidden file; agprof report FILE then names it.\n"
	"SIGUSR2 sent to agprof (not to PROGRAM) toggles the capture window:\n"
	"it stops recording eager ops, graph calls, black boxes and Session steps,\n"
	"and the next one starts again (the recording keeps the windows).\n"
	"SIGINT, SIGTERM and SIGHUP sent to agprof are forwarded to PROGRAM; a\n"
	"second SIGINT or SIGTERM (the first once PROGRAM has ended) ends agprof\n"
	"after closing the recording, even if PROGRAM goes on; a third at once.\n"
	"\n"
	"environment: " AGP_ENV_COLLECTOR " overrides the collector library's path;\n"
	AGP_ENV_NO_GOT_PATCH "=1 turns off GOT patching (docs/collector.md);\n"
	AGP_ENV_NO_KERNELS "=1 is --no-kernels, " AGP_ENV_KERNELS "=all --kernels=all.\n";

enum { RUN_CHECK = OPT_KEY_BASE, RUN_USER_CODE, RUN_LIBRARY, RUN_NO_KERNELS, RUN_DELAY, RUN_DURATION, RUN_CAPTURE,
       RUN_MAX_EVENTS, RUN_MAX_SIZE, RUN_KERNELS };

static const struct opt run_options[] = {
	{ "output", 'o', "FILE", "write the recording to FILE (default: the first free\n"
				 "agprof-N.agprof in the working directory); in FILE,\n"
				 "%r is the task index from TF_CONFIG (0 without it),\n"
				 "%t the task type, %h the host name, %p agprof's pid,\n"
				 "%% a '%'" },
	{ "force", 'f', NULL, "overwrite FILE if it exists" },
	{ "quiet", 'q', NULL, "do not print the summary line on stderr" },
	{ "check", RUN_CHECK, NULL, "after the run, check the recording as 'agprof check'\n"
				    "does, with the threshold options below; the exit\n"
				    "status is the program's own when it failed, else\n"
				    "the check's (0 all hold, 1 one crossed)" },
	{ "user-code", RUN_USER_CODE, "PATH", "treat Python files under PATH as your code, even in a\n"
					      "site-packages directory, a PYTHONPATH checkout, an\n"
					      "editable install or a vendored copy (repeatable)" },
	{ "library", RUN_LIBRARY, "PATH", "treat Python files under PATH as library code: findings\n"
					  "then point at the line of yours that called it\n"
					  "(repeatable; the longest matching PATH wins); PYTHONPATH\n"
					  "entries outside your tree, editable installs of other\n"
					  "projects and third_party/, vendor/ copies already are" },
	{ "no-kernels", RUN_NO_KERNELS, NULL, "do not record CPU kernel executions (graph calls'\n"
					      "ops; 'agprof report --ops' is then empty)" },
	{ "kernels", RUN_KERNELS, "MODE", "sampled (the default): count every CPU kernel, and\n"
					  "record them one by one for the first 5 calls of each\n"
					  "graph function per thread, then one call whenever 256\n"
					  "times the last sampled call's duration (at most doubling\n"
					  "from one sample to the next) has passed;\n"
					  "all: record every kernel one by one (slower); off:\n"
					  "--no-kernels" },
	{ "delay", RUN_DELAY, "SECONDS", "record eager ops, graph calls, black boxes and Session\n"
					 "steps only from SECONDS after the start (traces and\n"
					 "process facts are always recorded)" },
	{ "duration", RUN_DURATION, "SECONDS", "stop recording them SECONDS after the window opened\n"
					       "(the start, or the end of --delay)" },
	{ "capture", RUN_CAPTURE, "FUNCTION:FROM-TO", "record them from the FROM-th to the TO-th call of\n"
						      "the tf.function FUNCTION (counted from 1);\n"
						      "'--capture api': only between agprof.start()\n"
						      "and agprof.stop() in the program" },
	{ "max-events", RUN_MAX_EVENTS, "N", "keep N eager ops, graph calls, black boxes and Session\n"
					     "steps one by one (default 1000000; 0: no bound);\n"
					     "later eager ops, graph calls and black boxes are kept\n"
					     "as exact per-second counts and times per thread, op\n"
					     "or function and line (the report says from when;\n"
					     "kernel-sampled calls and each function's first call\n"
					     "stay rows); also at most N kernels one by one: later\n"
					     "calls' kernels are only counted; and sooner if\n"
					     "events come faster than the launcher stores rows" },
	{ "max-size", RUN_MAX_SIZE, "MB", "the same once the recording reaches MB megabytes\n"
					  "(checked every quarter second)" },
	OPT_HELP,
	OPT_TEXT("\nwith --check, the options of 'agprof check':"),
	OPT_END,
};

/*
 * The launcher's bit of the capture window (AGP_CAPTURE_LAUNCHER): --delay,
 * --duration and SIGUSR2 move it; --capture is the collector's (it counts
 * the calls) and only passes through here.
 */
struct run_window {
	uint64_t delay_ns, duration_ns;
	int delay_given, duration_given;
	const char *capture;     /* --capture's value, or NULL */
	char desc[320];          /* the options as meta.capture says them */
	int closed;              /* the launcher's bit now */
	int delay_done, duration_done;
	uint64_t opened_ns;      /* when --duration starts counting */
	int toggles_done;        /* SIGUSR2 toggles applied */
};

struct run_state {
	const char *output;
	int force, quiet;
	int no_kernels;          /* --no-kernels, --kernels=off */
	int kernels_all;         /* --kernels=all */
	char **argv;             /* PROGRAM ARGS... */
	char *program_path;
	char *collector;
	struct check_config *check; /* --check: the thresholds that follow it */
	char *user_code, *library; /* ':'-separated absolute prefixes, or NULL */
	char shm_dir[PATH_MAX];
	int shm_base_fd;         /* the per-user buffer folder */
	int shm_fd;              /* our session folder, flock'ed while we live */
	char output_path[PATH_MAX];
	char tmp_path[PATH_MAX]; /* the recording until the program has run */
	struct keeper keeper;    /* publishes tmp_path if agprof is killed before it does */
	int default_name;        /* output_path was chosen as agprof-N.agprof */
	int write_error_said;
	pid_t child;
	struct tf_config tf;     /* from TF_CONFIG; task_index -1 without it */
	int has_tf;
	struct run_window window;
	struct run_budget budget; /* --max-events, --max-size */
};

static volatile sig_atomic_t child_pid;
static volatile sig_atomic_t stop_signal;  /* the second SIGINT/SIGTERM: stop waiting */
static volatile sig_atomic_t stop_count;
static volatile sig_atomic_t program_ended;  /* nothing left to forward to */
static volatile sig_atomic_t capture_toggles;  /* SIGUSR2 received */

/* SIGUSR2 to agprof toggles the capture window (applied by window_tick). */
static void toggle_signal(int sig)
{
	(void)sig;
	capture_toggles++;
}

static void program_exited(int sig)
{
	(void)sig;
}

/*
 * Forward signals sent to agprof; a terminal's own signal already reached the
 * group.  A second SIGINT/SIGTERM (the first once the program has ended)
 * means "stop now": agprof closes the recording with what it has and exits
 * even if the program goes on; a third ends agprof at once.
 */
static void forward_signal(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	if (child_pid > 0 && (si->si_code == SI_USER || si->si_code == SI_QUEUE || si->si_pid != 0))
		kill(child_pid, sig);
	if (sig == SIGHUP)
		return;
	if (program_ended && stop_count == 0)
		stop_count = 1;
	if (++stop_count == 2) {
		stop_signal = sig;
		run_writer_stop();
	} else if (stop_count >= 3) {
		signal(sig, SIG_DFL);
		raise(sig);
	}
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
	/* the program's end cuts the writer's pause short (no SA_RESTART): the finish starts at once */
	sa.sa_handler = program_exited;
	sa.sa_flags = SA_NOCLDSTOP;
	if (sigaction(SIGCHLD, &sa, NULL) != 0)
		return -1;
	sa.sa_handler = toggle_signal;
	sa.sa_flags = SA_RESTART;
	return sigaction(SIGUSR2, &sa, NULL);
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
	const char *env = getenv(AGP_ENV_COLLECTOR);

	if (env && *env)
		return access(env, R_OK) == 0 ? realpath(env, NULL) : NULL;
	return agprof_find_file(candidates);
}

/*
 * TF_CONFIG as the program will see it (it inherits our environment): its
 * task names the recording (%r) and goes into meta.  Bad JSON is the
 * program's problem, not ours: a warning, and the run goes on.
 */
static void read_tf_config(struct run_state *rs)
{
	const char *env = getenv("TF_CONFIG");
	char err[128];

	rs->tf.task_index = -1;
	if (!env || !*env)
		return;
	if (tf_config_parse(env, &rs->tf, err, sizeof(err)) != 0) {
		fprintf(stderr, "agprof: warning: TF_CONFIG is not valid JSON (%s); its task is not recorded\n", err);
		memset(&rs->tf, 0, sizeof(rs->tf));
		rs->tf.task_index = -1;
		return;
	}
	rs->has_tf = 1;
}

/* Expand -o's %r %t %h %p %% into rs->output_path; 0 or -1 after the error. */
static int expand_output(struct run_state *rs)
{
	struct strbuf sb = STRBUF_INIT;
	char host[256] = "";
	int rc = 0;

	gethostname(host, sizeof(host) - 1);
	for (const char *p = rs->output; *p && !rc; p++) {
		if (*p != '%') {
			strbuf_addch(&sb, *p);
			continue;
		}
		switch (*++p) {
		case '%': strbuf_addch(&sb, '%'); break;
		case 'r': strbuf_addf(&sb, "%ld", rs->tf.task_index < 0 ? 0L : rs->tf.task_index); break;
		case 't': strbuf_addstr(&sb, rs->tf.task_type[0] ? rs->tf.task_type : "worker"); break;
		case 'h': strbuf_addstr(&sb, host); break;
		case 'p': strbuf_addf(&sb, "%ld", (long)getpid()); break;
		default: rc = error("unknown '%%%.1s' in output name '%s' (%%r %%t %%h %%p %%%%)", p, rs->output); break;
		}
		if (!*p)
			break;
	}
	if (!rc && (strbuf_failed(&sb) || sb.len >= sizeof(rs->output_path)))
		rc = error("output name '%s' is too long", rs->output);
	if (!rc)
		memcpy(rs->output_path, sb.buf, sb.len + 1);
	strbuf_release(&sb);
	return rc;
}

static int choose_output(struct run_state *rs)
{
	if (rs->output) {
		if (expand_output(rs) != 0)
			return -1;
		/* --force replaces FILE only once the program has run (publish_output) */
		if (access(rs->output_path, F_OK) == 0 && !rs->force)
			return error("'%s' exists; use --force to overwrite it", rs->output_path);
		return 0;
	}
	rs->default_name = 1;
	for (int n = 1; n < 100000; n++) {
		snprintf(rs->output_path, sizeof(rs->output_path), "agprof-%d.agprof", n);
		if (access(rs->output_path, F_OK) != 0)
			return 0;
	}
	return error("no free agprof-N.agprof name in the working directory");
}

/* The hidden file beside the output that holds the recording during the run. */
static int make_tmp_output(struct run_state *rs)
{
	const char *slash = strrchr(rs->output_path, '/');
	int dirlen = slash ? (int)(slash - rs->output_path + 1) : 0;
	mode_t mask = umask(0);
	int fd;

	umask(mask);
	if (snprintf(rs->tmp_path, sizeof(rs->tmp_path), "%.*s.%s.XXXXXX", dirlen, rs->output_path,
		     rs->output_path + dirlen) >= (int)sizeof(rs->tmp_path))
		return error("output name '%s' is too long", rs->output_path);
	fd = mkostemp(rs->tmp_path, O_CLOEXEC);
	if (fd < 0) {
		error("cannot create '%s': %s", rs->output_path, strerror(errno));
		rs->tmp_path[0] = '\0';
		return -1;
	}
	fchmod(fd, 0666 & ~mask);  /* as a plain creat() would have made FILE */
	close(fd);
	/* without a keeper a kill leaves the hidden file, which recording_open's hint names */
	keeper_start(&rs->keeper, rs->tmp_path, rs->output_path,
		     &(struct keeper_run){ .argv = rs->argv, .force = rs->force, .default_name = rs->default_name });
	return 0;
}

/* Remove the temporary recording and SQLite's side files; the keeper has nothing left to keep. */
static void remove_tmp_output(struct run_state *rs)
{
	keeper_done(&rs->keeper);
	if (!rs->tmp_path[0])
		return;
	db_remove(rs->tmp_path);
	rs->tmp_path[0] = '\0';
}

/* Move the finished recording to its name (publish.h). */
static int publish_output(struct run_state *rs)
{
	if (recording_publish(rs->tmp_path, rs->output_path, sizeof(rs->output_path), rs->force,
			      rs->default_name) != 0) {
		error("cannot move the recording to '%s' (%s); it is in '%s'", rs->output_path, strerror(errno),
		      rs->tmp_path);
		rs->tmp_path[0] = '\0';
		return -1;
	}
	rs->tmp_path[0] = '\0';
	return 0;
}

/*
 * Buffers live in <base>/agprof-<uid>/<pid>-XXXXXX.  The per-user folder is
 * used only if it is a real directory (not a link), ours, mode 0700: the
 * shared /dev/shm itself is never swept.  A session folder is alive while its
 * launcher holds flock on it: a pid proves nothing across PID namespaces that
 * share /dev/shm.
 */
static int open_user_base(const char *base)
{
	char path[PATH_MAX];
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/agprof-%u", base, (unsigned)geteuid());
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		return -1;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

/* A directory stream over a copy of fd (closedir() then leaves fd open), or NULL. */
static DIR *opendir_dup(int fd)
{
	int dup_fd = dup(fd);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;

	if (!d && dup_fd >= 0)
		close(dup_fd);
	return d;
}

/* Unlink every entry of a session folder (never following a link), then the folder. */
static void remove_session_dir(int basefd, const char *name, int fd)
{
	DIR *d = opendir_dup(fd);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			unlinkat(fd, de->d_name, 0);
	closedir(d);
	unlinkat(basefd, name, AT_REMOVEDIR);
}

/* Session folders whose launcher is gone (nobody holds their lock). */
static void remove_stale_sessions(int basefd)
{
	DIR *d = opendir_dup(basefd);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		struct stat st;
		int fd;

		if (de->d_name[0] == '.')
			continue;
		/* a link, or anything but a directory, is not a session: leave it */
		fd = openat(basefd, de->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && st.st_uid == geteuid() && flock(fd, LOCK_EX | LOCK_NB) == 0)
			remove_session_dir(basefd, de->d_name, fd);
		close(fd);  /* also drops the lock */
	}
	closedir(d);
}

/* Create our session folder and lock it; the lock is taken before anyone can sweep it. */
static int make_session_dir(struct run_state *rs, const char *base, int basefd)
{
	for (int attempt = 0; attempt < 8; attempt++) {
		struct stat a, b;
		char *name;
		int fd;

		snprintf(rs->shm_dir, sizeof(rs->shm_dir), "%s/agprof-%u/%d-XXXXXX", base, (unsigned)geteuid(),
			 (int)getpid());
		if (!mkdtemp(rs->shm_dir))
			return -1;
		name = strrchr(rs->shm_dir, '/') + 1;
		fd = openat(basefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			return -1;
		/* a sweeper may have taken it between mkdtemp and the lock: check it is still ours */
		if (flock(fd, LOCK_EX | LOCK_NB) == 0 && fstat(fd, &a) == 0 &&
		    fstatat(basefd, name, &b, AT_SYMLINK_NOFOLLOW) == 0 && a.st_ino == b.st_ino && a.st_dev == b.st_dev) {
			rs->shm_fd = fd;
			return 0;
		}
		close(fd);
	}
	errno = EBUSY;
	return -1;
}

static int make_shm_dir(struct run_state *rs)
{
	const char *bases[] = { "/dev/shm", getenv("TMPDIR"), "/tmp" };
	int err = 0;

	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		int basefd;

		if (!bases[i] || !*bases[i] || access(bases[i], W_OK) != 0)
			continue;
		basefd = open_user_base(bases[i]);
		if (basefd < 0) {
			err = errno;
			continue;
		}
		remove_stale_sessions(basefd);
		if (make_session_dir(rs, bases[i], basefd) == 0) {
			rs->shm_base_fd = basefd;
			return 0;
		}
		err = errno;
		close(basefd);
	}
	return error("cannot create a buffer directory agprof-%u in /dev/shm or /tmp: %s", (unsigned)geteuid(),
		     strerror(err ? err : ENOENT));
}

static void remove_shm_dir(struct run_state *rs)
{
	if (rs->shm_fd < 0)
		return;
	remove_session_dir(rs->shm_base_fd, strrchr(rs->shm_dir, '/') + 1, rs->shm_fd);
	close(rs->shm_fd);
	close(rs->shm_base_fd);
	rs->shm_fd = rs->shm_base_fd = -1;
}

static void set_child_environment(const struct run_state *rs)
{
	const char *pre = getenv("LD_PRELOAD");
	char *value;

	setenv(AGP_ENV_ORIG_PRELOAD, pre ? pre : AGP_PRELOAD_UNSET, 1);
	if (pre && *pre && asprintf(&value, "%s:%s", rs->collector, pre) > 0)
		setenv("LD_PRELOAD", value, 1);
	else
		setenv("LD_PRELOAD", rs->collector, 1);
	setenv(AGP_ENV_SHM, rs->shm_dir, 1);
	/* Frame classification overrides (collector/pyframe.c); children inherit them. */
	if (rs->user_code)
		setenv(AGP_ENV_USER_CODE, rs->user_code, 1);
	if (rs->library)
		setenv(AGP_ENV_LIBRARY, rs->library, 1);
	if (rs->no_kernels)
		setenv(AGP_ENV_NO_KERNELS, "1", 1);
	if (rs->kernels_all)
		setenv(AGP_ENV_KERNELS, "all", 1);
	/* The capture window (collector/capture.c); never a parent agprof's. */
	unsetenv(AGP_ENV_CAPTURE);
	unsetenv(AGP_ENV_CAPTURE_OFF);
	if (rs->window.capture)
		setenv(AGP_ENV_CAPTURE, rs->window.capture, 1);
	if (rs->window.delay_ns)
		setenv(AGP_ENV_CAPTURE_OFF, "1", 1);
	/* The CUDA driver loads the collector's CUPTI part from here at cuInit. */
	if (!getenv("CUDA_INJECTION64_PATH")) {
		setenv("CUDA_INJECTION64_PATH", rs->collector, 1);
		setenv(AGP_ENV_CUDA_INJECTION, "1", 1);  /* the collector hides it again */
	}
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

static int append_prefix(char **list, const char *path)
{
	char *joined;

	if (asprintf(&joined, "%s%s%s", *list ? *list : "", *list ? ":" : "", path) < 0)
		return error("out of memory");
	free(*list);
	*list = joined;
	return 0;
}

/*
 * Add PATH to a --user-code / --library list, absolute (Python names files
 * by absolute paths) and also resolved when it goes through a symlink.
 */
static int add_override(char **list, const char *opt, const char *path)
{
	char cwd[PATH_MAX], abs[2 * PATH_MAX + 2], real[PATH_MAX];

	if (!path || !*path || strchr(path, ':'))
		return error("option '%s' needs a path without ':'", opt);
	if (path[0] == '/')
		snprintf(abs, sizeof(abs), "%s", path);
	else if (getcwd(cwd, sizeof(cwd)))
		snprintf(abs, sizeof(abs), "%s/%s", cwd, path);
	else
		return error("cannot resolve '%s': %s", path, strerror(errno));
	if (append_prefix(list, abs))
		return -1;
	if (realpath(abs, real) && strcmp(real, abs) && !strchr(real, ':'))
		return append_prefix(list, real);
	return 0;
}

/* SECONDS of --delay / --duration: a number from 0 to a year. */
static int parse_seconds(const char *opt, const char *value, uint64_t *ns)
{
	char *end;
	double v = value ? strtod(value, &end) : -1;

	if (!value || end == value || *end || !(v >= 0 && v <= 366.0 * 86400))
		return error("option '%s' needs a number of seconds, not '%s'", opt, value ? value : "");
	*ns = (uint64_t)(v * 1e9);
	return 0;
}

/* N of --max-events / MB of --max-size: a whole number from 0 to limit. */
static int parse_count(const char *opt, const char *value, uint64_t limit, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = value && *value >= '0' && *value <= '9' ? strtoull(value, &end, 10) : 0;
	if (!value || *value < '0' || *value > '9' || *end || errno || v > limit)
		return error("option '%s' needs a whole number from 0 to %llu, not '%s'", opt,
			     (unsigned long long)limit, value ? value : "");
	*out = v;
	return 0;
}

/* FUNCTION:FROM-TO with 1 <= FROM <= TO, or "api" (collector/capture.c reads the same). */
static int check_capture(const char *value)
{
	const char *colon = value ? strrchr(value, ':') : NULL;
	unsigned long long from, to;
	char tail;

	if (value && !strcmp(value, "api"))
		return 0;
	if (!colon || colon == value || colon - value >= 256 ||
	    sscanf(colon + 1, "%llu-%llu%c", &from, &to, &tail) != 2 || from < 1 || to < from)
		return error("option '--capture' needs FUNCTION:FROM-TO (1 <= FROM <= TO) or 'api', not '%s'",
			     value ? value : "");
	return 0;
}

static int run_option(void *ctx, int key, const char *value)
{
	struct run_state *rs = ctx;

	switch (key) {
	case RUN_DELAY:
		rs->window.delay_given = 1;
		return parse_seconds("--delay", value, &rs->window.delay_ns);
	case RUN_DURATION:
		rs->window.duration_given = 1;
		return parse_seconds("--duration", value, &rs->window.duration_ns);
	case RUN_CAPTURE:
		rs->window.capture = value;
		return check_capture(value);
	case RUN_MAX_EVENTS:
		return parse_count("--max-events", value, INT64_MAX, &rs->budget.max_events);
	case RUN_MAX_SIZE:
		if (parse_count("--max-size", value, 1u << 30, &rs->budget.max_bytes))
			return -1;
		rs->budget.max_bytes <<= 20;
		return 0;
	case 'o':
		rs->output = value;
		return 0;
	case 'f':
		rs->force = 1;
		return 0;
	case 'q':
		rs->quiet = 1;
		return 0;
	case RUN_CHECK:
		if (!rs->check && !(rs->check = check_config_new()))
			return error("out of memory");
		return 0;
	case RUN_USER_CODE:
		return add_override(&rs->user_code, "--user-code", value);
	case RUN_LIBRARY:
		return add_override(&rs->library, "--library", value);
	case RUN_NO_KERNELS:
		rs->no_kernels = 1;
		return 0;
	case RUN_KERNELS:
		if (strcmp(value, "sampled") && strcmp(value, "all") && strcmp(value, "off"))
			return error("option '--kernels' takes sampled, all or off, not '%s'", value);
		rs->no_kernels = !strcmp(value, "off");
		rs->kernels_all = !strcmp(value, "all");
		return 0;
	}
	return error("unknown option");
}

/* A threshold of `agprof check` (analyzer/report/check.h), after --check. */
static int run_check_option(void *ctx, int key, const char *value)
{
	struct run_state *rs = ctx;

	if (!rs->check)
		return error("option '--%s' needs --check before it", opt_name(check_options, key));
	return check_option(rs->check, key, value);
}

/* The index of PROGRAM in argv; OPT_DONE after --help; OPT_FAILED after an error. */
static int parse_options(struct run_state *rs, int argc, char **argv)
{
	struct opt_cmd cmd = { "run", run_usage, run_epilogue, 1,
			       { { run_options, run_option, rs }, { check_options, run_check_option, rs } } };
	int first = opt_parse(&cmd, argc, argv);

	if (first >= argc)
		return error("no program to run; see 'agprof run --help'");
	return first;
}

/* Move the launcher's bit of the window, telling the writer when it changes. */
static void window_set(struct run_window *win, struct run_writer *w, int closed, uint64_t now, const char *why)
{
	if (win->closed == closed)
		return;
	win->closed = closed;
	run_writer_capture(w, closed, now, why, "SIGUSR2");
}

/* Apply --delay, --duration and SIGUSR2 as time goes on (every poll of wait_program). */
static void window_tick(struct run_window *win, struct run_writer *w, uint64_t start_ns)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC);

	if (!win->delay_done && now - start_ns >= win->delay_ns) {
		win->delay_done = 1;
		win->opened_ns = now;
		window_set(win, w, 0, now, "--delay");
	}
	if (win->duration_given && win->delay_done && !win->duration_done && now - win->opened_ns >= win->duration_ns) {
		win->duration_done = 1;
		window_set(win, w, 1, now, "--duration");
	}
	while (win->toggles_done != capture_toggles) {
		win->toggles_done++;
		window_set(win, w, !win->closed, now, "SIGUSR2");
	}
}

/* The writer's pause (run_writer_idle_us), cut short so that the next --delay or --duration edge is on time. */
static unsigned window_wait_us(const struct run_window *win, uint64_t start_ns, unsigned us)
{
	uint64_t now = clock_ns(CLOCK_MONOTONIC), edge = 0;

	if (!win->delay_done)
		edge = start_ns + win->delay_ns;
	else if (win->duration_given && !win->duration_done)
		edge = win->opened_ns + win->duration_ns;
	if (edge && edge > now && (edge - now) / 1000 < us)
		return (unsigned)((edge - now) / 1000) + 1;
	return edge && edge <= now ? 0 : us;
}

/* The window at the start: closed during --delay; meta.capture says the options. */
static void window_start(struct run_window *win, struct run_writer *w, uint64_t start_ns)
{
	size_t n = 0;

	win->closed = win->delay_ns > 0;
	win->delay_done = !win->delay_ns;
	win->opened_ns = start_ns;
	if (!win->delay_given && !win->duration_given && !win->capture)
		return;
	if (win->delay_given)
		n += (size_t)snprintf(win->desc + n, sizeof(win->desc) - n, "--delay %.9g ", (double)win->delay_ns / 1e9);
	if (win->duration_given && n < sizeof(win->desc))
		n += (size_t)snprintf(win->desc + n, sizeof(win->desc) - n, "--duration %.9g ",
				      (double)win->duration_ns / 1e9);
	if (win->capture && n < sizeof(win->desc))
		n += (size_t)snprintf(win->desc + n, sizeof(win->desc) - n, "--capture %s ", win->capture);
	if (n > 0 && n <= sizeof(win->desc))
		win->desc[n - 1] = '\0';
	run_writer_capture(w, win->closed, start_ns, win->delay_ns ? "start (--delay)" : "start", win->desc);
}

/*
 * Drain while the program runs.  A write error is said once, here, and the
 * program goes on unrecorded; a second SIGINT/SIGTERM stops the wait.
 */
static void wait_program(struct run_state *rs, struct run_writer *w, pid_t pid, struct run_session *sess)
{
	int status = 0;
	unsigned idle;

	child_pid = pid;
	sess->main_pid = pid;
	for (;;) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			break;
		if (r < 0 && errno != EINTR)
			break;
		if (stop_signal) {
			/* told twice to stop: the program may go on without us */
			child_pid = 0;
			sess->exit_signal = stop_signal;
			sess->exit_status = 128 + stop_signal;
			return;
		}
		window_tick(&rs->window, w, sess->start_ns);
		if (run_writer_poll(w) != 0 && !rs->write_error_said) {
			error("cannot write '%s': %s; recording stopped, the program goes on", rs->output_path,
			      run_writer_error(w));
			rs->write_error_said = 1;
		}
		if ((idle = window_wait_us(&rs->window, sess->start_ns, run_writer_idle_us(w))))
			usleep(idle);
	}
	child_pid = 0;
	if (WIFSIGNALED(status)) {
		sess->exit_signal = WTERMSIG(status);
		sess->exit_status = 128 + WTERMSIG(status);
	} else {
		sess->exit_status = WEXITSTATUS(status);
	}
}

/* "N)" for the never-opened warning (static buffer: one summary per run). */
static const char *capture_calls_text(int64_t calls)
{
	static char buf[32];

	snprintf(buf, sizeof(buf), "%lld)", (long long)calls);
	return buf;
}

/*
 * A write-ahead log left beside FILE: the finish could not fold it in (the
 * disk full, or the recording failed before and kept it on purpose).  Any
 * SQLite reader joins the two, but FILE copied alone loses those rows.
 */
static void warn_wal_kept(const struct run_state *rs)
{
	if (recording_has_wal(rs->output_path))
		fprintf(stderr, "agprof: warning: the recording's last rows are in '%s-wal' (no room to fold them into"
			" '%s'): keep or copy the two together\n", rs->output_path, rs->output_path);
}

static void print_summary(const struct run_state *rs, const struct run_totals *totals)
{
	warn_wal_kept(rs);
	if (rs->quiet)
		return;
	fprintf(stderr, "agprof: recorded %llu events (%llu traces, %llu graph-function calls, %llu eager ops",
		(unsigned long long)totals->events, (unsigned long long)totals->traces,
		(unsigned long long)totals->calls, (unsigned long long)totals->eager_ops);
	if (totals->blackbox)
		fprintf(stderr, ", %llu black-box runs", (unsigned long long)totals->blackbox);
	if (totals->gpu)
		fprintf(stderr, ", %llu GPU activities", (unsigned long long)totals->gpu);
	if (totals->session_runs)
		fprintf(stderr, ", %llu Session runs", (unsigned long long)totals->session_runs);
	if (totals->kernels)
		fprintf(stderr, ", %llu kernels", (unsigned long long)totals->kernels);
	if (totals->eager_aggregated)
		fprintf(stderr, ", %llu more eager ops aggregated %s", (unsigned long long)totals->eager_aggregated,
			totals->aggregate_why && !strcmp(totals->aggregate_why, "rate")
				? "(they came faster than rows can be stored)" : "past the budget");
	if (totals->calls_aggregated || totals->blackbox_aggregated)
		fprintf(stderr, ", %llu more graph calls and %llu black-box runs aggregated",
			(unsigned long long)totals->calls_aggregated, (unsigned long long)totals->blackbox_aggregated);
	fprintf(stderr, ") from %d process%s into '%s'\n", totals->processes, totals->processes == 1 ? "" : "es",
		rs->output_path);
	if (totals->dropped_kernels)
		fprintf(stderr, "agprof: %llu kernels were not recorded (too many a second; 'agprof report --ops' says so)\n",
			(unsigned long long)totals->dropped_kernels);
	if (totals->dropped)
		fprintf(stderr, "agprof: warning: %llu events were dropped (buffers full)\n",
			(unsigned long long)totals->dropped);
	if (totals->note[0])
		fprintf(stderr, "agprof: warning: incomplete recording: %s\n", totals->note);
	if (totals->capture_used && !totals->capture_windows)
		fprintf(stderr, "agprof: warning: the capture window never opened%s%s: only traces and process facts "
			"were recorded\n", rs->window.capture && strcmp(rs->window.capture, "api") ? " (calls of the "
			"--capture function: " : "", rs->window.capture && strcmp(rs->window.capture, "api") ?
			capture_calls_text(totals->capture_calls) : "");
	else if (totals->capture_used)
		fprintf(stderr, "agprof: recorded %lld capture window%s (agprof report says which)\n",
			(long long)totals->capture_windows, totals->capture_windows == 1 ? "" : "s");
}

/*
 * AGPROF_TIMING=1 (bench/long_run.py): the launcher's own CPU (getrusage:
 * not the program's) and how long the recording's finish took after the
 * program ended.
 */
static void print_timing(const struct run_session *sess)
{
	struct rusage ru;

	if (!getenv("AGPROF_TIMING") || getrusage(RUSAGE_SELF, &ru) != 0)
		return;
	fprintf(stderr, "agprof: timing: launcher cpu %.3f s (user %.3f, sys %.3f), finish %.3f s after the program ended\n",
		(double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6,
		(double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6,
		(double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6,
		(double)(clock_ns(CLOCK_MONOTONIC) - sess->end_ns) / 1e9);
}

/* Everything the program needs before it starts; 0 or an exit code. */
static int prepare(struct run_state *rs, struct run_writer **w)
{
	char err[512];
	int rc = resolve_program(rs->argv[0], &rs->program_path);

	if (rc) {
		error(rc == 127 ? "'%s': command not found" : "'%s': permission denied (not executable)", rs->argv[0]);
		return rc;
	}
	if (!(rs->collector = find_collector())) {
		error("cannot find the collector library libagprof-collector.so (set " AGP_ENV_COLLECTOR ")");
		return EXIT_INTERNAL;
	}
	read_tf_config(rs);
	if (choose_output(rs) != 0 || make_tmp_output(rs) != 0 || make_shm_dir(rs) != 0)
		return EXIT_USAGE;
	*w = run_writer_create(rs->tmp_path, rs->shm_dir, err, sizeof(err));
	if (!*w) {
		error("%s", err);
		return EXIT_USAGE;
	}
	run_writer_budget(*w, &rs->budget);
	return 0;
}

/*
 * Run the program to its end while draining, then finish the recording.
 * Returns the program's pid, or -status when it could not start; sess has
 * its exit; *write_failed says the recording lost events.
 */
static pid_t record_program(struct run_state *rs, struct run_writer *w, struct run_session *sess,
			    struct run_totals *totals, int *write_failed)
{
	char cwd[PATH_MAX];
	pid_t pid;

	if (!getcwd(cwd, sizeof(cwd)))
		cwd[0] = '\0';
	memset(sess, 0, sizeof(*sess));
	sess->argv = rs->argv;
	sess->cwd = cwd;
	sess->tf = rs->has_tf ? &rs->tf : NULL;
	sess->start_wall_ns = clock_ns(CLOCK_REALTIME);
	sess->start_ns = clock_ns(CLOCK_MONOTONIC);
	window_start(&rs->window, w, sess->start_ns);
	install_forwarding();
	pid = start_program(rs);
	/* past a file size limit, a write fails (EFBIG) and is reported; the program keeps its SIGXFSZ */
	signal(SIGXFSZ, SIG_IGN);
	if (pid < 0)
		sess->exit_status = (int)-pid;
	else
		wait_program(rs, w, pid, sess);
	program_ended = 1;
	sess->end_ns = clock_ns(CLOCK_MONOTONIC);
	*write_failed = run_writer_finish(w, sess, totals) != 0;
	if (*write_failed && pid >= 0 && !rs->write_error_said)
		error("cannot write '%s': %s; it keeps the %llu events stored before", rs->output_path,
		      totals->error ? totals->error : "internal error", (unsigned long long)totals->events);
	return pid;
}

/* `run --check` once the program succeeded: the check decides. */
static int run_check(struct run_state *rs)
{
	struct recording rec;
	int rc;

	fflush(stderr);
	if (recording_open(&rec, rs->output_path) != 0)
		return EXIT_USAGE;
	rc = check_exit_code(check_run(&rec, rs->check));
	recording_close(&rec);
	return rc;
}

static void release_state(struct run_state *rs)
{
	remove_shm_dir(rs);
	remove_tmp_output(rs);
	if (rs->check)
		check_config_free(rs->check);
	free(rs->program_path);
	free(rs->collector);
	free(rs->user_code);
	free(rs->library);
}

int cmd_run(int argc, char **argv)
{
	struct run_state rs;
	struct run_writer *w = NULL;
	struct run_session sess;
	struct run_totals totals;
	int rc, first, write_failed;
	pid_t pid;

	memset(&rs, 0, sizeof(rs));
	rs.shm_fd = rs.shm_base_fd = rs.keeper.fd = -1;
	rs.budget.max_events = RUN_DEFAULT_MAX_EVENTS;
	first = parse_options(&rs, argc, argv);
	if (first < 0) {
		release_state(&rs);
		return first == OPT_DONE ? EXIT_OK : EXIT_USAGE;
	}
	rs.argv = argv + first;
	if ((rc = prepare(&rs, &w)) != 0) {
		release_state(&rs);
		return rc;
	}
	pid = record_program(&rs, w, &sess, &totals, &write_failed);
	remove_shm_dir(&rs);
	print_timing(&sess);
	rc = sess.exit_status;
	/* a program that never ran leaves no recording, FILE untouched */
	if (pid >= 0 && publish_output(&rs) != 0) {
		rc = rc ? rc : EXIT_INTERNAL;
	} else if (pid >= 0) {
		print_summary(&rs, &totals);
		if (write_failed && rc == 0)
			rc = EXIT_INTERNAL;
		if (rs.check && rc == 0)
			rc = run_check(&rs);
	}
	release_state(&rs);
	return rc;
}

/*
 * `agprof __attach` (attach.c) records a program that is already running
 * through the same steps: output file, buffer folder, summary.
 */
struct run_state *run_attach_prepare(const char *output, int force, int quiet, int *rc)
{
	struct run_state *rs = calloc(1, sizeof(*rs));

	*rc = EXIT_INTERNAL;
	if (!rs)
		return NULL;
	rs->shm_fd = rs->shm_base_fd = rs->keeper.fd = -1;
	rs->output = output;
	rs->force = force;
	rs->quiet = quiet;
	if (!(rs->collector = find_collector())) {
		error("cannot find the collector library libagprof-collector.so (set AGPROF_COLLECTOR)");
		run_attach_end(rs);
		return NULL;
	}
	*rc = EXIT_USAGE;
	if (choose_output(rs) != 0 || make_tmp_output(rs) != 0 || make_shm_dir(rs) != 0) {
		run_attach_end(rs);
		return NULL;
	}
	*rc = EXIT_OK;
	return rs;
}

const char *run_attach_collector(const struct run_state *rs)
{
	return rs->collector;
}

const char *run_attach_shm_dir(const struct run_state *rs)
{
	return rs->shm_dir;
}

const char *run_attach_tmp_path(const struct run_state *rs)
{
	return rs->tmp_path;
}

const char *run_attach_output(const struct run_state *rs)
{
	return rs->output_path;
}

/* Remove the buffers, move the recording to its name, print the summary. */
int run_attach_publish(struct run_state *rs, const struct run_totals *totals)
{
	remove_shm_dir(rs);
	if (publish_output(rs) != 0)
		return -1;
	print_summary(rs, totals);
	return 0;
}

void run_attach_end(struct run_state *rs)
{
	if (!rs)
		return;
	remove_shm_dir(rs);
	remove_tmp_output(rs);
	free(rs->collector);
	free(rs);
}
