"""`agprof fix` on a real recording: the patch applies and fixes the program.

Usage: test_fix.py SAMPLE FUNCTION CAUSE      (a retracing finding by CAUSE)
(SAMPLE: a program of samples/, or a variant of one: VARIANTS)
       test_fix.py SAMPLE FUNCTION input-bound (the input-bound finding of FUNCTION's pipeline)
       test_fix.py SAMPLE FUNCTION eager-hotspot (FUNCTION's eager ops, wrapped in tf.function)
       test_fix.py SAMPLE FUNCTION eager-switch (eager-hotspot from Keras's run_eagerly=True: set to False)

For one fixable sample (a copy of it and samples/oracle.py in a temporary
directory, the recording's working directory):
- record it under agprof with the oracle (TensorFlow's own tracing count);
- `agprof fix REC` exits 0 with a unified diff of one hunk on a/SAMPLE, the
  same edit as the JSON report's finding `fix` and the SARIF result's `fixes`;
  the finding has a positive saving_ns and a saving_method (eager-hotspot:
  saving_ns 0, a positive forecast_ns and the experiment's command: moving
  work into a graph claims nothing until `agprof fix --verify` measured it);
- every finding of the recording has a saving (eager-hotspot: a forecast)
  within bounds: positive for
  the rules whose saving is estimated (never zero or negative), at most
  the time TensorFlow was active, and at most cost_ns where the symptom's
  time bounds it (input-bound, and every "upper bound" method);
- the diff applies with `patch -p1` (and `git apply --check` when git is
  there) in a second copy; the patched program, recorded again, prints the
  same output (tracing-count lines aside), and its function traces once:
  experimental_get_tracing_count() of every tf.function object is 1 and the
  recording holds one trace of it;
- input-bound instead: the patched program's recording runs the map as
  ParallelMapDatasetV2 and has a PrefetchDataset (TensorFlow's own op
  types, as dispatched), and the same number of steps;
- eager-hotspot instead: the patched program's recording has one trace of
  the function, none of its eager ops, and no eager-hotspot finding;
- eager-switch instead (Keras fit with run_eagerly=True): the edit is on
  the marked run-eagerly line, the recommendation names it, and the patched
  program's recording has graph calls, no eager-hotspot finding and under
  a tenth of the eager ops at the fit line;
- retracing: each trace of the function records the collector's own time in
  it (traces.collector_ns: positive, less than the trace), and the saving
  takes it off: the same recording with collector_ns zeroed saves more, by
  exactly the retraces' collector_ns where nothing else depends on it (every
  cause but a shape fix by reduce_retracing, whose one relaxed retrace is
  priced from the same steps); a shape fix by input_signature adds no trace
  back (its one trace serves every shape);
- `agprof fix` on the patched program's recording has nothing to fix (1);
  bad usage and bad recordings exit 2 with one line;
- a source file edited after the recording gets no edit: the report says
  it changed since the recording and `agprof fix` exits 1.
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


# Programs made from a sample by replacing a few of its lines: the layout an edit is placed on with the
# parser's facts (issue 45), where the text reader went wrong.  name -> (sample, [(old, new), ...]).
VARIANTS = {
    # a message quoting the switch: the text reader counted it as a second switch and gave up
    "switch_string.py": ("keras_run_eagerly.py", [(
        "    model.compile(",
        "    print(\"debugging: compiled with run_eagerly=True, one op at a time\")\n    model.compile(")]),
    # a map call over several lines, as black writes a long one: the text reader found no closing bracket
    "pipeline_multiline.py": ("input_bound.py", [(
        "    return ds.map(heavy).batch(BATCH)  # agprof: slow-map\n",
        "    return ds.map(  # agprof: slow-map\n        heavy,\n    ).batch(BATCH)\n")]),
    # a comment naming np. and print( in the eager function's body, and its call over two lines: the text
    # reader took the comment for side effects, could not read the call's arguments, and wrote nothing
    "wrap_comment.py": ("collatz.py", [
        ("        if n % 2 == 0:         # agprof: eager-hot-loop\n",
         "        # like np.where(n % 2 == 0, ...) but scalar; print(n) here to trace the path\n"
         "        if n % 2 == 0:         # agprof: eager-hot-loop\n"),
        ("        eager_total += int(collatz_eager(tf.constant(start)))\n",
         "        eager_total += int(collatz_eager(\n            tf.constant(start)))\n")]),
    # every eager op of the function in its own loop (steps a Python int): the fewest ops at a line counted
    # iterations, not calls, and the function (about 100 ops a call) was told too small to decorate alone
    "wrap_loop_only.py": ("collatz.py", [
        ("    steps = tf.constant(0)\n    while n != 1:              # Python loop",
         "    steps = 0\n    while n != 1:              # Python loop")]),
}


def copy_sample(d, sample):
    """d/sample (a sample, or a variant of one) and d/oracle.py."""
    os.makedirs(d)
    shutil.copy(agtest.sample("oracle.py"), os.path.join(d, "oracle.py"))
    base, edits = VARIANTS.get(sample, (sample, []))
    with open(agtest.sample(base)) as fh:
        text = fh.read()
    for old, new in edits:
        if old not in text:
            agtest.fail("variant %s: %r is not in samples/%s" % (sample, old, base))
            agtest.finish("fix")
        text = text.replace(old, new, 1)
    with open(os.path.join(d, sample), "w") as fh:
        fh.write(text)


def record(d, sample, name):
    """Record d/sample with cwd d; return (stdout lines, oracle, recording path)."""
    out = os.path.join(d, name + ".agprof")
    oracle = os.path.join(d, name + ".oracle.json")
    env = dict(os.environ, AGPROF_ORACLE=oracle, AGPROF_ORACLE_NO_PROFILER="1")
    p = subprocess.run([agtest.AGPROF, "run", "-q", "-o", out, "--", agtest.PYTHON, sample],
                       cwd=d, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=240)
    if p.returncode != 0 or not os.path.exists(oracle):
        print(p.stderr.decode("utf-8", "replace")[-3000:])
        agtest.fail("%s exited %d under agprof" % (sample, p.returncode))
        agtest.finish("fix")
    with open(oracle) as fh:
        return p.stdout.decode().splitlines(), json.load(fh), out


def output(lines):
    """The program's output, tracing counts and timings aside."""
    return [re.sub(r"[0-9.]+ s\b", "T s", ln) for ln in lines if not ln.startswith("tracing count")]


