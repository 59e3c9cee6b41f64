"""Call sites through the frames each CPython puts between the user's line
and TensorFlow: samples/frames/eager_frames.py under `agprof run`, with the
Python running this test (suite pythons runs it on every Python of
extra_pythons, and on test_python).

- every eager op has a call site, and no frame of any site's chain is one
  of the interpreter's own (3.12's trampoline "<shim>", 3.13's "__init__"
  clean-up frame) or has no line;
- every op belongs to a line of the sample marked `# frames: NAME`: the
  operator line (C calls Tensor.__mod__) has its 3 ops per step, the
  library class's line 2 per step with framelib.py's marked line as the
  library frame, the user's own __init__ 1 per step at its own line.
"""
import os
import re
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import agtest  # noqa: E402
from agtest import check  # noqa: E402

SAMPLE = os.path.join(agtest.SAMPLES, "frames", "eager_frames.py")
LIBRARY = os.path.join(agtest.SAMPLES, "frames", "site-packages", "framelib.py")
STEPS = 1500


def marks(path, tag):
    """{name: line} of the `# TAG: name` comments of path."""
    found = {}
    with open(path) as fh:
        for no, text in enumerate(fh, 1):
            m = re.search(r"#\s*%s:\s*([\w-]+)" % tag, text)
            if m:
                found[m.group(1)] = no
    return found


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()
    out = os.path.join(d, "frames.agprof")
    p = agtest.run_agprof(out, [agtest.PYTHON, SAMPLE])
    if not check(p.returncode == 0, "agprof run of eager_frames.py", p.returncode, 0):
        agtest.finish("frames")
    db = sqlite3.connect(out)
    sites = {r[0]: r[1:] for r in db.execute(
        "SELECT c.id, f.text, c.line, c.parent_id, c.library FROM callsites c JOIN strings f ON f.id = c.file_id")}
    ops = db.execute("SELECT e.callsite_id, count(*) FROM eager_ops e GROUP BY e.callsite_id").fetchall()
    db.close()
    check(all(s is not None for s, _ in ops), "every eager op has a call site",
          sum(n for s, n in ops if s is None), 0)
    user_marks, lib_marks = marks(SAMPLE, "frames"), marks(LIBRARY, "framelib")
    at_line, through_library = {}, {}
    for site, n in ops:
        chain = []
        while site is not None and len(chain) < 32:
            chain.append(sites[site])
            site = sites[site][2]
        bad = [(f, line) for f, line, _, _ in chain if f in ("<shim>", "__init__") or line <= 0]
        check(not bad, "no interpreter frame and no line 0 in a call site chain", bad, [])
        user = [c for c in chain if not c[3]]
        if not check(user and agtest.same_file(user[0][0], SAMPLE), "ops at the sample's lines",
                     chain[:3], SAMPLE):
            continue
        line = user[0][1]
        at_line[line] = at_line.get(line, 0) + n
        if chain[0][3]:
            key = (os.path.basename(chain[0][0]), chain[0][1])
            through_library[line] = through_library.setdefault(line, set()) | {key}
    named = {line: name for name, line in user_marks.items()}
    check(set(at_line) <= set(named), "every op at a marked line",
          sorted((named.get(ln, "?"), ln) for ln in at_line), sorted(named.items()))
    want = {"operator": 3 * STEPS, "library-init": 2 * STEPS, "user-init": STEPS}
    for name, n in want.items():
        got = at_line.get(user_marks[name], 0)
        check(n <= got <= n + 2, "eager ops at the %s line %d" % (name, user_marks[name]), got, n)
    check(through_library.get(user_marks["library-init"]) == {("framelib.py", lib_marks["init"])},
          "the library __init__'s ops carry framelib.py's line as their library frame",
          through_library.get(user_marks["library-init"]), {("framelib.py", lib_marks["init"])})
    agtest.finish("frames")


if __name__ == "__main__":
    main()
