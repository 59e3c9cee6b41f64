/*
 * run_attach.h - what `agprof __attach` (attach.c) borrows from `agprof run`
 * (run.c): the same output file handling, buffer folder and summary.
 */
#ifndef AGPROF_RUN_ATTACH_H
#define AGPROF_RUN_ATTACH_H

#include "run_writer.h"

struct run_state;

/* Find the collector, reserve the output, make the buffer folder; NULL (error said, *rc set) on failure. */
struct run_state *run_attach_prepare(const char *output, int force, int quiet, int *rc);
const char *run_attach_collector(const struct run_state *rs);
const char *run_attach_shm_dir(const struct run_state *rs);
const char *run_attach_tmp_path(const struct run_state *rs);
const char *run_attach_output(const struct run_state *rs);
/* Remove the buffers, move the finished recording to its name, print the summary line. */
int run_attach_publish(struct run_state *rs, const struct run_totals *totals);
/* Remove what is left (buffers, an unpublished recording) and free rs. */
void run_attach_end(struct run_state *rs);

#endif