def finding_of(rec, function, rule="retracing"):
    rc, out, err = agtest.agprof_cmd("report", "--format", "json", rec)
    check_eq(rc, 0, "agprof report --format json exit status")
    for f in json.loads(out)["findings"]:
        if f["rule"] == rule and f["function"] == function:
            return f
    return None


ESTIMATED = ("retracing", "tracing-overhead", "input-bound", "xla-recompile")
# moving work into a graph is an experiment (issue 46): the estimate is a forecast, nothing is claimed
FORECAST = ("eager-hotspot",)


def check_saving_bounds(rec):
    """Each finding's saving_ns (a forecast's forecast_ns) on a real recording against what it cannot exceed."""
    rc, out, err = agtest.agprof_cmd("report", "--format", "json", rec)
    report = json.loads(out)
    active = report["session"]["active_ns"]
    for f in report["findings"]:
        method = f["saving_method"] or ""
        if f["rule"] in FORECAST:
            check(f["saving_ns"] == 0 and f["experiment"], "%s %s claims no saving: an experiment" % (
                f["rule"], f["function"]), (f["saving_ns"], f["experiment"]))
        est = f["forecast_ns"] if f["rule"] in FORECAST else f["saving_ns"]
        what = "%s %s: %s %s" % (f["rule"], f["function"], "forecast_ns" if f["rule"] in FORECAST else "saving_ns", est)
        check(est is not None and (est > 0 if f["rule"] in ESTIMATED + FORECAST else est >= 0),
              what + " is positive", method)
        check(est is not None and est <= active, what + " is within the time TensorFlow was active", active)
        if f["rule"] == "input-bound" or method.startswith("upper bound") or f["rule"] in FORECAST:
            check(est is not None and est <= f["cost_ns"], what + " is at most the symptom's time", f["cost_ns"])


def check_retraced_once(oracle1, rec1, function):
    """TensorFlow's tracing count of every object is 1, and the recording holds one trace."""
    fn = oracle1["functions"][function]
    counts = fn.get("objects") or [fn["tracing_count"]]
    check(counts and max(counts) == 1, "tracing count of each tf.function object after the fix is 1", counts)
    db = agtest.open_recording(rec1)
    traces = agtest.q1(db, "SELECT count(*) FROM traces t JOIN functions f ON f.id = t.function_id"
                       " JOIN strings s ON s.id = f.name_id WHERE s.text = ?", function)
    check_eq(traces, 1, "traces of %s in the patched program's recording" % function)


def check_wrapped(rec1, function):
    """The function runs as one graph: one trace, none of its ops eager, no eager-hotspot finding."""
    db = agtest.open_recording(rec1)
    traces = agtest.q1(db, "SELECT count(*) FROM traces t JOIN functions f ON f.id = t.function_id"
                       " JOIN strings s ON s.id = f.name_id WHERE s.text = ?", function)
    check_eq(traces, 1, "traces of %s in the patched program's recording" % function)
    ops = agtest.q1(db, "SELECT count(*) FROM eager_ops e JOIN callsites cs ON cs.id = e.callsite_id"
                    " JOIN strings s ON s.id = cs.func_id WHERE s.text = ?", function)
    check_eq(ops, 0, "eager ops of %s in the patched program's recording" % function)
    check(finding_of(rec1, function, "eager-hotspot") is None, "no eager-hotspot finding after the fix")


