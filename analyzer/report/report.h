/*
 * report.h - the printers of `agprof report` and `agprof check`: text,
 * JSON (docs/report-json.md), CSV and SARIF 2.1.0.  They read the model
 * only; none of them touches SQL.
 *
 * Every printer builds its output in a strbuf and returns it whole; the
 * command writes it (one place that sees write errors).  JSON may stream
 * instead (report_opts.sink): the strbuf then holds only the text not yet
 * written there.
 */
#ifndef AGPROF_REPORT_H
#define AGPROF_REPORT_H

#include "strbuf.h"

#include <stdio.h>

struct model;
struct ruleset;
struct source_loc;
struct gpu_model;
struct json;
struct graph_ops_model;
struct slices;

enum report_section {
	SEC_SUMMARY = 1 << 0,   /* the run and the top findings */
	SEC_RETRACING = 1 << 1,
	SEC_EAGER = 1 << 2,     /* eager dispatch per source line */
	SEC_OPS = 1 << 3,       /* eager dispatch per op type */
	SEC_BLACKBOX = 1 << 4,
	SEC_FUNCTIONS = 1 << 5,
	SEC_GPU = 1 << 6,
	SEC_SESSIONS = 1 << 7,  /* TF1 Session steps per source line */
	SEC_RANKS = 1 << 8,     /* per-rank summary of a merged recording */
	SEC_ALL = 0x1ff,
};

struct report_opts {
	unsigned sections;      /* SEC_* bits; 0 means the default report */
	int color;              /* ANSI colours */
	int top;                /* rows per table in the default report (0: all) */
	int verbose;            /* text: each saving's derivation (saving_method) under its summary */
	const char *recording;  /* path shown in the header and JSON */
	const struct gpu_model *gpu; /* the GPU part (analyzer/gpu/gpu.h), or NULL */
	const struct graph_ops_model *graph_ops; /* kernels inside graph calls (graph_ops.h), or NULL */
	FILE *sink;             /* JSON: written there as it is made (json_set_sink), or NULL: all in out */
	const struct slices *slices; /* JSON: the figures per time slice (--slices, slices.h), or NULL */
};

void report_text(struct strbuf *out, const struct model *m, const struct report_opts *o);
void report_json(struct strbuf *out, const struct model *m, const struct report_opts *o);
void report_csv(struct strbuf *out, const struct model *m, const struct report_opts *o);
void report_sarif(struct strbuf *out, const struct model *m, const struct ruleset *rs);

/* The GPU section (report_gpu.c); g may be NULL. */
void report_gpu_text(struct strbuf *out, const struct model *m, const struct gpu_model *g, int top, int color);
void report_gpu_json(struct json *j, const struct gpu_model *g);

/* Kernels inside graph calls (report_ops.c); g may be NULL. */
void report_graph_ops_text(struct strbuf *out, const struct model *m, const struct graph_ops_model *g, int top,
			   int color);
void report_graph_ops_json(struct json *j, const struct graph_ops_model *g);
/* The per-rank summary of a merged recording (report_ranks.c); nothing when it is not merged. */
void report_ranks_text(struct strbuf *out, const struct model *m);
void report_ranks_json(struct json *j, const struct model *m);

/* Helpers shared with check's printers (report_loc.c). */

/* "file.py:12" (path_display), then " → lib/x.py:7" for a library frame; "-" when unknown. */
void report_add_loc(struct strbuf *sb, const struct model *m, const struct source_loc *loc);
/* Path of loc's file relative to cwd when under it (static storage), or NULL. */
const char *report_rel_path(const struct model *m, const char *file);
/* {"file": ..., "line": ...} or null */
void report_json_loc(struct json *j, const struct source_loc *loc);
/* loc's innermost library frame (lib_file/lib_line) as a location object, or null. */
void report_json_library_loc(struct json *j, const struct source_loc *loc);

#endif
