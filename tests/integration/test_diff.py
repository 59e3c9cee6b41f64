"""`agprof diff` and `agprof check --baseline` on real TensorFlow (issue 37).

Usage: test_diff.py fix | gates | moved | noise | badinput | verify | verify-output | verify-hostile |
       verify-files

The program (written here, PROGRAM below) trains with a Python float
learning rate that decays each epoch: sgd_step retraces once per epoch
(python-value); evaluate traces once.  It prints TensorFlow's own
experimental_get_tracing_count() of both functions: the oracle.

- fix: record it; `agprof fix | patch -p1` on a copy; record the copy.
  diff's JSON has sgd_step and evaluate with base and new traces equal to
  TensorFlow's counts in each run (5 -> 1, 1 -> 1), the retracing finding
  resolved, the summary first; `check --baseline FIXED ORIGINAL` exits 1
  (new-traces and new-findings crossed, annotated at sgd_step's file in
  github format, failures in JUnit), `check --baseline ORIGINAL FIXED`
  exits 0; markdown has GitHub tables.  Merged recordings (ORIGINAL+FIXED,
  FIXED+FIXED) compare rank by rank: rank 0's sgd_step 5 -> 1.
- gates: the fixed program and a copy with 60 eager ops added to each
  step: check --baseline FIXED SLOW crosses the step-time and eager-share
  gates, SLOW FIXED passes, and wide --max-slowdown and
  --max-eager-increase let those two gates hold.
- moved: the same program with lines inserted above every def, recorded:
  every function and every eager line matches its counterpart (none only
  on one side), the def lines shifted by exactly the inserted count, and
  check --baseline exits 0 both ways.
- noise: the fixed program recorded 4 times (one at a time, on the suite's
  loaded machine): check --baseline exits 0 for
  each of the 12 ordered pairs (no false regression from the step-time
  test on this shared machine); prints the largest step ratio seen.  Once
  more beside a CPU hog (a busy process per core, and one): the recording
  has the threads' wait for a CPU (diff's cpu wait share 30% or more, a
  load factor) and check --baseline exits 0 both ways.
  A schema 5 copy of the same recording compares as the same run; a
  schema 1 recording of another program compares with nothing matched.
- verify: `agprof fix --verify` on the program (its counts written to a
  file): "verified: sgd_step 5 traces -> 1; sgd_step's tracing and calls
  A -> B (-D; every pair of the 2 x 2 runs from -X to -Y), output
  identical", the counts TensorFlow wrote in the four runs 5, 1, 5, 1, the
  user's directory unchanged but for the verdicts beside the recording
  (REC.verify.json), the scratch copies gone; `agprof report` then says
  "verified on this program" and claims the measured saving (JSON: the
  verdict object).
- verify-output: the same with a COMMAND that prints the count: "refuted:
  the output differs" (exit 1), naming the changed line; the user's files
  untouched; the report withdraws the edit and says why.
- verify-files: the program, told to, writes out/w.npy and summary.txt (the
  user has one) in its working directory: "...; output identical, and the
  files it wrote" (verified, or on a loaded machine no measurable change);
  writing its tracing count to out/counts.txt too:
  "refuted: the output differs; ... file out/counts.txt 'sgd_step 5' ->
  'sgd_step 1' (line 1)"; the user's summary.txt and out/ untouched.
- verify-hostile: a recording is data, never a command (issue 49): its argv
  edited (same machine, same user) into a command that makes a marker file:
  fix --verify refuses with exit 2 and one line that shows the command, no
  marker; --trust-recorded-command runs it and says "failed: the
  edited code did not run"; an explicit command runs as given.  No MAC,
  another user's key, a working directory missing or not the user's, an
  edited file that is a symbolic link out of it: exit 2, nothing written.
- badinput: not a recording, a missing file, one argument, a newer schema:
  exit 2 with one "error:" line; the same file twice: exit 0, a warning
  line, nothing changed.
"""
import concurrent.futures
import hashlib
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

PROGRAM = '''"""A training loop that retraces: a Python float learning rate decaying each epoch."""
import numpy as np
import tensorflow as tf

w = tf.Variable(tf.zeros([64, 1]))


@tf.function
def sgd_step(x, y, lr):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
    w.assign_sub(lr * tape.gradient(loss, w))
    return loss


@tf.function
def evaluate(x, y):
    return tf.reduce_mean(tf.square(tf.matmul(x, w) - y))


def main():
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(256, 64)).astype(np.float32))
    y = tf.constant(rng.normal(size=(256, 1)).astype(np.float32))
    lr = 0.1
    for epoch in range(5):
        for _ in range(40):
            loss = sgd_step(x, y, lr)
        norm = tf.reduce_sum(tf.abs(w))
        print("epoch %d loss %.4f eval %.4f norm %.3f" % (epoch, float(loss), float(evaluate(x, y)), float(norm)))
        lr *= 0.7
    print("tracing count sgd_step:", sgd_step.experimental_get_tracing_count())
    print("tracing count evaluate:", evaluate.experimental_get_tracing_count())


main()
'''
FIXED_CALL = "loss = sgd_step(x, y, tf.constant(lr, tf.float32))"
INSERTED = 4  # lines the moved copy adds at the top
# sgd_step's def as Python gives it (co_firstlineno: its decorator's line)
DEF_LINE = PROGRAM.split("\n").index("def sgd_step(x, y, lr):")


