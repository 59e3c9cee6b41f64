"""Capture windows (issue 11): what `agprof run` records of a run.

samples/capture_steps.py writes its own counters (every AddV2 it dispatched
with CLOCK_MONOTONIC before and after it, every train_step call with its
number): the oracle.  Each case checks the recording against them:

1. --capture train_step:5-8: exactly calls 5..8 of train_step, and exactly
   the AddV2 ops dispatched between the start of call 5 and the end of
   call 8; one capture_windows row; traces recorded all the same.
2. --delay 8 --duration 1.5 (steps 100 ms apart): every op inside the
   window is recorded, none outside (ops straddling a boundary either way),
   and the window starts ~8 s after the launch and lasts ~1.5 s.
3. SIGUSR2 sent to agprof (not the workload) toggles recording: the
   program waits at two markers while the test toggles; the ops of the
   middle phase are not recorded, all others are.
4. agprof.start()/agprof.stop() under agprof run, without and with
   --capture api; agprof.start() without agprof run needs a path.
5. --capture of a function the program never calls: the recording opens,
   holds the trace, no events, and both agprof's summary and agprof report
   say the window never opened.
The report's active time (every share's denominator) is the windows' time.
"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq, q1  # noqa: E402

SAMPLE = agtest.sample("capture_steps.py")
PYENV = {"PYTHONPATH": os.path.join(agtest.SOURCE_ROOT, "python")}


def record(d, name, opts, args=()):
    out = os.path.join(d, name + ".agprof")
    oracle = os.path.join(d, name + ".json")
    cmd = [agtest.AGPROF, "run", "-o", out] + list(opts) + ["--", agtest.PYTHON, SAMPLE, "--out", oracle] + list(args)
    env = dict(os.environ, **PYENV)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, timeout=240)
    check_eq(p.returncode, 0, name + ": agprof exit status (stderr: %s)" % p.stderr[-1500:].decode("utf-8", "replace"))
    with open(oracle) as f:
        return agtest.open_recording(out), json.load(f), p.stderr.decode("utf-8", "replace"), out


def recorded_addv2(db, pid):
    return q1(db, "SELECT count(*) FROM eager_ops e JOIN strings s ON s.id = e.op_id "
                  "WHERE s.text = 'AddV2' AND e.pid = ?", pid)


def windows(db, pid):
    return db.execute("SELECT start_ns, end_ns, why FROM capture_windows WHERE pid = ? ORDER BY start_ns",
                      (pid,)).fetchall()


def report_json(path):
    rc, out, err = agtest.agprof_cmd("report", "--format", "json", path)
    check_eq(rc, 0, "agprof report exit status: " + err[-500:])
    return json.loads(out) if rc == 0 else {}


def function_case(d):
    db, o, _, path = record(d, "function", ["--capture", "train_step:5-8"])
    pid = o["pid"]
    calls = {c[0]: c for c in o["calls"]}
    check_eq(q1(db, "SELECT count(*) FROM function_calls WHERE pid = ?", pid), 4, "calls 5..8 recorded")
    first, last = calls[5][1], calls[8][2]
    want = sum(1 for _, t0, t1 in o["ops"] if t0 >= first and t1 <= last)
    check_eq(recorded_addv2(db, pid), want, "AddV2 between call 5 and call 8 (the program's count)")
    check_eq(want, 30, "the program dispatched 3 steps of 10 ops in the window")
    w = windows(db, pid)
    check_eq(len(w), 1, "one capture window")
    if w:
        check(w[0][0] <= calls[5][2] and w[0][1] >= calls[8][1], "the window holds calls 5 to 8", w[0], calls[5])
        check("call 5 of train_step" in w[0][2], "capture_windows.why", w[0][2], "call 5 of train_step ..")
    check_eq(q1(db, "SELECT count(*) FROM traces WHERE pid = ?", pid), 1, "the trace (before the window)")
    s = report_json(path).get("session", {})
    cap = s.get("capture") or {}
    check_eq(cap.get("windows_recorded"), 1, "report: one window")
    if w:
        check_eq(s.get("active_ns"), w[0][1] - w[0][0], "report: active time is the window's time")
    # the one trace ran before the window: counted in trace_ns, not in the share of the recorded time
    check(s.get("trace_ns", 0) > 0, "report: the trace's time is counted", s.get("trace_ns"))
    check_eq(s.get("trace_recorded_ns"), 0, "report: no tracing inside the window")
    check_eq(s.get("trace_share"), 0, "report: tracing's share of the recorded time")
    rc, text, _ = agtest.agprof_cmd("report", path)
    check("0.0% of the recorded time" in text and "of it outside the windows" in text,
          "the text report says the tracing was outside the window", text[:700])
    # the rule's share base: with tracing-overhead's thresholds below 0 it fires, and says what its share is of
    rc, out, _ = agtest.agprof_cmd("report", "--format", "json", "--set", "tracing-overhead.max_share=-1",
                                   "--set", "tracing-overhead.min_ns=-1", path)
    msgs = [f["message"] for f in json.loads(out)["findings"] if f["rule"] == "tracing-overhead"] if rc == 0 else []
    check(msgs and msgs[0].startswith("tracing takes 0.0% of the recorded time, ") and "of the tracing outside it" in msgs[0],
          "tracing-overhead's share is of the recorded time", msgs)


def delay_case(d, delay=8):
    # the loop runs ~12 s after TensorFlow's import: the window (8 s to 9.5 s) falls inside it, unless
    # the import alone took past 9.5 s (a loaded machine): then once more, the window 2 s into the loop
    db, o, _, _ = record(d, "delay", ["--delay", str(delay), "--duration", "1.5"],
                         ["--steps", "120", "--ops-per-step", "5", "--sleep", "0.1"])
    pid = o["pid"]
    w = windows(db, pid)
    if not check_eq(len(w), 1, "one window for --delay/--duration"):
        return
    a, b, why = w[0]
    start = int(q1(db, "SELECT value FROM meta WHERE key = 'start_ns'"))
    first_op = min((t0 for _, t0, _ in o["ops"]), default=None)
    if delay == 8 and first_op is not None and first_op > b:
        print("the loop began %.1f s after the start, past the window: again with the window in it"
              % ((first_op - start) / 1e9))
        return delay_case(d, int((first_op - start) / 1e9) + 2)
    check(abs((a - start) / 1e9 - delay) < 0.2, "the window opens %d s after the start" % delay,
          (a - start) / 1e9, delay)
    check(abs((b - a) / 1e9 - 1.5) < 0.2, "the window lasts 1.5 s", (b - a) / 1e9, 1.5)
    inside = sum(1 for _, t0, t1 in o["ops"] if t0 >= a and t1 <= b)
    touching = sum(1 for _, t0, t1 in o["ops"] if t1 >= a and t0 <= b)
    n = recorded_addv2(db, pid)
    check(inside <= n <= touching and inside > 0, "AddV2 recorded = ops in the window (program's times)",
          n, "%d..%d" % (inside, touching))
    check_eq(why, "--delay .. --duration", "capture_windows.why")


def wait_marker(p, step):
    while True:
        line = p.stdout.readline()
        if not line:
            return False
        if line.strip() == b"AGPROF-MARKER %d" % step:
            return True


def signal_case(d):
    out = os.path.join(d, "usr2.agprof")
    oracle = os.path.join(d, "usr2.json")
    go = os.path.join(d, "go")
    cmd = [agtest.AGPROF, "run", "-o", out, "--", agtest.PYTHON, SAMPLE, "--out", oracle, "--steps", "9",
           "--wait-file", go, "--wait-at", "3,6"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        for step in (3, 6):
            if not check(wait_marker(p, step), "marker %d" % step):
                break
            p.send_signal(signal.SIGUSR2)  # to agprof: it toggles the window within one poll
            time.sleep(0.3)
            open("%s.%d" % (go, step), "w").close()
        p.stdout.read()
        check_eq(p.wait(timeout=120), 0, "agprof exit status with SIGUSR2")
    finally:
        if p.poll() is None:
            p.kill()
    with open(oracle) as f:
        o = json.load(f)
    db = agtest.open_recording(out)
    pid = o["pid"]
    want = sum(1 for s, _, _ in o["ops"] if s <= 3 or s > 6)
    check_eq(recorded_addv2(db, pid), want, "AddV2 of steps 1-3 and 7-9, none of 4-6 (program's count)")
    # calls: the warm-up and steps 1-3 before the first toggle, steps 7-9 after the second
    check_eq(q1(db, "SELECT count(*) FROM function_calls WHERE pid = ?", pid), 7, "graph calls outside 4-6")
    check_eq(len(windows(db, pid)), 2, "two windows (start..SIGUSR2, SIGUSR2..end)")


def api_case(d):
    plan = ["--api", "3:start,6:stop,8:start,10:stop", "--steps", "12"]
    # without --capture api: the window is open from the start; stop() closes, start() reopens
    db, o, _, _ = record(d, "api-open", [], plan)
    want = sum(1 for s, _, _ in o["ops"] if s < 6 or 8 <= s < 10)
    check_eq(recorded_addv2(db, o["pid"]), want, "agprof.stop()/start() under agprof run (program's count)")
    # --capture api: closed until the first agprof.start()
    db, o, _, _ = record(d, "api", ["--capture", "api"], plan)
    want = sum(1 for s, _, _ in o["ops"] if 3 <= s < 6 or 8 <= s < 10)
    check_eq(recorded_addv2(db, o["pid"]), want, "--capture api: only between start() and stop()")
    check_eq(len(windows(db, o["pid"])), 2, "--capture api: two windows")
    # outside agprof run, start() without a path is an error, not a silent no-op
    r = subprocess.run([agtest.PYTHON, "-c", "import agprof\ntry:\n    agprof.start()\nexcept agprof.AgprofError as e:"
                        "\n    print('error:', e)"], stdout=subprocess.PIPE, text=True,
                       env=dict(os.environ, **PYENV))
    check("needs a recording path" in r.stdout, "agprof.start() without agprof run and without a path",
          r.stdout, "error: ... needs a recording path")


def never_case(d):
    db, o, err, path = record(d, "never", ["--capture", "no_such_function:1-5"])
    pid = o["pid"]
    check_eq(q1(db, "SELECT count(*) FROM eager_ops"), 0, "no eager op outside the window")
    check_eq(q1(db, "SELECT count(*) FROM function_calls"), 0, "no call outside the window")
    check_eq(q1(db, "SELECT count(*) FROM traces WHERE pid = ?", pid), 1, "the trace is recorded")
    check_eq(q1(db, "SELECT count(*) FROM capture_windows"), 0, "no window")
    check("never opened" in err, "agprof run says the window never opened", err[-400:], "never opened")
    rc, out, _ = agtest.agprof_cmd("report", path)
    check(rc == 0 and "never opened" in out, "agprof report says the window never opened", out[:600])
    rc, _, err = agtest.agprof_cmd("run", "--capture", "train_step:5", "--", "true")
    check_eq(rc, 2, "--capture without FROM-TO is a usage error (" + err.strip() + ")")


def main():
    d = agtest.tmpdir()
    for case in (function_case, delay_case, signal_case, api_case, never_case):
        print("--", case.__name__)
        case(d)


if __name__ == "__main__":
    agtest.need_agprof()
    main()
    agtest.finish("capture")
