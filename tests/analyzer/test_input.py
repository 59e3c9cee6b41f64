"""Time per thread, input pipelines and black boxes in tf.data, on real runs.

usage: test_input.py SAMPLE [--parallel]

Each sample is recorded with its oracle (samples/oracle.py, without the
profiler: the facts checked here are the program's own counters and
clocks), then `agprof report --format json` is compared with it:

- pyfunc_pipeline: the eager ops a tf.py_function body runs on tf.data's
  threads belong to its black box (at least the ops the body dispatches per
  call, times the body's own call counter), not to eager dispatch: no
  eager line inside the body, no line without a Python frame shown as a
  line, no eager-hotspot, and the py-function finding says tf.data.
- generator_dataset: from_generator's three PyFunc nodes each get their own
  runs: next() as often as the program's iterator counted, the iterator
  made and dropped once, all named at the from_generator line.
- input_bound: the input-bound finding's saving is the waits, at most the
  loop's time not waiting (findings rank by saving), it points at the
  sequential map's line, names the loop, recommends num_parallel_calls and
  prefetch; the waits agprof measured are those the program measured
  around next() (never more, most of them).  With --parallel the pipeline
  is parallel and prefetched: the advice must not ask for either.
- two_pipelines: a quick from_generator read first, then a slow one
  (20 ms per element) read by the loop: one input row for that loop, its
  pipeline the slow dataset only; the finding at the slow stage's line
  (the generator, or with --map the py_function map) with a time per
  element 0.9-2x the sleep; each generator's next() runs at its own line;
  no prefetch or parallel-call edit (with --prefetch: there is one; else
  TensorFlow 2.21 injects one).
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agcheck  # noqa: E402
from agcheck import check  # noqa: E402


def record(sample, args):
    agcheck.need_agprof()
    d = agcheck.tmpdir("agprof-input-")
    out = os.path.join(d, sample + ".agprof")
    env = dict(os.environ, AGPROF_ORACLE=os.path.join(d, "oracle.json"), AGPROF_ORACLE_NO_PROFILER="1")
    p = subprocess.run([agcheck.AGPROF, "run", "-o", out, "--", sys.executable,
                        os.path.join(agcheck.SAMPLES, sample + ".py")] + args,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=600,
                       cwd=agcheck.SOURCE_ROOT, env=env)
    if p.returncode != 0:
        sys.stdout.write(p.stderr.decode("utf-8", "replace")[-3000:])
        agcheck.die("agprof run on %s exited %d" % (sample, p.returncode))
    with open(env["AGPROF_ORACLE"]) as fh:
        return out, json.load(fh)


def here(loc, sample):
    return loc is not None and os.path.realpath(loc["file"]) == os.path.realpath(
        os.path.join(agcheck.SAMPLES, sample + ".py"))


def common(report, sample):
    """Nothing shown as a line 0; every finding that has a thread names a known one."""
    for s in report["eager_sites"]:
        check(s["location"] is None or s["location"]["line"] > 0, "%s: eager line %s" % (sample, s["location"]))
    for f in report["findings"]:
        check(f["thread"] in (None, "main", "tf.data", "other"), "%s: finding thread %r" % (sample, f["thread"]))
        check(f["location"] is None or f["location"]["line"] > 0,
              "%s: %s points at line %s" % (sample, f["rule"], f["location"]))
    for t in report["threads"]:
        check(t["eager_share"] <= 1.0 + 1e-9, "%s: thread %d eager share %.3f <= 1" % (sample, t["tid"], t["eager_share"]))


def pyfunc_pipeline(report, oracle, marks):
    extra = oracle["extra"]
    bbs = [b for b in report["blackboxes"] if b["op_type"] == "EagerPyFunc"]
    if not check(len(bbs) == 1, "one EagerPyFunc black box (got %s)" % [b["node"] for b in bbs]):
        return
    b = bbs[0]
    check(b["execs"] == extra["py_function_execs"],
          "py_function runs %d == the body's own counter %d" % (b["execs"], extra["py_function_execs"]))
    check(b["eager_ops"] >= extra["eager_ops_in_body"],
          "eager ops inside the body %d >= %d (4 per call, by the body's counter)" % (
              b["eager_ops"], extra["eager_ops_in_body"]))
    check(b["thread"] == "tf.data", "the black box ran on tf.data threads (%r)" % b["thread"])
    check(b["made_by"] == "map(augment)", "made by map(augment) (%r)" % b["made_by"])
    check(report["session"]["blackbox_eager_ops"] == b["eager_ops"], "session counts the body's ops once")
    body = [s for s in report["eager_sites"] if s["function"] == "augment_py"]
    check(not body, "no eager dispatch line inside the py_function body: %s" % body)
    check(report["session"]["eager_ops"] < extra["eager_ops_in_body"],
          "eager dispatch (%d ops) does not count the body's ops" % report["session"]["eager_ops"])
    hot = [f for f in report["findings"] if f["rule"] == "eager-hotspot"]
    check(not hot, "no eager-hotspot: %s" % [(f["severity"], f["message"]) for f in hot])
    py = [f for f in report["findings"] if f["rule"] == "py-function"]
    if check(py, "a py-function finding"):
        check(py[0]["thread"] == "tf.data", "py-function finding on the tf.data thread (%r)" % py[0]["thread"])
        check(here(py[0]["location"], "pyfunc_pipeline") and py[0]["location"]["line"] in marks["dataset"],
              "py-function points at the .map(augment) line %s (got %s)" % (marks["dataset"], py[0]["location"]))
    main = [t for t in report["threads"] if t["thread"] == "main"]
    check(main and main[0]["input_waits"] == extra["steps"] + 1,
          "main thread: %s iterator reads == steps + 1 (%d)" % (main and main[0]["input_waits"], extra["steps"] + 1))


def generator_dataset(report, oracle, marks):
    extra = oracle["extra"]
    runs = {}
    for b in report["blackboxes"]:
        runs[b["graph_function"].split("from_generator_")[-1].rsplit("_", 1)[0]] = b
    want = {"generator_next_fn": extra["next_calls"], "get_iterator_id_fn": extra["iterator_inits"],
            "finalize_fn": extra["iterator_inits"]}
    for name, n in want.items():
        b = runs.get(name)
        if not check(b, "black box of %s (got %s)" % (name, sorted(runs))):
            continue
        check(b["execs"] == n, "%s ran %d times, the program counted %d" % (name, b["execs"], n))
        check(here(b["location"], "generator_dataset") and b["location"]["line"] in marks["generator"],
              "%s named at the from_generator line %s (got %s)" % (name, marks["generator"], b["location"]))
        check(b["made_by"] and b["made_by"].startswith("from_generator"), "%s made by from_generator" % name)
    for f in report["functions"]:
        if f["made_by"]:
            check(f["made_by"] == "tf.data from_generator", "TensorFlow's wrapped_fn shown as %r" % f["made_by"])
    # TensorFlow builds from_generator as from_tensors(...).flat_map(...): the pipeline shows only what the user wrote
    for r in report["input"]:
        check(r["pipeline"] and r["pipeline"].startswith("from_generator") and "from_tensors" not in r["pipeline"],
              "the pipeline starts at from_generator (%r)" % r["pipeline"])
    # one finding for the generator: from_generator's once-per-pass bookkeeping is no finding of its own
    py = [f for f in report["findings"] if f["rule"] == "py-function"]
    check([f["function"] for f in py] == ["generator_next_fn"], "one py-function finding, the generator's (got %s)"
          % [f["function"] for f in py])
    check(py and "from_tensor_slices" in (py[0]["no_edit"] or ""), "it says to build the dataset from tensors (%r)"
          % (py and py[0].get("no_edit")))


def input_bound(report, oracle, marks, parallel):
    extra = oracle["extra"]
    rows = report["input"]
    if not check(len(rows) == 1, "one thread waits for input (%d)" % len(rows)):
        return
    r = rows[0]
    check(r["thread"] == "main", "the main thread waits (%r)" % r["thread"])
    check(r["waits"] == extra["steps"] + 1, "iterator reads %s == steps + 1 (%d)" % (r["waits"], extra["steps"] + 1))
    # agprof times IteratorGetNext itself, plus the Python time since the
    # thread's previous dispatch (under 1 ms, as for every eager op); the
    # program times next() around it.
    gap = 1000000
    check(0.7 * extra["input_wait_ns"] <= r["wait_ns"] <= extra["input_wait_ns"] + r["waits"] * gap,
          "waits %.4f s within [0.7, 1] x the program's %.4f s (+1 ms per read)" % (
              r["wait_ns"] / 1e9, extra["input_wait_ns"] / 1e9))
    check(r["loop_ns"] <= extra["loop_ns"] + gap, "loop %.4f s <= the program's %.4f s (+1 ms)" % (
        r["loop_ns"] / 1e9, extra["loop_ns"] / 1e9))
    check(here(r["location"], "input_bound"), "the loop's line is in the sample (%s)" % r["location"])
    ib = [f for f in report["findings"] if f["rule"] == "input-bound"]
    if parallel:
        check("num_parallel_calls" not in r["advice"] and ".prefetch" not in r["advice"],
              "parallel, prefetched pipeline: advice asks for neither (%s)" % r["advice"])
        check("parallel" in r["pipeline"] and "prefetch" in r["pipeline"], "pipeline shows it: %s" % r["pipeline"])
        return
    if not check(ib, "input-bound fires (findings: %s)" % [f["rule"] for f in report["findings"]]):
        return
    f = ib[0]
    # Overlap hides a wait only while the loop computes: the saving is the
    # waits, at most the loop's time not waiting (the program's own clocks
    # bound both); findings rank by saving.
    want = min(r["wait_ns"], r["loop_ns"] - r["wait_ns"])
    check(abs(f["saving_ns"] - want) <= 1000000, "input-bound saving %.4f s = min(waits, loop - waits) %.4f s" % (
        f["saving_ns"] / 1e9, want / 1e9))
    own = min(extra["input_wait_ns"], extra["loop_ns"] - extra["input_wait_ns"])
    check(f["saving_ns"] <= own + r["waits"] * gap, "input-bound saving %.4f s <= the program's own bound %.4f s" % (
        f["saving_ns"] / 1e9, own / 1e9))
    savings = [x["saving_ns"] for x in report["findings"]]
    check(savings == sorted(savings, reverse=True), "findings ranked by saving (%s)" % savings)
    check(f["severity"] in ("warning", "error"), "input-bound is a warning or an error")
    check(here(f["location"], "input_bound") and f["location"]["line"] in marks["slow-map"],
          "input-bound points at the sequential map %s (got %s)" % (marks["slow-map"], f["location"]))
    check(here(r["dataset_location"], "input_bound") and r["dataset_location"]["line"] in marks["slow-map"],
          "dataset line is the map's (%s)" % r["dataset_location"])
    check("num_parallel_calls=tf.data.AUTOTUNE" in f["recommendation"] and "map(heavy)" in f["recommendation"],
          "recommends num_parallel_calls for map(heavy): %s" % f["recommendation"])
    # TensorFlow 2.21 prefetches at the end of the pipeline itself (inject_prefetch): one more does nothing
    check(".prefetch(" not in f["recommendation"], "no prefetch where TensorFlow injects one: %s" % f["recommendation"])
    check(f["thread"] == "main", "input-bound on the main thread (%r)" % f["thread"])
    check(r["verdict"] == "highly input-bound" and "highly input-bound" in f["message"],
          "20%% or more waiting is what TensorFlow's analyzer calls highly input-bound (%.2f: %r)" % (
              r["wait_share"], r["verdict"]))


def as_schema_7(rec):
    """A copy of recording rec without dataset_ops, as agprof before schema 8 wrote it."""
    import shutil
    import sqlite3
    old = rec + ".v7.agprof"
    shutil.copyfile(rec, old)
    db = sqlite3.connect(old)
    db.execute("DROP TABLE dataset_ops")
    db.execute("PRAGMA user_version = 7")
    db.commit()
    db.close()
    return old


def two_pipelines_v7(rec, oracle, marks):
    """Schema 7 has no handles: one input row per thread, as before, and the generators' runs still apart."""
    report = agcheck.report_json(as_schema_7(rec))
    rows = report["input"]
    check(len(rows) == 1 and rows[0]["thread"] == "main", "schema 7: one input row, the main thread's (%s)" % rows)
    nexts = {b["location"]["line"]: b["execs"] for b in report["blackboxes"]
             if b["execs"] and b["location"] and (b["graph_function"] or "").find("generator_next_fn") >= 0}
    check(nexts.get(marks["slow"][0]) == oracle["extra"]["counts"]["slow"] + 1,
          "schema 7: slow generator's next() runs at line %d: %s" % (marks["slow"][0], nexts))


