/*
 * html.c - the page of `agprof report --format html`: its head (styles,
 * patterns, the one script), the sections in order, the escaping helpers.
 *
 * No library: the charts are rectangles in inline SVG, the script (zoom
 * and pan of the timeline) is a few lines; nothing is fetched when the
 * page is viewed, and the Content-Security-Policy forbids any fetch.
 */
#include "html.h"
#include "html_internal.h"
#include "duration.h"
#include "model.h"
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void html_esc(struct strbuf *sb, const char *str)
{
	const unsigned char *s = (const unsigned char *)(str ? str : "-");
	size_t len = strlen((const char *)s);

	while (len) {
		uint32_t c;
		size_t n = utf8_seq(s, len, &c);

		/* bytes that are not UTF-8 and control characters (C0, DEL, C1): U+FFFD */
		if (!n || (c < 0x20 && c != '\n' && c != '\t') || (c >= 0x7f && c <= 0x9f))
			strbuf_addstr(sb, "\xef\xbf\xbd");
		else if (c == '<')
			strbuf_addstr(sb, "&lt;");
		else if (c == '>')
			strbuf_addstr(sb, "&gt;");
		else if (c == '&')
			strbuf_addstr(sb, "&amp;");
		else if (c == '"')
			strbuf_addstr(sb, "&quot;");
		else if (c == '\'')
			strbuf_addstr(sb, "&#39;");
		else
			strbuf_add(sb, s, n);
		n = n ? n : 1;
		s += n, len -= n;
	}
}

void html_loc(struct html *h, const struct source_loc *loc)
{
	struct strbuf sb = STRBUF_INIT;

	report_add_loc(&sb, h->m, loc);
	html_esc(h->out, sb.buf ? sb.buf : "-");
	strbuf_release(&sb);
}

void html_dur(struct strbuf *sb, int64_t ns)
{
	char a[DURATION_MAX];

	strbuf_addstr(sb, duration_format(a, sizeof(a), ns));
}

/* Colours come with a pattern and a text label each: the page reads without colour. */
static const char css[] =
	":root{--bg:#fff;--fg:#1d1d1f;--dim:#666;--line:#ccc;--card:#f6f6f8;--add:#e6ffec;--del:#ffebe9;"
	"--trace:#d9480f;--call:#1971c2;--eager:#e8a200;--bb:#7048e8;--input:#2b8a3e;--rest:#adb5bd;"
	"--kern:#0c8599;--copy:#c2255c;--err:#c92a2a;--warn:#b35c00;--info:#1864ab}\n"
	"@media (prefers-color-scheme:dark){:root{--bg:#16171a;--fg:#e6e6e6;--dim:#a0a0a0;--line:#444;"
	"--card:#222428;--add:#12361d;--del:#45181b;--rest:#5c636a;--err:#ff8787;--warn:#ffc078;--info:#74c0fc}}\n"
	"body{background:var(--bg);color:var(--fg);font:15px/1.45 system-ui,sans-serif;margin:0 auto;"
	"max-width:1200px;padding:0 1em 3em}\n"
	"h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid var(--line);padding-bottom:.2em;margin-top:2em}\n"
	"nav a{margin-right:1em}a{color:var(--info)}a:focus,button:focus,svg:focus,summary:focus"
	"{outline:3px solid var(--info);outline-offset:2px}\n"
	"code,pre,.mono{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:13px}\n"
	"pre{background:var(--card);padding:.5em;overflow-x:auto;margin:.3em 0}\n"
	".del{background:var(--del);display:block}.add{background:var(--add);display:block}\n"
	"table{border-collapse:collapse;margin:.5em 0}td,th{border-bottom:1px solid var(--line);"
	"padding:.2em .6em;text-align:left;vertical-align:top}td.n,th.n{text-align:right}td.n{white-space:nowrap}\n"
	".card{background:var(--card);border-radius:6px;padding:.6em 1em;margin:.8em 0}\n"
	".sev-error{color:var(--err);font-weight:bold}.sev-warning{color:var(--warn);font-weight:bold}"
	".sev-info{color:var(--info);font-weight:bold}\n"
	".dim{color:var(--dim)}.legend span{display:inline-block;margin-right:1.2em}\n"
	".sw{display:inline-block;width:1.4em;height:1em;vertical-align:middle;margin-right:.3em;"
	"border:1px solid var(--fg)}\n"
	".tl{display:grid;grid-template-columns:15em 1fr;align-items:stretch}.tl .lab{font-size:12px;"
	"height:18px;line-height:18px;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}\n"
	"#tl-svg{width:100%;border:1px solid var(--line)}button{font:inherit;margin-right:.3em}\n"
	".flame{position:relative;border:1px solid var(--line);overflow:hidden}.fl{position:absolute;height:21px;"
	"line-height:21px;font-size:12px;overflow:hidden;white-space:nowrap;text-overflow:ellipsis;box-sizing:border-box;"
	"border:1px solid var(--bg);padding:0 3px;cursor:pointer;color:#111}.fl .dim{color:#333}\n"
	".fl:focus{outline:3px solid var(--info);outline-offset:-3px;z-index:1}\n"
	".c-all{background:#ced4da}.c-trace{background:repeating-linear-gradient(45deg,#ffc9a8 0 5px,#ffe8d9 5px 8px)}"
	".c-call{background:#a5d8ff}.c-eager{background:radial-gradient(#e0b000 1px,#ffec99 1.5px) 0 0/5px 5px}"
	".c-bb{background:repeating-linear-gradient(0deg,#d0bfff 0 4px,#e5dbff 4px 6px),#e5dbff}"
	".c-kern{background:repeating-linear-gradient(-45deg,#99e9f2 0 5px,#c5f6fa 5px 8px)}\n"
	".bar{display:inline-block;height:.9em;vertical-align:middle;border:1px solid var(--fg)}\n"
	".up{color:var(--err)}.down{color:var(--input)}th{font-weight:600}\n";

