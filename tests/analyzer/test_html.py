#!/usr/bin/env python3
"""`agprof report --format html` on real recordings (issue 39).

Samples: a retracing one (retrace_shape), an eager loop (eager_heavy), a
tf.data pipeline with a py_function (pyfunc_pipeline), the eager loop
recorded past its budget (--max-events 2000: eager ops kept as per-second
aggregates), a merge of two recordings (agprof merge: two ranks), a real
H200 recording (tests/gpu/h200/small_kernels), and `agprof diff --format
html` of two of them.  Each page is parsed
with Python's html.parser: every section is there, each finding's rule,
function and line (from `report --format json` of the same recording) are
shown, the page is under 5 MB, fetches nothing (no src=, no external href,
one inline script) and holds no element per event.  Then the crafted case:
the retrace recording with '<script>alert(1)</script>' put into every
function name and, through a copy of the sample whose traced line carries
it in a comment, into the source lines the finding shows: the page must
show that text and hold no tag of it.  With Debian's chromium installed, the
page also loads headless (the DOM it dumps has every section, the scripts
ran, the console is empty) and its screenshot is not blank; skipped
without it, and in the sanitizer build (the pages are the plain build's
bytes).  The crafted recording's diff page is checked the same way.
"""
import html
import json
import html.parser
import os
import re
import shutil
import sqlite3
import subprocess
import struct
import sys
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agcheck import AGPROF, SAMPLES, agprof, check, die, finish, record, report_json, tmpdir  # noqa: E402

SECTIONS = ["glance", "findings", "flame", "timeline", "gpu", "retraces", "kernels", "tl-svg"]
DIFF_SECTIONS = ["d-headline", "d-findings", "d-functions", "d-lines"]
GPU_REC = os.path.join(os.path.dirname(SAMPLES), "tests", "gpu", "h200", "small_kernels.agprof")
EVIL = "<script>alert(1)</script>"
MAX_BYTES = 5 << 20


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.ids, self.tags, self.text, self.bad = set(), [], [], []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if "id" in a:
            self.ids.add(a["id"])
        for k in ("src", "href", "xlink:href", "action"):
            v = a.get(k)
            if v is not None and (k != "href" or not v.startswith("#")):
                self.bad.append("%s %s=%r" % (tag, k, v))
        if tag in ("link", "iframe", "img", "object", "embed"):
            self.bad.append("<%s>" % tag)

    def handle_data(self, data):
        self.text.append(data)


def html_report(recording, out):
    rc, _, err = agprof("report", "--format", "html", "-o", out, recording)
    if rc != 0:
        die("agprof report --format html exited %d: %s" % (rc, err.strip()))
    raw = open(out, encoding="utf-8").read()
    p = Page()
    p.feed(raw)
    p.close()
    return raw, p


def check_page(name, recording, d):
    raw, p = html_report(recording, os.path.join(d, name + ".html"))
    text = "".join(p.text)
    for s in SECTIONS:
        check(s in p.ids, "%s: section #%s present" % (name, s))
    check(len(raw.encode()) < MAX_BYTES, "%s: page under 5 MB" % name, len(raw))
    check(not p.bad, "%s: nothing fetched (no src=, external href, link, img)" % name, p.bad[:5])
    check(p.tags.count("script") == 1, "%s: one inline script" % name, p.tags.count("script"))
    check(not re.search(r"https?://", raw), "%s: no URL in the page" % name)
    doc = report_json(recording)
    shown = len(re.findall(r'id="finding-\d+"', raw))
    check(shown == min(len(doc["findings"]), 200), "%s: every finding shown" % name, shown, len(doc["findings"]))
    for f in doc["findings"]:
        check(f["rule"] in text, "%s: rule %s shown" % (name, f["rule"]))
        if f.get("function"):
            check(f["function"] in text, "%s: function %s shown" % (name, f["function"]))
        loc = f.get("location")
        if loc:
            check(re.search(r"%s:%d\b" % (re.escape(os.path.basename(loc["file"])), loc["line"]), text),
                  "%s: line %s:%d shown" % (name, os.path.basename(loc["file"]), loc["line"]))
        if f.get("fix"):
            first = f["fix"]["after"].splitlines()[0]
            check("+ " + first in text, "%s: the edit's new line shown" % name, first)
    # aggregates, not events: a bounded number of elements
    check(len(p.tags) < 48 * 400 + 3000 + 1500 + 2000, "%s: element count bounded" % name, len(p.tags))
    check_flame(name, raw, doc)
    check_gpu(name, raw, doc)
    return raw, p