def write_program(d, text):
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "prog.py"), "w") as fh:
        fh.write(text)


def record(d, out):
    """Record d/prog.py with cwd d; return {function: TensorFlow's tracing count}."""
    p = subprocess.run([agtest.AGPROF, "run", "-q", "-o", out, "--", agtest.PYTHON, "prog.py"], cwd=d,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=240)
    if p.returncode != 0:
        print(p.stderr.decode("utf-8", "replace")[-3000:])
        agtest.fail("prog.py exited %d under agprof" % p.returncode)
        agtest.finish("diff")
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"tracing count (\w+): (\d+)", p.stdout.decode())}


def diff_json(base, new):
    rc, out, err = agtest.agprof_cmd("diff", "--format", "json", base, new)
    check_eq(rc, 0, "agprof diff exit status (%s)" % err.strip())
    return json.loads(out) if rc == 0 else {"functions": [], "lines": [], "findings": {}}


def function(j, name):
    for f in j["functions"]:
        if f["function"] == name:
            return f
    agtest.fail("no function %s in the diff" % name)
    return {"base": None, "new": None}


def test_fix(tmp):
    orig, fixed = os.path.join(tmp, "orig"), os.path.join(tmp, "fixed")
    write_program(orig, PROGRAM)
    a = os.path.join(tmp, "a.agprof")
    counts_a = record(orig, a)
    rc, patch, err = agtest.agprof_cmd("fix", a)
    check_eq(rc, 0, "agprof fix exit status (%s)" % err.strip())
    shutil.copytree(orig, fixed)
    p = subprocess.run(["patch", "-p1", "-s"], cwd=fixed, input=patch.encode(), stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT)
    check_eq(p.returncode, 0, "patch -p1 of agprof fix's diff (%s)" % p.stdout.decode())
    check(FIXED_CALL in open(os.path.join(fixed, "prog.py")).read(), "the fix passes tf.constant(lr)")
    b = os.path.join(tmp, "b.agprof")
    counts_b = record(fixed, b)
    check_eq((counts_a.get("sgd_step"), counts_b.get("sgd_step")), (5, 1), "TensorFlow's own counts before, after")

    j = diff_json(a, b)
    check(j["summary"].startswith("4 fewer traces (6 -> 2)"), "summary first: %r" % j["summary"])
    for name in ("sgd_step", "evaluate"):
        f = function(j, name)
        check_eq((f["base"] or {}).get("traces"), counts_a.get(name), "%s: base traces = TensorFlow's count" % name)
        check_eq((f["new"] or {}).get("traces"), counts_b.get(name), "%s: new traces = TensorFlow's count" % name)
        check_eq(f["file"], "prog.py", "%s: file relative to each run's directory" % name)
        check_eq(((f["base"] or {}).get("calls"), (f["new"] or {}).get("calls")), (200, 200) if name == "sgd_step"
                 else (5, 5), "%s: calls" % name)
        check(f["base"]["call_median_ns"] > 0 and f["base"]["call_p25_ns"] <= f["base"]["call_median_ns"]
              <= f["base"]["call_p75_ns"], "%s: per-call median inside its quartiles" % name)
    check_eq(function(j, "sgd_step")["base"]["retrace_causes"], {"python-value": 4}, "sgd_step's retrace causes")
    deltas = [abs(f["delta_ns"]) for f in j["functions"]]
    check_eq(deltas, sorted(deltas, reverse=True), "functions ranked by absolute time change")
    check_eq([(f["rule"], f["function"]) for f in j["findings"]["resolved"]], [("retracing", "sgd_step")],
             "the retracing finding resolved")
    check_eq(j["findings"]["new"], [], "no new finding")
    check_eq(j["step"]["function"], "sgd_step", "the step function")

    rc, out, _ = agtest.agprof_cmd("check", "--baseline", b, a)
    check_eq(rc, 1, "check --baseline FIXED ORIGINAL: a regression")
    check(re.search(r"FAIL\s+baseline new-traces", out) and re.search(r"FAIL\s+baseline new-findings", out),
          "new-traces and new-findings crossed", out)
    rc, out, _ = agtest.agprof_cmd("check", "--baseline", b, "--format", "github", a)
    check(rc == 1 and "::error file=prog.py,line=%d," % DEF_LINE in out, "github annotation at sgd_step's def", out)
    rc, out, _ = agtest.agprof_cmd("check", "--baseline", b, "--format", "junit", a)
    # the retracing run may also be slower per step than the fixed one (step-time): a third failure, also true
    check(rc == 1 and re.search(r'failures="[23]"', out) and 'name="baseline new-traces"' in out and
          'name="baseline new-findings"' in out and out.count("<failure ") == int(re.search(r'failures="(\d)"', out).group(1)),
          "JUnit: new-traces and new-findings failed (step-time may too)", out)
    rc, out, _ = agtest.agprof_cmd("check", "--baseline", b, "--max-new-traces", "4", a)
    check(rc == 1 and re.search(r"ok\s+baseline new-traces", out), "--max-new-traces 4 lets 4 more traces pass", out)
    rc, out, _ = agtest.agprof_cmd("check", "--baseline", a, b)
    # The fix passes lr as a tensor: one tf.constant per call, a real cost per step that the step gate
    # may see on a loaded machine (+40% to +110% of this tiny step); traces and findings do not regress.
    check(rc in (0, 1) and not re.search(r"FAIL\s+baseline new-(traces|findings)", out) and
          (rc == 0 or re.search(r"FAIL\s+baseline step-time", out)),
          "check --baseline ORIGINAL FIXED: no new trace nor finding (%s)" % out)

    # merged recordings (agprof merge) compare rank by rank: rank 0 is ORIGINAL in m1, FIXED in m2
    m1, m2 = os.path.join(tmp, "m1.agprof"), os.path.join(tmp, "m2.agprof")
    for out_path, inputs in ((m1, (a, b)), (m2, (b, b))):
        rc, _, err = agtest.agprof_cmd("merge", "-o", out_path, *inputs)
        check_eq(rc, 0, "agprof merge (%s)" % err.strip())
    j = diff_json(m1, m2)
    rank0 = [f for f in j["functions"] if f.get("rank") == 0 and f["function"] == "sgd_step"]
    check(len(rank0) == 1 and rank0[0]["base"] and rank0[0]["new"] and
          (rank0[0]["base"]["traces"], rank0[0]["new"]["traces"]) == (counts_a["sgd_step"], counts_b["sgd_step"]),
          "merged: rank 0's sgd_step compared on its own, 5 -> 1", rank0)
    rc, out, _ = agtest.agprof_cmd("check", "--baseline", m2, m1)
    check(rc == 1 and "rank 0: traced 5 times, 1 in BASE" in out, "merged: check --baseline names rank 0", out)

    rc, out, _ = agtest.agprof_cmd("diff", "--format", "markdown", a, b)
    check(rc == 0 and "| function | defined | traces |" in out and "| sgd_step | prog.py:%d | 5 -> 1 |" % DEF_LINE in out,
          "markdown: a GitHub table with sgd_step 5 -> 1", out)
    rc, out, _ = agtest.agprof_cmd("diff", a, b)
    check(rc == 0 and out.splitlines()[1].startswith("4 fewer traces"), "text: the summary first", out[:300])


