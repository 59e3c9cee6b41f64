/*
 * verify_internal.h - the parts of `agprof fix --verify` (fix_verify.h)
 * shared by its files: verify_scratch.c (scratch copies, edits, runs under
 * agprof, the checks before anything runs) and verify_output.c (two
 * runs' standard outputs compared with a numeric tolerance).
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
/* A copy of cwd at dst (made here) where pick[0..n)'s files are files of their own.  0 or -1. */
int scratch_copy(const char *cwd, const char *dst, const struct finding *const *pick, size_t n);
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

#endif
