/*
 * pathdisp.h - how a source path is shown to a person: short, and the part
 * that tells the reader what it is.  The one home for this rule, used by
 * every text printer and the TUI (JSON and SARIF keep full paths).
 */
#ifndef AGPROF_PATHDISP_H
#define AGPROF_PATHDISP_H

#include <stddef.h>

/*
 * The tail of file to show: an installed package's file relative to its
 * site-packages (or dist-packages) directory ("gpflow/optimizers/scipy.py"),
 * a standard-library file relative to its lib/pythonX.Y directory
 * ("threading.py"), a file under cwd relative to cwd; else file itself.
 * Returns a pointer into file (never NULL for a non-NULL file).
 */
const char *path_display(const char *file, const char *cwd);

/*
 * 1 when file is TensorFlow's, Keras's or absl's own code (the directories
 * the collector skips when it looks for the caller, collector/pyframe.c).
 */
int path_is_framework(const char *file);

/* 1 when file lies in an installed package (a site-packages or dist-packages directory). */
int path_is_installed(const char *file);

/* Display columns of UTF-8 text (each code point counts one). */
size_t text_columns(const char *text);

/*
 * Copy text into buf (cap bytes) in at most width columns: when longer, its
 * start is cut and replaced by "..." (the end of a path or location is the
 * part that identifies it).  Returns buf.
 */
const char *text_fit_left(char *buf, size_t cap, const char *text, size_t width);

#endif
