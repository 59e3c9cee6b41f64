/*
 * pyowner.c - whose code a Python source file is: TensorFlow's (skipped),
 * a library's (a finding names the user's line that called it) or the
 * user's (docs/collector.md, "Frame classification").
 *
 * A library is known by its package, not by the directory it was installed
 * to: besides site-packages, a source checkout on PYTHONPATH, an editable
 * install (pip install -e) and a copy vendored into the user's tree are
 * libraries too.  Where each lives is found once, before the first frame
 * is classified (agp_py_owner_init, the GIL held, from sys.path and
 * sys.argv[0]), and kept in tables that classification only reads: the hot
 * path takes no lock and makes no system call.  Everything read from the
 * file system here is bounded (PATH_MAX paths, small files) and a failure
 * only leaves a root out.
 */
#include "collector.h"
#include "util.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int agp_path_contains(const char *path, size_t len, const char *needle)
{
	return memmem(path, len, needle, strlen(needle)) != NULL;
}

/* ".../lib/pythonX.Y/...": the interpreter's standard library (lib64 too). */
static int in_stdlib(const char *path, size_t len)
{
	static const char *const roots[] = { "/lib/python", "/lib64/python", NULL };

	for (int i = 0; roots[i]; i++) {
		size_t n = strlen(roots[i]);
		const char *p = path, *end = path + len, *hit;

		while ((hit = memmem(p, (size_t)(end - p), roots[i], n))) {
			if (hit + n < end && hit[n] >= '0' && hit[n] <= '9')
				return 1;
			p = hit + 1;
		}
	}
	return 0;
}

/*
 * The code objects of frames CPython pushes itself, with no source line:
 * 3.12's entry frame of every call from C into Python (the "interpreter
 * trampoline", file "<shim>"), and 3.13's frame that checks what a Python
 * __init__ returned when a class is called (file "__init__", no directory).
 * Taken for the user's, one of them ended the walk at "<shim>:0" under
 * every operator a tensor overloads in Python (tensor % 2: C calls
 * Tensor.__mod__).
 */
static int interpreter_shim(const char *path, size_t len)
{
	return (len == 6 && !memcmp(path, "<shim>", 6)) || (len == 8 && !memcmp(path, "__init__", 8));
}

/* Classification by the path alone (no overrides, no inferred roots). */
static int builtin_kind(const char *path, size_t len)
{
	/* AutoGraph's converted copy of a function: generated lines no one can edit */
	static const char *const framework[] = { "/tensorflow/", "/keras/", "/tf_keras/", "/absl/",
						 "/tensorflow_core/", "/tensorflow_estimator/",
						 "/__autograph_generated_file", NULL };
	static const char *const library[] = { "/site-packages/", "/dist-packages/", NULL };

	if ((len >= 7 && !memcmp(path, "<frozen", 7)) || interpreter_shim(path, len))
		return AGP_FRAME_FRAMEWORK;
	for (int i = 0; framework[i]; i++)
		if (agp_path_contains(path, len, framework[i]))
			return AGP_FRAME_FRAMEWORK;
	for (int i = 0; library[i]; i++)
		if (agp_path_contains(path, len, library[i]))
			return AGP_FRAME_LIBRARY;
	return in_stdlib(path, len) ? AGP_FRAME_LIBRARY : AGP_FRAME_USER;
}

/*
 * Path prefixes, each a table filled once:
 * - explicit: --user-code (AGP_FRAME_USER) and --library (AGP_FRAME_LIBRARY);
 * - inferred: library roots found at start; `installed` ones (a directory
 *   of *.dist-info, as pip install --target leaves it) are installed code,
 *   which --user-code above them does not make the user's, like a
 *   site-packages directory;
 * - tree: the user's tree (working directory, script directory, the git
 *   work tree around the script), where vendored copies are looked for.
 */
#define MAX_OVERRIDES 32
#define MAX_INFERRED 64
#define MAX_TREE 8
struct prefix {
	char *text;
	size_t len;
	int kind;  /* explicit: enum agp_frame_kind; inferred: 1 installed */
};
static struct prefix explicit_roots[MAX_OVERRIDES], inferred[MAX_INFERRED], tree[MAX_TREE];
static int nexplicit, ninferred, ntree;
static char start_cwd[PATH_MAX];
static char *start_pythonpath;  /* PYTHONPATH as the process started, for agp_py_owner_init */

