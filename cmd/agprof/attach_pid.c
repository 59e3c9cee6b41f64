/*
 * attach_pid.c - `agprof attach PID`: record a running Python program that
 * nobody prepared, then let it go on unchanged.
 *
 * One line of Python is queued in the program's main thread (inject.c);
 * it imports agprof._inject (python/agprof/_inject.py), which starts the
 * in-process recording (agprof.start(): the collector loaded with ctypes,
 * TensorFlow's GOT slots patched, a child `agprof __attach` writing) and a
 * thread that stops it when we create the file `stop` in our folder or
 * die.  We talk through that folder only: the program is stopped for the
 * injection alone (microseconds), never while we wait.
 */
#include "builtin.h"
#include "config.h"
#include "inject.h"
#include "options.h"
#include "strbuf.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Exit codes of agprof attach past the shared ones (builtin.h); agprof(1). */
enum {
	EXIT_NO_PROCESS = 4,
	EXIT_NOT_PERMITTED = 5,
	EXIT_NOT_PYTHON = 6,
	EXIT_NO_TF = 7,
	EXIT_BUSY = 8,
	EXIT_NO_ANSWER = 9,
};

static const char *const attach_usage =
	"usage: agprof attach [-o FILE] [-f] [--duration S] [--wait-tf] [-q] PID\n"
	"\n"
	"Record the running Python program PID (TensorFlow loaded) without\n"
	"restarting it: agprof queues agprof.start() in its main thread through\n"
	"ptrace (no debugger needed), records until --duration ends, Ctrl-C or\n"
	"the program's exit, then stops the recording; the collector's hooks stay\n"
	"inert and the program goes on with unchanged output and exit status.\n"
	"Needs ptrace rights on PID: the same user, kernel.yama.ptrace_scope 0 or\n"
	"1 with CAP_SYS_PTRACE (root), and CAP_SYS_PTRACE in a container.\n"
	"\n"
	"options:\n";

static const char *const attach_epilogue =
	"\n"
	"Exit codes: 0 recorded; 2 usage error; 3 the recording failed; 4 no such\n"
	"process (or it exited first); 5 ptrace not permitted; 6 not a Python\n"
	"process, or an unsupported Python; 7 TensorFlow not loaded (see\n"
	"--wait-tf); 8 the program is recording already; 9 its main thread ran no\n"
	"Python code within 20 s (blocked in C code), nothing was started.\n";

enum { AO_DURATION = OPT_KEY_BASE + 80, AO_WAIT_TF };

static const struct opt attach_options[] = {
	{ "output", 'o', "FILE", "the recording (default agprof-PID.agprof)" },
	{ "force", 'f', NULL, "overwrite FILE if it exists" },
	{ "duration", AO_DURATION, "S", "stop after S seconds (default: Ctrl-C or the program's exit)" },
	{ "wait-tf", AO_WAIT_TF, NULL, "wait for the program to load TensorFlow, then attach" },
	{ "quiet", 'q', NULL, "no progress lines on stderr" },
	OPT_HELP,
	OPT_END,
};

struct attach_pid {
	const char *output;
	double duration;
	int force, quiet, wait_tf;
	pid_t pid;
	char out[PATH_MAX], folder[64], status[PATH_MAX + 64];
	pid_t writer;
};

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	(void)sig;
	interrupted = 1;
}

static int attach_option(void *ctx, int key, const char *value)
{
	struct attach_pid *a = ctx;
	char *end;

	switch (key) {
	case 'o': a->output = value; break;
	case 'f': a->force = 1; break;
	case 'q': a->quiet = 1; break;
	case AO_WAIT_TF: a->wait_tf = 1; break;
	case AO_DURATION:
		a->duration = strtod(value, &end);
		if (*end || end == value || !(a->duration > 0))
			return error("--duration needs a number of seconds > 0, not '%s'", value);
		break;
	}
	return 0;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int tf_loaded(pid_t pid)
{
	char path[64], line[4096];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re")))
		return 0;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "_pywrap_tensorflow") || strstr(line, "libtensorflow");
	fclose(f);
	return found;
}

/* Yama's ptrace_scope 3 refuses everyone; the rest is told by PTRACE_SEIZE itself. */
static int ptrace_disabled(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int scope = 0;

	if (!f)
		return 0;
	if (fscanf(f, "%d", &scope) != 1)
		scope = 0;
	fclose(f);
	return scope >= 3;
}

