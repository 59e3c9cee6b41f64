/*
 * test-launcher.c - `agprof run` as a user sees it: exit statuses, signals,
 * bad programs, output files.  Runs the real agprof binary (env AGPROF).
 */
#include <criterion/criterion.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char dir[] = "/tmp/agprof-launcher-XXXXXX";

static void setup_dir(void)
{
	cr_assert_not_null(mkdtemp(dir));
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

TestSuite(launcher, .init = setup_dir);

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

Test(launcher, buffers_of_a_killed_agprof_are_removed)
{
	char out[256], stale[256], file[300], live[256];
	char *args[] = { "agprof", "run", "-q", "-o", out, "--", "/bin/true", NULL };
	pid_t dead = fork();
	FILE *f;

	if (dead == 0)
		_exit(0);
	waitpid(dead, NULL, 0);  /* a pid nobody uses any more */
	snprintf(out, sizeof(out), "%s/stale.agprof", dir);
	snprintf(stale, sizeof(stale), "/dev/shm/agprof-%d-testXX", (int)dead);
	snprintf(live, sizeof(live), "/dev/shm/agprof-%d-testXX", (int)getpid());
	cr_assert_eq(mkdir(stale, 0700), 0);
	cr_assert_eq(mkdir(live, 0700), 0);
	snprintf(file, sizeof(file), "%s/1-0.ring", stale);
	f = fopen(file, "w");
	fclose(f);
	cr_assert_eq(run_agprof(args, NULL), 0);
	cr_assert_neq(access(stale, F_OK), 0, "stale buffers of pid %d still there", (int)dead);
	cr_assert_eq(access(live, F_OK), 0, "a running agprof's buffers were removed");
	rmdir(live);
}