def test_gates(tmp):
    """The fixed program, and a copy with eager ops added to its loop: the step and eager gates see it."""
    fixed = os.path.join(tmp, "fixed")
    write_program(fixed, PROGRAM.replace("loss = sgd_step(x, y, lr)", FIXED_CALL))
    b = os.path.join(tmp, "b.agprof")
    record(fixed, b)
    slow = os.path.join(tmp, "slow")
    write_program(slow, PROGRAM.replace("loss = sgd_step(x, y, lr)", FIXED_CALL + "\n" +
                                        "            for _ in range(60):\n                tf.reduce_sum(x)"))
    c = os.path.join(tmp, "c.agprof")
    record(slow, c)
    rc, out, _ = agtest.agprof_cmd("check", "--baseline", b, c)
    check(rc == 1 and re.search(r"FAIL\s+baseline step-time", out) and re.search(r"FAIL\s+baseline eager-share", out),
          "60 eager ops per step: step-time and eager-share crossed", out)
    rc, out, _ = agtest.agprof_cmd("check", "--baseline", c, b)
    check_eq(rc, 0, "the other way round: faster, fewer eager ops (%s)" % out)
    rc, out, _ = agtest.agprof_cmd("check", "--baseline", b, "--max-slowdown", "100000", "--max-eager-increase", "100",
                                   c)
    check(re.search(r"ok\s+baseline step-time", out) and re.search(r"ok\s+baseline eager-share", out),
          "with the step and eager gates opened wide, both hold", out)