/* Add path[0..len) to a table of cap entries, once (an equal text is not added again). */
static void prefix_add(struct prefix *table, int *n, int cap, const char *path, size_t len, int kind)
{
	while (len > 1 && path[len - 1] == '/')
		len--;
	if (*n >= cap || len == 0 || len >= PATH_MAX)
		return;
	for (int i = 0; i < *n; i++)
		if (table[i].len == len && !memcmp(table[i].text, path, len)) {
			table[i].kind |= kind;
			return;
		}
	if (!(table[*n].text = strndup(path, len)))
		return;
	table[*n].len = len;
	table[*n].kind = kind;
	(*n)++;
}

/* Whether prefix p is path or a directory above it. */
static int prefix_of(const struct prefix *p, const char *path, size_t len)
{
	return p->len <= len && !memcmp(path, p->text, p->len) &&
	       (p->len == len || path[p->len] == '/' || p->text[p->len - 1] == '/');
}

/* The longest entry of table[0..n) that is path or above it (kind wanted, or any kind if want < 0). */
static const struct prefix *prefix_find(const struct prefix *table, int n, const char *path, size_t len, int want)
{
	const struct prefix *best = NULL;

	for (int i = 0; i < n; i++) {
		const struct prefix *o = &table[i];

		if ((want >= 0 && o->kind != want) || !prefix_of(o, path, len))
			continue;
		if (!best || o->len > best->len || (o->len == best->len && o->kind == AGP_FRAME_USER))
			best = o;
	}
	return best;
}

/*
 * A file under a directory named like a vendored copy, below the user's
 * tree (the components above the tree's root are not the project's: a
 * project checked out in /srv/external/ is still the user's).
 */
static int vendored(const char *path, size_t len)
{
	static const char *const names[] = { "vendor", "_vendor", "vendored", "third_party", "third-party",
					     "external", "extern", NULL };
	const struct prefix *root = prefix_find(tree, ntree, path, len, -1);
	const char *p, *end = path + len, *slash;

	if (!root)
		return 0;
	for (p = path + root->len; p < end && (slash = memchr(p, '/', (size_t)(end - p))); p = slash + 1)
		for (int i = 0; names[i]; i++)
			if ((size_t)(slash - p) == strlen(names[i]) && !memcmp(p, names[i], (size_t)(slash - p)))
				return 1;
	return 0;
}

/*
 * Framework frames are always skipped.  --library makes anything else under
 * it library code.  --user-code makes its tree user code, except what lies
 * in a site-packages directory (or TensorFlow) or an installed PYTHONPATH
 * directory below it: a virtual environment inside the project is still
 * installed code.  It wins over every other inferred root.  Then a library
 * root found at start, or a vendored copy in the user's tree, is library.
 */
int agp_classify_path(const char *path, size_t len)
{
	int kind = builtin_kind(path, len);
	const struct prefix *o, *inst;

	if (kind == AGP_FRAME_FRAMEWORK)
		return kind;
	if ((o = prefix_find(explicit_roots, nexplicit, path, len, -1))) {
		if (o->kind == AGP_FRAME_LIBRARY)
			return AGP_FRAME_LIBRARY;
		inst = prefix_find(inferred, ninferred, path, len, 1);
		if (inst && inst->len > o->len)
			return AGP_FRAME_LIBRARY;
		return builtin_kind(path + o->len, len - o->len) == AGP_FRAME_USER ? AGP_FRAME_USER : kind;
	}
	if (kind == AGP_FRAME_LIBRARY || prefix_find(inferred, ninferred, path, len, -1) || vendored(path, len))
		return AGP_FRAME_LIBRARY;
	return AGP_FRAME_USER;
}

/* The ':'-separated paths of var (the launcher made them absolute) as explicit overrides of kind. */
static void read_override_list(const char *var, int kind)
{
	const char *v = getenv(var), *p, *end;

	for (p = v; p && *p; p = *end ? end + 1 : end) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		prefix_add(explicit_roots, &nexplicit, MAX_OVERRIDES, p, (size_t)(end - p), kind);
	}
}

