"""Each rule fires on the sample made for it, with the right function, cause
and source line; no warning on the well-written samples; each retrace cause
is explained on the real workload that produces it.

usage: test_samples.py SAMPLE   (the name in samples/, without .py)
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agcheck  # noqa: E402
from agcheck import check  # noqa: E402

# sample -> findings that must be there: (rule, function, cause, marker).
# cause None: the finding has no retrace cause.  function None: any.
EXPECTED = {
    "retrace_shape": [("retracing", "predict", "shape", "shape")],
    "retrace_scalar": [("retracing", "sgd_step", "python-value", "python-value")],
    "retrace_dtype": [("retracing", "normalize", "dtype", "dtype")],
    "retrace_object": [("retracing", "preprocess", "python-object", "python-object")],
    "retrace_structure": [("retracing", "combine", "input-structure", "input-structure")],
    "new_function_object": [("retracing", "scale_and_sum", "new-function-object", "new-function-object")],
    "jit_shapes": [("xla-recompile", "dense_gelu", "shape", "jit-shapes"),
                   ("retracing", "dense_gelu", "shape", "jit-shapes"),
                   ("retracing", "mean_embedding", "shape", "jit-padded")],
    "py_function_step": [("py-function", "train_step", None, "blackbox"),
                         ("py-function", "augment", None, "blackbox")],
    "variable_creation": [("variable-creation", "__call__", "new-function-object", "variable-creation")],
    "eager_heavy": [("eager-hotspot", None, None, "eager-hot-loop")],
}

# sample -> rules whose planted finding costs too little to be a warning (docs/rules.md,
# "Severity"): py_function_step's black boxes take ~20 ms and ~2 ms, under 100 ms and 2%
# of the run, so they are info; a costly one stays a warning (tests/integration/test_library_arg.py).
NEGLIGIBLE = {
    "py_function_step": ["py-function"],
}

# sample -> (rule, words in its no_edit): findings with no safe edit say why in words.
# eager_heavy: step(x, y) gets tensors made elsewhere (a Python number could come in);
# jit_shapes: XLA compiles per shape whatever the signature.
NO_EDIT = {
    "eager_heavy": [("eager-hotspot", "once you know that its arguments are tensors")],
    "jit_shapes": [("xla-recompile", "once per concrete input shape")],
    "py_function_step": [("py-function", "rewrite it with TensorFlow ops")],
    "variable_creation": [("variable-creation", "outside the loop")],
}
# sample -> (rule, function, words in its recommendation; {MARKER} the marker's line): advice that fits the code.
# jit_shapes: XLA compiles per shape, so a jit function's shape retrace is told fixed shapes first, and the
# padded_batch feeding the loop is named where the recorded pipeline has one (the other function has none).
RECOMMENDS = {
    # the busiest line is in step(), not in a loop of its own, and step runs 4 ops a call, fewer than a tf.function
    # call costs: the loop calling it is the unit (decorated alone, step ran 4x slower), its lines without the blank
    # ones after it
    "eager_heavy": [("eager-hotspot", "step", "Put the loop calling step (lines {step-def}-{step-end}) in a"
                     " tf.function, not step alone")],
    "jit_shapes": [("retracing", "mean_embedding", "jit_shapes.py:{padded-batch} pads each batch"),
                   ("retracing", "mean_embedding", "removes the retraces but not the compilations"),
                   ("xla-recompile", "mean_embedding", "jit_shapes.py:{padded-batch} pads each batch"),
                   ("retracing", "dense_gelu", "removes the retraces but not the compilations")],
}
# Samples written well: no warning, no error (info findings are allowed).
# tf1_session: a graph-mode Session loop is analyzed, not flagged.
CLEAN = {"clean", "mlp_train", "serving_module", "keras_fit", "tf1_session"}

# sample -> the retrace explanation its function must show: (function, cause, argument, before, after);
# None means "must be absent" for argument, "any non-empty" for before/after.
EXPLAINED = {
    "retrace_shape": ("predict", "shape", "x", "[32,10]", "[4,10]"),
    "retrace_scalar": ("sgd_step", "python-value", "lr", "0.1", None),
    "retrace_dtype": ("normalize", "dtype", "x", "float32", "float64"),
    "retrace_object": ("preprocess", "python-object", "cfg", None, None),
    "retrace_structure": ("combine", "input-structure", None, None, None),
    "new_function_object": ("scale_and_sum", "new-function-object", None, None, None),
}


def same_file(path, sample):
    return path is not None and os.path.realpath(path) == os.path.realpath(
        os.path.join(agcheck.SAMPLES, sample + ".py"))


def call_sites(report, function):
    """Recorded user call sites of a function (first trace and retraces)."""
    sites = set()
    for f in report["functions"]:
        if f["name"] != function:
            continue
        for loc in [f.get("first_location")] + [r["location"] for r in f["retraces"]]:
            if loc:
                sites.add((os.path.realpath(loc["file"]), loc["line"]))
    return sites


def good_line(sample, report, finding, marker_line):
    """The finding points at the marked line, or where the marked code lives:
    the def of the function holding the marker, or the recorded call that
    traced that function (a py_function node or a variable created inside a
    function has no line of its own in the recording), or for a tf.function
    object built in a loop, the call of that object right below."""
    loc = finding["location"]
    if not loc or not same_file(loc["file"], sample):
        return False
    line = loc["line"]
    if line == marker_line:
        return True
    if line in agcheck.enclosing_defs(sample, marker_line):
        return True
    if finding["function"] and (os.path.realpath(loc["file"]), line) in call_sites(report, finding["function"]):
        return True
    if finding.get("cause") == "new-function-object" and 0 < line - marker_line <= 3:
        return True
    if finding["function"]:
        # The line that hands the function to tf.data (".map(augment)") or calls it.
        with open(loc["file"]) as fh:
            text = fh.read().splitlines()[line - 1] if line >= 1 else ""
        if re.search(r"\b%s\s*[(),]" % re.escape(finding["function"]), text):
            return True
    return False


def main():
    sample = sys.argv[1]
    rec = agcheck.record(sample)
    report = agcheck.report_json(rec)
    marks = agcheck.markers(sample)
    findings = report["findings"]

    for f in findings:
        check(f["severity"] in ("info", "warning", "error"), "severity %r" % f["severity"])
        check(f["cause"] in (None, "shape", "dtype", "python-value", "python-object", "new-function-object",
                             "input-structure", "unknown"), "cause %r" % f["cause"])
        check(isinstance(f["message"], str) and f["message"], "finding %s has a message" % f["rule"])
        check(isinstance(f["recommendation"], str) and f["recommendation"],
              "finding %s has a recommendation" % f["rule"])

    for rule, function, cause, marker in EXPECTED.get(sample, []):
        hits = [f for f in findings if f["rule"] == rule and (function is None or f["function"] == function)]
        if not check(hits, "%s: rule %s fires on %s (findings: %s)" % (
                sample, rule, function or "the run",
                [(f["rule"], f["function"]) for f in findings])):
            continue
        f = hits[0]
        if rule in NEGLIGIBLE.get(sample, []):
            # negligible as measured (under 100 ms and 2% of the active time, the rule's bounds): info; a loaded
            # machine can stretch the Python of a black box past them (72 ms, 2.4%, under the sanitizers beside
            # other tests), and then the rule rightly keeps it a warning
            cost, active = f.get("cost_ns") or 0, report["session"].get("active_ns") or 1
            small = cost < 100e6 and cost < 0.02 * active
            check(f["severity"] == ("info" if small else "warning"), "%s: %s costs %s ns of %s: %s" % (
                sample, rule, cost, active, "negligible: info" if small else "past the bounds: warning"))
        else:
            check(f["severity"] in ("warning", "error"), "%s: %s is a warning or an error" % (sample, rule))
        check(f["cause"] == cause, "%s: %s cause is %r, expected %r" % (sample, rule, f["cause"], cause))
        lines = marks.get(marker, [])
        if not check(lines, "%s: the sample has a '# agprof: %s' marker" % (sample, marker)):
            continue
        check(any(good_line(sample, report, f, ml) for ml in lines),
              "%s: %s points at %s, expected the line of marker %s %s" % (
                  sample, rule, f["location"], marker, lines))

    for rule, words in NO_EDIT.get(sample, []):
        hits = [f for f in findings if f["rule"] == rule]
        check(hits and all(f["fix"] is None and words in (f["no_edit"] or "") for f in hits),
              "%s: %s has no edit and says %r" % (sample, rule, words),
              [(f["fix"], f["no_edit"]) for f in hits])

    for rule, function, words in RECOMMENDS.get(sample, []):
        words = re.sub(r"\{([\w-]+)\}", lambda g: str((marks.get(g.group(1)) or [0])[0]), words)
        hits = [f for f in findings if f["rule"] == rule and f["function"] == function]
        check(hits and all(words in f["recommendation"] for f in hits),
              "%s: %s of %s advises %r" % (sample, rule, function, words), [f["recommendation"] for f in hits])

    if sample in CLEAN:
        bad = [(f["rule"], f["function"], f["message"]) for f in findings if f["severity"] != "info"]
        check(not bad, "%s is written well but got warnings: %s" % (sample, bad))

    if sample in EXPLAINED:
        function, cause, argument, before, after = EXPLAINED[sample]
        fns = [f for f in report["functions"] if f["name"] == function]
        if check(fns, "%s: function %s in the report" % (sample, function)):
            fn = fns[0]
            check(fn["traces"] >= 2, "%s: %s traced more than once" % (sample, function))
            check(len(fn["retraces"]) == fn["traces"] - 1, "%s: one explanation per retrace" % sample)
            causes = [r["cause"] for r in fn["retraces"]]
            check(cause in causes, "%s: retrace causes %s include %s" % (sample, causes, cause))
            r = next((r for r in fn["retraces"] if r["cause"] == cause), None)
            if r:
                if argument:
                    check(r["argument"] == argument, "%s: argument %r, expected %r" % (sample, r["argument"], argument))
                if cause != "new-function-object":
                    check(r["before"] and r["after"] and r["before"] != r["after"],
                          "%s: before/after %r -> %r" % (sample, r["before"], r["after"]))
                if before:
                    check(r["before"] == before, "%s: before %r, expected %r" % (sample, r["before"], before))
                if after:
                    check(r["after"] == after, "%s: after %r, expected %r" % (sample, r["after"], after))
                check(r["location"] and same_file(r["location"]["file"], sample),
                      "%s: the retrace names its call site in the sample (%s)" % (sample, r["location"]))
                if cause == "python-value":
                    const = r["constant"]
                    if check(const, "%s: the changed graph constant is shown" % sample):
                        check(float(const["before"]) != float(const["after"]),
                              "%s: constant %s -> %s" % (sample, const["before"], const["after"]))
                        check(abs(float(const["after"]) - float(r["after"])) < 1e-6,
                              "%s: the constant's new value %s is the argument's %s" % (
                                  sample, const["after"], r["after"]))
    agcheck.finish("samples-" + sample)


if __name__ == "__main__":
    main()