def test_moved(tmp):
    orig, moved = os.path.join(tmp, "orig"), os.path.join(tmp, "moved")
    write_program(orig, PROGRAM)
    lines = PROGRAM.split("\n")
    write_program(moved, "\n".join(lines[:1] + ["# an edit that moves every line below"] * INSERTED + lines[1:]))
    a, b = os.path.join(tmp, "a.agprof"), os.path.join(tmp, "b.agprof")
    record(orig, a)
    record(moved, b)
    j = diff_json(a, b)
    check_eq(sorted(f["function"] for f in j["functions"]), ["evaluate", "sgd_step"], "functions")
    for f in j["functions"]:
        if check(f["base"] and f["new"], "%s matched across the moved lines" % f["function"]):
            check_eq(f["new"]["line"] - f["base"]["line"], INSERTED, "%s: def moved by the edit" % f["function"])
            check_eq(f["new"]["traces"], f["base"]["traces"], "%s: same traces" % f["function"])
    user_lines = [x for x in j["lines"] if x["file"] == "prog.py"]
    check(len(user_lines) >= 3, "eager lines of prog.py", len(user_lines), ">= 3")
    for x in user_lines:
        if check(x["base"] and x["new"], "%s line %s matched" % (x["kind"], (x["base"] or x["new"])["line"])):
            check_eq(x["new"]["line"] - x["base"]["line"], INSERTED, "%s moved by the edit" % x["kind"])
    check_eq((j["findings"]["new"], j["findings"]["resolved"]), ([], []), "findings matched across the move")
    # the traces and findings gates across the move; the step-time gate compares two runs made
    # at different moments of a shared machine (+61% at a load of 16 once): diff-noise tests it
    for base, new in ((a, b), (b, a)):
        rc, out, _ = agtest.agprof_cmd("check", "--baseline", base, new, "--max-slowdown", "100000")
        check_eq(rc, 0, "check --baseline of the moved copy (%s)" % out)
    # schema versions: a schema 5 copy of the same recording compares as the same run
    old = os.path.join(tmp, "schema5.agprof")
    agtest.agtestlib.copy_as_schema5(a, old)
    k = diff_json(old, a)
    check(k["functions"] and all(f["base"] == f["new"] for f in k["functions"]),
          "schema 5 and 7 copies of one recording: the same functions")
    rc, out, _ = agtest.agprof_cmd("check", "--baseline", old, a)
    check_eq(rc, 0, "check --baseline across schema versions (%s)" % out)
    # and a schema 1 recording of another program: compared, every function on one side
    old1 = os.path.join(agtest.SOURCE_ROOT, "tests", "fuzz", "base.agprof")
    k = diff_json(old1, a)
    check(k["functions"] and all(bool(f["base"]) != bool(f["new"]) for f in k["functions"]),
          "schema 1 recording of another program: nothing matched")


def test_noise(tmp):
    d = os.path.join(tmp, "fixed")
    # 2,000 steps (about a second), not 200 (70 ms): a burst of another test's load covered a whole run once
    write_program(d, PROGRAM.replace("loss = sgd_step(x, y, lr)", FIXED_CALL).replace("range(40)", "range(400)"))
    recs = [os.path.join(tmp, "r%d.agprof" % i) for i in range(4)]
    # one at a time: two recorded side by side once differed by 59% per step with equal waits for a CPU
    # (32% and 32%): a disturbance the run-queue wait does not see, which no later CI run recreates
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        for i, counts in enumerate(pool.map(lambda r: record(d, r), recs)):
            check_eq(counts.get("sgd_step"), 1, "TensorFlow's count, run %d" % i)
    worst = 1.0
    # Under the sanitizers agprof's own launcher takes a CPU from the program, more in one run than in
    # another: two runs of one program were seen 2.1x apart per step.  The default 50% is for plain builds.
    wide = [] if os.environ.get("AGPROF_SANITIZE", "none") == "none" else ["--max-slowdown", "200"]
    for a in recs:
        for b in recs:
            if a == b:
                continue
            rc, out, _ = agtest.agprof_cmd("check", "--baseline", a, *wide, b)
            check_eq(rc, 0, "check --baseline of two runs of one program (%s)" % out)
            m = re.search(r"per-step time of sgd_step ([-+][0-9.]+)%", out)
            if check(m, "check names the step's change", out):
                ratio = 1 + float(m.group(1)) / 100
                worst = max(worst, ratio, 1 / ratio)
    print("largest per-step ratio between two runs of one program: %.2f" % worst)
    noise_beside_hog(d, recs[0], wide)


