"""End to end: `agprof run` then `agprof report --format json` on the samples.

Each sample marks the line of its planted problem with `# agprof: <cause>`.
The report must name that problem:

- retracing causes (shape, dtype, python-value, python-object,
  input-structure): a `retracing` finding with that cause, located at a
  marked line;
- new-function-object: a `retracing` finding with that cause, in the sample
  (the marker is on the tf.function(...) line, which no recorded event
  carries, so only the file is required);
- jit-shapes: an `xla-recompile` finding at the marked line;
- eager-hot-loop: an `eager-hotspot` finding at the marked line (the busiest
  line of the eager loop);
- blackbox: a `py-function` finding for train_step's EagerPyFunc;
- variable-creation: a `variable-creation` finding for `__call__`;
- python-side-effect (list_append.py) leaves no trace in a recording that a
  rule could see; it is not checked.

The samples planted with nothing (clean.py, the article's recommended
pattern, mlp_train.py, serving_module.py, two_modules.py: two lazily built
instances of one tf.Module class, traced four times by TensorFlow) must
produce no warning or error.

usage: test_report.py [SAMPLE.py ...]   (default: all of the above)
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
import agtestlib  # noqa: E402
from agtest import check  # noqa: E402

RETRACE = {"shape", "dtype", "python-value", "python-object", "input-structure"}
RULE_OF = {"jit-shapes": "xla-recompile", "eager-hot-loop": "eager-hotspot",
           "blackbox": "py-function", "variable-creation": "variable-creation",
           "new-function-object": "retracing"}
PLANTED = ["retrace_scalar.py", "retrace_shape.py", "retrace_dtype.py",
           "retrace_object.py", "retrace_structure.py", "new_function_object.py",
           "jit_shapes.py", "eager_heavy.py", "collatz.py", "tape_forward.py",
           "py_function_step.py", "variable_creation.py"]
NO_WARNING = ["clean.py", "mlp_train.py", "serving_module.py", "two_modules.py"]


def report(sample_name, d):
    out = os.path.join(d, sample_name.replace(".py", ".agprof"))
    rc, _ = agtestlib.shared_sample_run(sample_name, out)
    if not check(rc == 0, "agprof run of %s" % sample_name, rc, 0):
        return None
    r = subprocess.run([agtest.AGPROF, "report", "--format", "json", out],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    err = r.stderr.decode("utf-8", "replace").strip()
    check(r.returncode == 0 and not err, "agprof report --format json on %s" % sample_name,
          "exit %d, stderr %r" % (r.returncode, err[:300]), "exit 0, empty stderr")
    try:
        return json.loads(r.stdout)
    except ValueError as e:
        agtest.fail("report JSON of %s does not parse: %s" % (sample_name, e))
        return None


def show(findings):
    return [(f["rule"], f.get("cause"), f.get("function"),
             "%s:%s" % (os.path.basename((f.get("location") or {}).get("file") or "?"),
                        (f.get("location") or {}).get("line")))
            for f in findings]


def at(f, sample_file, lines=None):
    loc = f.get("location") or {}
    if not agtest.same_file(loc.get("file"), sample_file):
        return False
    return lines is None or loc.get("line") in lines


def check_planted(sample_name, doc):
    sample_file = agtest.sample(sample_name)
    findings = doc.get("findings", [])
    for cause, lines in agtest.marker_lines(sample_name).items():
        if cause in RETRACE:
            ok = [f for f in findings if f["rule"] == "retracing" and f.get("cause") == cause
                  and at(f, sample_file, lines)]
            want = "retracing [%s] at %s:%s" % (cause, sample_name, lines)
        elif cause == "new-function-object":
            ok = [f for f in findings if f["rule"] == "retracing" and f.get("cause") == cause
                  and at(f, sample_file)]
            want = "retracing [%s] in %s" % (cause, sample_name)
        elif cause in ("jit-shapes", "eager-hot-loop"):
            ok = [f for f in findings if f["rule"] == RULE_OF[cause] and at(f, sample_file, lines)]
            want = "%s at %s:%s" % (RULE_OF[cause], sample_name, lines)
        elif cause == "blackbox":
            ok = [f for f in findings if f["rule"] == "py-function"
                  and f.get("function") == "train_step"]
            want = "py-function for train_step"
        elif cause == "variable-creation":
            ok = [f for f in findings if f["rule"] == "variable-creation"
                  and f.get("function") == "__call__"]
            want = "variable-creation for __call__"
        else:
            continue
        check(bool(ok), "%s: finding for the planted %s" % (sample_name, cause),
              show(findings), want)


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()
    names = sys.argv[1:] or PLANTED + NO_WARNING
    for name in names:
        doc = report(name, d)
        if doc is None:
            continue
        if name in NO_WARNING:
            bad = [f for f in doc.get("findings", []) if f.get("severity") in ("warning", "error")]
            check(not bad, "%s: no warning or error" % name, show(bad), [])
        else:
            check_planted(name, doc)
    agtest.finish("report")


if __name__ == "__main__":
    main()
