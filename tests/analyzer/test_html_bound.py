#!/usr/bin/env python3
"""The HTML timeline's bounded read (issue 39, analyzer/html/html_bins.c).

A recording of 400,000 events (bench/report/gen-recording.py: 320,000 eager
ops, more than the 262,144 rows a table is read whole up to) gets its eager
lane from 2,048 runs of 64 rows, each row standing for the rows between
runs.  Oracle: the exact busy time of every column, computed here from all
the eager_ops rows (SQL, Python), turned into the page's levels (eighths
of the column, rounded up).  The sampled lane must say so in its label,
agree with the exact levels within one eighth on every column but a few,
and the page must have read far fewer rows than the recording holds.
The graph calls (60,000) and py_function runs (20,000) are under the cap:
read whole, their lanes must equal the exact levels.
"""
import os
import re
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from agcheck import SOURCE_ROOT, agprof, check, die, finish, report_json, tmpdir  # noqa: E402

COLS, ROW, LEVELS = 400, 18, 8


def page_levels(raw):
    """{lane label: [level per column]} from the timeline's SVG (rects merge equal neighbours)."""
    labels = re.findall(r'<div class="lab">(.*?)</div>', raw)
    svg = raw[raw.find('id="tl-svg"'):]
    svg = svg[:svg.find("</svg>")]
    rows = {}
    for x, y, w, h in re.findall(r'<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" '
                                 r'fill="url\(#p-\w+\)"/>', svg):
        row = int((float(y) + float(h) - 0.01) // ROW)
        cols = rows.setdefault(row, [0] * COLS)
        c0, n = round(float(x) / 2.5), round(float(w) / 2.5)
        for c in range(c0, c0 + n):
            cols[c] = round(float(h) / ROW * LEVELS)
    return {lab: rows.get(i, [0] * COLS) for i, lab in enumerate(labels)}


def exact_levels(db, table, t0, t1, where=""):
    per = (t1 - t0) / COLS
    busy = [0.0] * COLS
    for s, e in db.execute("SELECT start_ns, end_ns FROM %s %s" % (table, where)):
        s, e = max(s, t0) - t0, min(e, t1) - t0
        if e < 0 or s >= t1 - t0:
            continue
        if e <= s:
            busy[min(int(s / per), COLS - 1)] += 0
            continue
        c = int(s / per)
        while c < COLS and c * per < e:
            lo, hi = max(c * per, s), min((c + 1) * per, e)
            busy[c] += max(0.0, hi - lo)
            c += 1
    return [LEVELS if b / per > 1 else int(b / per * LEVELS + 0.999) for b in busy]


def main():
    d = tmpdir("agprof-html-bound-")
    rec = os.path.join(d, "g400k.agprof")
    p = subprocess.run([sys.executable, os.path.join(SOURCE_ROOT, "bench", "report", "gen-recording.py"),
                        "--events", "400000", os.path.join(SOURCE_ROOT, "common", "schema.sql"), rec],
                       capture_output=True, text=True, timeout=300)
    if p.returncode:
        die("gen-recording.py: %s" % p.stderr[-2000:])
    out = os.path.join(d, "g.html")
    rc, _, err = agprof("report", "--format", "html", "-o", out, rec)
    check(rc == 0, "report --format html exits 0", rc, err.strip()[-300:])
    raw = open(out, encoding="utf-8").read()
    s = report_json(rec)["session"]
    t1 = s["end_ns"]
    t0 = s["first_tf_ns"] if s["start_ns"] < s["first_tf_ns"] < t1 else s["start_ns"]
    lanes = page_levels(raw)
    db = sqlite3.connect(rec)
    nrows = db.execute("SELECT count(*) FROM eager_op_rows").fetchone()[0]
    check(nrows > 262144, "the recording's eager ops are more than the read-whole cap", nrows)
    read = int(re.search(r"Read from (\d+) rows", raw).group(1))
    check(read < 262144 + 60000 + 20000 + 1000, "rows read bounded", read, nrows)
    eager = [k for k in lanes if "eager op" in k]
    check(len(eager) == 1 and "sampled 1 in" in eager[0], "the eager lane says it is sampled", eager)
    # the view gives start_ns/end_ns of schema 6's eager_op_rows
    db.execute("CREATE TEMP VIEW ev AS SELECT k.base_ns + r.start AS start_ns, k.base_ns + r.start + r.dur AS end_ns "
               "FROM eager_op_rows r JOIN eager_op_keys k ON k.id = r.key")
    want = exact_levels(db, "ev", t0, t1)
    got = lanes[eager[0]] if eager else [0] * COLS
    off1 = sum(1 for a, b in zip(want, got) if abs(a - b) > 1)
    off0 = sum(1 for a, b in zip(want, got) if a != b)
    check(off1 <= 4, "sampled eager lane within one eighth of the exact busy share (columns off by more)", off1, 4)
    check(sum(want) > COLS, "the oracle's lane is not empty (the comparison can fail)", sum(want))
    print("eager lane: %d of %d columns differ from the exact level, %d by more than one" % (off0, COLS, off1))
    for kind, table in (("graph call", "function_calls"), ("py_function", "blackbox_execs")):
        lane = [k for k in lanes if kind in k]
        check(len(lane) == 1 and "sampled" not in lane[0], "%s lane read whole" % kind, lane)
        if lane:
            want = exact_levels(db, table, t0, t1)
            # float sums in another order: a column on a level's edge may round either way
            off = sum(1 for a, b in zip(want, lanes[lane[0]]) if a != b)
            check(off <= 2 and sum(want) > 0, "%s lane equals the exact levels" % kind, off, 0)
    check(len(raw.encode()) < 5 << 20, "page under 5 MB", len(raw))
    finish("html-bound")


if __name__ == "__main__":
    main()
