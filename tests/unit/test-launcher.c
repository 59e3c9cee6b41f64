/*
 * test-launcher.c - `agprof run` as a user sees it: exit statuses, signals,
 * bad programs, output files.  Runs the real agprof binary (env AGPROF).
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/agprof-launcher-XXXXXX";

static void setup_dir(void)
{
	cr_assert_not_null(mkdtemp(dir));
}

/* The test's folder and what agprof wrote in it (each test runs in its own process). */
static void remove_dir(void)
{
	char cmd[sizeof(dir) + 16];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

/* Run agprof with argv; returns the exit status as a shell reports it; stderr to errfile. */
static int run_agprof(char *const args[], const char *errfile)
{
	pid_t pid = fork();
	int status;

	cr_assert(pid >= 0);
	if (pid == 0) {
		if (errfile && !freopen(errfile, "w", stderr))
			_exit(99);
		execv(getenv("AGPROF"), args);
		_exit(98);
	}
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static char *slurp(const char *path)
{
	static char buf[8192];
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
	return buf;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

TestSuite(launcher, .init = setup_dir, .fini = remove_dir);

Test(launcher, exit_status_passes_through)
{
	char out[256], err[256];
	char *args[] = { "agprof", "run", "-q", "-o", out, "--", "/bin/sh", "-c", "exit 3", NULL };

	snprintf(out, sizeof(out), "%s/a.agprof", dir);
	snprintf(err, sizeof(err), "%s/err", dir);
	cr_assert_eq(run_agprof(args, err), 3);
	cr_assert_eq(access(out, F_OK), 0, "recording must exist");
}

Test(launcher, killed_by_signal_is_128_plus_n)
{
	char out[256];
	char *args[] = { "agprof", "run", "-q", "-o", out, "--", "/bin/sh", "-c", "kill -TERM $$", NULL };

	snprintf(out, sizeof(out), "%s/b.agprof", dir);
	cr_assert_eq(run_agprof(args, NULL), 143);
}

Test(launcher, not_found_is_127_with_one_line)
{
	char out[256], err[256];
	char *args[] = { "agprof", "run", "-o", out, "--", "no-such-program-agprof", NULL };

	snprintf(out, sizeof(out), "%s/c.agprof", dir);
	snprintf(err, sizeof(err), "%s/err", dir);
	cr_assert_eq(run_agprof(args, err), 127);
	cr_assert_eq(count_lines(slurp(err)), 1, "stderr: %s", slurp(err));
	cr_assert(strstr(slurp(err), "no-such-program-agprof"));
	cr_assert_neq(access(out, F_OK), 0, "no recording for a program that never ran");
}

Test(launcher, not_executable_is_126)
{
	char out[256], prog[256], err[256];
	char *args[] = { "agprof", "run", "-o", out, "--", prog, NULL };
	FILE *f;

	snprintf(out, sizeof(out), "%s/d.agprof", dir);
	snprintf(prog, sizeof(prog), "%s/plain.txt", dir);
	snprintf(err, sizeof(err), "%s/err", dir);
	f = fopen(prog, "w");
	fputs("echo hi\n", f);
	fclose(f);
	chmod(prog, 0644);
	cr_assert_eq(run_agprof(args, err), 126);
	cr_assert_eq(count_lines(slurp(err)), 1);
}

Test(launcher, unwritable_output_fails_before_the_program_starts)
{
	char marker[256], script[512], err[256];
	char *args[] = { "agprof", "run", "-o", "/proc/agprof-cannot-write/x.agprof", "--", "/bin/sh", "-c", script, NULL };

	snprintf(marker, sizeof(marker), "%s/ran", dir);
	snprintf(script, sizeof(script), "touch %s", marker);
	snprintf(err, sizeof(err), "%s/err", dir);
	cr_assert_eq(run_agprof(args, err), 2);
	cr_assert_neq(access(marker, F_OK), 0, "the workload must not have run");
	cr_assert_eq(count_lines(slurp(err)), 1, "stderr: %s", slurp(err));
}

Test(launcher, existing_output_needs_force)
{
	char out[256], err[256];
	char *args[] = { "agprof", "run", "-q", "-o", out, "--", "/bin/true", NULL };
	char *forced[] = { "agprof", "run", "-q", "-f", "-o", out, "--", "/bin/true", NULL };
	FILE *f;

	snprintf(out, sizeof(out), "%s/keep.agprof", dir);
	snprintf(err, sizeof(err), "%s/err", dir);
	f = fopen(out, "w");
	fputs("precious", f);
	fclose(f);
	cr_assert_eq(run_agprof(args, err), 2);
	cr_assert_str_eq(slurp(out), "precious");
	cr_assert_eq(run_agprof(forced, err), 0);
	cr_assert_neq(strcmp(slurp(out), "precious"), 0);
}

Test(launcher, sigterm_to_agprof_is_forwarded)
{
	char out[256];
	char *args[] = { "agprof", "run", "-q", "-o", out, "--", "/bin/sh", "-c", "exec sleep 30", NULL };
	pid_t pid;
	int status;

	snprintf(out, sizeof(out), "%s/e.agprof", dir);
	pid = fork();
	if (pid == 0) {
		execv(getenv("AGPROF"), args);
		_exit(98);
	}
	usleep(500000);
	kill(pid, SIGTERM);
	waitpid(pid, &status, 0);
	cr_assert(WIFEXITED(status), "agprof itself must survive and report");
	cr_assert_eq(WEXITSTATUS(status), 143);
}

Test(launcher, stdout_and_stdin_pass_through)
{
	char out[256], got[256], cmd[1024];
	FILE *p;
	size_t n;

	snprintf(out, sizeof(out), "%s/f.agprof", dir);
	snprintf(cmd, sizeof(cmd), "echo hello-agprof | %s run -q -o %s -- /bin/cat", getenv("AGPROF"), out);
	p = popen(cmd, "r");
	n = fread(got, 1, sizeof(got) - 1, p);
	got[n] = '\0';
	cr_assert_eq(pclose(p), 0);
	cr_assert_str_eq(got, "hello-agprof\n");
}

Test(launcher, default_name_never_overwrites)
{
	char cmd[1024];

	snprintf(cmd, sizeof(cmd), "cd %s && %s run -q -- /bin/true && %s run -q -- /bin/true", dir,
		 getenv("AGPROF"), getenv("AGPROF"));
	cr_assert_eq(system(cmd), 0);
	snprintf(cmd, sizeof(cmd), "%s/agprof-1.agprof", dir);
	cr_assert_eq(access(cmd, F_OK), 0);
	snprintf(cmd, sizeof(cmd), "%s/agprof-2.agprof", dir);
	cr_assert_eq(access(cmd, F_OK), 0);
}

/* The launcher's variables reach the workload's children, never its own view. */
static void assert_clean_environment(const char *prog_and_args, int expect_processes)
{
	char out[256], cmd[1024], got[65536], q[512];
	FILE *p;
	size_t n;

	snprintf(out, sizeof(out), "%s/env-%d.agprof", dir, expect_processes);
	snprintf(cmd, sizeof(cmd), "%s run -q -o %s -- %s", getenv("AGPROF"), out, prog_and_args);
	p = popen(cmd, "r");
	n = fread(got, 1, sizeof(got) - 1, p);
	got[n] = '\0';
	cr_assert_eq(pclose(p), 0);
	cr_assert(strstr(got, "PATH="), "env printed nothing: %s", got);
	cr_assert_null(strstr(got, "AGPROF_SHM"), "leaked: %s", got);
	cr_assert_null(strstr(got, "AGPROF_ORIG_LD_PRELOAD"), "leaked: %s", got);
	cr_assert_null(strstr(got, "AGPROF_CUDA_INJECTION"), "leaked: %s", got);
	cr_assert_null(strstr(got, "LD_PRELOAD"), "leaked: %s", got);
	cr_assert_null(strstr(got, "CUDA_INJECTION64_PATH"), "leaked: %s", got);
	snprintf(q, sizeof(q), "test $(sqlite3 %s 'SELECT count(*) FROM processes') -eq %d", out, expect_processes);
	cr_assert_eq(system(q), 0, "expected %d recorded processes", expect_processes);
}

Test(launcher, environment_is_hidden_from_the_workload)
{
	assert_clean_environment("/usr/bin/env", 1);
}

Test(launcher, exec_and_fork_children_are_recorded_with_clean_environment)
{
	assert_clean_environment("/bin/sh -c '/usr/bin/env; true'", 2);
}

Test(launcher, check_workload_failure_takes_precedence)
{
	char out[256];
	char *args[] = { "agprof", "run", "-q", "-o", out, "--check", "--max-traces", "1", "--",
			 "/bin/sh", "-c", "exit 5", NULL };

	snprintf(out, sizeof(out), "%s/g.agprof", dir);
	cr_assert_eq(run_agprof(args, NULL), 5);
}

Test(launcher, threshold_without_check_is_a_usage_error)
{
	char out[256], err[256];
	char *args[] = { "agprof", "run", "-o", out, "--max-traces", "1", "--", "/bin/true", NULL };

	snprintf(out, sizeof(out), "%s/h.agprof", dir);
	snprintf(err, sizeof(err), "%s/err", dir);
	cr_assert_eq(run_agprof(args, err), 2);
	cr_assert(strstr(slurp(err), "--check"));
	cr_assert_neq(access(out, F_OK), 0);
}

/* A workload that closes every fd and reopens files must not get our records in them. */
Test(launcher, reused_fd_numbers_never_receive_records)
{
	char out[256], file[256], script[2048];
	char *args[] = { "agprof", "run", "-q", "-o", out, "--", "/bin/sh", "-c", script, NULL };

	snprintf(out, sizeof(out), "%s/fd.agprof", dir);
	snprintf(file, sizeof(file), "%s/user-file", dir);
	snprintf(script, sizeof(script),
		 "for fd in 3 4 5 6 7 8 9; do eval \"exec $fd>&-\"; done; "
		 "exec 3>%s 4>>%s 5>>%s 6>>%s; printf user-data >&3; exit 0", file, file, file, file);
	cr_assert_eq(run_agprof(args, NULL), 0);
	cr_assert_str_eq(slurp(file), "user-data");
}

/* A pid nobody uses any more. */
static pid_t dead_pid(void)
{
	pid_t dead = fork();

	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);
	return dead;
}

static void make_file(const char *dirpath, const char *name, const char *text)
{
	char path[600];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dirpath, name);
	f = fopen(path, "w");
	cr_assert_not_null(f, "%s", path);
	fputs(text, f);
	fclose(f);
}

/* A process (not this one) that holds flock on path until killed, as a live launcher does. */
static pid_t hold_lock(const char *path)
{
	int pfd[2];
	char c;
	pid_t pid;

	cr_assert_eq(pipe(pfd), 0);
	pid = fork();
	if (pid == 0) {
		int fd = open(path, O_RDONLY | O_DIRECTORY);

		if (fd < 0 || flock(fd, LOCK_EX) != 0)
			_exit(1);
		if (write(pfd[1], "x", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	close(pfd[1]);
	cr_assert_eq(read(pfd[0], &c, 1), 1, "lock holder failed");
	close(pfd[0]);
	return pid;
}

/*
 * The start-up sweep: only session folders in our own 0700 folder
 * (/dev/shm/agprof-<uid>) that no launcher holds locked are removed; links
 * are never followed, the shared /dev/shm itself is never swept.
 */
Test(launcher, stale_sweep_removes_only_unlocked_sessions_of_ours)
{
	char out[600], base[128], stale[256], live[256], link_in_base[256], link_in_shm[256], target[256];
	char *args[] = { "agprof", "run", "-q", "-o", out, "--", "/bin/true", NULL };
	pid_t dead = dead_pid(), holder;
	int status;

	snprintf(out, sizeof(out), "%s/sweep.agprof", dir);
	snprintf(base, sizeof(base), "/dev/shm/agprof-%u", (unsigned)geteuid());
	mkdir(base, 0700);  /* as agprof makes it */
	snprintf(stale, sizeof(stale), "%s/%d-stale1", base, (int)dead);
	snprintf(live, sizeof(live), "%s/%d-live01", base, (int)dead);  /* a dead pid: in another namespace */
	snprintf(link_in_base, sizeof(link_in_base), "%s/%d-link01", base, (int)dead);
	snprintf(link_in_shm, sizeof(link_in_shm), "/dev/shm/agprof-%d-link02", (int)dead);
	snprintf(target, sizeof(target), "%s/victim", dir);
	cr_assert_eq(mkdir(stale, 0700), 0);
	cr_assert_eq(mkdir(live, 0700), 0);
	cr_assert_eq(mkdir(target, 0700), 0);
	make_file(stale, "1-0.ring", "");
	make_file(live, "1-0.ring", "");
	make_file(target, "precious", "keep me");
	cr_assert_eq(symlink(target, link_in_base), 0);
	cr_assert_eq(symlink(target, link_in_shm), 0);
	holder = hold_lock(live);
	cr_assert_eq(run_agprof(args, NULL), 0);
	kill(holder, SIGKILL);
	waitpid(holder, &status, 0);
	unlink(link_in_shm);
	unlink(link_in_base);
	snprintf(out, sizeof(out), "%s/precious", target);
	cr_assert_str_eq(slurp(out), "keep me", "a file behind a planted link was removed");
	snprintf(out, sizeof(out), "%s/1-0.ring", live);
	cr_assert_eq(access(out, F_OK), 0, "a live session's buffers were removed");
	cr_assert_neq(access(stale, F_OK), 0, "an unlocked (stale) session folder is still there");
	snprintf(out, sizeof(out), "%s/precious", target);
	unlink(out);
	rmdir(target);
	snprintf(out, sizeof(out), "%s/1-0.ring", live);
	unlink(out);
	/* now unlocked: the next run takes it away */
	snprintf(out, sizeof(out), "%s/sweep2.agprof", dir);
	cr_assert_eq(run_agprof(args, NULL), 0);
	cr_assert_neq(access(live, F_OK), 0, "a session folder nobody locks is stale");
}

Test(launcher, buffer_folder_is_private)
{
	char out[256], base[128];
	char *args[] = { "agprof", "run", "-q", "-o", out, "--", "/bin/true", NULL };
	struct stat st;

	snprintf(out, sizeof(out), "%s/private.agprof", dir);
	snprintf(base, sizeof(base), "/dev/shm/agprof-%u", (unsigned)geteuid());
	cr_assert_eq(run_agprof(args, NULL), 0);
	cr_assert_eq(lstat(base, &st), 0);
	cr_assert(S_ISDIR(st.st_mode));
	cr_assert_eq(st.st_uid, geteuid());
	cr_assert_eq(st.st_mode & 0777, 0700);
}

/* Names in dir starting with prefix (temporary recordings left behind). */
static int count_prefixed(const char *prefix)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int n = 0;

	cr_assert_not_null(d);
	while ((de = readdir(d)))
		n += !strncmp(de->d_name, prefix, strlen(prefix));
	closedir(d);
	return n;
}

Test(launcher, force_keeps_the_old_recording_until_the_program_ran)
{
	char out[256], seen[256], script[700];
	char *args[] = { "agprof", "run", "-q", "-f", "-o", out, "--", "/bin/sh", "-c", script, NULL };

	snprintf(out, sizeof(out), "%s/old.agprof", dir);
	snprintf(seen, sizeof(seen), "%s/seen", dir);
	make_file(dir, "old.agprof", "precious");
	snprintf(script, sizeof(script), "cat %s > %s", out, seen);
	cr_assert_eq(run_agprof(args, NULL), 0);
	cr_assert_str_eq(slurp(seen), "precious", "the old recording was gone while the program ran");
	cr_assert_eq(strncmp(slurp(out), "SQLite format 3", 15), 0, "the new recording replaced it");
	cr_assert_eq(count_prefixed(".old.agprof"), 0, "temporary file left behind");
}

Test(launcher, failed_exec_leaves_no_recording)
{
	char out[256], fresh[256], prog[256], err[256];
	char *forced[] = { "agprof", "run", "-q", "-f", "-o", out, "--", prog, NULL };
	char *plain[] = { "agprof", "run", "-q", "-o", fresh, "--", prog, NULL };

	snprintf(out, sizeof(out), "%s/keep2.agprof", dir);
	snprintf(fresh, sizeof(fresh), "%s/fresh.agprof", dir);
	snprintf(prog, sizeof(prog), "%s/garbage", dir);
	snprintf(err, sizeof(err), "%s/err", dir);
	make_file(dir, "keep2.agprof", "precious");
	make_file(dir, "garbage", "\x01\x02\x03 not a program\n");  /* executable, but ENOEXEC */
	chmod(prog, 0755);
	cr_assert_eq(run_agprof(forced, err), 126, "stderr: %s", slurp(err));
	cr_assert_str_eq(slurp(out), "precious", "--force replaced a recording with one of nothing");
	cr_assert_eq(run_agprof(plain, err), 126);
	cr_assert_neq(access(fresh, F_OK), 0, "a recording of a program that never ran");
	cr_assert_eq(count_prefixed(".keep2.agprof"), 0);
	cr_assert_eq(count_prefixed(".fresh.agprof"), 0);
}

Test(launcher, second_sigterm_ends_agprof_while_the_program_goes_on, .timeout = 60)
{
	char out[256], pidfile[256], script[700], *v;
	char *args[] = { "agprof", "run", "-q", "-o", out, "--", "/bin/sh", "-c", script, NULL };
	pid_t pid, workload = 0;
	int status;
	FILE *f;

	snprintf(out, sizeof(out), "%s/twice.agprof", dir);
	snprintf(pidfile, sizeof(pidfile), "%s/workload.pid", dir);
	snprintf(script, sizeof(script), "trap '' TERM INT; echo $$ > %s; exec sleep 30", pidfile);
	pid = fork();
	if (pid == 0) {
		execv(getenv("AGPROF"), args);
		_exit(98);
	}
	for (int i = 0; i < 200 && !workload; i++) {
		usleep(20000);
		if ((f = fopen(pidfile, "r"))) {
			if (fscanf(f, "%d", &workload) != 1)
				workload = 0;
			fclose(f);
		}
	}
	cr_assert_gt(workload, 0, "the workload never started");
	kill(pid, SIGTERM);  /* forwarded, ignored by the workload */
	usleep(200000);
	kill(pid, SIGTERM);  /* agprof stops waiting */
	for (int i = 0; i < 100 && waitpid(pid, &status, WNOHANG) == 0; i++)
		usleep(50000);
	kill(workload, SIGKILL);
	if (kill(pid, 0) == 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		cr_assert_fail("agprof still running 5 s after the second SIGTERM");
	}
	cr_assert(WIFEXITED(status), "agprof must end by itself, closing the recording");
	cr_assert_eq(WEXITSTATUS(status), 143);
	v = slurp(out);
	cr_assert_eq(strncmp(v, "SQLite format 3", 15), 0, "no recording");
	snprintf(script, sizeof(script), "sqlite3 %s \"SELECT value FROM meta WHERE key = 'incomplete'\" | grep -q interrupted", out);
	cr_assert_eq(system(script), 0, "meta.incomplete does not say the recording was interrupted");
}

/*
 * A per-user folder that is not ours (planted by someone else, here root's
 * for user nobody) is never used nor swept: agprof, run as nobody, moves on
 * to $TMPDIR and leaves the planted folder's content alone.
 */
Test(launcher, planted_user_folder_is_skipped)
{
	char tmp[] = "/tmp/agprof-nobody-XXXXXX", cmd[2048], planted[64] = "/dev/shm/agprof-65534";
	char keep[128], session[128];
	struct stat st;

	if (geteuid() != 0 || system("command -v setpriv >/dev/null") != 0)
		cr_skip_test("needs root and setpriv to run agprof as another user");
	cr_assert_not_null(mkdtemp(tmp));
	chmod(tmp, 0777);
	cr_assert(mkdir(planted, 0777) == 0 || errno == EEXIST);
	chmod(planted, 0777);  /* root's, open to all: not nobody's */
	snprintf(keep, sizeof(keep), "%s/keep", planted);
	snprintf(session, sizeof(session), "%s/1-stale0", planted);
	make_file(planted, "keep", "x");
	mkdir(session, 0700);
	snprintf(cmd, sizeof(cmd), "cd %s && TMPDIR=%s setpriv --reuid=65534 --regid=65534 --clear-groups %s run -q -o %s/x.agprof -- /bin/true",
		 tmp, tmp, getenv("AGPROF"), tmp);
	cr_assert_eq(system(cmd), 0, "%s", cmd);
	cr_assert_eq(access(keep, F_OK), 0, "a file in a folder that is not ours was removed");
	cr_assert_eq(access(session, F_OK), 0, "a folder that is not ours was swept");
	snprintf(cmd, sizeof(cmd), "%s/agprof-65534", tmp);
	cr_assert_eq(stat(cmd, &st), 0, "the buffers did not move to $TMPDIR");
	cr_assert_eq(st.st_uid, 65534);
	snprintf(cmd, sizeof(cmd), "rm -rf %s %s", planted, tmp);
	cr_assert_eq(system(cmd), 0);
}
