#!/usr/bin/env python3
"""`agprof report --format html` on real recordings (issue 39).

Samples: a retracing one (retrace_shape), an eager loop (eager_heavy) and a
tf.data pipeline with a py_function (pyfunc_pipeline).  Each page is parsed
with Python's html.parser: every section is there, each finding's rule,
function and line (from `report --format json` of the same recording) are
shown, the page is under 5 MB, fetches nothing (no src=, no external href,
one inline script) and holds no element per event.  Then the crafted case:
the retrace recording with '<script>alert(1)</script>' put into every
function name and, through a copy of the sample whose traced line carries
it in a comment, into the source lines the finding shows: the page must
show that text and hold no tag of it.  With Debian's chromium installed, the
page also loads headless (the DOM it dumps has every section); skipped
without it.
"""
import html.parser
import os
import re
import shutil
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agcheck import SAMPLES, agprof, check, die, finish, record, report_json, tmpdir  # noqa: E402

SECTIONS = ["glance", "findings", "timeline", "retraces", "kernels", "tl-svg"]
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
    check(len(p.tags) < 48 * 400 + 3000, "%s: element count bounded" % name, len(p.tags))
    return raw, p


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


def chromium_console(exe, path, profile):
    """The page's DOM after its script ran, and the console lines (any is an error: the page logs nothing)."""
    r = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                        "--disable-background-networking", "--disable-component-update", "--disable-sync",
                        "--user-data-dir=" + profile, "--enable-logging=stderr", "--v=0",
                        "--dump-dom", "file://" + os.path.abspath(path)], capture_output=True, text=True,
                       timeout=120)
    return r, [ln for ln in r.stderr.splitlines() if ":CONSOLE" in ln]


def check_chromium(name, path, d):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if not exe:
        print("skip: chromium not installed (apt-get install chromium)")
        return
    profile = os.path.join(d, "chromium-profile")
    bad = os.path.join(d, "bad.html")
    open(bad, "w").write("<!DOCTYPE html><p>x</p><script>nosuch();</script>")
    _, errors = chromium_console(exe, bad, profile)
    check(errors, "chromium: a script error on a broken page is seen (the check below can fail)")
    r, errors = chromium_console(exe, path, profile)
    check(r.returncode == 0, "%s: chromium loads the page" % name, r.returncode)
    for s in SECTIONS:
        check('id="%s"' % s in r.stdout, "%s: chromium's DOM has #%s" % (name, s))
    check(re.search(r"showing [\d.]+ ms to [\d.]+ ms", r.stdout), "%s: the script ran (the timeline's range label)" % name)
    check(not errors, "%s: nothing in the console (no script error)" % name, errors[:3])


def main():
    d = tmpdir("agprof-html-")
    samples = sys.argv[1:] or ["retrace_shape", "eager_heavy", "pyfunc_pipeline"]
    for name in samples:
        rec = record(name, d)
        check_page(name, rec, d)
        check_chromium(name, os.path.join(d, name + ".html"), d)
        if name == "retrace_shape":
            check_crafted(rec, d)
    finish("html")


if __name__ == "__main__":
    main()
