/*
 * verify_internal.h - the parts of `agprof fix --verify` (fix_verify.h)
 * shared by its files: verify_scratch.c (scratch copies, edits, runs under
 * agprof, the checks before anything runs), verify_output.c (two runs'
 * standard outputs compared with a numeric tolerance) and verify_files.c
 * (the files a run wrote, compared the same way).
 */
#ifndef AGPROF_VERIFY_INTERNAL_H
#define AGPROF_VERIFY_INTERNAL_H

#include "fix_verify.h"
#include "model.h"
#include "strbuf.h"

#include <stddef.h>

/* run_recorded(): the run went past its time limit and was ended. */
#define VERIFY_TIMED_OUT (-2)

/* A NULL-terminated argv of trusted_command()'s, freed (NULL: nothing). */
void free_argv(char **v);
/* Replace fx's lines in path (the scratch copy) by fx->after, when they still read fx->before.  0 or -1. */
int apply_edit(const char *path, const struct finding_fix *fx);
/*
 * agprof run -q -o files[0] -- argv in dir, its standard output into
 * files[1] and its standard error into files[2], ended after limit seconds
 * (0: none).  The exit status (128 + a signal's number), VERIFY_TIMED_OUT,
 * or -1 after an error line.
 */
int run_recorded(const char *dir, char **argv, const char *const files[3], double limit);
/* path's bytes into sb (at most 64 MB).  0 or -1. */
int slurp(const char *path, struct strbuf *sb);
/*
 * A copy of cwd at dst (made here), pick[0..n)'s files and all that fits
 * copied, the rest linked (verify_scratch.c); the files linked for their
 * size named into linked (NULL: not said).  0 or -1.
 */
int scratch_copy(const char *cwd, const char *dst, const struct finding *const *pick, size_t n, struct strbuf *linked);
/* from copied to a new file to, the directories on its way made.  0 or -1. */
int copy_file_into(const char *from, const char *to);
void scratch_remove(const char *dir);
/*
 * The recording's working directory and the files its edits name, which
 * come from an untrusted file: the directory must exist and be the user's,
 * each file a regular file under it reached through no symbolic link.
 * 0, or -1 after an error line.
 */
int check_paths(const char *cwd, const struct finding *const *pick, size_t n);
/*
 * The recorded command line, when the recording proves that this user's
 * agprof wrote it (or trust is set): a NULL-terminated argv, or NULL after
 * the one error line that shows the command and says how to run it anyway.
 */
char **trusted_command(const struct model *m, int trust);

/*
 * Files a and b (standard outputs) compared line by line: lines are equal
 * when their text between numbers is equal and each number of b is within
 * atol + rtol * |a's| of a's.  The first line (1-based) that differs, 0
 * when none does, -1 on a read error; what the two lines read into what;
 * *tolerated 1 when some numbers differed within the tolerance.
 */
long output_difference(const char *a, const char *b, double rtol, double atol, struct strbuf *what, int *tolerated);

/* The files a run wrote in its copy (verify_files.c): relative paths, sorted; at most WRITTEN_MAX. */
#define WRITTEN_MAX 64
struct written_files {
	char **rel;
	size_t n, cap;
	int more;  /* more were written than WRITTEN_MAX */
};
struct timespec;
/*
 * The regular files under dir modified after since (CLOCK_REALTIME),
 * through real directories only (a link leads to the user's files), caches
 * (__pycache__) left out.  0 or -1.
 */
int written_files(const char *dir, const struct timespec *since, struct written_files *out);
/* The index of rel in w, or -1. */
long written_find(const struct written_files *w, const char *rel);
void written_files_release(struct written_files *w);

/* Files larger than this are not compared (file_difference() returns 2). */
#define FILE_COMPARED_MAX (64 << 20)
/*
 * File b compared with file a: a NumPy .npy array of plain numbers element
 * by element, text line by line (output_difference()), else byte for byte.
 * 0 equal (*tol 1 when only within atol + rtol * |a's|), 1 different (what
 * says where), 2 too large to compare, -1 unreadable.
 */
int file_difference(const char *a, const char *b, double rtol, double atol, struct strbuf *what, int *tol);

#endif
