/*
 * links.h - the links between a recording's rows that only the whole
 * recording tells: kernels and kernel totals to their calls (by the call's
 * seq: kernels.call_id holds -seq, function_calls.seq the seq) and to the
 * nodes of their calls' graph functions, calls to their graph functions,
 * graph functions to their traces and parents.
 *
 * Owns: that SQL.  The writer runs it at the run's finish (run_finish.c),
 * with the temp tables it filled while it ran (links_temp_sql); the keeper
 * (keeper.h) runs it on a cut-short recording, from the committed rows
 * alone: kernels and calls are linked as at a finish; what only the temp
 * tables told (forward/backward pairs' and branches' functions, nodes'
 * creation lines, calls cut by the collector) stays unlinked.
 */
#ifndef AGPROF_LINKS_H
#define AGPROF_LINKS_H

#include <sqlite3.h>

/* The writer's temp tables that links_graph() reads (CREATE ... IF NOT EXISTS). */
extern const char links_temp_sql[];

/* Kernels to their calls (first dropping the rows of calls the collector cut when cut_calls); 0 or -1. */
int links_calls(sqlite3 *db, int cut_calls);

/* The rest, after links_calls(); whole: the writer's temp tables are the whole run's.  0 or -1. */
int links_graph(sqlite3 *db, int whole);

/*
 * A cut-short recording's links, in one transaction, unless the launcher's
 * finish committed them (meta end_ns) or it died before the schema: 0 or -1.
 */
int links_cut_short(sqlite3 *db);

#endif
