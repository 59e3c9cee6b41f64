/* parse_source.c - see parse_source.h. */
#include "parse_source.h"
#include "db.h"
#include "strbuf.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern const char agp_codefacts_py[];

#define MAX_FILES 2000
#define MAX_LIBRARY_FILES 200
#define MAX_OUTPUT (32u << 20)
#define DEADLINE_NS (20 * 1000000000ull)

/*
 * The library files in the call chains of the traces that took a Python
 * value, as codefacts.py's "LINES:PATH" items (the chain's lines in that
 * file) after "--library", into v from *n (at most MAX_LIBRARY_FILES): who
 * passed the value, the user's call or the library (analyzer/model/model.c),
 * is read from the signature of the library function the user called and
 * the arguments of the library's line that called the traced function.
 */
static void library_items(sqlite3 *db, char **v, size_t *n)
{
	sqlite3_stmt *s = db_prepare(db,
		"WITH RECURSIVE valued(id) AS (SELECT DISTINCT trace_id FROM trace_inputs WHERE kind = 'python'),"
		" chain(id, depth) AS (SELECT t.callsite_id, 0 FROM traces t JOIN valued v ON v.id = t.id"
		"   WHERE t.callsite_id IS NOT NULL"
		"  UNION SELECT c.parent_id, chain.depth + 1 FROM chain JOIN callsites c ON c.id = chain.id"
		"   WHERE c.library = 1 AND c.parent_id IS NOT NULL AND chain.depth < 16)"
		" SELECT group_concat(DISTINCT c.line) || ':' || f.text FROM chain JOIN callsites c ON c.id = chain.id"
		" JOIN strings f ON f.id = c.file_id WHERE c.library = 1 AND f.text NOT LIKE '<%'"
		" GROUP BY f.text ORDER BY f.text LIMIT ?1");
	size_t first = *n;

	if (!s)
		return;
	sqlite3_bind_int(s, 1, MAX_LIBRARY_FILES);
	while (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0)) {
		if (*n == first)  /* the marker only before a first item: none, and argv ends at the user's files */
			v[(*n)++] = strdup("--library");
		v[(*n)++] = strdup((const char *)sqlite3_column_text(s, 0));
	}
	sqlite3_finalize(s);
}

/* The user files the recording fingerprinted (source_files), then library_items(), after python's -c. */
static char **facts_argv(sqlite3 *db, const char *python, size_t *n)
{
	/* the user's files: installed packages' (functions of Keras's fit) are not for the user to edit */
	sqlite3_stmt *s = db_prepare(db, "SELECT path FROM source_files WHERE path NOT LIKE '<%'"
				     " AND path NOT LIKE '%/site-packages/%' AND path NOT LIKE '%/dist-packages/%'"
				     " ORDER BY path");
	char **v = calloc(MAX_FILES + MAX_LIBRARY_FILES + 7, sizeof(*v));

	*n = 0;
	if (!s || !v) {
		sqlite3_finalize(s);
		free(v);
		return NULL;
	}
	v[(*n)++] = strdup(python);
	v[(*n)++] = strdup("-I");   /* no PYTHON* variables, no user site: only the standard library's ast */
	v[(*n)++] = strdup("-S");
	v[(*n)++] = strdup("-c");
	v[(*n)++] = strdup(agp_codefacts_py);
	while (*n < MAX_FILES + 5 && sqlite3_step(s) == SQLITE_ROW)
		v[(*n)++] = strdup((const char *)sqlite3_column_text(s, 0));
	sqlite3_finalize(s);
	library_items(db, v, n);
	return v;
}

