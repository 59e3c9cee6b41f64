/*
 * verify_scratch.c - the ground work of `agprof fix --verify`
 * (verify_internal.h): scratch copies of the recording's working
 * directory, the edits written into them, the program run under agprof
 * with a time limit, and the checks that a recording's command and paths
 * are the user's before anything runs.
 *
 * The scratch copy: directories are made anew and files copied (so the
 * interpreter's sys.path[0], the script's real directory, is the copy, and
 * what the program writes, its checkpoints, logs and arrays, lands in the
 * copy, where verify_files.c compares it, never over the user's files).
 * What is too big to copy is a symbolic link to the original, said before
 * the runs: a file over COPY_FILE_MAX, everything past COPY_BUDGET bytes or
 * COPY_ENTRIES entries, and trees no program writes its results into (a
 * virtual environment, a repository's .git).  Removed when done.
 */
#include "verify_internal.h"
#include "strbuf.h"
#include "trust.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_ARGS 4096

/* One JSON string at *p (after its opening quote) into sb; p past the closing quote.  0 or -1. */
static int json_string(const char **p, struct strbuf *sb)
{
	const char *s = *p;

	for (; *s && *s != '"'; s++) {
		unsigned v;

		if (*s != '\\') {
			strbuf_addch(sb, *s);
			continue;
		}
		switch (*++s) {
		case 'n': strbuf_addch(sb, '\n'); break;
		case 't': strbuf_addch(sb, '\t'); break;
		case 'r': strbuf_addch(sb, '\r'); break;
		case 'b': strbuf_addch(sb, '\b'); break;
		case 'f': strbuf_addch(sb, '\f'); break;
		case '"': case '\\': case '/': strbuf_addch(sb, *s); break;
		case 'u':
			if (sscanf(s + 1, "%4x", &v) != 1 || !v)
				return -1;
			s += 4;
			if (v < 0x80)
				strbuf_addch(sb, (int)v);
			else if (v < 0x800)
				strbuf_addf(sb, "%c%c", 0xc0 | (v >> 6), 0x80 | (v & 0x3f));
			else
				strbuf_addf(sb, "%c%c%c", 0xe0 | (v >> 12), 0x80 | ((v >> 6) & 0x3f), 0x80 | (v & 0x3f));
			break;
		default:
			return -1;
		}
	}
	if (*s != '"')
		return -1;
	*p = s + 1;
	return 0;
}

/* A NULL-terminated argv of argv_of_json()'s, freed (NULL: nothing). */
void free_argv(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* The recorded command line (a JSON array of strings) as a NULL-terminated argv; NULL when malformed. */
static char **argv_of_json(const char *s)
{
	char **v = calloc(MAX_ARGS + 1, sizeof(*v));
	size_t n = 0;

	if (!v || !s || *(s += strspn(s, " ")) != '[')
		goto bad;
	for (s++;;) {
		struct strbuf sb = STRBUF_INIT;

		s += strspn(s, " ,");
		if (*s == ']' && n)
			return v;
		if (*s != '"' || n == MAX_ARGS)
			goto bad;
		s++;
		if (json_string(&s, &sb) || strbuf_failed(&sb) || !(v[n++] = strbuf_detach(&sb)) || !v[n - 1][0]) {
			strbuf_release(&sb);
			goto bad;
		}
	}
bad:
	free_argv(v);  /* v[n] and on are still NULL (calloc) */
	return NULL;
}

static int is_python_file(const char *name)
{
	size_t n = strlen(name);

	return n > 3 && !strcmp(name + n - 3, ".py");
}

static int copy_file(const char *from, const char *to)
{
	char buf[65536];
	int in = open(from, O_RDONLY | O_CLOEXEC), out;
	ssize_t r = 0;

	if (in < 0)
		return error("cannot read %s: %s", from, strerror(errno));
	if ((out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644)) < 0) {
		close(in);
		return error("cannot create %s: %s", to, strerror(errno));
	}
	while ((r = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)r) != r) {
			r = -1;
			break;
		}
	close(in);
	if (close(out) || r < 0)
		return error("cannot copy %s: %s", from, strerror(errno));
	return 0;
}

