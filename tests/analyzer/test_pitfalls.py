"""The AutoGraph pitfalls (issue 17) on real TensorFlow runs: each sample's
planted pitfall is found by the right rule, in the right function, at the
right line; the fixed twin in the same sample gets no warning; the counts
agree with TensorFlow's own (experimental_get_tracing_count(), the
FunctionDef's node count) and with the sample's own counters.

usage: test_pitfalls.py SAMPLE   (the name in samples/, without .py)
"""
import json
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agcheck  # noqa: E402
from agcheck import check  # noqa: E402

PITFALL_RULES = {"trace-side-effect", "trace-print", "unrolled-loop", "autograph-fallback", "trace-error",
                 "serving-signature", "graph-memory"}

# sample -> [(rule, function, marker, severities)]
EXPECTED = {
    "list_append": [("trace-side-effect", "squares_buggy", "python-side-effect", {"warning"})],
    "trace_side_effects": [
        ("trace-side-effect", "noisy_step", "print-side-effect", {"warning"}),
        ("trace-side-effect", "noisy_step", "global-side-effect", {"warning"}),
        ("trace-side-effect", "noisy_step", "random-side-effect", {"warning"}),
        ("trace-print", "debug_once", "debug-print", {"info"}),
    ],
    "tensor_if": [("trace-error", "relu_buggy", "tensor-if", {"warning", "error"}),
                  ("trace-error", "count_buggy", "tensor-dict", {"warning", "error"})],
    "autograph_fallback": [("autograph-fallback", "model", "autograph-fallback", {"warning"})],
    "unrolled_loop": [("unrolled-loop", "collatz_unrolled", "unrolled-loop", {"warning", "error"}),
                      ("unrolled-loop", "cell_unrolled", "unrolled-loop", {"warning", "error"})],
    "serving_nosig": [("serving-signature", "predict", "serving-signature", {"warning"}),
                      ("serving-signature", "fast", "serving-signature", {"warning"})],
}

# sample -> functions written the right way: no pitfall finding above info
# (quiet_step uses tf.print: no finding at all).
FIXED = {
    "list_append": {"squares_fixed", "parts_step"},
    "trace_side_effects": {"quiet_step", "debug_once"},
    "tensor_if": {"relu_fixed", "count_fixed"},
    "autograph_fallback": {"model_fixed"},
    "unrolled_loop": {"collatz_loop", "three_layers"},
    "serving_nosig": {"serve"},
}
SILENT = {"trace_side_effects": {"quiet_step"}}


def record(sample):
    d = agcheck.agtestlib.tmpdir("agprof-pit-")
    out = os.path.join(d, sample + ".agprof")
    oracle_path = os.path.join(d, "oracle.json")
    # the run of test_sample.py's, shared within one ./run-tests
    p, _ = agcheck.agtestlib.oracle_sample_run(sample + ".py", out, oracle_path, timeout=300)
    if p.returncode != 0 or not os.path.exists(out):
        sys.stdout.write(p.stderr.decode("utf-8", "replace")[-3000:])
        agcheck.die("agprof run on %s.py exited %d" % (sample, p.returncode))
    # a shared run is this Python's (the pythons suite records the same samples on other interpreters)
    db = sqlite3.connect("file:%s?mode=ro" % out, uri=True)
    argv = db.execute("SELECT value FROM meta WHERE key = 'argv'").fetchone()
    db.close()
    check(argv and json.loads(argv[0]) == [sys.executable, os.path.join(agcheck.SAMPLES, sample + ".py")],
          "%s: meta argv is this Python's run of the sample" % sample, argv and argv[0])
    with open(oracle_path) as fh:
        return out, json.load(fh)


def events(rec, kind, function):
    db = sqlite3.connect(rec)
    try:
        return db.execute("SELECT pid, trace_seq, trace_id, name, file, line, count, repeats, loop_line, detail"
                          " FROM trace_events WHERE kind = ? AND function = ?", (kind, function)).fetchall()
    finally:
        db.close()


def check_findings(sample, report):
    marks = agcheck.markers(sample)
    findings = report["findings"]
    for rule, function, marker, severities in EXPECTED.get(sample, []):
        hits = [f for f in findings if f["rule"] == rule and f["function"] == function]
        lines = marks.get(marker, [])
        check(lines, "%s: the sample has a '# agprof: %s' marker" % (sample, marker))
        good = [f for f in hits if f["location"] and f["location"]["line"] in lines and
                os.path.realpath(f["location"]["file"]) ==
                os.path.realpath(os.path.join(agcheck.SAMPLES, sample + ".py"))]
        if check(good, "%s: %s on %s at the line of marker %s %s (found: %s)" % (
                sample, rule, function, marker, lines,
                [(f["rule"], f["function"], f["location"]) for f in findings])):
            f = good[0]
            check(f["severity"] in severities, "%s: %s is %s, expected %s" % (sample, rule, f["severity"], severities))
            check(f["recommendation"], "%s: %s has a recommendation" % (sample, rule))
    for function in FIXED.get(sample, ()):
        bad = [(f["rule"], f["severity"], f["message"]) for f in findings
               if f["function"] == function and f["rule"] in PITFALL_RULES and f["severity"] != "info"]
        check(not bad, "%s: %s is written right but got %s" % (sample, function, bad))
    for function in SILENT.get(sample, ()):
        bad = [(f["rule"], f["message"]) for f in findings if f["function"] == function and f["rule"] in PITFALL_RULES]
        check(not bad, "%s: %s (tf.print) got %s" % (sample, function, bad))


