/*
 * fix_verify.c - `agprof fix --verify`: the closed loop.  The edits go into
 * a scratch copy of the recording's working directory (never the user's
 * files), the program runs again under agprof twice, as it is and as
 * edited, and the two new recordings and standard outputs are compared.
 *
 * The scratch copy: a directory on the path to an edited file is made anew,
 * Python files in it are copied (so the interpreter's sys.path[0], the
 * script's real directory, is the copy) and every other entry is a symbolic
 * link to the original.  Removed when done.  agprof writes none of the
 * user's files; the program itself writes where it writes (through the
 * links: its checkpoints, logs), as it did when it was recorded.
 */
#include "checked.h"
#include "diff.h"
#include "rule_advice.h"
#include "fix_verify.h"
#include "duration.h"
#include "recording.h"
#include "strbuf.h"
#include "trust.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
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
static void free_argv(char **v)
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

/* Mirror src into dst (made here): see the top of the file.  rel: src relative to the root, "" at the root. */
static int mirror(const char *src, const char *dst, const char *rel, const struct finding *const *pick, size_t n,
		  int depth)
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
		if (strbuf_failed(&from) || strbuf_failed(&to) || strbuf_failed(&r) || lstat(from.buf, &st))
			ret = error("cannot read %s", from.buf ? from.buf : e->d_name);
		else if (S_ISDIR(st.st_mode) && leads_to_edit(r.buf, pick, n))
			ret = mirror(from.buf, to.buf, r.buf, pick, n, depth + 1);
		else if (S_ISREG(st.st_mode) && (is_python_file(e->d_name) || is_edited(r.buf, pick, n)))
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
static int apply_edit(const char *path, const struct finding_fix *fx)
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
 * agprof run -q -o REC -- argv in dir, its standard output into out_path
 * and its standard error into err_path.  The exit status, or -1.
 */