int copy_file_into(const char *from, const char *to)
{
	char dir[PATH_MAX];

	if (snprintf(dir, sizeof(dir), "%s", to) >= (int)sizeof(dir))
		return error("path too long: %s", to);
	/* each directory on the way, from the top (those there already are fine) */
	for (char *p = strchr(dir + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(dir, 0700) && errno != EEXIST)
			return error("cannot create %s: %s", dir, strerror(errno));
		*p = '/';
	}
	return copy_file(from, to);
}

static int is_edited(const char *rel, const struct finding *const *pick, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(pick[i]->fix.file, rel))
			return 1;
	return 0;
}

/* Whether rel (a directory, relative) leads to one of the edited files. */
static int leads_to_edit(const char *rel, const struct finding *const *pick, size_t n)
{
	size_t len = strlen(rel);

	for (size_t i = 0; i < n; i++)
		if (!strncmp(pick[i]->fix.file, rel, len) && pick[i]->fix.file[len] == '/')
			return 1;
	return 0;
}

/* What one scratch copy may still copy, and what it linked instead (COPY_*). */
#define COPY_FILE_MAX (16 << 20)
#define COPY_BUDGET ((int64_t)256 << 20)
#define COPY_ENTRIES 20000
struct copy_budget {
	int64_t bytes;
	int entries;
	struct strbuf *linked;  /* the files linked for their size, "rel (N MB)", or NULL */
};

/* A tree no program writes its results into, and too big to copy: linked whole. */
static int linked_tree(const char *path, const char *name)
{
	static const char *const names[] = { ".git", ".hg", ".svn", ".venv", "venv", "node_modules", ".tox",
					     "site-packages", "__pycache__", NULL };
	struct strbuf cfg = STRBUF_INIT;
	struct stat st;
	int venv;

	for (int i = 0; names[i]; i++)
		if (!strcmp(name, names[i]))
			return 1;
	strbuf_addf(&cfg, "%s/pyvenv.cfg", path);
	venv = !strbuf_failed(&cfg) && !lstat(cfg.buf, &st);
	strbuf_release(&cfg);
	return venv;
}

/* Whether a regular file of size bytes is copied (else linked, and said when b->linked is set). */
static int copied(struct copy_budget *b, const char *rel, off_t size)
{
	if (size <= COPY_FILE_MAX && b->bytes + size <= COPY_BUDGET && b->entries < COPY_ENTRIES) {
		b->bytes += size;
		return 1;
	}
	if (b->linked)
		strbuf_addf(b->linked, "%s%s (%.1f MB)", b->linked->len ? ", " : "", rel, (double)size / (1 << 20));
	return 0;
}

/* Mirror src into dst (made here): see the top of the file.  rel: src relative to the root, "" at the root. */
static int mirror(const char *src, const char *dst, const char *rel, const struct finding *const *pick, size_t n,
		  int depth, struct copy_budget *b)
{
	DIR *d;
	struct dirent *e;
	int ret = 0;

	if (depth > 64 || mkdir(dst, 0700))
		return error("cannot create %s: %s", dst, strerror(errno));
	if (!(d = opendir(src)))
		return error("cannot read the directory %s: %s", src, strerror(errno));
	while (!ret && (e = readdir(d))) {
		struct strbuf from = STRBUF_INIT, to = STRBUF_INIT, r = STRBUF_INIT;
		struct stat st;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		strbuf_addf(&from, "%s/%s", src, e->d_name);
		strbuf_addf(&to, "%s/%s", dst, e->d_name);
		strbuf_addf(&r, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
		b->entries++;
		if (strbuf_failed(&from) || strbuf_failed(&to) || strbuf_failed(&r) || lstat(from.buf, &st))
			ret = error("cannot read %s", from.buf ? from.buf : e->d_name);
		else if (S_ISDIR(st.st_mode) && (leads_to_edit(r.buf, pick, n) ||
						 (depth < 32 && b->entries < COPY_ENTRIES && !linked_tree(from.buf, e->d_name))))
			ret = mirror(from.buf, to.buf, r.buf, pick, n, depth + 1, b);
		else if (S_ISREG(st.st_mode) && (is_python_file(e->d_name) || is_edited(r.buf, pick, n) ||
						 copied(b, r.buf, st.st_size)))
			ret = copy_file(from.buf, to.buf);
		else if (symlink(from.buf, to.buf))
			ret = error("cannot link %s: %s", to.buf, strerror(errno));
		strbuf_release(&from);
		strbuf_release(&to);
		strbuf_release(&r);
	}
	closedir(d);
	return ret;
}

#define MAX_SOURCE (64 << 20)

/* Replace fx's lines in path (the scratch copy) by fx->after, when they still read fx->before.  0 or -1. */
int apply_edit(const char *path, const struct finding_fix *fx)
{
	struct strbuf sb = STRBUF_INIT;
	char buf[65536];
	const char *at;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), ret = -1, line = 1;
	ssize_t r;

	if (fd < 0)
		return error("cannot read %s: %s", path, strerror(errno));
	while ((r = read(fd, buf, sizeof(buf))) > 0 && sb.len < MAX_SOURCE)
		strbuf_add(&sb, buf, (size_t)r);
	close(fd);
	if (r < 0 || strbuf_failed(&sb) || !sb.buf) {
		strbuf_release(&sb);
		return error("cannot read %s", path);
	}
	for (at = sb.buf; line < fx->line && (at = strchr(at, '\n')); line++)
		at++;
	if (!at || strncmp(at, fx->before, strlen(fx->before))) {
		error("%s:%d no longer reads as recorded: edit not applied", fx->file, fx->line);
		goto out;
	}
	fd = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
	if (fd >= 0) {
		size_t head = (size_t)(at - sb.buf), tail = head + strlen(fx->before);
		int ok = write(fd, sb.buf, head) == (ssize_t)head &&
			 write(fd, fx->after, strlen(fx->after)) == (ssize_t)strlen(fx->after) &&
			 write(fd, sb.buf + tail, sb.len - tail) == (ssize_t)(sb.len - tail);

		ret = close(fd) || !ok ? error("cannot write %s", path) : 0;
	} else
		error("cannot write %s: %s", path, strerror(errno));
out:
	strbuf_release(&sb);
	return ret;
}

