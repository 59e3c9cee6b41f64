/* sqlite_heap.h - SQLite's allocations outside ASan for the fuzz harnesses (sqlite_heap.c). */
#ifndef AGPROF_FUZZ_SQLITE_HEAP_H
#define AGPROF_FUZZ_SQLITE_HEAP_H

#include <sqlite3.h>

/* Before SQLite's first use: route its allocations to the pool.  0, or -1 if SQLite refused. */
int fuzz_sqlite_heap(void);
/* SQLite's blocks not yet freed. */
long fuzz_sqlite_live(void);

#endif