void agp_py_read_overrides(void)
{
	const char *pp = getenv("PYTHONPATH");

	read_override_list(AGP_ENV_USER_CODE, AGP_FRAME_USER);
	read_override_list(AGP_ENV_LIBRARY, AGP_FRAME_LIBRARY);
	if (!getcwd(start_cwd, sizeof(start_cwd)))
		start_cwd[0] = '\0';
	/* Python reads PYTHONPATH at its start: the program changing it later changes nothing. */
	if (pp && !start_pythonpath)
		start_pythonpath = strndup(pp, 65536);
}

/* ---- Library roots, found once (agp_py_owner_init) ---- */

/* The user's own places, resolved: the working directory (unless "/", which says nothing) and the script's. */
static char anchors[2][PATH_MAX];

/* path[0..n) made absolute against the start directory into out (PATH_MAX bytes); 0 on success. */
static int absolute(const char *path, size_t n, char *out)
{
	int len;

	if (n == 0)
		return -1;
	if (*path == '/')
		len = snprintf(out, PATH_MAX, "%.*s", (int)n, path);
	else if (start_cwd[0])
		len = snprintf(out, PATH_MAX, "%s/%.*s", start_cwd, (int)n, path);
	else
		return -1;
	while (len > 1 && out[len - 1] == '/')
		out[--len] = '\0';
	return len > 0 && len < PATH_MAX ? 0 : -1;
}

/* realpath() of path into out, or path itself when it cannot be resolved. */
static void resolved(const char *path, char *out)
{
	if (!realpath(path, out))
		snprintf(out, PATH_MAX, "%s", path);
}

/* Whether dir is path or a directory above it. */
static int within(const char *dir, const char *path)
{
	size_t n = strlen(dir);

	return n && !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/' || dir[n - 1] == '/');
}

/* Whether the resolved dir is the working or script directory or above one: the user's own project. */
static int holds_anchor(const char *dir)
{
	return (anchors[0][0] && within(dir, anchors[0])) || (anchors[1][0] && within(dir, anchors[1]));
}

static int exists_in(const char *dir, const char *name, int want_dir)
{
	char path[PATH_MAX];
	struct stat st;

	if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) || stat(path, &st) != 0)
		return 0;
	return !want_dir || S_ISDIR(st.st_mode);
}

/* The first entry of dir whose name ends with suffix (or starts with it, when prefix is set). */
static int has_entry(const char *dir, const char *text, int prefix)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t m = strlen(text);
	int found = 0, seen = 0;

	while (d && !found && seen++ < 8192 && (e = readdir(d))) {
		size_t n = strlen(e->d_name);

		found = prefix ? !strncmp(e->d_name, text, m) : n > m && !strcmp(e->d_name + n - m, text);
	}
	if (d)
		closedir(d);
	return found;
}

/* A project of its own: its build description, and its own repository or licence. */
static int separate_project(const char *dir)
{
	return (exists_in(dir, "pyproject.toml", 0) || exists_in(dir, "setup.py", 0) ||
		exists_in(dir, "setup.cfg", 0)) &&
	       (exists_in(dir, ".git", 0) || has_entry(dir, "LICENSE", 1) || has_entry(dir, "LICENCE", 1));
}

/* A library root, as written and resolved (Python names files by the path it imported them by). */
static void library_root_add(const char *path, int installed)
{
	char real[PATH_MAX];

	prefix_add(inferred, &ninferred, MAX_INFERRED, path, strlen(path), installed);
	resolved(path, real);
	prefix_add(inferred, &ninferred, MAX_INFERRED, real, strlen(real), installed);
}

/*
 * A place a library may be imported from (a PYTHONPATH entry, an editable
 * install's directory): a library root unless it is the user's own project
 * (it holds the working or script directory: PYTHONPATH=., pip install -e
 * . of the project run).  Inside the user's tree it is one only when it, or
 * a directory above it below the tree's root, is a separate project (a
 * clone inside the project); outside, always (a cloned library).
 */
