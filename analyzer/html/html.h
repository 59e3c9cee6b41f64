/*
 * html.h - `agprof report --format html`: one self-contained page (docs/html.md).
 *
 * The page is drawn from the model's aggregates and a bounded read of the
 * event tables (html_bins.c), never one element per event, so its size is
 * bounded whatever the recording holds.  Every text that comes from the recording is escaped;
 * the page's one script holds no data.
 */
#ifndef AGPROF_HTML_H
#define AGPROF_HTML_H

#include "strbuf.h"

struct diff;
struct model;
struct report_opts;

/*
 * The page of an analyzed model (m->rec must be open: the timeline reads
 * it).  Returns 0, or -1 after printing an error when the timeline cannot
 * be read (the page then says so in its timeline section).
 */
int report_html(struct strbuf *out, const struct model *m, const struct report_opts *o);

/* `agprof diff --format html`: the page of a built diff (html_diff.c). */
void diff_html(struct strbuf *out, const struct diff *d);

#endif
