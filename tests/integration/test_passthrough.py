"""The workload's stdout, stderr, stdin and exit status pass through
`agprof run` untouched.

samples/exit_status.py writes known bytes (some not UTF-8, a last line
without newline) to stdout and stderr, echoes its stdin and exits 3.  Its
stdout under agprof must be byte-identical to a run without agprof; its
stderr must contain the workload's own bytes, in order (TensorFlow's log
lines carry timestamps, and agprof may add its own summary, so stderr is
compared by content, not as a whole); the exit status must be 3, and so must
the recording's meta.exit_status.  The environment a workload sees is the
same as without agprof.
"""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

STDIN = b"line one\nline two \xc3\xa9\n"


def contains_in_order(haystack, needles):
    pos = 0
    for n in needles:
        i = haystack.find(n, pos)
        if i < 0:
            return False
        pos = i + len(n)
    return True


def main():
    agtest.need_agprof()
    prog = [agtest.PYTHON, agtest.sample("exit_status.py")]
    direct = subprocess.run(prog, input=STDIN, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, timeout=120)
    check_eq(direct.returncode, 3, "sample's own exit status without agprof (sanity)")

    d = agtest.tmpdir()
    out = os.path.join(d, "exit.agprof")
    rec = agtest.run_agprof(out, prog, stdin_data=STDIN)
    check_eq(rec.returncode, 3, "agprof run exit status (workload exits 3)")
    check_eq(rec.stdout, direct.stdout, "stdout bytes under agprof vs. without")
    want_err = [b"stderr line 1\n", b"stderr last"]
    check(contains_in_order(rec.stderr, want_err),
          "the workload's stderr bytes, in order, under agprof",
          rec.stderr[-600:], want_err)
    check(os.path.exists(out), "recording written for a workload that exited 3")
    if os.path.exists(out):
        db = agtest.open_recording(out)
        agtest.check_recording_header(db)
        m = agtest.meta(db)
        check_eq(m.get("exit_status"), "3", "meta exit_status")
        check_eq(m.get("exit_signal"), "0", "meta exit_signal")
        check_eq(m.get("tf_status"), "hooked", "meta tf_status")

    # Another status, to make sure it is not a constant.
    rec0 = agtest.run_agprof(os.path.join(d, "exit0.agprof"), prog + ["0"], stdin_data=b"")
    check_eq(rec0.returncode, 0, "agprof run exit status (workload exits 0)")
    rec42 = agtest.run_agprof(os.path.join(d, "exit42.agprof"), prog + ["42"], stdin_data=b"")
    check_eq(rec42.returncode, 42, "agprof run exit status (workload exits 42)")
    # The environment the workload sees is the caller's, unchanged (agprof's
    # own LD_PRELOAD/AGPROF_SHM are taken out again by the collector).
    probe = [agtest.PYTHON, "-c",
             "import json, os, sys; json.dump(dict(os.environ), sys.stdout, sort_keys=True)"]
    env = dict(os.environ, AGPROF_TEST_VARIABLE="x y\tz")
    direct_env = subprocess.run(probe, env=env, stdout=subprocess.PIPE, timeout=60).stdout
    rec_env = agtest.run_agprof(os.path.join(d, "env.agprof"), probe,
                                env_extra={"AGPROF_TEST_VARIABLE": "x y\tz"})
    import json
    try:
        got, want = json.loads(rec_env.stdout), json.loads(direct_env)
        diff = {k: (got.get(k), want.get(k)) for k in set(got) | set(want)
                if got.get(k) != want.get(k)}
        check_eq(diff, {}, "environment variables that differ under agprof (got, without)")
    except ValueError:
        agtest.fail("environment probe printed no JSON: %r" % rec_env.stdout[-300:])
    # A user's own LD_PRELOAD is kept (agprof prepends its collector, which
    # takes itself out again).
    rec_pre = agtest.run_agprof(os.path.join(d, "preload.agprof"), probe,
                                env_extra={"LD_PRELOAD": "libm.so.6"})
    try:
        check_eq(json.loads(rec_pre.stdout).get("LD_PRELOAD"), "libm.so.6",
                 "the workload's LD_PRELOAD when the caller had one")
    except ValueError:
        agtest.fail("LD_PRELOAD probe printed no JSON: %r" % rec_pre.stdout[-300:])
    agtest.finish("passthrough")


if __name__ == "__main__":
    main()