/* What must hold before we touch the process; 0 or an exit code after one error line. */
static int check_target(struct attach_pid *a)
{
	char python[PATH_MAX];

	if (!process_running(a->pid))
		return error("no such process: %d", (int)a->pid), EXIT_NO_PROCESS;
	if (ptrace_disabled())
		return error("ptrace is not permitted: kernel.yama.ptrace_scope is 3 (no process may be traced)"),
		       EXIT_NOT_PERMITTED;
	if (inject_find_python(a->pid, python, sizeof(python)) != INJECT_OK)
		return error("process %d is not a Python process (no python executable or libpython mapped)",
			     (int)a->pid), EXIT_NOT_PYTHON;
	if (a->wait_tf && !tf_loaded(a->pid) && !a->quiet)
		fprintf(stderr, "agprof: waiting for process %d to load TensorFlow (Ctrl-C to give up)\n", (int)a->pid);
	while (a->wait_tf && !tf_loaded(a->pid) && process_running(a->pid) && !interrupted)
		sleep_ms(100);
	if (!process_running(a->pid))
		return error("process %d exited", (int)a->pid), EXIT_NO_PROCESS;
	if (!tf_loaded(a->pid))
		return error("process %d has not loaded TensorFlow%s", (int)a->pid,
			     a->wait_tf ? "" : " (--wait-tf waits for it)"), EXIT_NO_TF;
	return 0;
}

/* s as a Python bytes literal (paths are bytes; _inject.py decodes them with os.fsdecode). */
static void py_quote(struct strbuf *sb, const char *s)
{
	strbuf_addstr(sb, "b'");
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '\\' || c == '\'')
			strbuf_addf(sb, "\\%c", c);
		else if (c >= 0x20 && c < 0x7f)
			strbuf_addch(sb, c);
		else
			strbuf_addf(sb, "\\x%02x", c);
	}
	strbuf_addch(sb, '\'');
}

/* The folder holding the agprof package: the wheel's (the program in <pkg>/bin), else the source tree's. */
static void python_dir(char *dir, size_t len)
{
	char init[PATH_MAX + 32];

	snprintf(init, sizeof(init), "%s/../__init__.py", agprof_exe_dir());
	if (access(init, R_OK) == 0)
		snprintf(dir, len, "%s/../..", agprof_exe_dir());
	else
		snprintf(dir, len, "%s", AGPROF_SOURCE_PYTHON_DIR);
}

/*
 * The line run in the program: import agprof._inject from our package
 * without leaving our folder on sys.path, call start(); any failure is
 * written to the status file, never raised (the program would see it).
 */
static void attach_code(struct strbuf *sb, const struct attach_pid *a)
{
	char pydir[PATH_MAX + 8], exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	exe[n > 0 ? n : 0] = '\0';
	python_dir(pydir, sizeof(pydir));
	strbuf_addstr(sb, "def _agprof_attach(folder, pydir):\n"
		      "    try:\n"
		      "        import os, sys\n"
		      "        if 'agprof._inject' not in sys.modules:\n"
		      "            sys.path.insert(0, os.fsdecode(pydir))\n"
		      "            try:\n"
		      "                import agprof._inject\n"
		      "            finally:\n"
		      "                sys.path.remove(os.fsdecode(pydir))\n");
	strbuf_addstr(sb, "        sys.modules['agprof._inject'].start(folder, ");
	py_quote(sb, exe);
	strbuf_addstr(sb, ", ");
	py_quote(sb, a->out);
	strbuf_addf(sb, ", %s, %d)\n", a->force ? "True" : "False", (int)getpid());
	strbuf_addstr(sb, "    except BaseException as e:\n"
		      "        try:\n"
		      "            with open(os.path.join(os.fsdecode(folder), 'status'), 'w') as f:\n"
		      "                f.write('error\\t%s\\n' % e)\n"
		      "        except BaseException:\n"
		      "            pass\n"
		      "_agprof_attach(");
	py_quote(sb, a->folder);
	strbuf_addstr(sb, ", ");
	py_quote(sb, pydir);
	strbuf_addstr(sb, ")\ndel _agprof_attach\n");
}

/* The status line's word ("started", ...) and text; 0 while there is none yet. */
static int read_status(const struct attach_pid *a, char *word, char *text, size_t len)
{
	char line[PATH_MAX + 600], *tab, *nl;
	FILE *f = fopen(a->status, "re");
	int got;

	if (!f)
		return 0;
	got = fgets(line, sizeof(line), f) != NULL && (tab = strchr(line, '\t')) != NULL;
	fclose(f);
	if (!got)
		return 0;
	*tab = '\0';
	if ((nl = strchr(tab + 1, '\n')))
		*nl = '\0';
	snprintf(word, 16, "%.15s", line);
	snprintf(text, len, "%s", tab + 1);
	return 1;
}

static int inject_exit_code(int r)
{
	switch (r) {
	case INJECT_NO_PROCESS: return EXIT_NO_PROCESS;
	case INJECT_NOT_PERMITTED: return EXIT_NOT_PERMITTED;
	case INJECT_NOT_PYTHON: case INJECT_UNSUPPORTED: return EXIT_NOT_PYTHON;
	default: return EXIT_INTERNAL;
	}
}

