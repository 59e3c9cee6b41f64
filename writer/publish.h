/*
 * publish.h - move a finished (or cut-short) recording from its hidden
 * name beside FILE to FILE.
 *
 * Owns: the one way a recording gets its name, used by the launcher at
 * the run's finish and by its keeper (keeper.h) when the launcher died
 * first.  Without force it never replaces a file; a default name
 * (agprof-N.agprof) moves on to the next free N.  A WAL that could not be
 * folded back (disk full) moves along: it holds committed rows.
 */
#ifndef AGPROF_PUBLISH_H
#define AGPROF_PUBLISH_H

#include <stddef.h>

/*
 * Rename tmp_path to out (out may change to the next free default name;
 * outlen is its size).  0, or -1 with errno set (nothing moved).
 */
int recording_publish(const char *tmp_path, char *out, size_t outlen, int force, int default_name);

#endif