static void candidate(const char *path)
{
	char real[PATH_MAX], dir[PATH_MAX];
	const struct prefix *t;
	char *slash;

	resolved(path, real);
	if (holds_anchor(real))
		return;
	if (!(t = prefix_find(tree, ntree, real, strlen(real), -1))) {
		library_root_add(path, 0);
		return;
	}
	snprintf(dir, sizeof(dir), "%s", real);
	while (strlen(dir) > t->len && !holds_anchor(dir)) {
		if (separate_project(dir)) {
			library_root_add(strcmp(dir, real) ? dir : path, 0);
			return;
		}
		if (!(slash = strrchr(dir, '/')) || slash == dir)
			return;
		*slash = '\0';
	}
}

/* The user's tree: the working and script directories, and the git work tree around them. */
static void tree_init(const char *script)
{
	char abs[PATH_MAX], dir[PATH_MAX], *slash;
	struct stat st;

	if (start_cwd[0] && strcmp(start_cwd, "/"))
		resolved(start_cwd, anchors[0]);
	if (script && absolute(script, strlen(script), abs) == 0 && stat(abs, &st) == 0 && S_ISREG(st.st_mode) &&
	    (slash = strrchr(abs, '/')) && slash != abs) {
		*slash = '\0';
		prefix_add(tree, &ntree, MAX_TREE, abs, strlen(abs), 0);
		resolved(abs, anchors[1]);
	}
	for (int i = 0; i < 2; i++)
		if (anchors[i][0])
			prefix_add(tree, &ntree, MAX_TREE, anchors[i], strlen(anchors[i]), 0);
	if (start_cwd[0] && strcmp(start_cwd, "/"))
		prefix_add(tree, &ntree, MAX_TREE, start_cwd, strlen(start_cwd), 0);
	/* a monorepo: PYTHONPATH=../shared is still the user's code */
	snprintf(dir, sizeof(dir), "%s", anchors[1][0] ? anchors[1] : anchors[0]);
	for (int up = 0; dir[0] && up < 64; up++) {
		if (exists_in(dir, ".git", 0)) {
			prefix_add(tree, &ntree, MAX_TREE, dir, strlen(dir), 0);
			break;
		}
		if (!(slash = strrchr(dir, '/')) || slash == dir)
			break;
		*slash = '\0';
	}
}

/* After key (a quoted JSON name) and its ':', or NULL. */
static const char *json_value(const char *json, const char *key)
{
	const char *p = strstr(json, key);

	if (!p)
		return NULL;
	for (p += strlen(key); *p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ':'; p++)
		;
	return p;
}