/* Queue the start and wait for its answer: 0 when recording, else an exit code after one error line. */
static int start_recording(struct attach_pid *a)
{
	struct strbuf code = STRBUF_INIT;
	char err[512], word[16], text[PATH_MAX + 512];
	int r;

	attach_code(&code, a);
	r = code.failed ? INJECT_FAILED : inject_python(a->pid, code.buf, err, sizeof(err));
	strbuf_release(&code);
	if (r != INJECT_OK) {
		if (r == INJECT_NOT_PERMITTED)
			return error("ptrace is not permitted on process %d (%s): another user, "
				     "kernel.yama.ptrace_scope, or a container without CAP_SYS_PTRACE", (int)a->pid, err),
			       EXIT_NOT_PERMITTED;
		return error("cannot attach to process %d: %s", (int)a->pid, err), inject_exit_code(r);
	}
	for (int i = 0; i < 200 && !read_status(a, word, text, sizeof(text)); i++) {
		if (!process_running(a->pid))
			return error("process %d exited before it ran agprof", (int)a->pid), EXIT_NO_PROCESS;
		sleep_ms(100);
	}
	if (!read_status(a, word, text, sizeof(text)))
		return error("process %d ran no Python code in its main thread for 20 s (blocked in C code?): "
			     "nothing was recorded", (int)a->pid), EXIT_NO_ANSWER;
	if (!strcmp(word, "busy"))
		return error("process %d: %s", (int)a->pid, text), EXIT_BUSY;
	if (strcmp(word, "started") != 0)
		return error("process %d could not start recording: %s", (int)a->pid, text), EXIT_INTERNAL;
	/* the status file is the program's to write: only its own child is waited for as the writer */
	a->writer = (pid_t)strtol(text, NULL, 10);
	if (a->writer <= 0 || process_parent(a->writer) != a->pid)
		a->writer = 0;
	return 0;
}

#define STOP_WAIT_NS (10 * 1000000000ull)
#define STOP_WAIT_WRITER_NS (600 * 1000000000ull)

/* Until --duration, Ctrl-C or the program's exit; then ask for the stop and wait for the recording. */
static int record_and_stop(struct attach_pid *a)
{
	uint64_t end = a->duration > 0 ? clock_ns(CLOCK_MONOTONIC) + (uint64_t)(a->duration * 1e9) : UINT64_MAX;
	char stop[sizeof(a->folder) + 8], word[16] = "", text[PATH_MAX + 512];
	FILE *f;

	while (!interrupted && process_running(a->pid) && clock_ns(CLOCK_MONOTONIC) < end)
		sleep_ms(50);
	snprintf(stop, sizeof(stop), "%s/stop", a->folder);
	if ((f = fopen(stop, "w")))
		fclose(f);
	/*
	 * The watcher answers within 0.1 s; the writer then finishes the file
	 * (seconds on a big one).  The status file is the program's to write:
	 * a program that keeps saying "started" is waited for 10 minutes at
	 * most when it named a writer (its own child), 10 s when it did not.
	 */
	end = clock_ns(CLOCK_MONOTONIC) + (a->writer > 0 ? STOP_WAIT_WRITER_NS : STOP_WAIT_NS);
	while (process_running(a->pid) && (!read_status(a, word, text, sizeof(text)) || !strcmp(word, "started"))) {
		if (clock_ns(CLOCK_MONOTONIC) > end)
			return error("process %d did not answer the stop (its status: %s %s)", (int)a->pid, word, text),
			       EXIT_INTERNAL;
		sleep_ms(50);
	}
	if (!process_running(a->pid)) {
		/* its exit stopped the recording (atexit): the writer finishes it, then exits */
		for (int i = 0; i < 6000 && a->writer > 0 && process_running(a->writer); i++)
			sleep_ms(50);
		if (access(a->out, F_OK) != 0)
			return error("process %d exited and '%s' was not written", (int)a->pid, a->out), EXIT_INTERNAL;
		return 0;
	}
	if (strcmp(word, "stopped") != 0)
		return error("process %d: the recording failed: %s", (int)a->pid, text), EXIT_INTERNAL;
	return 0;
}

