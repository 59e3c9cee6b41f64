"""agprof.record() inside a running program (issue 12): the same bar as `agprof run`.

For each sample: TensorFlow is imported first, then the sample runs inside
`with agprof.record(...)`.  The recording's trace and call counts per
function must equal TensorFlow's own experimental_get_tracing_count() and the
sample's own call counter (samples/oracle.py), and its findings (rule,
function, cause, line) must be those of `agprof run` on the same sample.
Then the late cases: a function traced before start() (only the traces
inside the block are recorded; its calls stay graph calls), and TensorFlow
imported only after start() (hooked when it loads).
"""
import json
import re
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
import agtest  # noqa: E402

SAMPLES = ["retrace_shape", "py_function_step", "variable_creation"]
# rules on a share of time, which two runs of one program may put on either side of the threshold
# (slow-op and graph-dispatch-bound: shares of a function's kernel time, timed in the sampled calls only)
SHARE_RULES = ("tracing-overhead", "input-bound", "eager-hotspot", "launch-bound", "gpu-idle", "slow-op",
               "graph-dispatch-bound")

WRAPPER = """
import os, runpy, sys
import tensorflow as tf
import agprof
sys.path.insert(0, {samples!r})
sys.argv = [{sample!r}]
with agprof.record({out!r}, quiet=True):
    runpy.run_path({sample!r}, run_name="__main__")
"""


def run(cmd, env=None):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                          cwd=agtest.SAMPLES)


def report(path):
    r = run([agtest.AGPROF, "report", "--format", "json", path])
    agtest.check(r.returncode == 0, "agprof report %s: %s" % (path, r.stderr))
    return json.loads(r.stdout) if r.returncode == 0 else {"findings": [], "functions": []}


def findings(rep):
    return sorted((f["rule"], f.get("function"), f.get("cause"), (f.get("location") or {}).get("line"))
                  for f in rep["findings"])


def compare_sample(tmp, name):
    sample = os.path.join(agtest.SAMPLES, name + ".py")
    launched, inside, oracle = (os.path.join(tmp, name + s) for s in (".run.agprof", ".in.agprof", ".json"))
    r = run([agtest.AGPROF, "run", "-q", "-o", launched, "--", agtest.PYTHON, sample])
    agtest.check(r.returncode == 0, "%s under agprof run: %s" % (name, r.stderr[-1500:]))
    env = dict(os.environ, AGPROF_ORACLE=oracle)
    r = run([agtest.PYTHON, "-c", WRAPPER.format(samples=agtest.SAMPLES, sample=sample, out=inside)], env=env)
    if not agtest.check(r.returncode == 0, "%s inside agprof.record(): %s" % (name, r.stderr[-1500:])):
        return
    with open(oracle) as f:
        truth = json.load(f)["functions"]
    rep = report(inside)
    got = {fn["name"]: fn for fn in rep["functions"]}
    for fname, t in truth.items():
        fn = got.get(fname, {})
        agtest.check_eq(fn.get("traces"), t["tracing_count"], "%s: traces of %s (TensorFlow's count)" % (name, fname))
        agtest.check_eq(fn.get("calls"), t["calls"], "%s: calls of %s (the sample's counter)" % (name, fname))
    # The rules that weigh a share of the run are left out: their run is the
    # block here, without the interpreter's start and TensorFlow's import that
    # dilute them under `agprof run`, and on a busy machine they come and go
    # with timing either way.  Every other finding must be the same.
    inside_f, launched_f = findings(rep), findings(report(launched))
    agtest.check_eq([f for f in inside_f if f[0] not in SHARE_RULES],
                    [f for f in launched_f if f[0] not in SHARE_RULES],
                    "%s: findings inside agprof.record() = agprof run (but share-of-the-run rules)" % name)


BEFORE = """
import tensorflow as tf, agprof
@tf.function
def f(x):
    return x * 2
f(tf.zeros([1])); f(tf.zeros([2]))          # traced before start()
before = f.experimental_get_tracing_count()
with agprof.record({out!r}, quiet=True):
    for n in (1, 2, 3, 4, 2):
        f(tf.zeros([n]))
print(before, f.experimental_get_tracing_count())
"""

LATE = """
import agprof
agprof.start({out!r}, quiet=True)
import tensorflow as tf                      # imported after start(): hooked as it loads
@tf.function
def g(x):
    return x + 1
for n in (1, 2, 3):
    g(tf.zeros([n]))
agprof.stop()
print(g.experimental_get_tracing_count())
"""


def late_cases(tmp):
    out = os.path.join(tmp, "before.agprof")
    r = run([agtest.PYTHON, "-c", BEFORE.format(out=out)])
    if agtest.check(r.returncode == 0, "traced before start(): " + r.stderr[-1500:]):
        before, after = map(int, r.stdout.split()[-2:])
        rep = report(out)
        fn = {x["name"]: x for x in rep["functions"]}.get("f", {})
        agtest.check_eq(fn.get("traces"), after - before, "traces recorded = traces inside the block")
        # calls of the traces made inside the block belong to f; calls of the
        # traces made before start() are graph calls of `loaded` functions
        agtest.check_eq(fn.get("calls"), 2, "calls of f's traces made inside the block ([3], [4])")
        agtest.check_eq(rep["session"]["function_calls"], 5, "graph calls inside the block, old traces too")
        r = run(["sqlite3", out, "SELECT value FROM meta WHERE key = 'attached'"])
        agtest.check(re.search(r"[1-9]\d* functions? traced before start\(\) appears? as loaded", r.stdout) is not None,
                     "meta.attached says what came before", r.stdout)
    out = os.path.join(tmp, "late.agprof")
    r = run([agtest.PYTHON, "-c", LATE.format(out=out)])
    if agtest.check(r.returncode == 0, "TensorFlow imported after start(): " + r.stderr[-1500:]):
        fn = {x["name"]: x for x in report(out)["functions"]}.get("g", {})
        agtest.check_eq(fn.get("traces"), int(r.stdout.split()[-1]), "traces of g, TensorFlow imported after start()")
        agtest.check_eq(fn.get("calls"), 3, "calls of g, TensorFlow imported after start()")


def main():
    tmp = agtest.agtestlib.tmpdir("agprof-inproc-")
    for name in SAMPLES:
        compare_sample(tmp, name)
    late_cases(tmp)


if __name__ == "__main__":
    agtest.need_agprof()
    main()
    agtest.finish("python-inprocess")