def flame_nodes(raw):
    """The icicle's boxes: (depth from top px, label text), the label unescaped."""
    nodes = re.findall(r'<div class="fl [^"]*"[^>]*top:(\d+)px" title="[^"]*">(.*?) <span', raw)
    return [(int(t) // 22, html.unescape(x)) for t, x in nodes]


def check_flame(name, raw, doc):
    s = doc["session"]
    nodes = flame_nodes(raw)
    busy = s.get("trace_ns", 0) + s.get("function_call_ns", 0) + s.get("eager_ns", 0) + s.get("blackbox_ns", 0)
    if not busy:
        check('id="flame"' in raw, "%s: flame section present (nothing to draw)" % name)
        return
    check(nodes and nodes[0] == (0, "all recorded time"), "%s: icicle's root" % name, nodes[:1])
    kinds = {x for d, x in nodes if d == 1}
    check(kinds, "%s: icicle has the kinds of time" % name, kinds)
    # every traced user function with tracing time is a box under "tracing" (or graph calls)
    names = {x for d, x in nodes if d == 2}
    for f in doc["functions"]:
        if f.get("trace_ns", 0) > 0.01 * busy and not f.get("made_by"):
            check(f["name"] in names, "%s: icicle box for %s" % (name, f["name"]), sorted(names)[:10])
    # the busiest eager line is a box (file:line)
    lines = {x for d, x in nodes if d == 3}
    sites = [dict(e["location"], total_ns=e["total_ns"]) for e in doc.get("eager_sites", []) if e.get("location")]
    if sites and s.get("eager_ns", 0) > 0.01 * busy:
        top = max(sites, key=lambda e: e.get("total_ns", 0))
        check(any(x.endswith("%s:%d" % (os.path.basename(top["file"]), top["line"])) for x in lines),
              "%s: icicle box for the busiest eager line" % name, sorted(lines)[:8], "%s:%d" % (top["file"], top["line"]))


def check_gpu(name, raw, doc):
    g = doc.get("gpu") or {}
    sec = raw[raw.find('<section id="gpu"'):]
    sec = sec[:sec.find("</section>")]
    if not g.get("has_data"):
        check("not recorded" in sec, "%s: GPU section says not recorded" % name)
        return
    text = html.unescape(re.sub(r"<[^>]+>", "", sec))
    check("Top kernels" in text and "utilisation" in text, "%s: GPU kernels and utilisation shown" % name)
    for k in g["kernel_stats"][:5]:
        check(k["name"] in text, "%s: GPU kernel %s shown" % (name, k["name"]))
    check("%.1f%%" % (100 * g["utilisation"]) in text, "%s: GPU utilisation shown" % name, g["utilisation"])
    check("Longest idle gaps" in text if g.get("gaps") else True, "%s: idle gaps shown" % name)


def check_crafted(recording, d):
    """Function names and a source line from the recording hold a script tag."""
    src = os.path.join(d, "src")
    os.makedirs(src)
    lines = open(os.path.join(SAMPLES, "retrace_shape.py")).read().splitlines(True)
    # the call that retraces: the line the finding's code shows
    lines = [ln.rstrip("\n") + "  # " + EVIL + "\n" if "predict(batch)" in ln else ln for ln in lines]
    open(os.path.join(src, "retrace_shape.py"), "w").write("".join(lines))
    crafted = os.path.join(d, "crafted.agprof")
    shutil.copy(recording, crafted)
    db = sqlite3.connect(crafted)
    db.execute("UPDATE strings SET text = ? || text WHERE id IN (SELECT name_id FROM functions)", (EVIL,))
    db.execute("UPDATE strings SET text = replace(text, ?, ?)", (SAMPLES, src))
    for table, col in (("meta", "value"),):
        try:
            db.execute("UPDATE %s SET %s = replace(%s, ?, ?)" % (table, col, col), (SAMPLES, src))
        except sqlite3.OperationalError:
            pass
    db.commit()
    db.close()
    raw, p = html_report(crafted, os.path.join(d, "crafted.html"))
    text = "".join(p.text)
    check(p.tags.count("script") == 1, "crafted: no script tag but the page's own", p.tags.count("script"))
    check(EVIL not in raw, "crafted: the tag never appears unescaped")
    check(EVIL + "predict" in text, "crafted: the function name shown, as text")
    check(re.search(r"predict\(batch\).*# " + re.escape(EVIL), text), "crafted: the source line shown, as text")
    check(any(x.startswith(EVIL + "predict") for _, x in flame_nodes(raw)), "crafted: the icicle shows the name as text")
    out, dp, dpath = check_diff("crafted-diff", recording, crafted, d)
    check(dp.tags.count("script") == 1 and EVIL not in out, "crafted diff: the tag never appears unescaped")
    check(EVIL + "predict" in "".join(dp.text), "crafted diff: the function name shown, as text")
    return dpath


def check_diff(name, base, new, d):
    """`agprof diff --format html`: its sections, each new and gone finding's rule, function and line."""
    rc, out, err = agprof("diff", "--format", "html", base, new)
    check(rc == 0, "%s: agprof diff --format html exits 0" % name, rc, err.strip()[-300:])
    path = os.path.join(d, name + ".html")
    open(path, "w", encoding="utf-8").write(out)
    p = Page()
    p.feed(out)
    p.close()
    text = "".join(p.text)
    for s in DIFF_SECTIONS:
        check(s in p.ids, "%s: section #%s present" % (name, s))
    check(not p.bad and p.tags.count("script") == 1, "%s: nothing fetched, one inline script" % name, p.bad[:3])
    rc, js, err = agprof("diff", "--format", "json", base, new)
    doc = json.loads(js)
    for state in ("new", "resolved"):
        for f in doc["findings"][state]:
            check(f["rule"] in text, "%s: %s finding's rule %s shown" % (name, state, f["rule"]))
            if f.get("function"):
                check(f["function"] in text, "%s: %s finding's function shown" % (name, state), f["function"])
            if f.get("file"):
                check("%s:%d" % (f["file"], f["line"]) in text, "%s: %s finding's line shown" % (name, state),
                      f["file"], f["line"])
    for fn in doc["functions"][:10]:
        shown = fn["made_by"] or fn["function"]
        check(shown in text, "%s: function %s shown" % (name, shown))
    return out, p, path


def png_not_blank(path):
    """The screenshot's pixels (PNG, decoded here) are not all one colour: the page drew something."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return False
    pos, idat = 8, b""
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + n]
        pos += 12 + n
    raw = zlib.decompress(idat)
    # many distinct byte values (filters make rows of one colour few): text, bars, patterns
    return len(set(raw[::7])) > 64


def chromium_console(exe, path, profile):
    """The page's DOM after its script ran, and the console lines (any is an error: the page logs nothing)."""
    r = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
                        "--dump-dom", "file://" + os.path.abspath(path)], capture_output=True, text=True,
                       timeout=120)
    return r, [ln for ln in r.stderr.splitlines() if ":CONSOLE" in ln]


