"""Crash consistency: agprof's launcher killed (SIGKILL) at chosen moments of
a real TensorFlow run, alone or together with the workload.

Each time, within seconds, the recording is FILE, the name the user gave
(the keeper, writer/keeper.c, moved it there), no hidden file is left,
`agprof report FILE` exits 0 and says the run was cut short with no exit
status (never a made-up one), and it holds every trace the program made up
to a commit interval before the kill and none it did not make (the
program's own tracing count, printed each step).  A launcher killed after
its finish leaves a complete recording instead.

    test_crash.py [--trials N] [--seed S]   random moments (bench: 100 trials)
Without --trials: four fixed moments (start-up, TensorFlow's import, while
tracing, at the program's end) and one kill of both.
"""
import glob
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check  # noqa: E402

PROGRAM = r'''
import os, sys, time
print("START", os.getpid(), flush=True)
import tensorflow as tf

@tf.function
def step(x, lr):
    return x * lr

x = tf.ones([4])
for i in range(int(sys.argv[1])):
    step(x, 0.5 + i)          # a Python float: one trace per step
    print("TRACES", step.experimental_get_tracing_count(), flush=True)
    time.sleep(0.05)
print("DONE", flush=True)
'''
COMMIT_S = 0.6  # more than the writer's commit interval: what was traced by then is committed


def start(d, name, steps):
    prog = os.path.join(d, "prog.py")
    with open(prog, "w") as fh:
        fh.write(PROGRAM)
    out = os.path.join(d, name)
    p = subprocess.Popen([agtest.AGPROF, "run", "-o", out, "--", agtest.PYTHON, prog, str(steps)],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=d)
    return p, out


SEEN = []  # (when, tracing count) of every TRACES line read


def committed_before(kill_time):
    """The program's count a commit interval before the kill: the recording must hold at least that."""
    return max([0] + [n for when, n in SEEN if when <= kill_time - COMMIT_S])


def read_until(p, want, deadline):
    """Lines until want(line) or the deadline; returns (workload pid, traces seen, lines)."""
    pid, traces, lines = None, 0, []
    os.set_blocking(p.stdout.fileno(), False)
    buf = b""
    while time.monotonic() < deadline:
        chunk = p.stdout.read() or b""
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            text = line.decode(errors="replace")
            lines.append(text)
            if text.startswith("START"):
                pid = int(text.split()[1])
            elif text.startswith("TRACES"):
                traces = int(text.split()[1])
                SEEN.append((time.monotonic(), traces))
            if want(text):
                return pid, traces, lines
        if not chunk:
            time.sleep(0.01)
    return pid, traces, lines


def wait_published(out, timeout=30):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        hidden = [f for f in glob.glob(os.path.join(os.path.dirname(out), "." + os.path.basename(out) + ".*"))]
        if os.path.exists(out) and not hidden:
            return []
        time.sleep(0.1)
    return hidden


def trial(d, name, moment, kill_workload=False, steps=30):
    """Kill the launcher at moment: a float (seconds after start) or a marker ('import', 'traces:N', 'done')."""
    p, out = start(d, name, steps)
    t0 = time.monotonic()
    del SEEN[:]
    if isinstance(moment, float):
        pid, traces, _ = read_until(p, lambda line: False, t0 + moment)
    elif moment == "import":
        pid, traces, _ = read_until(p, lambda line: line.startswith("START"), t0 + 120)
        time.sleep(0.5)
    elif moment == "done":
        pid, traces, _ = read_until(p, lambda line: line == "DONE", t0 + 240)
    else:
        n = int(moment.split(":")[1])
        pid, traces, _ = read_until(p, lambda line: line == "TRACES %d" % n, t0 + 240)
        time.sleep(COMMIT_S)
    committed = committed_before(time.monotonic())
    os.kill(p.pid, signal.SIGKILL)
    p.wait(timeout=30)
    if kill_workload and pid:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    # the workload goes on without its launcher; its own count at the end bounds the recording
    rest = read_until(p, lambda line: line == "DONE", time.monotonic() + (2 if kill_workload else 240))[2]
    made = max([traces] + [int(x.split()[1]) for x in rest if x.startswith("TRACES")])
    what = "%s (launcher killed at %s%s)" % (name, moment, ", workload too" if kill_workload else "")
    hidden = wait_published(out)
    if not check(not hidden and os.path.exists(out), "%s: the recording is FILE, nothing hidden" % what,
                 (hidden, os.listdir(d))):
        return
    try:
        rc, text, err = agtest.agprof_cmd("report", "--format", "json", out, timeout=120)
    except subprocess.TimeoutExpired:
        rc, text, err = -1, "", "timed out after 120 s"
    if not check(rc == 0, "%s: agprof report FILE exits 0" % what, (rc, err[-300:])):
        keep = os.environ.get("AGPROF_CRASH_KEEP")
        if keep:  # the recording, for a look at what went wrong
            os.makedirs(keep, exist_ok=True)
            shutil.copy(out, os.path.join(keep, name))
        return
    s = json.loads(text)["session"]
    if s.get("cut_short"):
        check(s["exit_status"] is None, "%s: cut short, and no made-up exit status" % what, s["exit_status"])
    else:
        check(s["exit_status"] == 0, "%s: not cut short: the launcher finished, the program's exit 0" % what, s)
    db = agtest.open_recording(out)
    recorded = agtest.q1(db, "SELECT count(*) FROM traces t JOIN functions f ON f.id = t.function_id "
                              "JOIN strings n ON n.id = f.name_id WHERE n.text = 'step'")
    db.close()
    check(committed <= recorded <= made, "%s: traces committed a commit interval before the kill <= recorded <= "
          "the program's count" % what, (committed, recorded, made))
    rc, txt, _ = agtest.agprof_cmd("report", out)
    check(rc == 0 and ("cut short" in txt or "exit 0" in txt), "%s: the text report says how the run ended" % what,
          txt[:300])


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()
    if "--trials" in sys.argv:
        n = int(sys.argv[sys.argv.index("--trials") + 1])
        seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 1
        rng = random.Random(seed)
        for i in range(n):
            trial(d, "r%d.agprof" % i, rng.uniform(0.05, 12.0), kill_workload=rng.random() < 0.3)
    else:
        trial(d, "startup.agprof", 0.05)
        trial(d, "import.agprof", "import")
        trial(d, "tracing.agprof", "traces:5")
        trial(d, "end.agprof", "done")
        trial(d, "both.agprof", "traces:3", kill_workload=True)
    agtest.finish("crash")


if __name__ == "__main__":
    main()
