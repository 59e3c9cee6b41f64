"""`agprof fix` edits that must not change what the program computes.

Usage: test_fix_dtypes.py PROGRAM   (a file of tests/integration/fix_programs/)

The program states what an expert expects, before agprof runs, in lines
`# expect: edit TEXT` (the retracing finding's edit contains TEXT),
`# expect: no-edit TEXT` (no edit, and the reason contains TEXT),
`# expect: recommendation TEXT`, `# expect: fix-line N` (the edit's first
line) and `# expect: traces-after N` (TensorFlow's own tracing count,
printed by the program, once patched); for a recording made before the code
facts the edit needs, `# expect: old-facts TEXT` (a copy of the recording
without the `facts` marker of docs/schema.md: no edit, the reason contains
TEXT) and `# expect: no-facts-edit TEXT` or `# expect: no-facts-no-edit TEXT`
(a copy without any code facts: the legacy line reader's edit, or its
reason).  The test:
- records the program (cwd: a copy of it) and reads its retracing finding;
- with an edit: `agprof fix | patch -p1` on a second copy, runs it again
  under agprof, and compares the output line by line (the tracing count
  aside) with the first run: the edit keeps every printed value, dtypes
  included; the patched program traces as often as expected, and
  `agprof fix` on its recording offers nothing (the same edit is never
  offered twice) while no finding recommends reduce_retracing to a function
  that has it;
- without one: `agprof fix` exits 1, and the finding says why.
"""
import json
import os
import re
import shutil
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fix_programs")


def expectations(path):
    want = {}
    with open(path) as fh:
        for ln in fh:
            m = re.match(r"# expect: (\S+) ?(.*)$", ln.rstrip("\n"))
            if m:
                want[m.group(1)] = m.group(2)
    return want


def record(d, program):
    rec = os.path.join(d, "run.agprof")
    p = subprocess.run([agtest.AGPROF, "run", "-q", "-o", rec, "--", agtest.PYTHON, program], cwd=d,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=240)
    if p.returncode != 0:
        print(p.stderr.decode("utf-8", "replace")[-3000:])
        agtest.fail("%s exited %d under agprof" % (program, p.returncode))
        agtest.finish("fix-dtypes")
    return p.stdout.decode().splitlines(), rec


def retracing_findings(rec):
    rc, out, err = agtest.agprof_cmd("report", "--format", "json", rec)
    check_eq(rc, 0, "agprof report --format json exit status (%s)" % err.strip())
    return [f for f in json.loads(out)["findings"] if f["rule"] == "retracing"] if rc == 0 else []


def older_recording(rec, where):
    """The finding of a copy of rec whose code_facts rows WHERE are deleted (a recording of an older agprof)."""
    old = rec + ".older.agprof"
    shutil.copy(rec, old)
    db = sqlite3.connect(old)
    db.execute("DELETE FROM code_facts WHERE " + where)
    db.commit()
    db.close()
    found = retracing_findings(old)
    os.unlink(old)
    return found[0] if found else None


def check_older_recordings(rec, want):
    """What an older recording's facts give: no edit with the reason, or the legacy reader's edit."""
    if "old-facts" in want:
        g = older_recording(rec, "kind = 'facts'")
        check(g and g["fix"] is None and want["old-facts"] in (g["no_edit"] or ""),
              "facts without the marker: no edit, the reason says " + want["old-facts"], g and (g["fix"], g["no_edit"]))
    if "no-facts-edit" in want or "no-facts-no-edit" in want:
        g = older_recording(rec, "1")
        if "no-facts-edit" in want:
            check(g and g["fix"] and want["no-facts-edit"] in g["fix"]["after"],
                  "no facts: the legacy reader's edit writes " + want["no-facts-edit"], g and (g["fix"], g["no_edit"]))
        else:
            check(g and g["fix"] is None and want["no-facts-no-edit"] in (g["no_edit"] or ""),
                  "no facts: the legacy reader's reason says " + want["no-facts-no-edit"], g and g["no_edit"])


def tracing_count(lines):
    counts = [int(ln.split(":")[1]) for ln in lines if ln.startswith("tracing count:")]
    return counts[-1] if counts else None


def main():
    agtest.need_agprof()
    program = sys.argv[1]
    want = expectations(os.path.join(HERE, program))
    top = agtest.tmpdir()
    orig, fixed = os.path.join(top, "orig"), os.path.join(top, "fixed")
    for d in (orig, fixed):
        os.makedirs(d)
        shutil.copy(os.path.join(HERE, program), d)
    before, rec = record(orig, program)
    found = retracing_findings(rec)
    check_eq(len(found), 1, "retracing findings of %s" % program)
    if not found:
        agtest.finish("fix-dtypes")
    f = found[0]
    if "recommendation" in want:
        check(want["recommendation"] in f["recommendation"], "the recommendation says " + want["recommendation"],
              f["recommendation"])
    check_older_recordings(rec, want)
    rc, diff, err = agtest.agprof_cmd("fix", rec)
    if "no-edit" in want:
        check(f["fix"] is None, "no edit", f["fix"])
        check(want["no-edit"] in (f["no_edit"] or ""), "the reason: " + want["no-edit"], f["no_edit"])
        check_eq(rc, 1, "agprof fix exit status: nothing to fix")
        agtest.finish("fix-dtypes-" + program)
        return
    check(f["fix"] is not None and want["edit"] in f["fix"]["after"], "the edit writes " + want["edit"],
          f["fix"] or f["no_edit"])
    if "fix-line" in want:
        check_eq(f["fix"] and f["fix"]["line"], int(want["fix-line"]), "the edit's first line")
    check_eq(rc, 0, "agprof fix exit status (%s)" % err.strip())
    p = subprocess.run(["patch", "-p1"], cwd=fixed, input=diff.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    check_eq(p.returncode, 0, "patch -p1 exit status (%s)" % p.stdout.decode().strip())
    after, rec1 = record(fixed, program)
    strip = [ln for ln in before if not ln.startswith("tracing count")]
    check_eq([ln for ln in after if not ln.startswith("tracing count")], strip, "the patched program's output")
    check_eq(tracing_count(after), int(want["traces-after"]), "TensorFlow's tracing count after the edit")
    check(tracing_count(after) < tracing_count(before), "the edit removed traces",
          (tracing_count(before), tracing_count(after)))
    rc, out, _ = agtest.agprof_cmd("fix", rec1)
    check_eq(rc, 1, "agprof fix on the patched program: nothing to fix (%s)" % out[:200])
    for g in retracing_findings(rec1):
        check(g["function"] != f["function"] or "reduce_retracing=True)" not in g["recommendation"] or
              "already has" in g["recommendation"], "no recommendation of an option already applied",
              g["recommendation"])
    agtest.finish("fix-dtypes-" + program)


if __name__ == "__main__":
    main()
