/* html_internal.h - what the HTML printer's files share; see html.h. */
#ifndef AGPROF_HTML_INTERNAL_H
#define AGPROF_HTML_INTERNAL_H

#include <stdint.h>

#include "strbuf.h"

struct model;
struct report_opts;
struct source_loc;

struct html {
	struct strbuf *out;
	const struct model *m;
	const struct report_opts *o;
};

/* Text from the recording, escaped for HTML text and attribute values; "-" for NULL. */
void html_esc(struct strbuf *sb, const char *s);
/* A location ("train.py:12 → lib/x.py:7"), escaped. */
void html_loc(struct html *h, const struct source_loc *loc);
/* The page's head (styles, patterns; header "what title"; nav: trusted links) and its end (the script). */
void html_page_begin(struct strbuf *o, const char *what, const char *title, const char *nav);
void html_page_end(struct strbuf *o);
/* A duration ("12.3 ms"). */
void html_dur(struct strbuf *sb, int64_t ns);

void html_glance(struct html *h);    /* html_findings.c */
void html_findings(struct html *h);
int html_timeline(struct html *h);   /* html_timeline.c */
void html_retraces(struct html *h);  /* html_tables.c */
void html_kernels(struct html *h);
void html_flame(struct html *h);    /* html_flame.c */
void html_gpu(struct html *h);      /* html_gpu.c */

#endif
