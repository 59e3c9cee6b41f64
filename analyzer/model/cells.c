/*
 * cells.c - notebook cells the recording keeps (table notebook_cells,
 * docs/schema.md): in a notebook a cell's code is compiled under a made-up
 * file name (/tmp/ipykernel_PID/HASH.py, <ipython-input-N-HASH>) that no
 * reader can open afterwards.  The %%agprof magic writes each such name
 * with the cell's label and text, so that locations read "In [3], line 4"
 * and edits can be written against the cell.
 *
 * The rows are untrusted input: a label must be short printable text, the
 * source at most SRCFILE_MAX_BYTES, and at most MAX_CELLS rows are read.
 */
#include "model.h"
#include "db.h"
#include "srcfile.h"
#include "checked.h"
#include "recording.h"
#include "util.h"

#include <stdlib.h>
#include <string.h>

#define MAX_CELLS 4096
#define MAX_LABEL 40

static int printable_label(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	if (!n || n > MAX_LABEL)
		return 0;
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || (unsigned char)*s >= 0x7f)
			return 0;
	return 1;
}

static int cmp_cells(const void *a, const void *b)
{
	return strcmp(((const struct model_cell *)a)->path, ((const struct model_cell *)b)->path);
}

int model_load_cells(struct model *m)
{
	sqlite3_stmt *s;
	size_t cap = 0;

	if (!m->rec || !db_has_table(m->rec->db, "notebook_cells"))
		return 0;
	if (!(s = db_prepare(m->rec->db, "SELECT path, label, first_line, source FROM notebook_cells"
				       " WHERE length(source) <= ?1 ORDER BY path LIMIT ?2")))
		return -1;
	sqlite3_bind_int64(s, 1, SRCFILE_MAX_BYTES);
	sqlite3_bind_int(s, 2, MAX_CELLS);
	while (sqlite3_step(s) == SQLITE_ROW) {
		const char *path = db_col_text(s, 0), *label = db_col_text(s, 1), *source = db_col_text(s, 3);
		sqlite3_int64 first = sqlite3_column_int64(s, 2);
		struct model_cell *c;

		if (!path || !*path || !source || !printable_label(label) || first < 1 || first > 100000)
			continue;
		if (ARRAY_GROW(m->cells, m->ncells, cap)) {
			sqlite3_finalize(s);
			return -1;
		}
		c = &m->cells[m->ncells++];
		c->path = model_strdup(m, path);
		c->label = model_strdup(m, label);
		c->source = model_strdup(m, source);
		c->first_line = (int)first;
		if (!c->path || !c->label || !c->source) {
			sqlite3_finalize(s);
			return -1;
		}
	}
	sqlite3_finalize(s);
	sort_array(m->cells, m->ncells, sizeof(*m->cells), cmp_cells);  /* SQLite's order may differ from strcmp's */
	return 0;
}

const struct model_cell *model_cell(const struct model *m, const char *file)
{
	struct model_cell key = { .path = file };

	if (!file || !m->ncells)
		return NULL;
	return bsearch(&key, m->cells, m->ncells, sizeof(*m->cells), cmp_cells);
}