def chromium_shot(exe, path, profile, png):
    subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--hide-scrollbars",
                    "--disable-background-networking", "--disable-component-update", "--disable-sync",
                    "--user-data-dir=" + profile, "--window-size=1200,2000", "--screenshot=" + png,
                    "file://" + os.path.abspath(path)], capture_output=True, timeout=120)
    return os.path.exists(png) and png_not_blank(png)


# Appended to a copy of a page (the page's CSP allows inline scripts): drives the icicle with
# key events and clicks as a user would, and writes what happened into the DOM Chromium dumps.
PROBE = """<script>(function(){var ns=document.querySelectorAll('#fl .fl'),out=[];
function key(n,k){n.dispatchEvent(new KeyboardEvent('keydown',{key:k,bubbles:true}));}
var root=ns[0];root.focus();out.push('tab0='+root.tabIndex);
key(root,'ArrowDown');var a=document.activeElement;out.push('down='+(a===ns[1]));
key(a,'ArrowRight');var b=document.activeElement;out.push('right='+(b!==a&&b.getAttribute('data-d')===a.getAttribute('data-d')));
key(b,'ArrowUp');out.push('up='+(document.activeElement===root));
key(ns[1],'Enter');out.push('zoom='+(ns[1].style.width==='100%')+'/'+document.getElementById('fl-range').textContent.indexOf('zoomed to'));
var hidden=0;ns.forEach(function(n){if(n.style.display==='none')hidden++;});out.push('hidden='+hidden);
key(ns[1],'Escape');out.push('reset='+(ns[1].style.width!=='100%'));
ns[ns.length-1].click();out.push('click='+(ns[ns.length-1].style.width==='100%'));
var p=document.createElement('pre');p.id='probe';p.textContent=out.join(' ');document.body.appendChild(p);})();</script>"""


def check_icicle_keys(exe, path, profile, d):
    """The icicle's keyboard and click zoom, in Chromium."""
    raw = open(path, encoding="utf-8").read()
    if raw.count('class="fl ') < 3:
        return
    probe = os.path.join(d, "probe.html")
    open(probe, "w", encoding="utf-8").write(raw.replace("</body>", PROBE + "</body>"))
    r, errors = chromium_console(exe, probe, profile)
    m = re.search(r'<pre id="probe">(.*?)</pre>', r.stdout)
    got = dict(kv.split("=", 1) for kv in m.group(1).split()) if m else {}
    check(got.get("tab0") == "0", "icicle: the root is the one tab stop", got)
    check(got.get("down") == "true" and got.get("up") == "true", "icicle: arrows down to a callee, up to the caller", got)
    check(got.get("right") == "true" or raw.count('data-d="1"') < 2, "icicle: right arrow to the neighbour", got)
    check(got.get("zoom", "").startswith("true/") and got["zoom"] != "true/-1", "icicle: Enter zooms to the box", got)
    check(got.get("reset") == "true" and got.get("click") == "true", "icicle: Escape zooms out, a click zooms in", got)
    check(not errors, "icicle probe: nothing in the console", errors[:3])


