"""agprof.stop() and a detaching `agprof attach` racing the program's exit (issue 40).

A small TensorFlow program traces once per step (a Python float) and ends
with status 7 right after the recording's end, in one of five ways:
  stop         agprof.stop(), then sys.exit(7)
  exit         sys.exit(7) with the recording open (agprof's atexit ends it)
  os_exit      os._exit(7): no atexit; the writer sees the program gone
  thread_stop  agprof.stop() on another thread while the main thread exits
  attach       no agprof.start(): `agprof attach --duration D PID` from outside,
               D drawn around the program's remaining time, so the detach
               and the exit race
Checks per trial: the program's own output and status 7; within 30 s the
recording is FILE (no hidden file left); `agprof report FILE` exits 0; its
exit status is absent (an attached recorder never saw it: never a made-up
0) and `attached` says how it was made; it holds no trace the program did
not make, and for the in-process ways every trace (all were made before
the recording's end).

    test_stop_races.py                       the suite: one trial per way
    test_stop_races.py --trials N [--seed S] N random trials, then a table
"""
import glob
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "integration"))
import agtest  # noqa: E402
from agtest import check  # noqa: E402

PROGRAM = r'''
import os, sys, time, threading
import tensorflow as tf
mode, steps, path, pause = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])

@tf.function
def step(x, lr):
    return x * lr

v = tf.ones([4])
if mode != "attach":
    import agprof
    agprof.start(path)
else:
    print("READY", os.getpid(), flush=True)
    time.sleep(1.5)
for i in range(steps):
    step(v, 0.5 + i)
    time.sleep(0.05)
print("TRACES", step.experimental_get_tracing_count(), flush=True)
time.sleep(pause)
if mode == "stop":
    agprof.stop()
    sys.exit(7)
elif mode == "exit" or mode == "attach":
    sys.exit(7)
elif mode == "os_exit":
    os._exit(7)
elif mode == "thread_stop":
    threading.Thread(target=agprof.stop).start()
    sys.exit(7)
'''
WAYS = ("stop", "exit", "os_exit", "thread_stop", "attach")
EXIT = 7


def published(out, deadline):
    while time.monotonic() < deadline:
        hidden = glob.glob(os.path.join(os.path.dirname(out), "." + os.path.basename(out) + ".*"))
        if os.path.exists(out) and not hidden:
            return True
        time.sleep(0.1)
    return False


def run_trial(d, prog, way, steps, pause, duration, name):
    out = os.path.join(d, name + ".agprof")
    env = dict(os.environ, AGPROF_BIN=agtest.AGPROF)
    p = subprocess.Popen([agtest.PYTHON, prog, way, str(steps), out, str(pause)], stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, env=env, cwd=d)
    attach = None
    if way == "attach":
        line = p.stdout.readline().split()
        if line[:1] == ["READY"]:
            attach = subprocess.Popen([agtest.AGPROF, "attach", "-q", "--duration", "%.2f" % duration, "-o", out,
                                       line[1]], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    text, _ = p.communicate(timeout=180)
    causes = []
    if p.returncode != EXIT:
        causes.append("the program exits %s, not %d" % (p.returncode, EXIT))
    made = [int(l.split()[1]) for l in text.splitlines() if l.startswith("TRACES ")]
    if made != [steps]:
        causes.append("the program's output %r" % text[-200:])
    if attach is not None:
        _, err = attach.communicate(timeout=120)
        if attach.returncode != 0:
            causes.append("agprof attach exits %d: %s" % (attach.returncode, err.strip()[-200:]))
    if not published(out, time.monotonic() + 30):
        return causes + ["not published as FILE within 30 s"]
    r = subprocess.run([agtest.AGPROF, "report", "--format", "json", out], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=120)
    if r.returncode != 0:
        return causes + ["report exits %d: %s" % (r.returncode, r.stderr[-200:])]
    s = json.loads(r.stdout)["session"]
    if s["exit_status"] is not None:
        causes.append("a made-up exit status %s" % s["exit_status"])
    if not s.get("attached"):
        causes.append("no 'attached'")
    db = agtest.open_recording(out)
    got = agtest.q1(db, "SELECT count(*) FROM traces t JOIN functions f ON f.id = t.function_id "
                        "JOIN strings n ON n.id = f.name_id WHERE n.text = 'step'")
    db.close()
    if got > steps:
        causes.append("traces made up (%d of %d)" % (got, steps))
    if way != "attach" and got != steps:
        causes.append("traces lost (%d of %d)" % (got, steps))
    return causes


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()
    prog = os.path.join(d, "prog.py")
    with open(prog, "w") as fh:
        fh.write(PROGRAM)
    n, rng = agtest.trials_from_argv()
    plan = [rng.choice(WAYS) for _ in range(n)] if n is not None else list(WAYS)
    rows = []
    for i, way in enumerate(plan):
        steps, pause = rng.randint(2, 6), rng.uniform(0, 0.05)
        # the attach's window: from about 1.5 s before the steps to past the exit
        duration = 1.5 + steps * 0.06 + rng.uniform(-0.4, 0.4)
        causes = run_trial(d, prog, way, steps, pause, duration, "t%d" % i)
        rows.append((way, causes))
        print("%-12s steps %d pause %.3f: %s" % (way, steps, pause, "; ".join(causes) or "ok"), flush=True)
        check(not causes, "%s trial %d" % (way, i), causes)
    for way in WAYS:
        these = [c for w, c in rows if w == way]
        if these:
            print("%-12s %3d trials, %3d passed" % (way, len(these), sum(1 for c in these if not c)))
    agtest.finish("stop_races")


if __name__ == "__main__":
    main()