/*
 * Wait for pid, for limit seconds at most (0: no limit); past it, its
 * process group gets SIGTERM (agprof run ends the program and its
 * recording), then SIGKILL 5 s later.  The exit status, 128 + the signal,
 * VERIFY_TIMED_OUT, or -1 after an error line.
 */
static int wait_limited(pid_t pid, double limit)
{
	struct timespec start, now, tick = { 0, 20 * 1000 * 1000 };
	int status, killed = 0;
	pid_t r;

	clock_gettime(CLOCK_MONOTONIC, &start);
	while ((r = waitpid(pid, &status, limit > 0 ? WNOHANG : 0)) == 0 || (r < 0 && errno == EINTR)) {
		double t;

		if (r < 0)
			continue;
		clock_gettime(CLOCK_MONOTONIC, &now);
		t = (double)(now.tv_sec - start.tv_sec) + (double)(now.tv_nsec - start.tv_nsec) / 1e9;
		if (t > limit && !killed)
			killed = 1, kill(-pid, SIGTERM);
		else if (t > limit + 5 && killed == 1)
			killed = 2, kill(-pid, SIGKILL);
		nanosleep(&tick, NULL);
	}
	if (r < 0)
		return error("cannot wait for agprof run: %s", strerror(errno));
	if (killed)
		return VERIFY_TIMED_OUT;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int run_recorded(const char *dir, char **argv, const char *const files[3], double limit)
{
	char self[PATH_MAX];
	char *args[MAX_ARGS + 8];
	size_t n = 0;
	pid_t pid;

	if ((size_t)snprintf(self, sizeof(self), "%s/agprof", agprof_exe_dir()) >= sizeof(self))
		return error("agprof's own path is too long");
	args[n++] = self;
	args[n++] = (char *)"run";
	args[n++] = (char *)"-q";
	args[n++] = (char *)"-o";
	args[n++] = (char *)files[0];
	args[n++] = (char *)"--";
	for (size_t i = 0; argv[i] && n < MAX_ARGS + 7; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	fflush(stdout);
	if ((pid = fork()) < 0)
		return error("cannot start agprof run: %s", strerror(errno));
	if (!pid) {
		int out = open(files[1], O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int err = open(files[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int in = open("/dev/null", O_RDONLY);

		/* a group of its own: the time limit ends the program with it */
		if (setpgid(0, 0) || out < 0 || err < 0 || in < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 ||
		    dup2(in, 0) < 0 || chdir(dir))
			_exit(127);
		execv(self, args);
		_exit(127);
	}
	setpgid(pid, pid);  /* also here: no race with a kill before the child's own call */
	return wait_limited(pid, limit);
}

/* path's bytes into sb (at most MAX_SOURCE).  0 or -1. */
int slurp(const char *path, struct strbuf *sb)
{
	char buf[65536];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t r = 0;

	if (fd < 0)
		return -1;
	while (sb->len < MAX_SOURCE && (r = read(fd, buf, sizeof(buf))) > 0)
		strbuf_add(sb, buf, (size_t)r);
	close(fd);
	return r < 0 || strbuf_failed(sb) ? -1 : 0;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) ? -1 : 0;
}

void scratch_remove(const char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

int scratch_copy(const char *cwd, const char *dst, const struct finding *const *pick, size_t n, struct strbuf *linked)
{
	struct copy_budget b = { 0, 0, linked };

	return mirror(cwd, dst, "", pick, n, 0, &b);
}

/* Whether rel is a relative path of plain names (no "", ".", ".." component). */
static int plain_relative(const char *rel)
{
	if (!*rel || *rel == '/')
		return 0;
	for (const char *p = rel; *p;) {
		size_t len = strcspn(p, "/");

		if (!len || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p += len + (p[len] == '/');
	}
	return rel[strlen(rel) - 1] != '/';
}

/*
 * The recording's working directory and the files its edits name, which
 * come from an untrusted file: the directory must exist and be the user's,
 * each file a regular file under it, reached through no symbolic link
 * (its real path is the directory's real path and rel).  0, or -1 after an error line.
 */
int check_paths(const char *cwd, const struct finding *const *pick, size_t n)
{
	char real_dir[PATH_MAX], real[PATH_MAX], want[2 * PATH_MAX], path[2 * PATH_MAX];
	struct stat st;

	if (!cwd || stat(cwd, &st) || !S_ISDIR(st.st_mode))
		return error("the recording's working directory '%s' is not here", cwd ? cwd : "?");
	if (st.st_uid != geteuid())
		return error("the recording's working directory '%s' is not yours: cannot verify", cwd);
	if (!realpath(cwd, real_dir))
		return error("cannot resolve '%s': %s", cwd, strerror(errno));
	for (size_t i = 0; i < n; i++) {
		const char *rel = pick[i]->fix.file;

		if (!plain_relative(rel))
			return error("%s is outside the working directory: cannot verify", rel);
		snprintf(want, sizeof(want), "%s/%s", real_dir, rel);
		snprintf(path, sizeof(path), "%s/%s", cwd, rel);
		if (lstat(path, &st) || !S_ISREG(st.st_mode) || !realpath(path, real) || strcmp(real, want))
			return error("%s is not a file of %s reached without a symbolic link: cannot verify", rel, cwd);
	}
	return 0;
}

/* The recorded command as one line of JSON (control characters escaped, long ones cut) into sb. */
static void add_recorded_command(struct strbuf *sb, const char *argv_json, char **argv)
{
	size_t from = sb->len;

	if (argv)
		strbuf_add_json_argv(sb, argv);
	else
		strbuf_add_json_string(sb, argv_json ? argv_json : "");
	if (sb->len - from > 300) {
		sb->len = from + 300;
		sb->buf[sb->len] = '\0';
		strbuf_addstr(sb, "...");
	}
	strbuf_sanitize_text(sb, from, 0);
}

/*
 * The recorded command line, when the recording proves that this user's
 * agprof wrote it (or trust is set): a NULL-terminated argv, or NULL after
 * the one error line that shows the command and says how to run it anyway.
 */
char **trusted_command(const struct model *m, int trust)
{
	enum command_trust t = trust ? COMMAND_TRUSTED
				     : command_mac_check(m->session.argv, m->session.cwd, m->session.command_mac);
	char **argv = argv_of_json(m->session.argv);
	struct strbuf cmd = STRBUF_INIT;

	if (t == COMMAND_TRUSTED && argv)
		return argv;
	add_recorded_command(&cmd, m->session.argv, argv);
	if (!argv)
		error("the recording has no command line to run (%s): give one after --", cmd.buf ? cmd.buf : "");
	else
		error("will not run the recorded command %s: %s; give the command after -- "
		      "(agprof fix --verify REC -- COMMAND...) or pass --trust-recorded-command",
		      cmd.buf ? cmd.buf : "", command_trust_reason(t));
	strbuf_release(&cmd);
	free_argv(argv);
	return NULL;
}