def chromium_sees_errors(exe, d, profile):
    """Once a run: a script error on a broken page reaches the console lines read (the pages' check can fail)."""
    bad = os.path.join(d, "bad.html")
    if os.path.exists(bad):
        return
    open(bad, "w").write("<!DOCTYPE html><p>x</p><script>nosuch();</script>")
    _, errors = chromium_console(exe, bad, profile)
    check(errors, "chromium: a script error on a broken page is seen (the check below can fail)")


def check_chromium(name, path, d, sections=SECTIONS):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        print("skip: chromium not installed (apt-get install chromium)")
        return
    if os.environ.get("AGPROF_SANITIZE", "none") != "none":
        return  # Chromium reads the bytes the sanitized agprof wrote, as in the plain build: loaded there
    profile = os.path.join(d, "chromium-profile")
    chromium_sees_errors(exe, d, profile)
    r, errors = chromium_console(exe, path, profile)
    check(r.returncode == 0, "%s: chromium loads the page" % name, r.returncode)
    for s in sections:
        check('id="%s"' % s in r.stdout, "%s: chromium's DOM has #%s" % (name, s))
    if sections is SECTIONS:
        check(re.search(r"showing [\d.]+ ms to [\d.]+ ms", r.stdout),
              "%s: the script ran (the timeline's range label)" % name)
        check("showing the whole run" in r.stdout or 'id="fl"' not in r.stdout,
              "%s: the icicle's script ran (its range label)" % name)
    check(not errors, "%s: nothing in the console (no script error)" % name, errors[:3])
    if name == "pyfunc_pipeline":
        check_icicle_keys(exe, path, profile, d)
    png = os.path.join(d, name + ".png")
    check(chromium_shot(exe, path, profile, png), "%s: the screenshot is not blank" % name, png)


def record_budget(name, d):
    """The sample recorded with --max-events 2000: past it, eager ops are per-second aggregates."""
    out = os.path.join(d, name + "-budget.agprof")
    p = subprocess.run([AGPROF, "run", "--max-events", "2000", "-o", out, "--", sys.executable,
                        os.path.join(SAMPLES, name + ".py")], capture_output=True, timeout=600)
    if p.returncode != 0:
        die("agprof run --max-events on %s exited %d: %s" % (name, p.returncode, p.stderr[-2000:]))
    return out


def main():
    d = tmpdir("agprof-html-")
    samples = sys.argv[1:] or ["retrace_shape", "eager_heavy", "pyfunc_pipeline"]
    recs = {}
    for name in samples:
        recs[name] = rec = record(name, d)
        check_page(name, rec, d)
        check_chromium(name, os.path.join(d, name + ".html"), d)
        if name == "retrace_shape":
            check_chromium("crafted-diff", check_crafted(rec, d), d, DIFF_SECTIONS)
    if sys.argv[1:]:
        finish("html")
        return
    # past the budget: the timeline drawn from the aggregates, the glance says so
    budget = record_budget("eager_heavy", d)
    doc = report_json(budget)
    check((doc["session"].get("budget") or {}).get("aggregated_eager_ops", 0) > 0, "budget: eager ops aggregated",
          doc["session"].get("budget"))
    raw, p = check_page("budget", budget, d)
    check("past the recording's budget" in "".join(p.text), "budget: the page says the budget was passed")
    check(re.search(r'fill="url\(#p-eager\)"', raw), "budget: the eager lane drawn from the aggregates")
    check_chromium("budget", os.path.join(d, "budget.html"), d)
    # a merge of two recordings: two ranks, two processes' lanes
    merged = os.path.join(d, "merged.agprof")
    rc, _, err = agprof("merge", "-o", merged, recs["retrace_shape"], recs["pyfunc_pipeline"])
    check(rc == 0, "agprof merge", err.strip()[-300:])
    raw, p = check_page("merged", merged, d)
    check(len(set(re.findall(r'<div class="lab">pid (\d+) ', raw))) == 2, "merged: lanes of both processes")
    check_chromium("merged", os.path.join(d, "merged.html"), d)
    # a real GPU recording (H200): the GPU section with its kernels
    check_page("gpu", GPU_REC, d)
    check_chromium("gpu", os.path.join(d, "gpu.html"), d)
    # a diff of two recordings
    _, _, path = check_diff("diff", recs["retrace_shape"], recs["pyfunc_pipeline"], d)
    check_chromium("diff", path, d, DIFF_SECTIONS)
    finish("html")


if __name__ == "__main__":
    main()