/* Zoom and pan of the timeline: the SVG's viewBox; keys, buttons and the wheel. */
static const char script[] =
	"(function(){var s=document.getElementById('tl-svg');if(!s)return;\n"
	"var W=1000,H=+s.getAttribute('data-h'),ns=+s.getAttribute('data-ns'),x=0,w=W;\n"
	"var lab=document.getElementById('tl-range');\n"
	"function ms(v){return (v*ns/W/1e6).toFixed(1)+' ms';}\n"
	"function set(nx,nw){w=Math.max(W/4096,Math.min(W,nw));x=Math.max(0,Math.min(W-w,nx));\n"
	"s.setAttribute('viewBox',x+' 0 '+w+' '+H);if(lab)lab.textContent='showing '+ms(x)+' to '+ms(x+w);}\n"
	"function zoom(f,c){if(c===undefined)c=x+w/2;set(c-(c-x)/f,w/f);}\n"
	"var act={'in':function(){zoom(2);},'out':function(){zoom(.5);},'left':function(){set(x-w/4,w);},\n"
	"'right':function(){set(x+w/4,w);},'reset':function(){set(0,W);}};\n"
	"document.querySelectorAll('button[data-zoom]').forEach(function(b){\n"
	"b.addEventListener('click',act[b.getAttribute('data-zoom')]);});\n"
	"s.addEventListener('keydown',function(e){var k={'+':'in','=':'in','-':'out','ArrowLeft':'left',\n"
	"'ArrowRight':'right','0':'reset'}[e.key];if(k){act[k]();e.preventDefault();}});\n"
	"s.addEventListener('wheel',function(e){var r=s.getBoundingClientRect();\n"
	"zoom(e.deltaY<0?1.25:.8,x+w*(e.clientX-r.left)/r.width);e.preventDefault();},{passive:false});\n"
	"set(0,W);})();\n"
	"(function(){var f=document.getElementById('fl');if(!f)return;var ns=f.querySelectorAll('.fl');\n"
	"var lab=document.getElementById('fl-range');\n"
	"function z(x,w,name){ns.forEach(function(n){var a=+n.getAttribute('data-x'),b=+n.getAttribute('data-w');\n"
	"var l=(a-x)/w,r=(a+b-x)/w;if(r<=1e-6||l>=1-1e-6){n.style.display='none';return;}\n"
	"n.style.display='';l=Math.max(0,l);r=Math.min(1,r);n.style.left=100*l+'%';n.style.width=100*(r-l)+'%';});\n"
	"if(lab)lab.textContent=name?'zoomed to '+name:'showing the whole run';}\n"
	"function to(n){z(+n.getAttribute('data-x'),+n.getAttribute('data-w'),n.title);}\n"
	"function dep(i){return +ns[i].getAttribute('data-d');}\n"
	"function walk(i,step,want){for(var j=i+step;j>=0&&j<ns.length;j+=step){var d=dep(j);\n"
	"if(d===want&&ns[j].style.display!=='none')return j;if(d<want&&(step>0||want===dep(i)))return -1;}return -1;}\n"
	"function move(i,k){var d=dep(i),j=-1;if(k==='ArrowUp')j=walk(i,-1,d-1);\n"
	"else if(k==='ArrowDown')j=i+1<ns.length&&dep(i+1)===d+1&&ns[i+1].style.display!=='none'?i+1:-1;\n"
	"else if(k==='ArrowLeft')j=walk(i,-1,d);else if(k==='ArrowRight')j=walk(i,1,d);\n"
	"if(j<0)return;ns[i].tabIndex=-1;ns[j].tabIndex=0;ns[j].focus();}\n"
	"ns.forEach(function(n,i){n.addEventListener('click',function(){to(n);});\n"
	"n.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){to(n);e.preventDefault();}\n"
	"else if(e.key==='Escape'){z(0,1);}else if(e.key.indexOf('Arrow')===0){move(i,e.key);e.preventDefault();}});});\n"
	"var r=document.getElementById('fl-reset');if(r)r.addEventListener('click',function(){z(0,1);});z(0,1);})();\n";