def check_graphs_again(rec0, rec1, program):
    """Keras runs its steps as graph calls after run_eagerly=False: few eager ops are left at the fit line."""
    line = agtest.marker_lines_of(program)["eager-hotspot"][0]
    ops = []
    for rec in (rec0, rec1):
        db = agtest.open_recording(rec)
        ops.append(agtest.q1(db, "SELECT count(*) FROM eager_ops e JOIN callsites cs ON cs.id = e.callsite_id"
                             " WHERE cs.line = ?", line))
        calls = agtest.q1(db, "SELECT count(*) FROM function_calls")
    check(calls > 0, "graph calls in the patched program's recording", calls)
    check(ops[1] * 10 < ops[0], "eager ops at the fit line: %d before, %d after the fix" % tuple(ops))
    check(finding_of(rec1, "main", "eager-hotspot") is None, "no eager-hotspot finding after the fix")


def check_collector_time(rec, function, f, cause):
    """collector_ns of the function's traces, and the saving without it (a copy with it zeroed)."""
    db = agtest.open_recording(rec)
    rows = db.execute("SELECT t.collector_ns, t.end_ns - t.start_ns FROM traces t JOIN functions f"
                      " ON f.id = t.function_id JOIN strings s ON s.id = f.name_id WHERE s.text = ?"
                      " ORDER BY t.start_ns", (function,)).fetchall()
    db.close()
    check(rows and all(0 < own < span for own, span in rows),
          "each trace of %s has the collector's time in it, positive and less than the trace" % function, rows)
    zeroed = rec + ".zeroed.agprof"
    shutil.copy(rec, zeroed)
    db = sqlite3.connect(zeroed)
    db.execute("UPDATE traces SET collector_ns = 0")
    db.commit()
    db.close()
    g = finding_of(zeroed, function)
    os.unlink(zeroed)
    if not check(g is not None, "the finding without collector_ns"):
        return
    more = g["saving_ns"] - f["saving_ns"]
    own = sum(r[0] for r in rows[1:])
    if cause == "shape" and "minus" in (f["saving_method"] or ""):  # reduce_retracing's one relaxed retrace
        check(more > 0, "the saving without collector_ns is larger", (g["saving_ns"], f["saving_ns"]))
    else:
        check_eq(more, own, "the saving without collector_ns less the saving (the retraces' collector_ns)")


def check_pipeline_fixed(oracle0, oracle1, rec1):
    """The map runs in parallel (op types TensorFlow dispatched); same steps.  No prefetch is added:
    TensorFlow >= 2.12 prefetches at the end of the pipeline itself (inject_prefetch), so one more does nothing."""
    db = agtest.open_recording(rec1)
    ops = {r[0] for r in db.execute("SELECT DISTINCT s.text FROM eager_ops e JOIN strings s ON s.id = e.op_id")}
    check("ParallelMapDatasetV2" in ops and "MapDataset" not in ops, "the patched pipeline maps in parallel", ops)
    check("PrefetchDataset" not in ops, "no prefetch added where TensorFlow injects one", ops)
    check_eq(oracle1["extra"]["steps"], oracle0["extra"]["steps"], "steps of the patched program")