def check_counts(sample, rec, oracle, report):
    fns = oracle["functions"]
    by_rule = {}
    for f in report["findings"]:
        by_rule.setdefault((f["rule"], f["function"]), []).append(f)
    if sample == "trace_side_effects":
        traces = fns["noisy_step"]["tracing_count"]
        calls = fns["noisy_step"]["calls"]
        check(traces == 2 and calls == 6, "noisy_step: traced %d times, called %d" % (traces, calls))
        for kind in ("print", "global-store", "random"):
            runs = {(r[0], r[1]) for r in events(rec, kind, "noisy_step")}
            check(len(runs) == traces, "noisy_step %s ran in %d traces, TensorFlow traced %d" % (kind, len(runs), traces))
        check(oracle["extra"]["calls_seen"] == traces, "the sample's global counter counts traces")
        for f in by_rule.get(("trace-side-effect", "noisy_step"), []):
            check("ran %d times" % traces in f["message"] and "for %d calls" % calls in f["message"],
                  "noisy_step: runs and calls in %r" % f["message"])
        check(not events(rec, "print", "quiet_step"), "tf.print is no print event")
    elif sample == "list_append":
        runs = {(r[0], r[1]) for r in events(rec, "list-append", "squares_buggy")}
        check(len(runs) == fns["squares_buggy"]["tracing_count"], "squares_buggy appended in every trace")
    elif sample == "tensor_if":
        total = 0
        for name in ("relu_buggy", "count_buggy"):
            rows = events(rec, "exception", name)
            total += len(rows)
            calls = fns[name]["calls"]
            check(len(rows) == calls, "%s: %d failed traces recorded, %d calls raised" % (name, len(rows), calls))
        check(total == oracle["extra"]["failures"], "failures: %d recorded, %d caught" % (total, oracle["extra"]["failures"]))
        exc = {r[3] for r in events(rec, "exception", "relu_buggy")}
        check(exc == {"OperatorNotAllowedInGraphError"}, "relu_buggy raised %s" % exc)
        exc = {r[3] for r in events(rec, "exception", "count_buggy")}
        check(exc == {"TypeError"}, "count_buggy raised %s" % exc)
    elif sample == "unrolled_loop":
        db = sqlite3.connect(rec)
        try:
            for name in ("collatz_unrolled", "collatz_loop", "three_layers"):
                tf_nodes = oracle["extra"][name + "_nodes"]
                rows = db.execute("SELECT g.node_count FROM graph_functions g JOIN traces t ON t.id = g.trace_id"
                                  " JOIN functions f ON f.id = t.function_id JOIN strings s ON s.id = f.name_id"
                                  " WHERE s.text = ? AND g.role = 'inference'", (name,)).fetchall()
                check([r[0] for r in rows] == [tf_nodes],
                      "%s: recorded FunctionDef nodes %s, TensorFlow's %d" % (name, rows, tf_nodes))
                nodes = [r[6] for r in events(rec, "nodes", name)]
                # Captured tensors (three_layers' 3 weights) are nodes of the
                # FuncGraph but arguments of the FunctionDef.
                captures = 3 if name == "three_layers" else 0
                check(len(nodes) == 1 and tf_nodes <= nodes[0] <= tf_nodes + captures,
                      "%s: graph nodes at trace time %s, FunctionDef %d" % (name, nodes, tf_nodes))
            top = max(events(rec, "node-line", "collatz_unrolled"), key=lambda r: r[6])
            check(top[7] == 100, "collatz_unrolled: the loop body repeated %d times, the sample loops 100" % top[7])
            check(top[8] in agcheck.markers(sample)["unrolled-loop"], "collatz_unrolled: loop line %d" % top[8])
        finally:
            db.close()
    mem = {g["function"]: g for g in report.get("graph_memory", [])}
    for name, o in fns.items():
        if name in mem and o.get("tracing_count"):
            check(mem[name]["traces"] >= o["tracing_count"],
                  "graph_memory: %s keeps %d traces, TensorFlow traced %d" % (name, mem[name]["traces"], o["tracing_count"]))


def main():
    sample = sys.argv[1]
    rec, oracle = record(sample)
    report = agcheck.report_json(rec)
    check("graph_memory" in report, "the report has graph_memory")
    check_findings(sample, report)
    check_counts(sample, rec, oracle, report)
    agcheck.finish("pitfalls " + sample)


if __name__ == "__main__":
    main()
