/* shm_guard.h - reads and writes of the workload's shared memory that survive it shrinking. */
#ifndef AGPROF_SHM_GUARD_H
#define AGPROF_SHM_GUARD_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Shared memory is the workload's: it may scribble on it or shrink the file
 * under our mapping (a read past the end of the file is SIGBUS).  Every read
 * of a mapping goes through shm_copy / shm_load, which catch that SIGBUS;
 * all decoding works on the copy, bounded by the copy's size.  The jump
 * never crosses SQLite or malloc: only these small readers are armed.
 */

/* Catch SIGBUS for the readers below (the launcher's writer, once). */
void shm_guard_install(void);

/* Copy n bytes out of a mapping; -1 when the file under it is gone. */
int shm_copy(void *dst, const void *src, size_t n);

/* An acquire load of a 4- or 8-byte word of a mapping into *out; 0, or -1 as shm_copy. */
int shm_load(void *p, void *out, size_t size);
#define SHM_LOAD(p, out) shm_load((void *)(p), (out), sizeof(*(out)))

/* A release store of a mapped 64-bit word; 0, or -1 as shm_copy. */
int shm_store64(_Atomic uint64_t *p, uint64_t v);

/* Compare-and-swap a mapped 32-bit word (release on success): 1 swapped, 0 not, -1 as shm_copy. */
int shm_cas32(_Atomic uint32_t *p, uint32_t expect, uint32_t want);

/* Zero n bytes of a mapping; 0, or -1 as shm_copy. */
int shm_zero(void *dst, size_t n);

/* Add to a mapped 32-bit counter; 0, or -1 as shm_copy. */
int shm_add32(_Atomic uint32_t *p, uint32_t v);

/* Set or clear bits of a mapped 32-bit word; 0, or -1 as shm_copy. */
int shm_bits32(_Atomic uint32_t *p, uint32_t set, uint32_t clear);

#endif