/* A hex digit's value, or -1. */
static int hex(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/*
 * PEP 610's direct_url.json of an editable install: {"dir_info":
 * {"editable": true}, "url": "file:///path"}; the path, percent-decoded,
 * into out (PATH_MAX).  0 when it is one.
 */
static int editable_dir(const char *json, char *out)
{
	const char *e = json_value(json, "\"editable\""), *u = json_value(json, "\"url\"");
	size_t n = 0;

	if (!e || strncmp(e, "true", 4) || !u || strncmp(u, "\"file:///", 9))
		return -1;
	for (u += 8; *u && *u != '"' && n + 1 < PATH_MAX; u++) {
		if (*u == '%' && hex(u[1]) >= 0 && hex(u[2]) >= 0) {
			out[n++] = (char)(hex(u[1]) * 16 + hex(u[2]));
			u += 2;
		} else if (*u == '\\') {
			return -1;  /* an escape in a path: not worth guessing */
		} else {
			out[n++] = *u;
		}
	}
	out[n] = '\0';
	return *u == '"' && n > 0 && !memchr(out, '\0', n) ? 0 : -1;
}

/*
 * The directories a .pth file (or an .egg-link: its first line) of site
 * directory dir names: the lines that are not comments nor "import"
 * statements, relative to dir, as site.py reads them (setuptools' develop
 * mode and its editable installs of a src layout write the source
 * directory there).  Only existing directories, as site.py.
 */
static void path_lines(const char *dir, const char *name, int first_only)
{
	char file[PATH_MAX], buf[16384], entry[PATH_MAX];
	struct stat st;
	char *line, *save = NULL;

	if (snprintf(file, sizeof(file), "%s/%s", dir, name) >= (int)sizeof(file) || read_small_file(file, buf, sizeof(buf)) < 0)
		return;
	for (line = strtok_r(buf, "\n", &save); line; line = first_only ? NULL : strtok_r(NULL, "\n", &save)) {
		size_t n = strlen(line);

		while (n && (line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t'))
			line[--n] = '\0';
		if (!n || line[0] == '#' || !strncmp(line, "import ", 7) || !strncmp(line, "import\t", 7))
			continue;
		if ((line[0] == '/' ? snprintf(entry, sizeof(entry), "%s", line)
				    : snprintf(entry, sizeof(entry), "%s/%s", dir, line)) >= (int)sizeof(entry))
			continue;
		if (stat(entry, &st) == 0 && S_ISDIR(st.st_mode))
			candidate(entry);
	}
}

static int ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), m = strlen(tail);

	return n > m && !strcmp(s + n - m, tail);
}

/* A site directory's editable installs: direct_url.json of its *.dist-info, its *.pth and *.egg-link files. */
static void scan_site_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char file[PATH_MAX], json[8192], url[PATH_MAX];

	for (int seen = 0; d && seen < 16384 && (e = readdir(d)); seen++) {
		if (ends_with(e->d_name, ".dist-info")) {
			if (snprintf(file, sizeof(file), "%s/%s/direct_url.json", dir, e->d_name) < (int)sizeof(file) &&
			    read_small_file(file, json, sizeof(json)) > 0 && editable_dir(json, url) == 0)
				candidate(url);
		} else if (ends_with(e->d_name, ".pth")) {
			path_lines(dir, e->d_name, 0);
		} else if (ends_with(e->d_name, ".egg-link")) {
			path_lines(dir, e->d_name, 1);
		}
	}
	if (d)
		closedir(d);
}

/*
 * PYTHONPATH as the process started: a directory holding *.dist-info (pip
 * install --target, an image's dependencies) is installed code wherever it
 * is; any other entry is a candidate (a source checkout put there).
 */
static void pythonpath_roots(void)
{
	const char *p, *end;
	char abs[PATH_MAX];

	for (p = start_pythonpath; p && *p; p = *end ? end + 1 : end) {
		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		if (absolute(p, (size_t)(end - p), abs) != 0)
			continue;
		if (has_entry(abs, ".dist-info", 0))
			library_root_add(abs, 1);
		else
			candidate(abs);
	}
}

/* The subdirectories of dir (in the user's tree) that are separate projects: a library cloned into the project. */
static void separate_subdirs(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char sub[PATH_MAX];

	for (int seen = 0; d && seen < 1024 && (e = readdir(d)); seen++) {
		if (e->d_name[0] == '.' || snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) >= (int)sizeof(sub) ||
		    !exists_in(dir, e->d_name, 1))
			continue;
		if (!holds_anchor(sub) && separate_project(sub))
			library_root_add(sub, 0);
	}
	if (d)
		closedir(d);
}

/*
 * Find the library roots beyond site-packages, once, before the first frame
 * is classified; script is sys.argv[0], sys_path[0..n) sys.path.
 */
void agp_py_owner_init(const char *script, const char *const *sys_path, int n)
{
	char abs[PATH_MAX], real[PATH_MAX];

	tree_init(script);
	pythonpath_roots();
	for (int i = 0; i < n; i++) {
		/* "" is the working directory */
		const char *entry = sys_path[i] && sys_path[i][0] ? sys_path[i] : ".";

		if (!sys_path[i] || absolute(entry, strlen(entry), abs) != 0)
			continue;
		resolved(abs, real);
		if (agp_path_contains(real, strlen(real), "/site-packages") ||
		    agp_path_contains(real, strlen(real), "/dist-packages"))
			scan_site_dir(real);
		else if (prefix_find(tree, ntree, real, strlen(real), -1) && strcmp(real, anchors[0]) &&
			 strcmp(real, anchors[1]))
			separate_subdirs(real);  /* the anchors' are looked at below, once */
	}
	for (int i = 0; i < 2; i++)
		if (anchors[i][0])
			separate_subdirs(anchors[i]);
}