def main():
    agtest.need_agprof()
    sample, function, cause = sys.argv[1], sys.argv[2], sys.argv[3]
    rule = cause if cause in ("input-bound", "eager-hotspot") else "eager-hotspot" if cause == "eager-switch" else "retracing"
    for args, what in (((), "no recording"), (("/nonexistent.agprof",), "a missing recording"),
                       (("--bogus", "x.agprof"), "an unknown option"), (("--rule",), "--rule without a value")):
        rc, out, err = agtest.agprof_cmd("fix", *args)
        check(rc == 2 and not out and len(err.strip().splitlines()) == 1, "agprof fix with %s: exit 2, one line" % what,
              (rc, out, err))
    top = agtest.tmpdir()
    orig, fixed = os.path.join(top, "orig"), os.path.join(top, "fixed")
    copy_sample(orig, sample)
    before, oracle0, rec = record(orig, sample, "orig")
    if rule == "retracing":
        check(oracle0["functions"][function]["tracing_count"] > 1, "the sample retraces %s" % function)

    rc, diff, err = agtest.agprof_cmd("fix", rec)
    check_eq(rc, 0, "agprof fix exit status (%s)" % err.strip())
    check(diff.startswith("--- a/%s\n+++ b/%s\n" % (sample, sample)), "diff header names a/ and b/ " + sample, diff[:80])
    check_eq(diff.count("\n@@ "), 1, "hunks in the diff")
    check(("retracing " + cause if rule == "retracing" else "@@ " + rule) in diff, "the hunk is for " + cause, diff)

    f = finding_of(rec, function, rule)
    if check(f is not None, "a %s finding for %s" % (rule, function)):
        check_eq(f["cause"], cause if rule == "retracing" else None, "finding cause")
        if cause in ("python-value", "dtype"):
            # what the fix adds (a tf.constant / an eager Cast per call) is priced at a recorded dispatch
            prices = [float(x) for x in re.findall(r"dispatch \(([0-9.]+) ms\)", f["saving_method"] or "")]
            check(prices and min(prices) > 0, "the added ops are priced at a recorded dispatch, above 0", f["saving_method"])
        if cause == "shape" and f["fix"] and "input_signature=" in f["fix"]["after"]:
            # one trace serves every shape then: no retrace left to price against the saving (only reduce_retracing has one)
            check("minus" not in (f["saving_method"] or ""), "an input_signature's saving adds no trace back",
                  f["saving_method"])
        if cause == "eager-switch":
            line = agtest.marker_lines_of(os.path.join(orig, sample))["run-eagerly"][0]
            check(f["fix"] and f["fix"]["line"] == line and "run_eagerly=False" in f["fix"]["after"],
                  "the edit sets run_eagerly=False on line %d" % line, f["fix"])
            check("run_eagerly=True at line %d" % line in f["recommendation"], "the recommendation names the switch",
                  f["recommendation"])
        check(f["fix"] is not None, "finding has a fix", f.get("no_edit"))
        if rule == "eager-hotspot":  # an experiment: the estimate is a forecast, nothing claimed (issue 46)
            check(f["saving_ns"] == 0 and f["forecast_ns"] and f["forecast_ns"] > 0 and f["saving_method"]
                  and "--rule eager-hotspot" in (f["experiment"] or ""),
                  "finding has a forecast, its method and the experiment's command, no claimed saving",
                  (f["saving_ns"], f["forecast_ns"], f["saving_method"], f["experiment"]))
        else:
            check(f["saving_ns"] > 0 and f["saving_method"], "finding has a saving and its method",
                  (f["saving_ns"], f["saving_method"]))
        check("train_step" not in json.dumps(f), "no canned train_step template in the finding")
        check_saving_bounds(rec)
        if rule == "retracing":
            check_collector_time(rec, function, f, cause)
        if f["fix"]:
            check_eq(f["fix"]["file"], sample, "fix.file")
            check("".join("+" + ln + "\n" for ln in f["fix"]["after"].splitlines()) in diff,
                  "the diff adds the finding's fix.after")
    rc, sarif, _ = agtest.agprof_cmd("report", "--format", "sarif", rec)
    fixes = [r.get("fixes") for r in json.loads(sarif)["runs"][0]["results"] if r["ruleId"] == rule]
    check(fixes and fixes[0] and fixes[0][0]["artifactChanges"][0]["artifactLocation"]["uri"] == sample,
          "SARIF result carries the edit as fixes", fixes)

    copy_sample(fixed, sample)
    p = subprocess.run(["patch", "-p1"], cwd=fixed, input=diff.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    check_eq(p.returncode, 0, "patch -p1 exit status (%s)" % p.stdout.decode().strip())
    if shutil.which("git"):
        g = subprocess.run(["git", "apply", "--check", "-"], cwd=orig, input=diff.encode(),
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        check_eq(g.returncode, 0, "git apply --check (%s)" % g.stdout.decode().strip())
    after, oracle1, rec1 = record(fixed, sample, "fixed")
    check_eq(output(after), output(before), "the patched program's output")
    if rule == "retracing":
        check_retraced_once(oracle1, rec1, function)
    elif rule == "input-bound":
        check_pipeline_fixed(oracle0, oracle1, rec1)
    elif cause == "eager-switch":
        check_graphs_again(rec, rec1, os.path.join(orig, sample))
    else:
        check_wrapped(rec1, function)
    rc, out, _ = agtest.agprof_cmd("fix", rec1)
    check_eq(rc, 1, "agprof fix on the fixed program: nothing to fix")

    # the file changes after the recording: no edit, and the report says why
    with open(os.path.join(orig, sample), "a") as fh:
        fh.write("# edited after the recording\n")
    rc, out, _ = agtest.agprof_cmd("fix", rec)
    check_eq(rc, 1, "agprof fix on a file changed since the recording")
    f = finding_of(rec, function, rule)
    check(f and f["fix"] is None and "changed since the recording" in (f["no_edit"] or ""),
          "finding says the file changed since the recording", f and f["no_edit"])
    agtest.finish("fix-" + sample)


if __name__ == "__main__":
    main()
