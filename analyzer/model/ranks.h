/*
 * ranks.h - the job view of a merged recording (agprof merge): one row per
 * rank, and the metric sources of the multi-worker rules.
 *
 * Owns: running the SQL of analyzer/model/sql/ (embedded at build time, the same
 * files DuckDB runs unchanged over exported recordings, docs/fleet.md) on
 * the recording, as metric sources:
 *   ranks            per-rank summary (ranks.sql)
 *   stragglers       ranks arriving last at step barriers (straggler.sql)
 *   collective_waits per-rank waits at collectives (collective_wait.sql)
 *   rank_retraces    functions traced more on some ranks (rank_retrace.sql),
 *                    with cause and detail from the model's retrace explanation
 * A recording that is not merged (no ranks table, or an empty one) gets none.
 */
#ifndef AGPROF_RANKS_H
#define AGPROF_RANKS_H

#include "model.h"

/* Register the job sources when m's recording is merged; 0, or -1 after the error. */
int ranks_register(struct model *m);

/* The rows of the ranks source (0 when the recording is not merged), and their fields. */
size_t ranks_count(const struct model *m);
double ranks_num(const struct model *m, size_t row, const char *field);  /* NAN when missing */
const char *ranks_text(const struct model *m, size_t row, const char *field); /* NULL when missing */

/* The rank of process pid in a merged recording; -1 when not merged (or unknown). */
int ranks_of_pid(const struct model *m, int64_t pid);

#endif