def noise_beside_hog(d, quiet, wide):
    """One more run beside a CPU hog (a busy process per core, and one more): its threads' wait for a CPU
    is in the recording, and check --baseline says the load explains a slower step instead of failing."""
    loaded = os.path.join(os.path.dirname(quiet), "loaded.agprof")
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range((os.cpu_count() or 1) + 1)]
    try:
        check_eq(record(d, loaded).get("sgd_step"), 1, "TensorFlow's count, run beside the hog")
    finally:
        for h in hogs:
            h.kill()
            h.wait()
    step = diff_json(quiet, loaded).get("step") or {}
    print("beside a CPU hog: per-step ratio %.2f, waits for a CPU %.0f%% (quiet) and %.0f%% (loaded)" % (
        step.get("ratio", 0), 100 * step.get("base_cpu_wait_share", -1), 100 * step.get("new_cpu_wait_share", -1)))
    # N + 1 busy processes on N CPUs leave a runnable thread about half of one: it waits about half the time
    check(step.get("new_cpu_wait_share", 0) >= 0.3, "the run beside the hog waited for a CPU (cpu_samples)", step)
    check(step.get("load_factor", 0) >= 1, "diff's load factor", step)
    for base, new in ((quiet, loaded), (loaded, quiet)):
        rc, out, _ = agtest.agprof_cmd("check", "--baseline", base, *wide, new)
        check_eq(rc, 0, "check --baseline, one run beside a CPU hog (%s)" % out)
    thread_waits(loaded)


