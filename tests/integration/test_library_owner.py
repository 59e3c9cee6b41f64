"""Library-owned work stated as the user's call (issue 34, sections 3 and 4),
on real Keras and TensorFlow Probability programs.

usage: test_library_owner.py fit|predict|nuts

fit (samples/keras_five_models.py: five models, each fit once):
- no warning-level finding: every trace is Keras' or tf.data's, once per
  model the user made on purpose (before: tracing-overhead "all 9 avoidable
  retraces" and variable-creation "Create the variables once, outside
  one_step_on_data");
- every traced function is library-owned in the JSON (`owner`), with the
  marked fit line as its `owner_call`;
- `agprof check --max-traces 3` passes (--max-traces one_step_on_data=3,
  naming Keras' function, fails); with --include-library it fails, and
  the traces it counts for Keras' step functions equal TensorFlow's own
  tracing counts (experimental_get_tracing_count summed over the models).

predict (samples/keras_predict_loop.py: model.predict on 40 small batches):
- one warning `library-call` at the marked line naming the call as written,
  `model.predict(x[:n], verbose=0)`, with 40 pipelines for 1 model and the
  advice to call the model directly or predict_on_batch; no tracing-overhead
  or retracing finding about wrapped_fn;
- the advice checked on the program: its loop run without agprof as written
  and with each advised fix (PREDICT_MODE=all: predict, the model called,
  predict_on_batch), same output, and the loop at least twice as fast.

nuts (samples/tfp_nuts_once.py: NUTS in a tf.function called once):
- the graph has the shape graph-dispatch-bound looks for (read from the
  graph_functions source through a user rule: >= 500 kernels per call, >=
  500 nodes, >= 35% overhead), so the test would fail if the rule fired as
  before; but the function ran once: jit_pays_back 0, remedy none, and no
  finding recommends jit_compile nor points into site-packages.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402


def record(sample, env_extra=None):
    d = agtest.tmpdir()
    out = os.path.join(d, sample.replace(".py", ".agprof"))
    env = dict(env_extra or {})
    env["AGPROF_ORACLE"] = os.path.join(d, "oracle.json")
    p = agtest.run_agprof(out, [agtest.PYTHON, agtest.sample(sample)], env_extra=env, agprof_args=["-q"])
    check_eq(p.returncode, 0, "agprof run %s" % sample)
    if p.returncode:
        sys.stdout.write(p.stderr.decode("utf-8", "replace")[-3000:])
        agtest.finish("library_owner")
    oracle = None
    if os.path.exists(env["AGPROF_ORACLE"]):
        with open(env["AGPROF_ORACLE"]) as fh:
            oracle = json.load(fh)
    return d, out, oracle


def report_json(rec, *args):
    rc, out, err = agtest.agprof_cmd("report", "--format", "json", *(list(args) + [rec]))
    check_eq(rc, 0, "agprof report --format json (%s)" % err.strip()[-300:])
    return json.loads(out) if rc == 0 else {"findings": [], "functions": []}


def marked(sample, tag):
    return agtest.marker_lines(sample)[tag][0]


def at(loc, sample, line):
    return bool(loc) and os.path.basename(loc["file"]) == sample and loc["line"] == line


def test_fit():
    sample = "keras_five_models.py"
    _, rec, oracle = record(sample)
    line = marked(sample, "five-models")
    doc = report_json(rec)
    warnings = [(f["rule"], f["function"]) for f in doc["findings"] if f["severity"] in ("warning", "error")]
    check_eq(warnings, [], "warning-level findings on five models each fit once")
    for f in doc["functions"]:
        check_eq(f["owner"], "library", "owner of %s" % f["name"])
        check(at(f["owner_call"], sample, line), "owner_call of %s is the fit line" % f["name"],
              f["owner_call"], "%s:%d" % (sample, line))
    rc, out, _ = agtest.agprof_cmd("check", rec, "--max-traces", "3")
    check_eq(rc, 0, "check --max-traces 3 on five models (%s)" % out.strip()[-400:])
    check("library-owned functions not counted" in out, "check says what it left out", out[-400:])
    rc, out, _ = agtest.agprof_cmd("check", rec, "--max-traces", "one_step_on_data=3")
    check_eq(rc, 1, "check --max-traces FUNC=N counts the function it names, a library's too")
    rc, out, _ = agtest.agprof_cmd("check", rec, "--max-traces", "3", "--include-library")
    check_eq(rc, 1, "check --max-traces 3 --include-library counts Keras' and tf.data's traces")
    traced = {f["name"]: f["traces"] for f in doc["functions"]}
    for name in ("multi_step_on_iterator", "one_step_on_data"):
        tf_count = oracle["functions"][name]["tracing_count"]
        check_eq(traced.get(name), tf_count, "%s traces against TensorFlow's count (5 models)" % name)
        check(("%s traced %d times" % (name, tf_count)) in out,
              "--include-library names %s with TensorFlow's count %d" % (name, tf_count), out[-1500:])


def run_plain(sample):
    """The three loops (predict, and each advised fix) in one process without agprof: {mode: (total, seconds)}."""
    env = dict(os.environ, PREDICT_MODE="all")
    p = subprocess.run([agtest.PYTHON, agtest.sample(sample)], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=240)
    check_eq(p.returncode, 0, "%s with PREDICT_MODE=all" % sample)
    got = {}
    for text in p.stdout.decode().splitlines():
        words = text.split()
        if len(words) >= 3 and words[1] in ("total", "loop"):
            got.setdefault(words[0], {})[words[1]] = words[2]
    return {mode: (v.get("total"), float(v.get("loop", "nan"))) for mode, v in got.items()}


def test_predict():
    sample = "keras_predict_loop.py"
    _, rec, _ = record(sample)
    line = marked(sample, "library-call")
    doc = report_json(rec)
    calls = [f for f in doc["findings"] if f["rule"] == "library-call"]
    check_eq(len(calls), 1, "library-call findings")
    if calls:
        f = calls[0]
        check_eq(f["severity"], "warning", "library-call severity")
        check(at(f["location"], sample, line), "library-call at the predict line", f["location"], line)
        check_eq(f["function"], "model.predict(x[:n], verbose=0)", "the call as written on the line")
        check("built 40 input pipelines for 1 model" in f["message"], "40 calls on one model", f["message"])
        check("model(x, training=False)" in f["recommendation"] and
              "model.predict_on_batch(x)" in f["recommendation"], "advice in predict's terms", f["recommendation"])
        check(f["saving_ns"] > 0, "a saving", f["saving_ns"], "> 0")
    others = [(f["rule"], f["function"]) for f in doc["findings"]
              if f["rule"] in ("tracing-overhead", "retracing", "graph-memory", "variable-creation")]
    check_eq(others, [], "no retrace finding about Keras' or tf.data's functions")
    runs = run_plain(sample)
    base_total, base_loop = runs.get("predict", (None, float("nan")))
    for mode in ("call", "on_batch"):
        total, loop = runs.get(mode, (None, float("nan")))
        check_eq(total, base_total, "output with the advised fix (%s)" % mode)
        print("predict loop %.3f s, with %s %.3f s" % (base_loop, mode, loop))
        check(loop < base_loop / 2, "the advised fix (%s) at least halves the loop" % mode, loop, base_loop)


DEBUG_RULE = """id: probe-dispatch
title: the graph_functions row of do_sampling
severity: info
select: graph_functions
when: function == "do_sampling"
message: kpc={kernels_per_call} nodes={nodes} share={overhead_share} calls={all_calls} pays={jit_pays_back} remedy={remedy}
recommendation: -
"""


def test_nuts():
    sample = "tfp_nuts_once.py"
    d, rec, _ = record(sample)
    rules = os.path.join(d, "rules")
    os.makedirs(rules)
    with open(os.path.join(rules, "probe.rule"), "w") as fh:
        fh.write(DEBUG_RULE)
    doc = report_json(rec, "--rules", rules)
    probe = [f for f in doc["findings"] if f["rule"] == "probe-dispatch"]
    check_eq(len(probe), 1, "do_sampling's graph_functions row (kernels recorded)")
    if probe:
        fields = dict(kv.split("=", 1) for kv in probe[0]["message"].split())
        print("do_sampling:", fields)
        check(float(fields["kpc"]) >= 500 and float(fields["nodes"]) >= 500 and float(fields["share"]) >= 0.35,
              "the graph has graph-dispatch-bound's shape (the rule would fire on it before)", fields)
        check_eq((fields["calls"], fields["pays"], fields["remedy"]), ("1", "0", "none"),
                 "one call: jit_compile cannot pay back, no remedy the user can apply")
    for f in doc["findings"]:
        if f["rule"] == "probe-dispatch":
            continue
        check("jit_compile=True" not in f.get("recommendation", "") or "Not jit_compile" in f["recommendation"],
              "no jit_compile advice for a function called once (%s)" % f["rule"], f.get("recommendation"))
        loc = f.get("location") or {}
        check("site-packages" not in (loc.get("file") or ""), "finding %s at the user's line" % f["rule"], loc)


def main():
    agtest.need_agprof()
    which = sys.argv[1] if len(sys.argv) > 1 else ""
    tests = {"fit": test_fit, "predict": test_predict, "nuts": test_nuts}
    if which not in tests:
        print("usage: test_library_owner.py fit|predict|nuts")
        sys.exit(2)
    tests[which]()
    agtest.finish("library_owner " + which)


if __name__ == "__main__":
    main()
