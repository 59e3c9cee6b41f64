"""Per-finding experiments of `agprof fix --verify` on real TensorFlow (issue 46).

Usage: test_experiments.py jit | eager | tolerance | sidecar | together

- jit: an actor-critic update (@tf.function learn, 2 unrolled sub-steps of
  three small MLPs) recorded over 10,000 calls: graph-dispatch-bound fires with
  the jit remedy, and carries no claimed saving (saving_ns 0, an
  experiment command).  `agprof fix` writes jit_compile=True on its
  decorator.  fix --verify --rule graph-dispatch-bound -- python prog.py
  1000 (a shorter command, as a user bounds an experiment): "refuted" (XLA
  compiles first and the steps are not faster enough on this CPU), exit 1,
  the sidecar holds it, and `agprof report` withdraws the advice and says
  why (text and JSON).  The oracle: the same edit timed without agprof,
  plain runs of the original and of the edited copy (2 each, interleaved,
  1,000 steps):
  the edited copy is not faster by 5% in every pair, as the verdict says.
- eager: an eager Collatz loop (samples/collatz.py's collatz_eager, without
  its timing lines): eager-hotspot claims nothing before an experiment
  (JSON saving_ns 0, forecast_ns positive, the try command; text: a
  "forecast, not claimed" line, no "saves:" line).  fix --verify --rule
  eager-hotspot wraps it in @tf.function: verified (exit 0), and the report
  then claims the measured saving (base_ns - new_ns, "saves:", the verdict
  line, no forecast line).  The same loop counting its calls in a Python
  dict, in a helper it calls (a side effect the edit's checks do not see:
  they read the function's own body; a tf.function runs it once, at
  tracing): refuted, the output differs (exit 1), and the report
  drops the advice, its edit and its forecast; `agprof fix` offers nothing.
  The loop at module level (no function to decorate, no edit written):
  no command to try (JSON `experiment` null: `fix --verify` would have
  nothing to fix), the forecast still shown and not claimed, no try line.
- tolerance: the retracing program of test_diff.py printing a float whose
  last digits change from run to run: without a tolerance the output
  differs (not verified, exit 1), with --rtol 1e-6 it is "identical within
  the tolerance" and the edit verified (exit 0).
- together: the retracing program of test_diff.py with a second function
  retracing on a Python float (evaluate's scale): two edits, each tried
  alone and both together (fix --verify --runs 1).  The verdict on the two
  together is kept in the sidecar ("all": both findings' keys and the
  verdict's members), and the report shows it: JSON `verify_all`, the text's
  "all edits: the 2 edits together (retracing sgd_step, retracing
  evaluate): ..." line with the verdict fix --verify printed on its "[all]"
  line.  A later fix --verify of one of them keeps it.
- sidecar: bad REC.verify.json files (truncated, hostile sizes and depth,
  another version, another recording's, binary): report exits 0, one
  warning line or nothing, never a crash, no verdict applied; a valid one
  for another recording (size differs) is ignored silently.  Its `all` (the
  edits together) malformed (3,000 keys, one key, not an object, a verdict
  out of range) is ignored alone: no verify_all, the findings' verdicts
  applied; a valid one is the report's verify_all.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402
import test_diff  # noqa: E402

ACTOR_CRITIC = '''"""An actor-critic update called every step: XLA compiles first, then is no faster here."""
import sys
import numpy as np
import tensorflow as tf

tf.random.set_seed(0)


def mlp(sizes):
    return [(tf.Variable(tf.random.normal([a, b], stddev=0.1, seed=i)), tf.Variable(tf.zeros([b])))
            for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:]))]


actor = mlp([8] + [8] * 6 + [4])
critic = mlp([12] + [8] * 6 + [1])
tcritic = mlp([12] + [8] * 6 + [1])


def run(layers, x):
    for i, (w, b) in enumerate(layers):
        x = tf.matmul(x, w) + b
        if i < len(layers) - 1:
            x = tf.nn.relu(x)
    return x


@tf.function
def learn(s, a, r, s2):
    for k in range(2):
        with tf.GradientTape(persistent=True) as tape:
            a2 = tf.tanh(run(actor, s2))
            y = r + 0.99 * run(tcritic, tf.concat([s2, a2], 1))
            q = run(critic, tf.concat([s, a], 1))
            closs = tf.reduce_mean(tf.square(q - tf.stop_gradient(y)))
            aloss = -tf.reduce_mean(run(critic, tf.concat([s, tf.tanh(run(actor, s))], 1)))
        cv = [v for l in critic for v in l]
        av = [v for l in actor for v in l]
        for g, v in zip(tape.gradient(closs, cv), cv):
            v.assign_sub(1e-3 * g)
        for g, v in zip(tape.gradient(aloss, av), av):
            v.assign_sub(1e-3 * g)
        for (w, b), (tw, tb) in zip(critic, tcritic):
            tw.assign(0.995 * tw + 0.005 * w)
            tb.assign(0.995 * tb + 0.005 * b)
    return closs, aloss


rng = np.random.default_rng(0)
for step in range(int(sys.argv[1]) if len(sys.argv) > 1 else 2000):
    s = tf.constant(rng.normal(size=(16, 8)).astype(np.float32))
    a = tf.constant(rng.normal(size=(16, 4)).astype(np.float32))
    r = tf.constant(rng.normal(size=(16, 1)).astype(np.float32))
    s2 = tf.constant(rng.normal(size=(16, 8)).astype(np.float32))
    cl, al = learn(s, a, r, s2)
print("closs %.4f aloss %.4f" % (float(cl), float(al)))
'''


EAGER_LOOP = '''"""An eager Collatz loop: one Python dispatch per op, about 45,000 of them."""
import tensorflow as tf

CALLS = {"n": 0}


def collatz_eager(n):
    steps = tf.constant(0)
    while n != 1:
        if n % 2 == 0:
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


total = 0
for start in range(1, 201):
    total += int(collatz_eager(tf.constant(start)))
print("total Collatz steps for 1..200: %d, calls counted %d" % (total, CALLS["n"]))
'''
# a call count a tf.function makes once, at tracing (the output then differs), in a helper that does
# TensorFlow work: the edit's checks read the function's own body (where a store into CALLS is seen and
# refused, issue 45), not the bodies of what it calls
COUNTING = EAGER_LOOP.replace("    steps = tf.constant(0)\n", "    steps = counted(tf.constant(0))\n", 1).replace(
    "def collatz_eager(n):", "def counted(x):\n    CALLS[\"n\"] += 1\n    return tf.identity(x)\n\n\ndef collatz_eager(n):", 1)
# the same loop at module level: no function of its own to decorate, no edit written
MODULE_LOOP = '''"""An eager Collatz loop at module level: nothing agprof fix can decorate."""
import tensorflow as tf

total = 0
for start in range(1, 201):
    n = tf.constant(start)
    while n != 1:
        n = n // 2 if n % 2 == 0 else 3 * n + 1
        total += 1
print("total Collatz steps for 1..200: %d" % total)
'''

RECORDED_STEPS = 10000
# The experiment is what is tested, not the rule's threshold: its overhead share (35%) was crossed by
# 54% of this program once and by 37% or less on a loaded machine (41% at load 8): the rule's
# threshold lowered for this test only, so that the finding is there to be tried.
SETS = ("--set", "graph-dispatch-bound.min_share=20%")
TRIED_STEPS = 1000


def write(d, text):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "prog.py"), "w") as fh:
        fh.write(text)


def record(d, env=None, args=()):
    rec = os.path.join(d, "a.agprof")
    p = subprocess.run([agtest.AGPROF, "run", "-q", "-o", rec, "--", agtest.PYTHON, "prog.py"] + list(args), cwd=d,
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=400)
    check_eq(p.returncode, 0, "the program under agprof (%s)" % p.stderr.decode("utf-8", "replace")[-400:])
    return rec


def fix_verify(env, *args, timeout=590):
    p = subprocess.run([agtest.AGPROF, "fix", "--verify"] + list(args), env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=timeout)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def finding(rec, rule, function=None, sets=()):
    rc, js, err = agtest.agprof_cmd("report", "--format", "json", *sets, rec)
    fs = [f for f in json.loads(js)["findings"] if f["rule"] == rule and function in (None, f["function"])] \
        if rc == 0 else []
    return fs[0] if fs else None


def plain_time(d, args=()):
    t = time.monotonic()
    p = subprocess.run([agtest.PYTHON, "prog.py"] + list(args), cwd=d, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=400)
    check_eq(p.returncode, 0, "a plain run in %s" % d)
    return time.monotonic() - t, p.stdout


def test_jit(tmp):
    d = os.path.join(tmp, "ac")
    write(d, ACTOR_CRITIC)
    env = dict(os.environ, TMPDIR=tmp, NO_COLOR="1")
    # recorded long enough (10,000 steps) that XLA would pay back its set-up by the recording's measure,
    # also on a loaded machine; tried with a shorter command, as a user bounds an experiment
    rec = record(d, env, [str(RECORDED_STEPS)])
    f = finding(rec, "graph-dispatch-bound", sets=SETS)
    check(f is not None, "graph-dispatch-bound on learn")
    if f is None:
        return
    check(f["saving_ns"] == 0 and f["experiment"] and "--rule graph-dispatch-bound" in f["experiment"]
          and "saving about" not in f["recommendation"], "no claimed saving: an experiment with its command", f)
    check(f["fix"] and f["fix"]["after"].strip() == "@tf.function(jit_compile=True)", "the edit: jit_compile=True",
          f["fix"])
    rc, text, err = agtest.agprof_cmd("report", *SETS, rec)
    check(re.search(r"^    try: agprof fix --verify \S+ --rule graph-dispatch-bound --function learn ", text, re.M),
          "report: the command that tries it", text)
    rc, out, err = fix_verify(env, *SETS, rec, "--rule", "graph-dispatch-bound", "--time-limit", "240", "--",
                              agtest.PYTHON, "prog.py", str(TRIED_STEPS))
    check_eq(rc, 1, "fix --verify of jit_compile: exit 1 (%s)" % err[-400:])
    m = re.search(r"^refuted: (slower|no measurable change[^;]*); .*learn's tracing and calls", out, re.M)
    check(m, "refuted on this program", out)
    with open(rec + ".verify.json") as fh:
        side = json.load(fh)
    check(side["agprof_verify"] == 1 and side["findings"][0]["verdict"] == "refuted"
          and side["findings"][0]["rule"] == "graph-dispatch-bound", "the sidecar holds it", side)
    f = finding(rec, "graph-dispatch-bound", sets=SETS)
    check(f and f["verdict"]["verdict"] == "refuted" and f["recommendation"] is None and f["fix"] is None
          and f["experiment"] is None, "report JSON: advice withdrawn, the verdict object", f)
    rc, text, err = agtest.agprof_cmd("report", *SETS, rec)
    check(re.search(r"^    refuted on this program: ", text, re.M) and "jit_compile=True" not in text,
          "report: refuted, no jit advice", text)
    rc, diff, err = agtest.agprof_cmd("fix", *SETS, "--rule", "graph-dispatch-bound", rec)
    check(rc == 1 and diff == "", "agprof fix: the refuted edit is not offered again", (rc, diff))
    # the oracle: the same edit, timed without agprof
    e = os.path.join(tmp, "ac-jit")
    write(e, ACTOR_CRITIC.replace("@tf.function\ndef learn", "@tf.function(jit_compile=True)\ndef learn"))
    times = {"plain": [], "jit": []}
    for _ in range(2):
        for k, where in (("plain", d), ("jit", e)):
            times[k].append(plain_time(where, [str(TRIED_STEPS)])[0])
    print("plain runs (s): as it is %s, with jit_compile=True %s" % (times["plain"], times["jit"]))
    verified = all(j < p * 0.95 for j in times["jit"] for p in times["plain"])
    check(not verified, "a plain timed run agrees: the edited copy is not faster in every pair", times)


def eager_texts(rec):
    """The eager-hotspot finding of rec (JSON) and its block of the text report."""
    f = finding(rec, "eager-hotspot")
    rc, text, err = agtest.agprof_cmd("report", rec)
    block = re.search(r"^ *\d+\. \S+ +eager-hotspot .*?(?=^ *\d+\. |^\S)", text, re.M | re.S)
    return f, block.group(0) if block else text


def test_eager(tmp):
    env = dict(os.environ, TMPDIR=tmp, NO_COLOR="1")
    d = os.path.join(tmp, "eager")
    write(d, EAGER_LOOP)
    rec = record(d, env)
    f, text = eager_texts(rec)
    if not check(f is not None, "eager-hotspot on collatz_eager"):
        return
    # unverified: a forecast, nothing claimed (issue 46: moving work into a graph is an experiment)
    check(f["saving_ns"] == 0 and f["forecast_ns"] and f["forecast_ns"] > 0 and f["verdict"] is None,
          "JSON: no claimed saving, a positive forecast", (f["saving_ns"], f.get("forecast_ns")))
    check(f["experiment"] and "--rule eager-hotspot" in f["experiment"], "JSON: the command that tries it", f)
    check(f["fix"] and f["fix"]["after"].startswith("@tf.function\n"), "the edit: @tf.function", f["fix"])
    check("saves:" not in text and re.search(r"^    forecast, not claimed: about \S+", text, re.M)
          and re.search(r"^    try: agprof fix --verify \S+ --rule eager-hotspot", text, re.M),
          "text: a forecast and the try line, no saves: line", text)
    rc, out, err = fix_verify(env, rec, "--rule", "eager-hotspot", "--time-limit", "240", "--",
                              agtest.PYTHON, "prog.py")
    check(rc == 0 and re.search(r"^verified: .*output identical$", out, re.M), "fix --verify: verified", (rc, out, err))
    g, text = eager_texts(rec)
    v = g and g["verdict"] or {}
    check(v.get("verdict") == "verified" and g["saving_ns"] == v["base_ns"] - v["new_ns"] > 0
          and g["experiment"] is None and g["recommendation"], "JSON: the measured saving claimed", g)
    print("eager-hotspot: forecast %.1f ms, measured %s" % (f["forecast_ns"] / 1e6, v))
    check(re.search(r"^    saves: ~\S+ ?\S*: measured on this program", text, re.M)
          and re.search(r"^    verified on this program: ", text, re.M) and "forecast, not claimed" not in text
          and "try:" not in text, "text: the verified saving, no forecast, no try line", text)
    d2 = os.path.join(tmp, "counting")
    write(d2, COUNTING)
    rec = record(d2, env)
    f = finding(rec, "eager-hotspot")
    check(f and f["fix"] and f["forecast_ns"] and f["saving_ns"] == 0, "the counting loop: a forecast and the edit", f)
    rc, out, err = fix_verify(env, rec, "--rule", "eager-hotspot", "--runs", "1", "--time-limit", "240", "--",
                              agtest.PYTHON, "prog.py")
    check(rc == 1 and re.search(r"^refuted: the output differs", out, re.M), "fix --verify: refuted", (rc, out, err))
    g, text = eager_texts(rec)
    check(g and g["verdict"] and g["verdict"]["verdict"] == "refuted" and g["recommendation"] is None
          and g["fix"] is None and g["experiment"] is None and g["saving_ns"] == 0 and g["forecast_ns"] is None,
          "JSON: the advice, its edit and its forecast dropped", g)
    check(re.search(r"^    refuted on this program: ", text, re.M) and "forecast" not in text and "tf.function" not in
          text and "saves:" not in text, "text: refuted, no advice, no forecast", text)
    rc, diff, err = agtest.agprof_cmd("fix", "--rule", "eager-hotspot", rec)
    check(rc == 1 and diff == "", "agprof fix: the refuted edit is not offered again", (rc, diff))
    d3 = os.path.join(tmp, "module")
    write(d3, MODULE_LOOP)
    rec = record(d3, env)
    f, text = eager_texts(rec)
    check(f and f["fix"] is None and f["no_edit"] and f["experiment"] is None and f["saving_ns"] == 0
          and f["forecast_ns"] and "fix --verify" not in f["saving_method"],
          "no edit: no command to try, the forecast not claimed", f)
    check(f and "try:" not in text and re.search(r"^    forecast, not claimed: about \S+", text, re.M),
          "text: the forecast, no try line", text)


def test_tolerance(tmp):
    d = os.path.join(tmp, "tol")
    noisy = test_diff.PROGRAM.replace('import numpy as np\n', 'import time\nimport numpy as np\n').replace(
        '    print("tracing count sgd_step:", sgd_step.experimental_get_tracing_count())\n'
        '    print("tracing count evaluate:", evaluate.experimental_get_tracing_count())\n',
        '    print("scale %.12f" % (1.0 + (time.time_ns() % 1000) * 1e-10))\n')
    write(d, noisy)
    env = dict(os.environ, TMPDIR=tmp, NO_COLOR="1")
    rec = record(d, env)
    rc, out, err = fix_verify(env, rec, "--runs", "1")
    check(rc == 1 and re.search(r"^refuted: the output differs; .*output differs from line 6: 'scale ", out, re.M),
          "exact numbers: the output differs", (rc, out, err))
    rc, out, err = fix_verify(env, rec, "--runs", "1", "--rtol", "1e-6")
    check(rc == 0 and re.search(r"^verified: .*output identical within the tolerance$", out, re.M),
          "--rtol 1e-6: identical within the tolerance", (rc, out, err))
    rc, out, err = agtest.agprof_cmd("fix", "--verify", "--rtol", "abc", rec)
    check(rc == 2 and len(err.strip().splitlines()) == 1, "a bad --rtol: exit 2, one line", (rc, err))


def test_sidecar(tmp):
    base = os.path.join(agtest.SOURCE_ROOT, "tests", "fuzz", "base.agprof")
    rec = os.path.join(tmp, "r.agprof")
    shutil.copy2(base, rec)
    rc, clean, err = agtest.agprof_cmd("report", "--format", "json", rec)
    check_eq(rc, 0, "report of the plain recording")
    f0 = json.loads(clean)["findings"][0] if rc == 0 and json.loads(clean)["findings"] else None
    st = os.stat(rec)
    good = {"agprof_verify": 1, "recording": {"size": st.st_size, "mtime_s": int(st.st_mtime),
                                              "mtime_nsec": st.st_mtime_ns % 1000000000},
            "runs": 2, "findings": [{"rule": f0["rule"] if f0 else "x", "function": f0["function"] if f0 else None,
                                     "file": f0["location"]["file"] if f0 and f0["location"] else None,
                                     "line": f0["location"]["line"] if f0 and f0["location"] else 0,
                                     "verdict": "refuted", "reason": "slower", "measure": "m", "base_ns": 1,
                                     "new_ns": 2, "low_ns": 1, "high_ns": 1, "runs": 2, "output": "identical"}]}
    text = json.dumps(good)
    other = dict(good, recording=dict(good["recording"], size=st.st_size + 1))
    deep = '{"agprof_verify": 1, "x": ' + "[" * 5000 + "]" * 5000 + "}"
    bad = {"truncated": text[:len(text) // 2], "deep": deep, "binary": "\x00\xff\xfe" * 100,
           "version": json.dumps(dict(good, agprof_verify=99)),
           "hostile": json.dumps(dict(good, findings=[dict(good["findings"][0], line=1e300, base_ns=-1e300,
                                                            runs=10 ** 9)] * 3000)),
           "huge": '{"agprof_verify": 1, "s": "' + "a" * (2 << 20) + '"}'}
    side = rec + ".verify.json"
    for name, content in bad.items():
        with open(side, "w", encoding="latin-1") as fh:
            fh.write(content)
        rc, out, err = agtest.agprof_cmd("report", "--format", "json", rec)
        check(rc == 0 and len(err.strip().splitlines()) <= 1, "a %s sidecar: exit 0, at most one line" % name, (rc, err))
        check(rc == 0 and all(f["verdict"] is None for f in json.loads(out)["findings"]),
              "a %s sidecar: no verdict applied" % name)
    with open(side, "w") as fh:
        json.dump(other, fh)
    rc, out, err = agtest.agprof_cmd("report", "--format", "json", rec)
    check(rc == 0 and err.strip() == "" and all(f["verdict"] is None for f in json.loads(out)["findings"]),
          "another recording's sidecar: ignored silently", err)
    if f0:
        with open(side, "w") as fh:
            json.dump(good, fh)
        f = finding(rec, f0["rule"], f0["function"])
        check(f and f["verdict"] and f["verdict"]["verdict"] == "refuted" and f["recommendation"] is None,
              "this recording's sidecar: applied", f)
    key = {k: good["findings"][0][k] for k in ("rule", "function", "file", "line")}
    verdict = {k: v for k, v in good["findings"][0].items() if k not in key}
    alls = {"3000 keys": dict(verdict, findings=[key] * 3000), "one key": dict(verdict, findings=[key]),
            "not an object": 5, "out of range": dict(verdict, findings=[key, key], base_ns=1e300)}
    for name, bad_all in list(alls.items()) + [("valid", dict(verdict, findings=[key, key]))]:
        with open(side, "w") as fh:
            json.dump(dict(good, all=bad_all), fh)
        rc, out, err = agtest.agprof_cmd("report", "--format", "json", rec)
        js = json.loads(out) if rc == 0 else {}
        want = dict(verdict, findings=[key, key]) if name == "valid" else None
        check(rc == 0 and js.get("verify_all") == want and (not f0 or any(g["verdict"] for g in js["findings"])),
              "an all of %s: verify_all %s, the entries applied" % (name, "as written" if want else "null"),
              (rc, js.get("verify_all"), err))


# evaluate retraces too: a Python float scale, another each epoch; no tracing count printed (the edits change it)
TWO_RETRACING = test_diff.PROGRAM.replace(
    '    print("tracing count sgd_step:", sgd_step.experimental_get_tracing_count())\n', "").replace(
    '    print("tracing count evaluate:", evaluate.experimental_get_tracing_count())\n', "").replace(
    "def evaluate(x, y):\n    return tf.reduce_mean(tf.square(tf.matmul(x, w) - y))",
    "def evaluate(x, y, scale):\n    return scale * tf.reduce_mean(tf.square(tf.matmul(x, w) - y))").replace(
    "float(evaluate(x, y))", "float(evaluate(x, y, 1.0 + 0.5 * epoch))")


def test_together(tmp):
    d = os.path.join(tmp, "two")
    write(d, TWO_RETRACING)
    env = dict(os.environ, TMPDIR=tmp, NO_COLOR="1")
    rec = record(d, env)
    rc, out, err = fix_verify(env, rec, "--runs", "1", "--time-limit", "240")
    check(rc in (0, 1), "fix --verify of the two edits (%s)" % err[-400:])
    m = re.search(r"^\[all\] the 2 edits together\n(?:  .*\n)?(verified|refuted|failed): (.*)$", out, re.M)
    if not check(m, "fix --verify prints the verdict on the two edits together", out):
        return
    with open(rec + ".verify.json") as fh:
        side = json.load(fh)
    together = side.get("all") or {}
    check(together.get("verdict") == m.group(1) and sorted(k["function"] for k in together.get("findings", []))
          == ["evaluate", "sgd_step"] and together.get("runs") == 1 and together.get("measure") ==
          "the run's CPU time", "the sidecar keeps the verdict on the two together", side)
    rc, js, err = agtest.agprof_cmd("report", "--format", "json", rec)
    v = json.loads(js).get("verify_all") if rc == 0 else None
    check(v and {k: v.get(k) for k in together if k != "findings"} == {k: together[k] for k in together if
                                                                          k != "findings"}
          and v["findings"] == together["findings"], "report JSON: verify_all as the sidecar has it", (v, together))
    rc, text, err = agtest.agprof_cmd("report", rec)
    line = re.search(r"^    all edits: the 2 edits together \(retracing (sgd_step|evaluate), retracing "
                     r"(sgd_step|evaluate)\): (verified|refuted) on this program: (.*)$|^    all edits: the 2 edits "
                     r"together \(.*\): the experiment failed: (.*)$", text, re.M)
    check(line and (line.group(3) or "failed") == m.group(1), "report: the all edits line", text)
    print(line.group(0) if line else text)
    # a later experiment on one of them alone keeps the verdict on the two together
    rc, out, err = fix_verify(env, rec, "--rule", "retracing", "--function", "evaluate", "--runs", "1",
                              "--time-limit", "240")
    with open(rec + ".verify.json") as fh:
        again = json.load(fh)
    check(rc in (0, 1) and again.get("all") == together, "a later experiment on one edit keeps the two together's",
          (rc, again, err[-300:]))


def main():
    agtest.need_agprof()
    tests = {"jit": test_jit, "eager": test_eager, "tolerance": test_tolerance, "sidecar": test_sidecar,
             "together": test_together}
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    if mode not in tests:
        agtest.agtestlib.die("usage: test_experiments.py jit|eager|tolerance|sidecar|together")
    tests[mode](agtest.tmpdir())
    agtest.finish("experiments-" + mode)


main()
