/*
 * run_side.c - a process's side records (common/agp_protocol.h): the rare,
 * variable-length facts (process, traces, FunctionDefs, GPU status and
 * activity, capture changes) the collector appends to its side file.
 */
#include "run_writer_int.h"
#include "side_fields.h"
#include "functiondef.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>

/* Longest side record accepted: FunctionDefs are the big ones (a few MiB). */
#define SIDE_RECORD_MAX (256u << 20)
/* At most this much of a side file is read per poll (a child may still write). */
#define SIDE_READ_PER_POLL (64u << 20)

static void side_process(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	struct strbuf argv = STRBUF_INIT;
	const char *p = fs->v[AGP_F_ARGV];
	size_t len = fs->f[AGP_F_ARGV] ? fs->f[AGP_F_ARGV]->len : 0, i = 0;

	strbuf_addch(&argv, '[');
	while (i < len) {
		size_t n = strnlen(p + i, len - i);
		char *arg = strndup(p + i, n);

		if (argv.len > 1)
			strbuf_addch(&argv, ',');
		strbuf_add_json_string(&argv, arg);
		free(arg);
		i += n + 1;
	}
	strbuf_addch(&argv, ']');
	sqlite3_bind_int(w->ins_process, 1, s->pid);
	sqlite3_bind_int64(w->ins_process, 2, fields_int(fs, AGP_F_PPID));
	sqlite3_bind_text(w->ins_process, 3, argv.buf, -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(w->ins_process, 4, fields_int(fs, AGP_F_START));
	writer_step(w, w->ins_process);
	strbuf_release(&argv);
}

static void side_tf_status(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	char *status = fields_text(fs, AGP_F_STATUS), *detail = fields_text(fs, AGP_F_DETAIL);
	char *tfver = fields_text(fs, AGP_F_TFVER), *pyver = fields_text(fs, AGP_F_PYVER);

	db_bind_text_or_null(w->upd_process_tf, 1, status ? status : "hooked");
	db_bind_text_or_null(w->upd_process_tf, 2, detail);
	db_bind_text_or_null(w->upd_process_tf, 3, tfver);
	db_bind_text_or_null(w->upd_process_tf, 4, pyver);
	sqlite3_bind_int(w->upd_process_tf, 5, s->pid);
	writer_step(w, w->upd_process_tf);
	if (pyver && !w->python_exe[0]) {
		/* it runs now: the finish parses the user's files with this interpreter's ast */
		char link[64];
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/%d/exe", s->pid);
		if ((n = readlink(link, w->python_exe, sizeof(w->python_exe) - 1)) > 0)
			w->python_exe[n] = '\0';
		else
			w->python_exe[0] = '\0';
	}
	free(status), free(detail), free(tfver), free(pyver);
}

static int64_t function_row(struct run_writer *w, int pid, const char *name, const char *file, int64_t line)
{
	int64_t name_id = writer_intern(w, name ? name : "?"), file_id = writer_intern(w, file), id = 0;
	sqlite3_stmt *both[] = { w->ins_function, w->get_function };

	/* insert unless there, then read its id: the same four keys */
	for (int i = 0; i < 2; i++) {
		sqlite3_bind_int(both[i], 1, pid);
		sqlite3_bind_int64(both[i], 2, name_id);
		db_bind_id_or_null(both[i], 3, file_id);
		if (file)
			sqlite3_bind_int64(both[i], 4, line);
		else
			sqlite3_bind_null(both[i], 4);
	}
	writer_step(w, w->ins_function);
	if (sqlite3_step(w->get_function) == SQLITE_ROW)
		id = sqlite3_column_int64(w->get_function, 0);
	sqlite3_reset(w->get_function);
	return id;
}

/*
 * The library frames of AGP_F_LIB_OUTER ("file\tline\tfunc\n", innermost
 * first) linked outermost first under parent; the innermost one's site.
 * Untrusted: a malformed entry ends them.
 */
static int64_t outer_sites(struct run_writer *w, char *text, int64_t parent)
{
	char *entry[AGP_SITE_CHAIN_MAX];
	int n = 0;

	for (char *p = text; p && *p && n < AGP_SITE_CHAIN_MAX; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		entry[n++] = p;
	while (n-- > 0) {
		char *tab1 = strchr(entry[n], '\t'), *tab2 = tab1 ? strchr(tab1 + 1, '\t') : NULL;
		char *end = tab2 ? strchr(tab2 + 1, '\n') : NULL;

		if (!end)
			continue;
		*tab1 = *tab2 = *end = '\0';
		parent = writer_callsite_id(w, writer_intern(w, entry[n]), atoi(tab1 + 1), writer_intern(w, tab2 + 1),
					    parent, 1);
	}
	return parent;
}

/* A trace's call site: its user frame, and the library frames below it (the innermost last). */
static int64_t trace_site(struct run_writer *w, const struct fields *fs, const char *sfile, const char *sfunc)
{
	char *lfile = fields_text(fs, AGP_F_LIB_FILE), *lfunc = fields_text(fs, AGP_F_LIB_FUNC);
	char *outer = fields_text(fs, AGP_F_LIB_OUTER);
	int64_t site = writer_callsite_id(w, writer_intern(w, sfile), fields_int(fs, AGP_F_SITE_LINE),
					  writer_intern(w, sfunc), 0, 0);

	if (lfile && lfunc) {
		if (outer)
			site = outer_sites(w, outer, site);
		site = writer_callsite_id(w, writer_intern(w, lfile), fields_int(fs, AGP_F_LIB_LINE),
					  writer_intern(w, lfunc), site, 1);
	}
	free(lfile);
	free(lfunc);
	free(outer);
	return site;
}

static void side_trace(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	char *name = fields_text(fs, AGP_F_NAME), *file = fields_text(fs, AGP_F_FILE);
	char *sig = fields_text(fs, AGP_F_SIGNATURE), *tfname = fields_text(fs, AGP_F_TFNAME);
	char *sfile = fields_text(fs, AGP_F_SITE_FILE), *sfunc = fields_text(fs, AGP_F_SITE_FUNC);
	char *status = fields_text(fs, AGP_F_STATUS);
	int64_t fn = function_row(w, s->pid, name, file, fields_int(fs, AGP_F_LINE));
	sqlite3_stmt *st = w->ins_trace;

	sqlite3_bind_int64(st, 1, fn);
	sqlite3_bind_int(st, 2, s->pid);
	sqlite3_bind_int64(st, 3, fields_int(fs, AGP_F_TID));
	sqlite3_bind_int64(st, 4, fields_int(fs, AGP_F_START));
	sqlite3_bind_int64(st, 5, fields_int(fs, AGP_F_END));
	sqlite3_bind_int64(st, 6, fields_int(fs, AGP_F_OBJECT));
	sqlite3_bind_int64(st, 7, fields_int(fs, AGP_F_OBJTRACE));
	db_bind_id_or_null(st, 8, writer_intern(w, tfname));
	db_bind_text_or_null(st, 9, sig);
	db_bind_id_or_null(st, 10, trace_site(w, fs, sfile, sfunc));
	sqlite3_bind_int64(st, 11, fields_int(fs, AGP_F_JIT));
	sqlite3_bind_int64(st, 12, fields_int(fs, AGP_F_REDUCE));
	sqlite3_bind_int64(st, 13, fields_int(fs, AGP_F_HAS_SIG));
	sqlite3_bind_int64(st, 14, fields_int(fs, AGP_F_VARS));
	sqlite3_bind_text(st, 15, status ? status : "ok", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int64(st, 16, fields_int(fs, AGP_F_COLLECTOR_NS) > 0 ? fields_int(fs, AGP_F_COLLECTOR_NS) : 0);
	if (writer_step(w, st) == 0) {
		sqlite3_bind_int(w->ins_trace_seq, 1, s->pid);
		sqlite3_bind_int64(w->ins_trace_seq, 2, fields_int(fs, AGP_F_TRACE_SEQ));
		sqlite3_bind_int64(w->ins_trace_seq, 3, sqlite3_last_insert_rowid(w->db));
		writer_step(w, w->ins_trace_seq);
		w->totals.traces++;
		w->totals.events++;
	}
	free(name), free(file), free(sig), free(tfname), free(sfile), free(sfunc), free(status);
}

static void side_trace_input(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	sqlite3_stmt *get = w->get_trace_seq;
	int64_t trace = 0;
	char *name, *kind, *dtype, *shape, *value;

	sqlite3_bind_int(get, 1, s->pid);
	sqlite3_bind_int64(get, 2, fields_int(fs, AGP_F_TRACE_SEQ));
	if (sqlite3_step(get) == SQLITE_ROW)
		trace = sqlite3_column_int64(get, 0);
	sqlite3_reset(get);
	if (!trace)
		return;
	name = fields_text(fs, AGP_F_NAME), kind = fields_text(fs, AGP_F_KIND), dtype = fields_text(fs, AGP_F_DTYPE);
	shape = fields_text(fs, AGP_F_SHAPE), value = fields_text(fs, AGP_F_VALUE);
	sqlite3_bind_int64(w->ins_input, 1, trace);
	sqlite3_bind_int64(w->ins_input, 2, fields_int(fs, AGP_F_POSITION));
	db_bind_text_or_null(w->ins_input, 3, name);
	sqlite3_bind_text(w->ins_input, 4, kind ? kind : "object", -1, SQLITE_TRANSIENT);
	db_bind_text_or_null(w->ins_input, 5, dtype);
	db_bind_text_or_null(w->ins_input, 6, shape);
	db_bind_text_or_null(w->ins_input, 7, value);
	writer_step(w, w->ins_input);
	free(name), free(kind), free(dtype), free(shape), free(value);
}

/* A pitfall seen while tracing (collector/pywatch.c). */
static void side_trace_event(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	sqlite3_stmt *st = w->ins_trace_event;
	char *kind = fields_text(fs, AGP_F_KIND), *name = fields_text(fs, AGP_F_NAME), *file = fields_text(fs, AGP_F_FILE);
	char *detail = fields_text(fs, AGP_F_DETAIL), *func = fields_text(fs, AGP_F_FUNC);
	char *ffile = fields_text(fs, AGP_F_FUNC_FILE);

	if (kind) {
		sqlite3_bind_int(st, 1, s->pid);
		sqlite3_bind_int64(st, 2, fields_int(fs, AGP_F_TRACE_SEQ));
		sqlite3_bind_text(st, 3, kind, -1, SQLITE_TRANSIENT);
		db_bind_text_or_null(st, 4, name);
		db_bind_text_or_null(st, 5, file);
		sqlite3_bind_int64(st, 6, fields_int(fs, AGP_F_LINE));
		sqlite3_bind_int64(st, 7, fields_int(fs, AGP_F_COUNT));
		db_bind_text_or_null(st, 8, detail);
		db_bind_text_or_null(st, 9, func);
		db_bind_text_or_null(st, 10, ffile);
		sqlite3_bind_int64(st, 11, fields_int(fs, AGP_F_FUNC_LINE));
		sqlite3_bind_int64(st, 12, fields_int(fs, AGP_F_REPEATS));
		sqlite3_bind_int64(st, 13, fields_int(fs, AGP_F_LOOP_LINE));
		if (db_step_done(w->db, st) == 0)
			w->totals.events++;
	}
	free(kind), free(name), free(file), free(detail), free(func), free(ffile);
}

/* "__forward_f_12" -> "f"; strips `suffixes` trailing "_<digits>" groups. */
static char *user_name_of(const char *name, const char *prefix, int suffixes)
{
	size_t plen = strlen(prefix);
	char *out, *us;

	if (strncmp(name, prefix, plen) != 0)
		return NULL;
	out = strdup(name + plen);
	while (out && suffixes-- > 0) {
		us = strrchr(out, '_');
		if (!us || !us[1] || strspn(us + 1, "0123456789") != strlen(us + 1)) {
			free(out);
			return NULL;
		}
		*us = '\0';
	}
	return out;
}

/* The role of a registered graph function, from its name; *user: the user function's name, or NULL. */
static const char *graph_function_role(const char *name, const char *kind, int64_t parent_trace, char **user)
{
	if ((*user = user_name_of(name, "__inference___backward_", 2)))
		return "backward";
	if ((*user = user_name_of(name, "__forward_", 1)))
		return "forward";
	if ((*user = user_name_of(name, "__inference_", 1)))
		return "inference";
	if (kind && !strcmp(kind, "loaded"))
		return "loaded";
	return parent_trace ? "branch" : "other";
}

static int is_py_function_op(const char *op)
{
	return op && (!strcmp(op, "EagerPyFunc") || !strcmp(op, "PyFunc") || !strcmp(op, "PyFuncStateless"));
}

/* The rows a parsed FunctionDef adds under graph function gf: inputs, constants, black boxes, references. */
static void write_graph_rows(struct run_writer *w, struct stream *s, int64_t gf, const struct functiondef *fd)
{
	for (size_t i = 0; i < fd->ninputs; i++) {
		sqlite3_bind_int64(w->ins_ginput, 1, gf);
		sqlite3_bind_int64(w->ins_ginput, 2, (int64_t)i);
		db_bind_text_or_null(w->ins_ginput, 3, fd->inputs[i].name);
		db_bind_text_or_null(w->ins_ginput, 4, fd->inputs[i].dtype);
		db_bind_text_or_null(w->ins_ginput, 5, fd->inputs[i].shape);
		writer_step(w, w->ins_ginput);
	}
	for (size_t i = 0; i < fd->nnodes; i++) {
		const struct fdef_node *n = &fd->nodes[i];

		sqlite3_bind_int(w->ins_gnode, 1, s->pid);
		sqlite3_bind_int64(w->ins_gnode, 2, gf);
		sqlite3_bind_text(w->ins_gnode, 3, n->name ? n->name : "?", -1, SQLITE_STATIC);
		sqlite3_bind_text(w->ins_gnode, 4, n->op ? n->op : "?", -1, SQLITE_STATIC);
		writer_step(w, w->ins_gnode);
		if (n->const_value) {
			sqlite3_bind_int64(w->ins_gconst, 1, gf);
			db_bind_text_or_null(w->ins_gconst, 2, n->name ? n->name : "?");
			db_bind_text_or_null(w->ins_gconst, 3, n->const_dtype);
			db_bind_text_or_null(w->ins_gconst, 4, n->const_value);
			writer_step(w, w->ins_gconst);
		}
		if (is_py_function_op(n->op)) {
			sqlite3_bind_int64(w->ins_bbnode, 1, gf);
			db_bind_text_or_null(w->ins_bbnode, 2, n->name ? n->name : "?");
			db_bind_text_or_null(w->ins_bbnode, 3, n->op);
			db_bind_text_or_null(w->ins_bbnode, 4, n->token);
			writer_step(w, w->ins_bbnode);
		}
	}
	for (size_t i = 0; i < fd->nrefs; i++) {
		sqlite3_bind_int(w->ins_link_ref, 1, s->pid);
		sqlite3_bind_int64(w->ins_link_ref, 2, gf);
		sqlite3_bind_int64(w->ins_link_ref, 3, writer_intern(w, fd->refs[i]));
		writer_step(w, w->ins_link_ref);
	}
}

/* The links the end of the run resolves: to the trace being built, to the user function. */
static void write_graph_links(struct run_writer *w, struct stream *s, int64_t gf, int64_t parent_trace,
			      const char *role, const char *user)
{
	if (parent_trace) {
		sqlite3_bind_int64(w->ins_link_trace, 1, gf);
		sqlite3_bind_int(w->ins_link_trace, 2, s->pid);
		sqlite3_bind_int64(w->ins_link_trace, 3, parent_trace);
		writer_step(w, w->ins_link_trace);
	}
	if (user && strcmp(role, "inference") != 0) {
		sqlite3_bind_int64(w->ins_link_name, 1, gf);
		sqlite3_bind_int(w->ins_link_name, 2, s->pid);
		sqlite3_bind_text(w->ins_link_name, 3, user, -1, SQLITE_TRANSIENT);
		writer_step(w, w->ins_link_name);
	}
}

static void side_funcdef(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	char *name = fields_text(fs, AGP_F_NAME), *kind = fields_text(fs, AGP_F_KIND), *user = NULL;
	const void *blob = fs->v[AGP_F_BLOB];
	size_t blen = fs->f[AGP_F_BLOB] ? fs->f[AGP_F_BLOB]->len : 0;
	struct functiondef fd;
	int parsed = blen ? functiondef_parse(&fd, blob, blen) == 0 : 0;
	int64_t parent_trace = fields_int(fs, AGP_F_PARENT_TRACE), gf;
	const char *role = name ? graph_function_role(name, kind, parent_trace, &user) : NULL;

	if (!name)
		goto out;
	sqlite3_bind_int(w->ins_gf, 1, s->pid);
	sqlite3_bind_int64(w->ins_gf, 2, writer_intern(w, name));
	sqlite3_bind_text(w->ins_gf, 3, role, -1, SQLITE_STATIC);
	sqlite3_bind_int64(w->ins_gf, 4, fields_int(fs, AGP_F_CREATED));
	sqlite3_bind_int(w->ins_gf, 5, parsed ? fd.jit_compile : 0);
	sqlite3_bind_int64(w->ins_gf, 6, parsed ? (int64_t)fd.nnodes : 0);
	if (blen)
		sqlite3_bind_blob(w->ins_gf, 7, blob, (int)blen, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(w->ins_gf, 7);
	if (writer_step(w, w->ins_gf) != 0 || sqlite3_changes(w->db) == 0)
		goto out;  /* registered again: the first registration stands */
	gf = sqlite3_last_insert_rowid(w->db);
	write_graph_links(w, s, gf, parent_trace, role, user);
	if (parsed)
		write_graph_rows(w, s, gf, &fd);
out:
	if (parsed)
		functiondef_release(&fd);
	free(name), free(kind), free(user);
}

static void side_gpu(struct run_writer *w, struct stream *s, uint32_t type, const struct fields *fs)
{
	static const char *const kinds[] = { "?", "kernel", "memcpy", "memset", "sync" };
	char *name = fields_text(fs, AGP_F_NAME), *detail = fields_text(fs, AGP_F_DETAIL);
	char *copy = fields_text(fs, AGP_F_COPY_KIND);
	sqlite3_stmt *st;
	int64_t k;

	if (type == AGP_SIDE_GPU_STATUS) {
		s->gpu_on = fields_int(fs, AGP_F_STATUS) != 0;
		sqlite3_bind_text(w->upd_process_gpu, 1, s->gpu_on ? "on" : "off", -1, SQLITE_STATIC);
		db_bind_text_or_null(w->upd_process_gpu, 2, detail);
		sqlite3_bind_int(w->upd_process_gpu, 3, s->pid);
		writer_step(w, w->upd_process_gpu);
	} else if (type == AGP_SIDE_GPU_ACTIVITY) {
		st = w->ins_gpu;
		k = fields_int(fs, AGP_F_GPU_KIND);
		sqlite3_bind_int(st, 1, s->pid);
		sqlite3_bind_text(st, 2, kinds[k >= 1 && k <= 4 ? k : 0], -1, SQLITE_STATIC);
		db_bind_id_or_null(st, 3, writer_intern(w, name));
		sqlite3_bind_int64(st, 4, fields_int(fs, AGP_F_DEVICE));
		sqlite3_bind_int64(st, 5, fields_int(fs, AGP_F_CONTEXT));
		sqlite3_bind_int64(st, 6, fields_int(fs, AGP_F_STREAM));
		sqlite3_bind_int64(st, 7, fields_int(fs, AGP_F_START));
		sqlite3_bind_int64(st, 8, fields_int(fs, AGP_F_END));
		sqlite3_bind_int64(st, 9, fields_int(fs, AGP_F_CORR));
		for (int i = 0; i < 6; i++)
			sqlite3_bind_int64(st, 10 + i, fields_int(fs, AGP_F_GRID_X + i));
		sqlite3_bind_int64(st, 16, fields_int(fs, AGP_F_BYTES));
		db_bind_text_or_null(st, 17, copy);
		if (writer_step(w, st) == 0)
			w->totals.gpu++, w->totals.events++;
	} else {
		st = w->ins_api;
		sqlite3_bind_int(st, 1, s->pid);
		sqlite3_bind_int64(st, 2, fields_int(fs, AGP_F_TID));
		sqlite3_bind_text(st, 3, fields_int(fs, AGP_F_API) == 2 ? "driver" : "runtime", -1, SQLITE_STATIC);
		db_bind_id_or_null(st, 4, writer_intern(w, name));
		sqlite3_bind_int64(st, 5, fields_int(fs, AGP_F_START));
		sqlite3_bind_int64(st, 6, fields_int(fs, AGP_F_END));
		sqlite3_bind_int64(st, 7, fields_int(fs, AGP_F_CORR));
		if (fields_int(fs, AGP_F_EXTERNAL))
			sqlite3_bind_int64(st, 8, fields_int(fs, AGP_F_EXTERNAL));
		else
			sqlite3_bind_null(st, 8);
		if (writer_step(w, st) == 0)
			w->totals.events++;
	}
	free(name), free(detail), free(copy);
}

/* The decimal number at p, read no further than end (the text is not NUL-terminated); 0 when none. */
static int64_t digits_value(const char *p, const char *end)
{
	int64_t v = 0;

	for (; p < end && *p >= '0' && *p <= '9' && v < INT32_MAX; p++)
		v = v * 10 + (*p - '0');
	return v;
}

/* "name\tfile\tline\n" entries of one trace's graph (collector/pytrace.py), untrusted. */
static void node_sources(struct run_writer *w, struct stream *s, int64_t trace_seq, const char *p, size_t len)
{
	const char *end = p + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p)), *t1, *t2;
		const char *stop = nl ? nl : end;

		t1 = memchr(p, '\t', (size_t)(stop - p));
		t2 = t1 ? memchr(t1 + 1, '\t', (size_t)(stop - t1 - 1)) : NULL;
		if (t2 && t1 > p && t2 > t1 + 1) {
			sqlite3_bind_int(w->ins_node_src, 1, s->pid);
			sqlite3_bind_int64(w->ins_node_src, 2, trace_seq);
			sqlite3_bind_text(w->ins_node_src, 3, p, (int)(t1 - p), SQLITE_TRANSIENT);
			/* interned: the table is in the recording until the finish, a file's name once */
			sqlite3_bind_int64(w->ins_node_src, 4, string_table_intern(&w->st, t1 + 1, (size_t)(t2 - t1 - 1)));
			sqlite3_bind_int64(w->ins_node_src, 5, digits_value(t2 + 1, stop));
			writer_step(w, w->ins_node_src);
		}
		p = stop + 1;
	}
}

static void side_kernels(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	char *status, *detail;

	if (fs->f[AGP_F_NODE_LINES]) {
		node_sources(w, s, fields_int(fs, AGP_F_TRACE_SEQ), fs->v[AGP_F_NODE_LINES], fs->f[AGP_F_NODE_LINES]->len);
		return;
	}
	status = fields_text(fs, AGP_F_STATUS), detail = fields_text(fs, AGP_F_DETAIL);
	db_bind_text_or_null(w->upd_process_kernels, 1, status);
	db_bind_text_or_null(w->upd_process_kernels, 2, detail);
	sqlite3_bind_int(w->upd_process_kernels, 3, s->pid);
	writer_step(w, w->upd_process_kernels);
	free(status), free(detail);
}

/* One collective execution (collector/hooks_collective.c): keys all three or none. */
static void side_collective(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	static const int key_tags[3] = { AGP_F_COLL_GROUP_SIZE, AGP_F_COLL_GROUP_KEY, AGP_F_COLL_INSTANCE_KEY };
	sqlite3_stmt *st = w->ins_collective;
	char *op = fields_text(fs, AGP_F_NAME), *why = fields_text(fs, AGP_F_COLL_KEY_STATUS);
	int keyed = fs->f[AGP_F_COLL_GROUP_KEY] && fs->f[AGP_F_COLL_INSTANCE_KEY];
	int64_t start = fields_int(fs, AGP_F_START), end = fields_int(fs, AGP_F_END);

	sqlite3_bind_int(st, 1, s->pid);
	sqlite3_bind_int64(st, 2, fields_int(fs, AGP_F_TID));
	sqlite3_bind_int64(st, 3, writer_intern(w, op ? op : "?"));
	sqlite3_bind_int64(st, 4, start);
	sqlite3_bind_int64(st, 5, end > start ? end : start);
	sqlite3_bind_int(st, 6, fields_int(fs, AGP_F_COLL_GRAPH) != 0);
	for (int i = 0; i < 3; i++) {
		if (keyed && fs->f[key_tags[i]])
			sqlite3_bind_int64(st, 7 + i, fields_int(fs, key_tags[i]));
		else
			sqlite3_bind_null(st, 7 + i);
	}
	db_bind_text_or_null(st, 10, keyed ? NULL : why ? why : "no keys recorded");
	writer_step(w, st);
	free(op), free(why);
}

/* A tf.data op with its handles' addresses (collector/hooks_tf.c); 0 is none. */
static void side_dataset(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	static const int handle_tags[3] = { AGP_F_DS_IN, AGP_F_DS_IN2, AGP_F_DS_OUT };
	sqlite3_stmt *st = w->ins_dataset;
	char *op = fields_text(fs, AGP_F_NAME);
	int64_t start = fields_int(fs, AGP_F_START), end = fields_int(fs, AGP_F_END);

	sqlite3_bind_int(st, 1, s->pid);
	sqlite3_bind_int64(st, 2, fields_int(fs, AGP_F_TID));
	sqlite3_bind_int64(st, 3, writer_intern(w, op ? op : "?"));
	sqlite3_bind_int64(st, 4, start);
	sqlite3_bind_int64(st, 5, end > start ? end : start);
	for (int i = 0; i < 3; i++)
		db_bind_id_or_null(st, 6 + i, fields_int(fs, handle_tags[i]));
	writer_step(w, st);
	free(op);
}

/* A process's collector changed its capture bits (collector/capture.c). */
static void side_capture(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	char *why = fields_text(fs, AGP_F_CAPTURE_WHY);
	int64_t calls = fields_int(fs, AGP_F_CAPTURE_CALLS);

	w->capture.used = 1;
	if (calls > w->capture.calls)
		w->capture.calls = calls;
	if (capture_log_add(&w->capture, s->pid, (uint64_t)fields_int(fs, AGP_F_START),
			    (uint32_t)fields_int(fs, AGP_F_CAPTURE_OFF) & ~AGP_CAPTURE_LAUNCHER, why) != 0 &&
	    !w->capture_note_said++)
		writer_note(w, "process %d: capture window changes past %d were not kept", s->pid, CAPTURE_LOG_MAX_CHANGES);
	free(why);
}

/* What the collector knows it missed (collector/got.c's unpatched slots): in meta.incomplete, once per text. */
static void side_note(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	char *detail = fields_text(fs, AGP_F_DETAIL);

	if (detail && !strstr(w->notes.buf ? w->notes.buf : "", detail))
		writer_note(w, "process %d: %s", s->pid, detail);
	free(detail);
}

/*
 * An op type's price, timed by the collector at the program's exit
 * (collector/op_price.c): stored as sent, the reader bounds it
 * (analyzer/model/saving_reads.c).  A recording made by an older writer
 * has no table (ins_op_price NULL): nothing is kept.
 */
static void side_op_price(struct run_writer *w, struct stream *s, const struct fields *fs)
{
	sqlite3_stmt *st = w->ins_op_price;
	char *op = fields_text(fs, AGP_F_NAME);

	if (st && op) {
		sqlite3_bind_int(st, 1, s->pid);
		sqlite3_bind_int64(st, 2, fields_int(fs, AGP_F_TID));
		sqlite3_bind_int64(st, 3, writer_intern(w, op));
		sqlite3_bind_int64(st, 4, fields_int(fs, AGP_F_COUNT));
		sqlite3_bind_int64(st, 5, fields_int(fs, AGP_F_CPU_NS));
		sqlite3_bind_int64(st, 6, fields_int(fs, AGP_F_WALL_NS));
		writer_step(w, st);
	}
	free(op);
}

static void side_record(struct run_writer *w, struct stream *s, uint32_t type, const char *p, size_t len)
{
	struct fields fs;

	fields_parse(&fs, p, len);
	switch (type) {
	case AGP_SIDE_PROCESS: side_process(w, s, &fs); break;
	case AGP_SIDE_TF_STATUS: side_tf_status(w, s, &fs); break;
	case AGP_SIDE_TRACE: side_trace(w, s, &fs); break;
	case AGP_SIDE_TRACE_INPUT: side_trace_input(w, s, &fs); break;
	case AGP_SIDE_TRACE_EVENT: side_trace_event(w, s, &fs); break;
	case AGP_SIDE_FUNCDEF: side_funcdef(w, s, &fs); break;
	case AGP_SIDE_KERNELS: side_kernels(w, s, &fs); break;
	case AGP_SIDE_EXIT:
		sqlite3_bind_int64(w->upd_process_exit, 1, fields_int(&fs, AGP_F_EXIT_STATUS));
		sqlite3_bind_int64(w->upd_process_exit, 2, fields_int(&fs, AGP_F_END));
		sqlite3_bind_int(w->upd_process_exit, 3, s->pid);
		writer_step(w, w->upd_process_exit);
		break;
	case AGP_SIDE_GPU_STATUS:
	case AGP_SIDE_GPU_ACTIVITY:
	case AGP_SIDE_GPU_API:
		side_gpu(w, s, type, &fs);
		break;
	case AGP_SIDE_CAPTURE:
		side_capture(w, s, &fs);
		break;
	case AGP_SIDE_COLLECTIVE:
		side_collective(w, s, &fs);
		break;
	case AGP_SIDE_DATASET:
		side_dataset(w, s, &fs);
		break;
	case AGP_SIDE_NOTE:
		side_note(w, s, &fs);
		break;
	case AGP_SIDE_OP_PRICE:
		side_op_price(w, s, &fs);
		break;
	}
}

void run_side_drain(struct run_writer *w, struct stream *s)
{
	size_t off = 0, got = 0;

	if (s->side_fd < 0 || s->side_damaged)
		return;
	/* bounded: a process that outlives the program may still be appending */
	while (got < SIDE_READ_PER_POLL) {
		ssize_t n;

		if (s->side_cap - s->side_len < 65536) {
			size_t ncap = s->side_cap ? s->side_cap * 2 : 262144;
			char *nb = realloc(s->side_buf, ncap);

			if (!nb)
				return;
			s->side_buf = nb;
			s->side_cap = ncap;
		}
		n = read(s->side_fd, s->side_buf + s->side_len, s->side_cap - s->side_len);
		if (n <= 0)
			break;
		s->side_len += (size_t)n;
		got += (size_t)n;
	}
	while (s->side_len - off >= sizeof(struct agp_side_hdr) && !run_writer_stopping) {
		struct agp_side_hdr h;

		memcpy(&h, s->side_buf + off, sizeof(h));
		if (h.len > SIDE_RECORD_MAX) {
			writer_note(w, "process %d: side record of %u bytes (its later facts are missing)", s->pid, h.len);
			s->side_damaged = 1;
			break;
		}
		if (s->side_len - off - sizeof(h) < h.len)
			break;  /* the rest is still being written */
		side_record(w, s, h.type, s->side_buf + off + sizeof(h), h.len);
		off += sizeof(h) + h.len;
	}
	memmove(s->side_buf, s->side_buf + off, s->side_len - off);
	s->side_len -= off;
}
