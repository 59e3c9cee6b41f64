"""The bad cases of agprof.start()/stop() (issue 12): clear Python errors or
warnings with the reason, never a crash, the program's results unchanged.

One child Python (TensorFlow imported once) runs every case and prints what
it saw as JSON; this test checks it.  Then the two cases that need their own
process: no GOT patching (a symbol that cannot be patched) and a program
already under `agprof run`.
"""
import json
import os
import sqlite3
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "integration"))
import agtest  # noqa: E402

CASES = r"""
import json, os, signal, sys, warnings
import tensorflow as tf
import agprof
tmp = sys.argv[1]
seen = {}

@tf.function
def step(x):
    return tf.reduce_sum(x * 2.0)

def compute():
    return [float(step(tf.ones([n]))) for n in (1, 2, 3)]

seen["plain"] = compute()

def error_of(fn, *a, **k):
    try:
        fn(*a, **k)
    except agprof.AgprofError as e:
        return str(e)
    return None

seen["stop_without_start"] = error_of(agprof.stop)
agprof.start(os.path.join(tmp, "twice.agprof"))
seen["start_twice"] = error_of(agprof.start, os.path.join(tmp, "other.agprof"))
seen["recorded"] = compute()
seen["stop"] = agprof.stop()
seen["stop_again"] = error_of(agprof.stop)
seen["exists"] = error_of(agprof.start, os.path.join(tmp, "twice.agprof"))
seen["is_recording_after_error"] = agprof.is_recording()
try:
    with agprof.record(os.path.join(tmp, "raises.agprof"), quiet=True):
        compute()
        raise KeyError("the block's own error")
except KeyError as e:
    seen["block_error"] = str(e)
seen["is_recording_after_block"] = agprof.is_recording()
agprof.start(os.path.join(tmp, "killed.agprof"), quiet=True)
agprof._record._session.proc.kill()          # the writer dies under us
seen["writer_killed"] = error_of(agprof.stop)
seen["after_kill"] = compute()
seen["report_missing"] = error_of(agprof.report, os.path.join(tmp, "missing.agprof"))
print(json.dumps(seen))
"""

NO_PATCH = r"""
import sys, warnings
import tensorflow as tf
import agprof
step = tf.function(lambda x: tf.reduce_sum(x * 2.0))
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    with agprof.record(sys.argv[1], quiet=True):
        r = [float(step(tf.ones([n]))) for n in (1, 2, 3)]
print(r, [str(x.message) for x in w if issubclass(x.category, agprof.AgprofWarning)])
"""

UNDER_RUN = r"""
import sys, warnings
import tensorflow as tf
import agprof
step = tf.function(lambda x: tf.reduce_sum(x * 2.0))
with warnings.catch_warnings(record=True) as w:
    warnings.simplefilter("always")
    with agprof.record(sys.argv[1] + ".inner", quiet=True):
        r = [float(step(tf.ones([n]))) for n in (1, 2, 3)]
print(r, [str(x.message) for x in w if issubclass(x.category, agprof.AgprofWarning)])
"""


def py(script, *args, env=None):
    return subprocess.run([agtest.PYTHON, "-c", script] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, env=env)


def meta(path, key):
    db = sqlite3.connect(path)
    try:
        row = db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None
    finally:
        db.close()


def main():
    tmp = agtest.agtestlib.tmpdir("agprof-bad-")
    r = py(CASES, tmp)
    if not agtest.check(r.returncode == 0, "the bad cases ran without a crash: " + r.stderr[-3000:]):
        return
    seen = json.loads(r.stdout.strip().splitlines()[-1])
    expected = [1.0 * 2 * n for n in (1, 2, 3)]
    for key in ("plain", "recorded", "after_kill"):
        agtest.check_eq(seen[key], expected, "results unchanged (%s)" % key)
    agtest.check("without agprof.start()" in (seen["stop_without_start"] or ""), "stop() without start()",
                 seen["stop_without_start"])
    agtest.check("already recording" in (seen["start_twice"] or ""), "start() twice", seen["start_twice"])
    agtest.check_eq(seen["stop"], os.path.join(tmp, "twice.agprof"), "stop() returns the recording")
    agtest.check(seen["stop_again"] is not None, "a second stop()", seen["stop_again"])
    agtest.check("exists" in (seen["exists"] or ""), "start() on an existing file without force", seen["exists"])
    agtest.check_eq(seen["is_recording_after_error"], False, "a refused start() leaves nothing recording")
    agtest.check_eq(seen["block_error"], "\"the block's own error\"", "record(): the block's own exception")
    agtest.check_eq(seen["is_recording_after_block"], False, "record() stopped after the exception")
    agtest.check("status -9" in (seen["writer_killed"] or ""), "stop() when the writer was killed", seen["writer_killed"])
    agtest.check(seen["report_missing"] is not None and "missing.agprof" in seen["report_missing"],
                 "report() of a missing file", seen["report_missing"])
    rep = subprocess.run([agtest.AGPROF, "report", "--format", "json", os.path.join(tmp, "raises.agprof")],
                         stdout=subprocess.PIPE, text=True)
    agtest.check(rep.returncode == 0 and json.loads(rep.stdout)["session"]["function_calls"] == 3,
                 "the block that raised is recorded up to the exception")

    # A symbol that cannot be patched: with GOT patching off nothing reaches the hooks.
    out = os.path.join(tmp, "nopatch.agprof")
    r = py(NO_PATCH, out, env=dict(os.environ, AGPROF_NO_GOT_PATCH="1"))
    if agtest.check(r.returncode == 0, "no GOT patching: " + r.stderr[-2000:]):
        agtest.check(r.stdout.startswith(str(expected)), "results unchanged without patching", r.stdout)
        agtest.check("could be patched" in r.stdout, "a warning says TensorFlow's calls could not be patched", r.stdout)
        agtest.check_eq(meta(out, "tf_status"), "mismatch", "the recording says the hooks were not reached")

    # Under `agprof run` start()/stop() open and close its capture window: no second recording,
    # no warning, the block's calls in the run's recording (tests/integration/test_capture.py: the window).
    out = os.path.join(tmp, "run.agprof")
    r = subprocess.run([agtest.AGPROF, "run", "-q", "-o", out, "--", agtest.PYTHON, "-c", UNDER_RUN, out],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if agtest.check(r.returncode == 0, "agprof.record() under agprof run: " + r.stderr[-2000:]):
        agtest.check(r.stdout.startswith(str(expected) + " []"),
                     "under agprof run: results unchanged, no warning", r.stdout)
        rep = subprocess.run([agtest.AGPROF, "report", "--format", "json", out], stdout=subprocess.PIPE, text=True)
        agtest.check(rep.returncode == 0 and json.loads(rep.stdout)["session"]["function_calls"] == 3,
                     "under agprof run: the block's 3 calls are in the run's recording")
        agtest.check(not os.path.exists(out + ".inner"), "under agprof run: no second recording")
        agtest.check_eq(meta(out, "tf_status"), "hooked", "under agprof run: the run's recording")


if __name__ == "__main__":
    agtest.need_agprof()
    main()
    agtest.finish("python-badcases")