static int run_recorded(const char *dir, char **argv, const char *rec, const char *out_path, const char *err_path)
{
	char self[PATH_MAX];
	char *args[MAX_ARGS + 8];
	size_t n = 0;
	pid_t pid;
	int status;

	if ((size_t)snprintf(self, sizeof(self), "%s/agprof", agprof_exe_dir()) >= sizeof(self))
		return error("agprof's own path is too long");
	args[n++] = self;
	args[n++] = (char *)"run";
	args[n++] = (char *)"-q";
	args[n++] = (char *)"-o";
	args[n++] = (char *)rec;
	args[n++] = (char *)"--";
	for (size_t i = 0; argv[i] && n < MAX_ARGS + 7; i++)
		args[n++] = argv[i];
	args[n] = NULL;
	fflush(stdout);
	if ((pid = fork()) < 0)
		return error("cannot start agprof run: %s", strerror(errno));
	if (!pid) {
		int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		int in = open("/dev/null", O_RDONLY);

		if (out < 0 || err < 0 || in < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0 || dup2(in, 0) < 0 ||
		    chdir(dir))
			_exit(127);
		execv(self, args);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return error("cannot wait for agprof run: %s", strerror(errno));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* path's bytes into sb (at most MAX_SOURCE).  0 or -1. */
static int slurp(const char *path, struct strbuf *sb)
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

/* Line at of sb (from its start to the newline), quoted and cut at 60 bytes, into out. */
static void add_line(struct strbuf *out, const struct strbuf *sb, size_t at)
{
	size_t end = at;

	while (at > 0 && sb->buf[at - 1] != '\n')
		at--;
	while (end < sb->len && sb->buf[end] != '\n')
		end++;
	if (at >= sb->len) {
		strbuf_addstr(out, "(no line)");
		return;
	}
	strbuf_addf(out, "'%.*s%s'", (int)(end - at > 60 ? 60 : end - at), sb->buf + at, end - at > 60 ? "..." : "");
}

/*
 * The first line (1-based) where files a and b differ, 0 when they are the
 * same, -1 on a read error; what the two lines read into what.
 */
static long first_difference(const char *a, const char *b, struct strbuf *what)
{
	struct strbuf x = STRBUF_INIT, y = STRBUF_INIT;
	long line = 1, ret = -1;
	size_t i = 0;

	if (!slurp(a, &x) && !slurp(b, &y)) {
		for (; i < x.len && i < y.len && x.buf[i] == y.buf[i]; i++)
			line += x.buf[i] == '\n';
		ret = i == x.len && i == y.len ? 0 : line;
		if (ret) {
			add_line(what, &x, i);
			strbuf_addstr(what, " -> ");
			add_line(what, &y, i);
		}
	}
	strbuf_release(&x);
	strbuf_release(&y);
	return ret;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) ? -1 : 0;
}

/* The function diff matched to f's (its name), or NULL. */
static const struct diff_function *fixed_function(const struct diff *d, const struct finding *f)
{
	for (size_t i = 0; f->function && i < d->nfns; i++)
		if (!d->fns[i].made_by && !strcmp(d->fns[i].name, f->function))
			return &d->fns[i];
	return NULL;
}

/* Whether a user frame of the edited run is at one of the lines f's edit wrote (its file: rel, or under a directory). */
static int edited_lines_ran(sqlite3 *db, const struct finding *f)
{
	static const char sql[] =
		"SELECT EXISTS (SELECT 1 FROM callsites c JOIN strings s ON s.id = c.file_id"
		" WHERE c.library = 0 AND c.line BETWEEN ?1 AND ?2 AND (s.text = ?3 OR substr(s.text, -length(?4)) = ?4))"
		" OR EXISTS (SELECT 1 FROM functions fn JOIN strings s ON s.id = fn.file_id"
		" WHERE fn.line BETWEEN ?1 AND ?2 + 1 AND (s.text = ?3 OR substr(s.text, -length(?4)) = ?4)"
		" AND EXISTS (SELECT 1 FROM traces t WHERE t.function_id = fn.id))";
	struct strbuf tail = STRBUF_INIT;
	sqlite3_stmt *st = NULL;
	int lines = 0, ran = 0;

	for (const char *p = f->fix.after; p && *p; p++)
		lines += *p == '\n';
	strbuf_addf(&tail, "/%s", f->fix.file);
	if (!strbuf_failed(&tail) && sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_int(st, 1, f->fix.line);
		sqlite3_bind_int(st, 2, f->fix.line + (lines > 0 ? lines - 1 : 0));
		sqlite3_bind_text(st, 3, f->fix.file, -1, SQLITE_STATIC);
		sqlite3_bind_text(st, 4, tail.buf, -1, SQLITE_STATIC);
		ran = sqlite3_step(st) == SQLITE_ROW && sqlite3_column_int(st, 0);
	}
	sqlite3_finalize(st);
	strbuf_release(&tail);
	return ran;
}

/*
 * Whether f's edit ran in the edited run (its function traced and called,
 * or a line it wrote executed) and its measure moved as the finding
 * promised: the function's traces for a retrace, the eager share for an
 * eager loop, the input wait for a pipeline, the run's time otherwise.
 * When not, why into why.
 */
static int edit_kept_promise(const struct diff *d, sqlite3 *db, const struct finding *f, int faster,
			     struct strbuf *why)
{
	const struct diff_function *x = fixed_function(d, f);
	int ran = (x && x->new_.traces > 0 && x->new_.calls > 0) || edited_lines_ran(db, f);

	if (!ran) {
		strbuf_addf(why, "the edited code did not run (%s:%d%s%s)", f->fix.file, f->fix.line,
			    f->function ? ", " : "", f->function ? f->function : "");
		return 0;
	}
	switch (f->fix_kind) {
	case FIX_RETRACE:
	case FIX_SEE_RETRACING:
		if (x && x->new_.traces < x->base.traces)
			return 1;
		strbuf_addf(why, "%s's traces did not drop", f->function ? f->function : "the function");
		return 0;
	case FIX_EAGER_LOOP:
		if (d->new_->session.eager_share < d->base->session.eager_share)
			return 1;
		strbuf_addstr(why, "the eager share did not drop");
		return 0;
	case FIX_INPUT_PIPELINE:
		if (d->new_->session.input_ns < d->base->session.input_ns)
			return 1;
		strbuf_addstr(why, "the input wait did not drop");
		return 0;
	default:
		if (faster)
			return 1;
		strbuf_addstr(why, "the run was not faster");
		return 0;
	}
}

/*
 * What the edits did, from the two runs' recordings: one line; *saved
 * when every edit ran and kept its promise, else why into why.
 */
static void verdict(struct strbuf *out, const struct diff *d, sqlite3 *db, const struct finding *const *pick,
		    size_t n, int *saved, struct strbuf *why)
{
	int64_t faster = d->base->session.active_ns - d->new_->session.active_ns;

	*saved = 1;
	/* faster: by 5% at least, less is a run's noise */
	for (size_t k = 0; k < n && *saved; k++)
		*saved = edit_kept_promise(d, db, pick[k], faster > d->base->session.active_ns / 20, why);
	for (size_t i = 0; i < d->nfns; i++) {
		const struct diff_function *x = &d->fns[i];
		int fixed = 0;

		for (size_t k = 0; k < n && !fixed; k++)
			fixed = pick[k]->function && !strcmp(pick[k]->function, x->name);
		if (!fixed || x->made_by)
			continue;
		strbuf_addf(out, "%s %zu trace%s -> %zu, ", x->name, x->base.traces, x->base.traces == 1 ? "" : "s",
			    x->new_.traces);
	}
	strbuf_addstr(out, "the run ");
	strbuf_add_duration(out, faster < 0 ? -faster : faster);
	strbuf_addstr(out, faster < 0 ? " slower" : " faster");
}

struct verify {
	char scratch[PATH_MAX / 2];
	char path[8][PATH_MAX]; /* in the scratch directory: see the enum */
};

enum { V_BASE_DIR, V_NEW_DIR, V_BASE_REC, V_NEW_REC, V_BASE_OUT, V_NEW_OUT, V_BASE_ERR, V_NEW_ERR };

/* The scratch directory with the two copies of cwd, the edits applied to the second.  0 or -1. */
static int prepare(struct verify *v, const char *cwd, const struct finding *const *pick, size_t n)
{
	static const char *const names[8] = { "base", "new", "base.agprof", "new.agprof", "base.out", "new.out",
					      "base.err", "new.err" };
	const char *tmp = getenv("TMPDIR");

	if ((size_t)snprintf(v->scratch, sizeof(v->scratch), "%s/agprof-verify-XXXXXX", tmp && *tmp ? tmp : "/tmp") >=
		    sizeof(v->scratch) ||
	    !mkdtemp(v->scratch))
		return error("cannot create a scratch directory: %s", strerror(errno));
	for (int i = 0; i < 8; i++)
		snprintf(v->path[i], sizeof(v->path[i]), "%.*s/%s", PATH_MAX / 2, v->scratch, names[i]);
	if (mirror(cwd, v->path[V_BASE_DIR], "", pick, n, 0) || mirror(cwd, v->path[V_NEW_DIR], "", pick, n, 0))
		return -1;
	/* from the last edit up: an edit never moves the lines of one above it */
	for (size_t i = n; i-- > 0;) {
		char file[PATH_MAX];

		if ((size_t)snprintf(file, sizeof(file), "%s/%s", v->path[V_NEW_DIR], pick[i]->fix.file) >= sizeof(file) ||
		    apply_edit(file, &pick[i]->fix))
			return -1;
	}
	return 0;
}

/* Analyze both new recordings, print the diff's summary and the verdict. */
static enum verify_result compare_runs(struct verify *v, const struct finding *const *pick, size_t n, long differs,
			const char *what)
{
	struct diff_baseline b;
	struct recording rec;
	struct model m;
	struct ruleset rs;
	struct analyze_opts ao = { .allow_empty = 1 };
	struct strbuf out = STRBUF_INIT;
	int saved = 0;
	enum verify_result ret = VERIFY_CANNOT;

	if (recording_open(&rec, v->path[V_NEW_REC]))
		return VERIFY_CANNOT;
	if (analyze(&m, &rs, &rec, &ao) != ANALYZE_OK)
		goto close;
	if (!diff_baseline_load(&b, v->path[V_BASE_REC], &ao, &m, v->path[V_NEW_REC])) {
		struct strbuf line = STRBUF_INIT, why = STRBUF_INIT;

		verdict(&line, &b.d, rec.db, pick, n, &saved, &why);
		strbuf_addf(&out, "  %s\n%s: ", b.d.summary, !differs && saved ? "verified" : "not verified");
		if (!differs && !saved)
			strbuf_addf(&out, "%s; ", why.buf ? why.buf : "");
		strbuf_addf(&out, "%s, ", line.buf ? line.buf : "");
		if (differs)
			strbuf_addf(&out, "output differs from line %ld: %s\n", differs, what);
		else
			strbuf_addstr(&out, "output identical\n");
		strbuf_release(&line);
		strbuf_release(&why);
		strbuf_sanitize_text(&out, 0, 0);
		fputs(out.buf ? out.buf : "", stdout);
		ret = !differs && saved ? VERIFY_OK : VERIFY_NOT;
		diff_baseline_release(&b);
	}
	model_release(&m);
	ruleset_release(&rs);
close:
	recording_close(&rec);
	strbuf_release(&out);
	return ret;
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
static int check_paths(const char *cwd, const struct finding *const *pick, size_t n)
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
static char **trusted_command(const struct model *m, int trust)
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

enum verify_result fix_verify(const struct model *m, const struct finding *const *pick, size_t n, char **command,
			      int trust_recorded)
{
	struct verify v;
	char **recorded = NULL, **argv = command;
	int sb, sn;
	enum verify_result ret = VERIFY_CANNOT;
	long differs;
	struct strbuf what = STRBUF_INIT;

	memset(&v, 0, sizeof(v));
	for (size_t i = 0; i < n; i++)
		if (pick[i]->fix.cell)
			return error("the edit of %s is a notebook cell's: run the corrected cell in the notebook"
				     " (agprof fix prints it)", pick[i]->fix.cell), VERIFY_CANNOT;
	if (check_paths(m->session.cwd, pick, n))
		return VERIFY_CANNOT;
	if (!argv && !(argv = recorded = trusted_command(m, trust_recorded)))
		return VERIFY_CANNOT;
	if (prepare(&v, m->session.cwd, pick, n))
		goto out;
	printf("agprof fix --verify: %zu edit%s applied to a copy of %s in %s (your files are untouched);\n"
	       "running the program as it is, then as edited\n", n, n == 1 ? "" : "s", m->session.cwd, v.scratch);
	sb = run_recorded(v.path[V_BASE_DIR], argv, v.path[V_BASE_REC], v.path[V_BASE_OUT], v.path[V_BASE_ERR]);
	sn = sb < 0 ? -1 : run_recorded(v.path[V_NEW_DIR], argv, v.path[V_NEW_REC], v.path[V_NEW_OUT], v.path[V_NEW_ERR]);
	if (sb < 0 || sn < 0)
		goto out;
	if (sb != sn) {
		printf("not verified: the program exited %d as it is, %d as edited\n", sb, sn);
		ret = VERIFY_NOT;
		goto out;
	}
	if ((differs = first_difference(v.path[V_BASE_OUT], v.path[V_NEW_OUT], &what)) < 0) {
		error("cannot read the program's output");
		goto out;
	}
	ret = compare_runs(&v, pick, n, differs, what.buf ? what.buf : "");
out:
	if (v.scratch[0] && !getenv("AGPROF_KEEP_VERIFY"))
		nftw(v.scratch, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	free_argv(recorded);
	strbuf_release(&what);
	return ret;
}