static void free_argv(char **v, size_t n)
{
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

/* Run argv in cwd; its standard output into out (at most MAX_OUTPUT, DEADLINE_NS).  0 when it exited 0. */
static int run_parser(char **argv, const char *cwd, struct strbuf *out)
{
	uint64_t end = clock_ns(CLOCK_MONOTONIC) + DEADLINE_NS;
	int fd[2], status = 0, ok = 1;
	char buf[65536];
	pid_t pid;

	if (pipe2(fd, O_CLOEXEC))
		return -1;
	if ((pid = fork()) < 0) {
		close(fd[0]);
		close(fd[1]);
		return -1;
	}
	if (!pid) {
		int null = open("/dev/null", O_RDWR);

		if (null < 0 || dup2(null, 0) < 0 || dup2(null, 2) < 0 || dup2(fd[1], 1) < 0 || chdir(cwd))
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	close(fd[1]);
	for (;;) {
		struct pollfd p = { fd[0], POLLIN, 0 };
		uint64_t now = clock_ns(CLOCK_MONOTONIC);
		ssize_t r;

		if (now >= end || out->len > MAX_OUTPUT) {
			ok = 0;
			break;
		}
		if (poll(&p, 1, (int)((end - now) / 1000000 + 1)) < 0 && errno != EINTR) {
			ok = 0;
			break;
		}
		if ((r = read(fd[0], buf, sizeof(buf))) > 0)
			strbuf_add(out, buf, (size_t)r);
		else if (r == 0 || errno != EINTR)
			break;
	}
	close(fd[0]);
	if (!ok)
		kill(pid, SIGKILL);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return ok && !strbuf_failed(out) && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

/* One fact line (7 tab-separated fields) inserted; lines of another shape are skipped. */
static void insert_fact(sqlite3 *db, sqlite3_stmt *ins, char *line)
{
	char *f[7];
	int n = 0;

	for (char *p = line; n < 7; n++) {
		f[n] = p;
		p = strchr(p, '\t');
		if (!p) {
			n++;
			break;
		}
		*p++ = '\0';
	}
	if (n != 7)
		return;
	sqlite3_reset(ins);
	for (int i = 0; i < 7; i++) {
		if (i >= 2 && i <= 4)
			sqlite3_bind_int64(ins, i + 1, strtoll(f[i], NULL, 10));
		else
			sqlite3_bind_text(ins, i + 1, f[i], -1, SQLITE_TRANSIENT);
	}
	db_step_done(db, ins);
}

/* Run the parser (argv) in cwd and insert its facts; 0, or -1 when it failed. */
static int parse_into(sqlite3 *db, char **argv, const char *cwd)
{
	struct strbuf out = STRBUF_INIT;
	sqlite3_stmt *ins;
	int rc = -1;

	if (!run_parser(argv, cwd, &out) && out.buf &&
	    (ins = db_prepare(db, "INSERT OR IGNORE INTO code_facts (path, kind, line, col, end_line, name, detail)"
				  " VALUES (?, ?, ?, ?, ?, ?, ?)"))) {
		for (char *line = out.buf, *nl; *line; line = nl + 1) {
			if (!(nl = strchr(line, '\n')))
				break;
			*nl = '\0';
			insert_fact(db, ins, line);
		}
		sqlite3_finalize(ins);
		rc = 0;
	}
	strbuf_release(&out);
	return rc;
}

int code_facts_record(sqlite3 *db, const char *cwd, const char *python)
{
	size_t n = 0;
	char **argv;
	int rc = -1;

	if (!python || !*python || !cwd || !db_has_table(db, "code_facts") || !(argv = facts_argv(db, python, &n)))
		return -1;
	if (n > 5)
		rc = parse_into(db, argv, cwd);
	free_argv(argv, n);
	return rc;
}

int code_facts_record_cells(sqlite3 *db, const char *python, const char *cells)
{
	char *argv[] = { (char *)python, "-I", "-S", "-c", (char *)agp_codefacts_py, "--cells", (char *)cells, NULL };

	if (!python || !*python || !cells || !*cells || !db_has_table(db, "code_facts"))
		return -1;
	return parse_into(db, argv, "/");
}
