/*
 * html_bins.h - the HTML timeline's busy time per lane (thread or GPU
 * stream, and kind of event) and column, from a bounded read of the
 * recording (html_bins.c says how).
 */
#ifndef AGPROF_HTML_BINS_H
#define AGPROF_HTML_BINS_H

#include <stdint.h>
#include <stddef.h>

struct model;

#define HB_COLS 400
#define HB_MAX_LANES 256

enum hb_kind { HB_TRACE, HB_CALL, HB_EAGER, HB_BLACKBOX, HB_GPU_KERNEL, HB_GPU_COPY, HB_CPU_KERNEL, HB_NKINDS };

struct hb_lane {
	int64_t pid, tid, dev; /* dev >= 0: a GPU stream (tid is the stream) */
	enum hb_kind kind;
	int64_t events;        /* estimated when sampled */
	int sampled;           /* 1: every row read; n: one row in n */
	double busy[HB_COLS];  /* ns */
};

struct hb_key { int64_t id, pid, tid, base; }; /* eager_op_keys */

struct hb {
	int64_t t0, t1;        /* the span drawn: TensorFlow's first event to the end */
	struct hb_lane *lanes; /* by process, threads before GPU streams, tid, kind */
	size_t n;
	int lanes_left;        /* more lanes than HB_MAX_LANES: not drawn */
	int64_t rows_read;
	struct hb_lane *last;
	struct hb_key *keys;   /* schema 6 on, by id */
	size_t nkeys;
	const struct hb_key *lastkey;
};

/* "tracing", "graph call", ... */
const char *hb_kind_name(enum hb_kind k);
/* Read m's recording (m->rec open); -1 when it cannot be read. */
int hb_read(struct hb *b, const struct model *m);
void hb_release(struct hb *b);

#endif