/* Fill patterns, one per kind of time: the second cue besides colour. */
static const char patterns[] =
	"<svg width=\"0\" height=\"0\" style=\"position:absolute\" aria-hidden=\"true\"><defs>\n"
	"<pattern id=\"p-trace\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
	"patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"var(--trace)\"/>"
	"<rect width=\"2\" height=\"6\" fill=\"#fff\" opacity=\".55\"/></pattern>\n"
	"<pattern id=\"p-eager\" width=\"5\" height=\"5\" patternUnits=\"userSpaceOnUse\">"
	"<rect width=\"5\" height=\"5\" fill=\"var(--eager)\"/><circle cx=\"2.5\" cy=\"2.5\" r=\"1\" "
	"fill=\"#000\" opacity=\".5\"/></pattern>\n"
	"<pattern id=\"p-bb\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
	"<rect width=\"6\" height=\"6\" fill=\"var(--bb)\"/><path d=\"M0 3h6M3 0v6\" stroke=\"#fff\" "
	"stroke-width=\"1\" opacity=\".6\"/></pattern>\n"
	"<pattern id=\"p-input\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" "
	"patternTransform=\"rotate(-45)\"><rect width=\"6\" height=\"6\" fill=\"var(--input)\"/>"
	"<rect width=\"1.5\" height=\"6\" fill=\"#000\" opacity=\".45\"/></pattern>\n"
	"<pattern id=\"p-rest\" width=\"4\" height=\"4\" patternUnits=\"userSpaceOnUse\">"
	"<rect width=\"4\" height=\"4\" fill=\"var(--rest)\"/></pattern>\n"
	"<pattern id=\"p-call\" width=\"4\" height=\"4\" patternUnits=\"userSpaceOnUse\">"
	"<rect width=\"4\" height=\"4\" fill=\"var(--call)\"/></pattern>\n"
	"<pattern id=\"p-kern\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
	"<rect width=\"6\" height=\"6\" fill=\"var(--kern)\"/><path d=\"M0 0l6 6\" stroke=\"#fff\" "
	"opacity=\".5\"/></pattern>\n"
	"<pattern id=\"p-copy\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\">"
	"<rect width=\"6\" height=\"6\" fill=\"var(--copy)\"/><path d=\"M0 3h6\" stroke=\"#fff\" "
	"opacity=\".5\"/></pattern>\n"
	"</defs></svg>\n";

void html_page_begin(struct strbuf *o, const char *what, const char *title, const char *nav)
{
	strbuf_addstr(o, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		      "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
		      "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n"
		      "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\n<title>");
	strbuf_addf(o, "%s ", what);
	html_esc(o, title);
	strbuf_addf(o, "</title>\n<style>\n%s</style>\n</head>\n<body>\n%s", css, patterns);
	strbuf_addf(o, "<header><h1>%s <span class=\"mono\">", what);
	html_esc(o, title);
	strbuf_addf(o, "</span></h1>\n<nav aria-label=\"sections\">%s</nav></header>\n<main>\n", nav);
}

void html_page_end(struct strbuf *o)
{
	strbuf_addf(o, "</main>\n<footer class=\"dim\"><p>Made by agprof from the recording's aggregates: "
		    "no network, no external files.</p></footer>\n<script>\n%s</script>\n</body>\n</html>\n",
		    script);
}

static void head(struct html *h)
{
	html_page_begin(h->out, "agprof report", h->o->recording,
			"<a href=\"#glance\">At a glance</a><a href=\"#findings\">Findings</a>"
			"<a href=\"#flame\">Call stacks</a><a href=\"#timeline\">Timeline</a><a href=\"#gpu\">GPU</a>"
			"<a href=\"#retraces\">Retraces</a><a href=\"#kernels\">Kernels</a>");
}

/* AGPROF_TIMING=1: the CPU time of each section (bench/report, docs/html.md). */
static void timing(const char *what)
{
	static double last;
	double now = (double)clock() / CLOCKS_PER_SEC;

	if (what && getenv("AGPROF_TIMING"))
		fprintf(stderr, "agprof: html %-12s %.3f s CPU\n", what, now - last);
	last = now;
}

int report_html(struct strbuf *out, const struct model *m, const struct report_opts *o)
{
	struct html h = { out, m, o };
	int ret;

	timing(NULL);
	head(&h);
	html_glance(&h);
	timing("glance");
	html_findings(&h);
	timing("findings");
	html_flame(&h);
	timing("flame");
	ret = html_timeline(&h);
	timing("timeline");
	html_gpu(&h);
	timing("gpu");
	html_retraces(&h);
	html_kernels(&h);
	timing("tables");
	html_page_end(out);
	return ret;
}