/* FILE made absolute (the program's working folder is not ours); 0 or an exit code. */
static int choose_output(struct attach_pid *a)
{
	char cwd[PATH_MAX], def[64];
	const char *o = a->output;

	if (!o) {
		snprintf(def, sizeof(def), "agprof-%d.agprof", (int)a->pid);
		o = def;
	}
	if (o[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return error("cannot read the working folder: %s", strerror(errno)), EXIT_USAGE;
	if ((size_t)snprintf(a->out, sizeof(a->out), "%s%s%s", o[0] == '/' ? "" : cwd, o[0] == '/' ? "" : "/", o) >=
	    sizeof(a->out))
		return error("'%s': path too long", o), EXIT_USAGE;
	if (!a->force && access(a->out, F_OK) == 0)
		return error("'%s' exists; -f overwrites it", a->out), EXIT_USAGE;
	return 0;
}

/*
 * Folders of an agprof attach killed before it injected anything: the
 * program's side removes the folder of an agprof that died after (it
 * watches for it), nobody that of one that died before.  A folder is
 * /tmp/agprof-attach-PID-XXXXXX; one whose PID is gone and that no program
 * answered in (no status file) is removed.
 */
static void sweep_stale_folders(void)
{
	static const char *const names[] = { "status.tmp", "stop" };
	struct dirent *e;
	DIR *d = opendir("/tmp");

	while (d && (e = readdir(d))) {
		char path[320], file[352];
		struct stat st;
		long pid;
		char *end;

		if (strncmp(e->d_name, "agprof-attach-", 14))
			continue;
		pid = strtol(e->d_name + 14, &end, 10);
		if (end == e->d_name + 14 || *end != '-' || pid <= 0 || pid > INT_MAX || process_running((pid_t)pid))
			continue;
		snprintf(path, sizeof(path), "/tmp/%.255s", e->d_name);
		snprintf(file, sizeof(file), "%s/status", path);
		if (lstat(path, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() || stat(file, &st) == 0)
			continue;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
			snprintf(file, sizeof(file), "%s/%s", path, names[i]);
			unlink(file);
		}
		rmdir(path);
	}
	if (d)
		closedir(d);
}

/* Our folder for the status and stop files, writable by the program's user. */
static int make_folder(struct attach_pid *a)
{
	char proc[64];
	struct stat st;

	sweep_stale_folders();
	snprintf(a->folder, sizeof(a->folder), "/tmp/agprof-attach-%d-XXXXXX", (int)getpid());
	if (!mkdtemp(a->folder))
		return error("cannot create a folder in /tmp: %s", strerror(errno)), EXIT_INTERNAL;
	snprintf(a->status, sizeof(a->status), "%s/status", a->folder);
	snprintf(proc, sizeof(proc), "/proc/%d", (int)a->pid);
	if (geteuid() == 0 && stat(proc, &st) == 0 && st.st_uid != 0 && chown(a->folder, st.st_uid, st.st_gid) != 0)
		return error("cannot give '%s' to the program's user: %s", a->folder, strerror(errno)), EXIT_INTERNAL;
	return 0;
}

static void remove_folder(struct attach_pid *a)
{
	static const char *const names[] = { "status", "status.tmp", "stop" };
	char path[sizeof(a->folder) + 16];

	if (!a->folder[0])
		return;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", a->folder, names[i]);
		unlink(path);
	}
	rmdir(a->folder);
}

static int parse_pid(struct attach_pid *a, const struct opt_cmd *cmd, int argc, char **argv, int first)
{
	char *end;
	long pid;

	if (first != argc - 1)
		return error("agprof attach needs one PID; see 'agprof attach --help'");
	(void)cmd;
	pid = strtol(argv[first], &end, 10);
	if (*end || end == argv[first] || pid <= 0 || pid > INT_MAX)
		return error("'%s' is not a process id", argv[first]);
	a->pid = (pid_t)pid;
	return 0;
}

int cmd_attach_pid(int argc, char **argv)
{
	static struct attach_pid a;
	struct opt_cmd cmd = { "attach", attach_usage, attach_epilogue, 0, { { attach_options, attach_option, &a } } };
	int first, rc;

	first = opt_parse(&cmd, argc, argv);
	if (first < 0)
		return first == OPT_DONE ? EXIT_OK : EXIT_USAGE;
	if (parse_pid(&a, &cmd, argc, argv, first) != 0)
		return EXIT_USAGE;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGPIPE, SIG_IGN);
	if ((rc = check_target(&a)) != 0 || (rc = choose_output(&a)) != 0 || (rc = make_folder(&a)) != 0) {
		remove_folder(&a);
		return rc;
	}
	if ((rc = start_recording(&a)) == 0) {
		if (!a.quiet)
			fprintf(stderr, "agprof: recording process %d into %s (%s)\n", (int)a.pid, a.out,
				a.duration > 0 ? "until --duration ends" : "Ctrl-C stops");
		rc = record_and_stop(&a);
		if (rc == 0 && !a.quiet)
			fprintf(stderr, "agprof: wrote %s; the program goes on\n", a.out);
	}
	remove_folder(&a);
	return rc;
}
