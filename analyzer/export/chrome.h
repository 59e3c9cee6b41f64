/*
 * chrome.h - write a recording as Chrome trace-event JSON (the "JSON Array
 * Format" with a traceEvents object), which Perfetto and chrome://tracing
 * open.
 *
 * Owns: streaming every event table (traces, graph function calls, eager
 * ops, py_function executions, GPU activity) into complete ("X") events,
 * with process and thread names as metadata events.  Streams row by row: a
 * recording of any size takes constant memory.
 */
#ifndef AGPROF_CHROME_H
#define AGPROF_CHROME_H

#include <stdio.h>

struct recording;

#define CHROME_READ_FAILED  (-1) /* the recording is malformed or unreadable */
#define CHROME_WRITE_FAILED (-2) /* the output could not be written */

/* 0, or CHROME_*_FAILED after printing one error line. */
int chrome_export(struct recording *rec, FILE *out);

#endif
