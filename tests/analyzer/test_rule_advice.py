"""A rule file brings its own fix and saving by naming them (docs/rules.md,
`fix:` and `saving:`), on a real recording of samples/retrace_shape.py.

- A user rule written here, with `fix: retrace` and `saving: retraces`,
  gets the same edit and the same saving as the built-in retracing finding
  of the same function (report JSON, agprof report without --rules as the
  reference); `agprof fix` writes its hunk under the user rule's id,
  the hunk applies with patch -p1 to a copy of the program, and the patched
  program traces once (TensorFlow's own tracing count) and prints the same
  result.
- The same rule without the keys gets no edit, says why, and its saving is
  its cost, said to be an upper bound.
- A user rule replacing the built-in retracing with neither key keeps the
  built-in's edit and saving.
- An unknown name is a load error of that rule file (error: FILE:LINE:
  unknown fix 'NAME'); the exit code does not change and the other rules run.
"""
import json
import os
import re
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agcheck  # noqa: E402
from agcheck import check  # noqa: E402

SAMPLE = "retrace_shape"
RULE = """id: %(id)s
title: a function retraced by a changing shape
severity: warning
select: functions
when: not tf_data and cause == "shape" and retraces >= 2
cost: retrace_ns
message: {name} was retraced {retraces} times by shape ({argument}: {before} -> {after})
recommendation: Pin the shape of {argument} with an input_signature.
%(keys)s"""


def write(path, text):
    with open(path, "w") as fh:
        fh.write(text)


def record(d):
    """Record the sample copied into d, with cwd d; its recording and its output."""
    for name in (SAMPLE + ".py", "oracle.py"):
        shutil.copy(os.path.join(agcheck.SAMPLES, name), d)
    rec = os.path.join(d, SAMPLE + ".agprof")
    p = subprocess.run([agcheck.AGPROF, "run", "-q", "-o", rec, "--", sys.executable, SAMPLE + ".py"],
                       cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    if p.returncode != 0:
        sys.stdout.write(p.stderr.decode("utf-8", "replace")[-3000:])
        agcheck.die("agprof run on %s exited %d" % (SAMPLE, p.returncode))
    return rec, p.stdout.decode()


def finding(report, rule):
    found = [f for f in report["findings"] if f["rule"] == rule]
    check(len(found) == 1, "one %s finding" % rule, [f["rule"] for f in report["findings"]])
    return found[0] if found else {}


def check_same_advice(mine, builtin):
    for key in ("function", "cause", "file", "line", "fix", "saving_ns", "saving_method", "saving_summary"):
        check(mine.get(key) == builtin.get(key), "the user rule's %s is the built-in retracing's" % key,
              (mine.get(key), builtin.get(key)))
    check(mine.get("fix") and "input_signature=" in mine["fix"]["after"], "the edit pins an input_signature",
          mine.get("fix"))
    check(mine.get("saving_ns", 0) > 0 and "retraces the fix removes" in (mine.get("saving_method") or ""),
          "the saving is the retraces' (saving: retraces), not the cost", mine.get("saving_method"))


def check_patched(top, rec, out0):
    """agprof fix with shape-pin alone (the built-in retracing held back: it would edit the same line
    first): the hunk is shape-pin's, applies, and the patched program traces once, same result."""
    rules = os.path.join(top, "rules-pin")
    os.makedirs(rules)
    write(os.path.join(rules, "shape-pin.rule"), RULE % {"id": "shape-pin", "keys": "fix: retrace\nsaving: retraces\n"})
    rc, diff, err = agcheck.agprof("fix", "--rules", rules, "--set", "retracing.max_traces=100", "--set",
                                   "retracing.min_retraces=100", rec)
    check(rc == 0 and re.search(r"^@@ .* @@ shape-pin shape$", diff, re.M), "agprof fix --rule shape-pin writes"
          " its hunk under the user rule's id", (rc, diff, err))
    fixed = os.path.join(top, "fixed")
    os.makedirs(fixed)
    for name in (SAMPLE + ".py", "oracle.py"):
        shutil.copy(os.path.join(agcheck.SAMPLES, name), fixed)
    p = subprocess.run(["patch", "-p1"], input=diff.encode(), cwd=fixed, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, timeout=60)
    if not check(p.returncode == 0, "the diff applies with patch -p1", p.stdout.decode()):
        return
    p = subprocess.run([sys.executable, SAMPLE + ".py"], cwd=fixed, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=300)
    out1 = p.stdout.decode()
    check("tracing count: 1\n" in out1, "the patched program traces once (TensorFlow's count)", out1)
    result = [ln for ln in out0.splitlines() if ln.startswith("sum of predictions")]
    check(result and result[0] in out1.splitlines(), "the patched program prints the same result", (out0, out1))


def main():
    top = agcheck.tmpdir("agprof-rule-advice-")
    orig, rules = os.path.join(top, "orig"), os.path.join(top, "rules")
    os.makedirs(orig)
    os.makedirs(rules)
    rec, out0 = record(orig)
    check("tracing count: 4" in out0, "the sample retraces (TensorFlow's count)", out0)

    write(os.path.join(rules, "shape-pin.rule"), RULE % {"id": "shape-pin", "keys": "fix: retrace\nsaving: retraces\n"})
    write(os.path.join(rules, "shape-words.rule"), RULE % {"id": "shape-words", "keys": ""})
    with open(os.path.join(agcheck.SOURCE_ROOT, "rules", "retracing.rule")) as fh:
        keyless = "".join(ln for ln in fh if not re.match(r"(fix|saving):", ln))
    write(os.path.join(rules, "retracing.rule"), keyless)
    write(os.path.join(rules, "bad-fix.rule"), RULE % {"id": "bad-fix", "keys": "fix: rewrite-everything\n"})
    write(os.path.join(rules, "bad-saving.rule"), RULE % {"id": "bad-saving", "keys": "saving: all-of-it\n"})

    builtin = finding(agcheck.report_json(rec), "retracing")
    rc, out, err = agcheck.agprof("report", "--format", "json", "--rules", rules, rec)
    check(rc == 0, "rule files with errors do not change the exit code", (rc, err))
    for name, key, value, line in (("bad-fix", "fix", "rewrite-everything", 9), ("bad-saving", "saving", "all-of-it", 9)):
        want = "error: %s:%d: unknown %s '%s'" % (os.path.join(rules, name + ".rule"), line, key, value)
        check(want in err, "an unknown %s name is a load error at its line" % key, err)
    report = json.loads(out)
    rules_fired = [f["rule"] for f in report["findings"]]
    check("bad-fix" not in rules_fired and "bad-saving" not in rules_fired, "a rule file with an error is skipped",
          rules_fired)

    check_same_advice(finding(report, "shape-pin"), builtin)
    words = finding(report, "shape-words")
    check(words.get("fix") is None and "no edit is written for shape-words" in (words.get("no_edit") or ""),
          "a rule naming no fix gets none, and says why", (words.get("fix"), words.get("no_edit")))
    check(words.get("saving_ns") == words.get("cost_ns") and (words.get("saving_method") or "").startswith(
        "upper bound"), "a rule naming no saving: its cost, an upper bound", words.get("saving_method"))
    kept = finding(report, "retracing")
    for key in ("fix", "saving_ns", "saving_method"):
        check(kept.get(key) == builtin.get(key), "a user retracing rule without the keys keeps the built-in's %s" % key,
              (kept.get(key), builtin.get(key)))
    check_patched(top, rec, out0)
    agcheck.finish("rule-advice")


if __name__ == "__main__":
    main()