def thread_waits(loaded):
    """The main thread dispatched eager ops: its own run and wait (thread_samples) cover its time (from
    the writer's first read of it, which a loaded machine can put after its first op: not later than
    most of its ops), and the report takes its waits for a CPU out of the base of its eager share."""
    db = sqlite3.connect(loaded)
    pid = db.execute("SELECT pid FROM processes ORDER BY start_ns LIMIT 1").fetchone()[0]
    starts = [r[0] for r in db.execute("SELECT start_ns FROM eager_ops WHERE pid = ?1 AND tid = ?1 ORDER BY 1",
                                       (pid,))]
    n, start, end, wait = db.execute("SELECT count(*), min(from_ns), max(t_ns), total(wait_ns) FROM thread_samples"
                                     " WHERE pid = ?1 AND tid = ?1", (pid,)).fetchone()
    db.close()
    check(n > 0 and starts and start <= starts[len(starts) // 2] and end >= starts[-1],
          "the main thread's own samples, over most of its eager ops", (n, start, end, starts[:1], starts[-1:]))
    check(wait > 0, "its waits for a CPU beside the hog (thread_samples)", wait)
    p = subprocess.run([agtest.AGPROF, "report", "--format", "json", loaded], capture_output=True, text=True)
    main = [t for t in json.loads(p.stdout)["threads"] if t["thread"] == "main"] if p.returncode == 0 else []
    check(main and 0 < main[0]["cpu_wait_ns"] <= main[0]["active_ns"], "report: the main thread's cpu_wait_ns",
          main)


def tree_sums(d):
    """{relative path: sha256} of every file under d, and the set of directories."""
    sums = {}
    for root, dirs, files in os.walk(d):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as fh:
                sums[os.path.relpath(path, d)] = hashlib.sha256(fh.read()).hexdigest()
        for name in dirs:
            sums[os.path.relpath(os.path.join(root, name), d) + "/"] = "dir"
    return sums


def verify_setup(tmp):
    """The program writing its counts to $COUNTS, recorded in tmp/orig: (recording, env, counts file, scratch)."""
    orig = os.path.join(tmp, "orig")
    counts = os.path.join(tmp, "counts.txt")
    scratch = os.path.join(tmp, "scratch")
    os.makedirs(scratch)
    # the counts go to a file (not stdout, which must stay the same); --print-count also prints them
    write_program(orig, "import os\nimport sys\n" + PROGRAM.replace(
        '    print("tracing count sgd_step:", sgd_step.experimental_get_tracing_count())\n', '').replace(
        '    print("tracing count evaluate:", evaluate.experimental_get_tracing_count())\n',
        '    counts = "sgd_step %d" % sgd_step.experimental_get_tracing_count()\n'
        '    if "--print-count" in sys.argv:\n'
        '        print(counts)\n'
        '    with open(os.environ["COUNTS"], "a") as fh:\n'
        '        fh.write(counts + "\\n")\n'
        '    if "--write-files" in sys.argv:\n'
        '        os.makedirs("out", exist_ok=True)\n'
        '        np.save(os.path.join("out", "w.npy"), w.numpy())\n'
        '        with open("summary.txt", "w") as fh:\n'
        '            fh.write("norm %.6f\\n" % float(tf.reduce_sum(tf.abs(w))))\n'
        '        if "--counts-too" in sys.argv:\n'
        '            with open(os.path.join("out", "counts.txt"), "w") as fh:\n'
        '                fh.write(counts + "\\n")\n'))
    os.makedirs(os.path.join(orig, "data"))
    with open(os.path.join(orig, "data", "keep.txt"), "w") as fh:
        fh.write("a file the program does not touch\n")
    a = os.path.join(orig, "a.agprof")
    env = dict(os.environ, COUNTS=counts, TMPDIR=scratch, NO_COLOR="1")
    p = subprocess.run([agtest.AGPROF, "run", "-q", "-o", a, "--", agtest.PYTHON, "prog.py"], cwd=orig, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=240)
    check_eq(p.returncode, 0, "the program under agprof")
    os.unlink(counts)
    return a, env, counts, scratch


def test_verify(tmp):
    """fix --verify: traces 5 -> 1 as TensorFlow counts them, output identical, the user's files untouched."""
    a, env, counts, scratch = verify_setup(tmp)
    orig = os.path.dirname(a)
    before = tree_sums(orig)
    p = subprocess.run([agtest.AGPROF, "fix", "--verify", a], env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=280)
    out = p.stdout.decode("utf-8", "replace")
    check_eq(p.returncode, 0, "fix --verify exit status (%s)" % p.stderr.decode("utf-8", "replace")[-500:])
    check(re.search(r"^verified: sgd_step 5 traces -> 1; sgd_step's tracing and calls [0-9.]+ \w+ -> [0-9.]+ \w+ "
                    r"\(-[0-9.]+ \w+; every pair of the 2 x 2 runs from -[0-9.]+ \w+ to -[0-9.]+ \w+\), "
                    r"output identical$", out, re.M), "the verdict line, with the interval over 2 x 2 runs", out)
    with open(counts) as fh:
        check_eq(fh.read().split("\n"), ["sgd_step 5", "sgd_step 1", "sgd_step 5", "sgd_step 1", ""],
                 "TensorFlow's own counts: as it is, then as edited, twice (interleaved)")
    side = a + ".verify.json"
    after = tree_sums(orig)
    check(after.pop(os.path.basename(side), None) is not None, "the verdicts kept beside the recording")
    check_eq(after, before, "the user's files untouched (checksums, no other file added or removed)")
    check_eq(os.listdir(scratch), [], "the scratch copies removed")
    # the report reads them: a verified edit claims its measured saving
    rc, text, err = agtest.agprof_cmd("report", a)
    check(rc == 0 and re.search(r"^    verified on this program: sgd_step's tracing and calls [0-9.]+ \w+ -> [0-9.]+ "
                                r"\w+ \(-.*over 2 x 2 runs\), output identical$", text, re.M),
          "report: verified on this program", text)
    rc, js, err = agtest.agprof_cmd("report", "--format", "json", a)
    f = [f for f in json.loads(js)["findings"] if f["rule"] == "retracing"][0] if rc == 0 else {}
    v = f.get("verdict") or {}
    check(v.get("verdict") == "verified" and v["high_ns"] < 0 and v["new_ns"] < v["base_ns"] and v["runs"] == 2,
          "report JSON: the verdict object", v)
    check(f.get("saving_ns") == v.get("base_ns", 0) - v.get("new_ns", 0) and "measured by agprof fix --verify"
          in (f.get("saving_method") or ""), "the saving claimed is the measured one", f)


def test_verify_output(tmp):
    """fix --verify with a command whose output the edit changes (it prints the tracing count): not verified."""
    a, env, counts, scratch = verify_setup(tmp)
    orig = os.path.dirname(a)
    before = tree_sums(orig)
    p = subprocess.run([agtest.AGPROF, "fix", "--verify", a, "--", agtest.PYTHON, "prog.py", "--print-count"],
                       env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=280)
    out = p.stdout.decode("utf-8", "replace")
    check_eq(p.returncode, 1, "fix --verify of a changed output: exit 1")
    check(re.search(r"^refuted: the output differs; sgd_step 5 traces -> 1; .*output differs from line 6: "
                    r"'sgd_step 5' -> 'sgd_step 1'$", out, re.M), "the changed output named", out)
    after = tree_sums(orig)
    after.pop(os.path.basename(a) + ".verify.json", None)
    check_eq(after, before, "the user's files still untouched")
    rc, text, err = agtest.agprof_cmd("report", a)
    check(rc == 0 and re.search(r"^    refuted on this program: the output differs; ", text, re.M)
          and "agprof fix applies it" not in text.split("refuted on this program")[1].split("\n 2.")[0],
          "report: refuted, its edit withdrawn", text)
    rc, _, err = agtest.agprof_cmd("fix", "--verify", os.path.join(tmp, "none.agprof"))
    check(rc == 2 and err.startswith("error:"), "fix --verify of no recording: exit 2", (rc, err))


def test_verify_files(tmp):
    """fix --verify compares the files the program writes in its copy (out/w.npy, summary.txt over the user's
    own): identical as edited, then a file the edit changes (the tracing count) refutes it; the user's files,
    which the program overwrites when it runs in their directory, untouched."""
    a, env, counts, scratch = verify_setup(tmp)
    orig = os.path.dirname(a)
    os.makedirs(os.path.join(orig, "out"))
    for name, text in (("summary.txt", "the user's summary\n"), (os.path.join("out", "old.txt"), "kept\n")):
        with open(os.path.join(orig, name), "w") as fh:
            fh.write(text)
    before = tree_sums(orig)
    cmd = [agtest.PYTHON, "prog.py", "--write-files"]
    # one run each way: the files are compared, not the time (verify's test judges that over 2 x 2 runs)
    rc, out, err = verify_cmd(env, "--runs", "1", a, "--", *cmd)
    # the time's verdict is the verify test's (a loaded machine may find no change): here, the output's
    check(rc in (0, 1) and re.search(r"^(verified: |refuted: (no measurable change|slower)[^;]*; )sgd_step 5 "
                                     r"traces -> 1; .*output identical, and the files it wrote$", out, re.M),
          "the files it wrote compared, identical (%s)" % err[-500:], out)
    rc, out, err = verify_cmd(env, "--runs", "1", a, "--", *(cmd + ["--counts-too"]))
    check_eq(rc, 1, "fix --verify, a file the edit changes: exit 1 (%s)" % err[-500:])
    check(re.search(r"^refuted: the output differs; .*output differs: file out/counts.txt 'sgd_step 5' -> "
                    r"'sgd_step 1' \(line 1\)$", out, re.M), "the changed file named", out)
    after = tree_sums(orig)
    after.pop(os.path.basename(a) + ".verify.json", None)
    check_eq(after, before, "the user's files untouched: the program wrote its copies'")
    check_eq(os.listdir(scratch), [], "the scratch copies removed")


def edited(src, dst, *sql):
    """A copy of recording src with sql run on it (same machine, same user)."""
    shutil.copy(src, dst)
    db = sqlite3.connect(dst)
    for q in sql:
        db.execute(*((q,) if isinstance(q, str) else q))
    db.commit()
    db.close()
    return dst


def record_in(d, env):
    """prog.py recorded with cwd d (its counts to $COUNTS): the recording, outside d."""
    out = d + ".agprof"
    p = subprocess.run([agtest.AGPROF, "run", "-q", "-o", out, "--", agtest.PYTHON, "prog.py"], cwd=d, env=env,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=240)
    check_eq(p.returncode, 0, "prog.py under agprof in %s" % d)
    return out


def verify_cmd(env, *args):
    p = subprocess.run([agtest.AGPROF, "fix", "--verify"] + list(args), env=env, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=280)
    return p.returncode, p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")


def test_verify_hostile(tmp):
    """issue 49: a recording is data, never a command.  Its argv edited into one that would make a marker:
    fix --verify refuses (exit 2, the command shown, no marker); --trust-recorded-command runs it, and as the
    edited code never ran the verdict is "not verified"; an explicit command runs as given; no MAC, another
    user's key, a working directory not the user's, an edited file that is a symbolic link: refused."""
    a, env, counts, scratch = verify_setup(tmp)
    orig = os.path.dirname(a)
    marker = os.path.join(tmp, "PWNED")
    evil_argv = json.dumps(["sh", "-c", "touch %s; printf '\\033]0;PWNED\\007hi\\n'" % marker])
    evil = edited(a, os.path.join(orig, "evil.agprof"), ("UPDATE meta SET value = ? WHERE key = 'argv'", (evil_argv,)))
    before = tree_sums(orig)

    rc, out, err = verify_cmd(env, evil)
    check_eq(rc, 2, "an edited argv: exit 2 (%s)" % err)
    check(len(err.strip().splitlines()) == 1 and err.startswith("error: will not run the recorded command [")
          and "touch" in err and "--trust-recorded-command" in err, "one error line showing the command", err)
    check(not os.path.exists(marker), "the recorded command did not run")
    check_eq(out, "", "nothing on standard output")

    rc, out, err = verify_cmd(env, "--trust-recorded-command", evil)
    check(os.path.exists(marker), "--trust-recorded-command runs it")
    check_eq(rc, 1, "--trust-recorded-command: the edited code never ran: exit 1 (%s)" % err[-400:])
    check(re.search(r"^failed: the edited code did not run \(prog\.py:\d+, sgd_step\)$", out, re.M),
          "the verdict: failed, the edited code did not run", out)
    check("\x1b" not in out and "\x07" not in out, "no control byte printed", repr(out))
    os.unlink(marker)

    other = os.path.join(tmp, "explicit")
    rc, out, err = verify_cmd(env, evil, "--", "sh", "-c", "touch %s" % other)
    check(os.path.exists(other) and not os.path.exists(marker), "an explicit command runs as given, not the recorded")
    check_eq(rc, 1, "an explicit command that never runs the edit: not verified")

    no_mac = edited(a, os.path.join(orig, "nomac.agprof"), "DELETE FROM meta WHERE key = 'command_mac'")
    rc, out, err = verify_cmd(env, no_mac)
    check(rc == 2 and "carries no proof" in err and len(err.strip().splitlines()) == 1,
          "a recording without a MAC: exit 2", (rc, err))
    rc, out, err = verify_cmd(dict(env, XDG_CONFIG_HOME=os.path.join(tmp, "another-user")), a)
    check(rc == 2 and "will not run" in err, "another user's key: exit 2", (rc, err))
    check(not os.path.exists(os.path.join(tmp, "another-user")), "checking makes no key")

    # recorded elsewhere, then the directory gone: whatever happens, no command runs
    gone = os.path.join(tmp, "gone")
    shutil.copytree(orig, gone)
    rec = record_in(gone, env)
    shutil.rmtree(gone)
    rc, out, err = verify_cmd(env, rec, "--", "sh", "-c", "touch %s" % marker)
    check(rc in (1, 2) and len(err.strip().splitlines()) == 1 and not os.path.exists(marker),
          "a working directory that is gone: exit 1 or 2, one line, nothing run", (rc, err))
    if os.geteuid() == 0:  # root can give the directory away
        theirs = os.path.join(tmp, "theirs")
        shutil.copytree(orig, theirs)
        rec = record_in(theirs, env)
        os.chown(theirs, 65534, 65534)
        rc, out, err = verify_cmd(env, rec, "--", "sh", "-c", "touch %s" % marker)
        check(rc == 2 and "not yours" in err and not os.path.exists(marker),
              "a working directory of another user: exit 2, nothing run", (rc, err))

    # the edited file a symbolic link out of the directory: never written through, never run
    linked = os.path.join(tmp, "linked")
    shutil.copytree(orig, linked)
    outside = os.path.join(tmp, "outside.py")
    shutil.move(os.path.join(linked, "prog.py"), outside)
    os.symlink(outside, os.path.join(linked, "prog.py"))
    with open(outside, "rb") as fh:
        outside_before = fh.read()
    rec = record_in(linked, env)
    rc, out, err = verify_cmd(env, rec, "--", "sh", "-c", "touch %s" % marker)
    check(rc == 2 and "symbolic link" in err and len(err.strip().splitlines()) == 1 and not os.path.exists(marker),
          "an edited file that is a symbolic link: exit 2, nothing run", (rc, err))
    with open(outside, "rb") as fh:
        check(fh.read() == outside_before, "the file behind the link untouched")
    os.unlink(no_mac)
    after = {k: v for k, v in tree_sums(orig).items() if not k.endswith(".verify.json")}
    check_eq(after, before, "the user's files untouched (the verdicts beside the recordings aside)")


def test_badinput(tmp):
    base = os.path.join(agtest.SOURCE_ROOT, "tests", "fuzz", "base.agprof")
    text = os.path.join(tmp, "notes.txt")
    with open(text, "w") as fh:
        fh.write("not a recording\n")
    newer = os.path.join(tmp, "newer.agprof")
    shutil.copy(base, newer)
    db = sqlite3.connect(newer)
    db.execute("PRAGMA user_version = 999")
    db.commit()
    db.close()
    for args, what in (((text, base), "not a recording"), ((base, os.path.join(tmp, "missing.agprof")), "missing"),
                       ((base,), "one recording"), ((newer, base), "a newer schema"),
                       (("--format", "yaml", base, base), "unknown format")):
        rc, out, err = agtest.agprof_cmd("diff", *args)
        check_eq(rc, 2, "diff, %s: exit status" % what)
        check(out == "" and len(err.strip().splitlines()) == 1 and err.startswith("error:"),
              "diff, %s: one error line" % what, err)
    rc, out, err = agtest.agprof_cmd("check", "--baseline", text, base)
    check(rc == 2 and err.startswith("error:"), "check --baseline with a bad BASE: exit 2", (rc, err))
    rc, out, err = agtest.agprof_cmd("diff", "--format", "json", base, base)
    check(rc == 0 and "same file" in out, "the same file twice: a warning", (rc, err))
    j = json.loads(out) if rc == 0 else {"functions": []}
    check(j["functions"] and all(f["delta_ns"] == 0 and f["base"] == f["new"] for f in j["functions"]),
          "the same file twice: nothing changed")
    kinds = {x["kind"] for x in j["lines"]}
    check_eq(kinds, {"eager", "blackbox", "input"}, "lines: eager dispatch, black boxes (py_function), input reads")
    check(all(x["base"] == x["new"] and x["delta_ns"] == 0 for x in j["lines"]), "the same file twice: lines equal")


def main():
    agtest.need_agprof()
    mode = sys.argv[1] if len(sys.argv) > 1 else ""
    tests = {"fix": test_fix, "gates": test_gates, "moved": test_moved, "noise": test_noise, "badinput": test_badinput,
             "verify": test_verify, "verify-output": test_verify_output, "verify-hostile": test_verify_hostile,
             "verify-files": test_verify_files}
    if mode not in tests:
        agtest.agtestlib.die("usage: test_diff.py fix|gates|moved|noise|badinput|verify|verify-output|verify-hostile|"
                             "verify-files")
    tests[mode](agtest.tmpdir())
    agtest.finish("diff-" + mode)


if __name__ == "__main__":
    main()