def two_pipelines(report, oracle, marks, args):
    """The slow pipeline, not the quick one read first: its line, its stage and time per element."""
    extra = oracle["extra"]
    slow_line = marks["map"][0] if "--map" in args else marks["slow"][0]
    rows = [r for r in report["input"] if r["location"] and r["location"]["line"] in marks["loop"]]
    if not check(len(rows) == 1, "one input row for the loop at line %s (got %s)" % (
            marks["loop"], [(r["location"], r["pipeline"]) for r in report["input"]])):
        return
    r = rows[0]
    check(r["waits"] == extra["counts"]["slow"] + 1,
          "the loop's reads (%d) are the slow pipeline's elements + 1 (%d)" % (r["waits"], extra["counts"]["slow"] + 1))
    check("line %d" % marks["quick"][0] not in r["pipeline"], "the quick pipeline is not the loop's: %s" % r["pipeline"])
    check(here(r["dataset_location"], "two_pipelines") and r["dataset_location"]["line"] == slow_line,
          "the stage to fix is at line %d (got %s)" % (slow_line, r["dataset_location"]))
    check(r["slow_line"] == slow_line and r["slow_stage"] == ("map" if "--map" in args else "from_generator"),
          "slow stage %s at line %s" % (r["slow_stage"], r["slow_line"]))
    per = r["slow_ns_per_element"] / 1e9
    check(0.9 * 0.02 <= per <= 2 * 0.02, "time per element %.4f s close to the program's sleep 0.02 s" % per)
    f = [f for f in report["findings"] if f["rule"] == "input-bound"]
    if check(len(f) == 1, "one input-bound finding (got %d)" % len(f)):
        f = f[0]
        check(f["location"]["line"] == slow_line, "input-bound at line %d (got %s)" % (slow_line, f["location"]))
        check("per element" in f["recommendation"] and "line %d" % slow_line in f["recommendation"],
              "names the slow stage and its time per element: %s" % f["recommendation"])
        check(".prefetch(" not in f["recommendation"], "no prefetch advised: %s" % f["recommendation"])
        edit = (f.get("fix") or {}).get("after") or ""
        check("prefetch" not in edit and "num_parallel_calls" not in edit,
              "no prefetch or parallel-call edit (TensorFlow prefetches already; a generator and a py_function "
              "run serially): %r" % edit)
    # the generators' runs at their own lines
    nexts = {b["location"]["line"]: b["execs"] for b in report["blackboxes"]
             if b["execs"] and b["location"] and (b["graph_function"] or "").find("generator_next_fn") >= 0}
    check(nexts.get(marks["slow"][0]) == extra["counts"]["slow"] + 1,
          "slow generator's next() runs at line %d: %s, the program counted %d + the end" % (
              marks["slow"][0], nexts, extra["counts"]["slow"]))
    check(nexts.get(marks["quick"][0], 0) <= extra["counts"]["quick"] + 1,
          "quick generator's next() runs at line %d: %s" % (marks["quick"][0], nexts))
    py = [f for f in report["findings"] if f["rule"] == "py-function" and f["location"]
          and f["location"]["line"] == marks["quick"][0]]
    check(all(f["execs"] <= extra["counts"]["quick"] + 1 for f in py if "execs" in f),
          "no slow runs charged to the quick line")


def main():
    sample, args = sys.argv[1], sys.argv[2:]
    rec, oracle = record(sample, args)
    report = agcheck.report_json(rec)
    marks = agcheck.markers(sample)
    common(report, sample)
    if sample == "pyfunc_pipeline":
        pyfunc_pipeline(report, oracle, marks)
    elif sample == "generator_dataset":
        generator_dataset(report, oracle, marks)
    elif sample == "input_bound":
        input_bound(report, oracle, marks, "--parallel" in args)
    elif sample == "two_pipelines":
        two_pipelines(report, oracle, marks, args)
        if not args:
            two_pipelines_v7(rec, oracle, marks)
    agcheck.finish("input-" + sample + "".join(args))


if __name__ == "__main__":
    main()
