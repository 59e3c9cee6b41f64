/*
 * links.h - the links between a recording's rows that only the whole
 * recording tells: kernels and kernel totals to their calls (by the call's
 * seq: kernels.call_id holds -seq, function_calls.seq the seq) and to the
 * nodes of their calls' graph functions, calls to their graph functions,
 * graph functions to their traces and parents.
 *
 * Owns: that SQL and the link tables (links_tables_sql) the writer fills
 * while the run goes on, committed with the rows they link.  The writer
 * links at the run's finish (run_finish.c); the keeper (keeper.h) links a
 * cut-short recording from what was committed, the same way.  Both drop
 * the link tables once linked: a published recording has none.
 */
#ifndef AGPROF_LINKS_H
#define AGPROF_LINKS_H

#include <sqlite3.h>

/* The link tables (CREATE TABLE IF NOT EXISTS: link_ref, link_trace, link_name, link_trace_seq, ...). */
extern const char links_tables_sql[];

/*
 * The map from call seqs to call rows (temp.call_seq), and the kernel rows
 * of calls the collector cut dropped when cut_calls; 0 or -1.
 */
int links_calls(sqlite3 *db, int cut_calls);

/* The rest (kernels to their calls and nodes too), after links_calls(), then the link tables dropped; 0 or -1. */
int links_graph(sqlite3 *db);

/*
 * A cut-short recording's links, in one transaction, unless the launcher's
 * finish committed them (meta end_ns) or it died before the schema: 0 or -1.
 */
int links_cut_short(sqlite3 *db);

#endif
