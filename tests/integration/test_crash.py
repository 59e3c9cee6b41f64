"""Crash consistency: SIGKILL of agprof's launcher, of the workload, or of
both, at a moment of a real TensorFlow run: start-up, TensorFlow's import,
while tracing, during a tf.train.Checkpoint write, at the program's finish.

Each trial runs one small TensorFlow program (12 steps, one trace each; a
checkpoint at step 6; exit status 7) and checks:
- the recording is FILE, the name the user gave (the keeper, writer/keeper.c,
  moved it there), no hidden file is left;
- `agprof report FILE` exits 0 within REPORT_S;
- a launcher that died before its finish: the recording says cut short and
  has no exit status (never a made-up one); otherwise the exit status is the
  workload's (7, or 137 when it was killed), and a launcher that lived
  exited with that status too;
- it holds every trace the program made up to a commit interval before the
  launcher's death (all of them when only the workload died) and none it did
  not make (the program's own experimental_get_tracing_count(), printed each
  step);
- the text report says how the run ended.
A trial that runs past TRIAL_S fails with cause "timeout" (its processes are
killed); AGPROF_CRASH_KEEP=DIR keeps a failed trial's recording.

    test_crash.py                       the suite: 6 seeded trials, each moment and victim
    test_crash.py --trials N [--seed S] N random (moment, victim) trials, then a table

The 100-trial run (outside the suite; about 16 minutes on 2 cores at a load of 13):
    AGPROF=build/cmd/agprof/agprof AGPROF_SOURCE_ROOT=. \\
        .venv/bin/python tests/integration/test_crash.py --trials 100 --seed 7
Its results, and the failures that led to fixes, are in tests/integration/README.md
("Kill trials").
"""
import glob
import json
import os
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
print("IMPORTED", flush=True)

@tf.function
def step(x, lr):
    return x * lr

v = tf.Variable(tf.ones([4]))
ckpt = tf.train.Checkpoint(v=v)
steps = int(sys.argv[1])
for i in range(steps):
    step(v, 0.5 + i)          # a Python float: one trace per step
    print("TRACES", step.experimental_get_tracing_count(), flush=True)
    if i == steps // 2:
        print("CHECKPOINT", flush=True)
        ckpt.write(os.path.join(sys.argv[2], "ckpt"))
        print("CHECKPOINTED", flush=True)
    time.sleep(0.05)
print("DONE", flush=True)
sys.exit(7)
'''
STEPS = 12
EXIT = 7
COMMIT_S = 0.6   # more than the writer's commit interval (0.25 s) and its poll: what was traced by then is committed
TRIAL_S = 150    # one trial, from start to the last check
REPORT_S = 60    # one report of a small recording
MOMENTS = ("startup", "import", "tracing", "checkpoint", "finish")
VICTIMS = ("launcher", "workload", "both")


class Trial:
    """One run under `agprof run`, its output as read so far, and what a kill did."""

    def __init__(self, d, name, moment, victim, rng):
        self.d, self.moment, self.victim, self.rng = d, moment, victim, rng
        self.out = os.path.join(d, name)
        self.deadline = time.monotonic() + TRIAL_S
        self.seen = []        # (when read, tracing count) of every TRACES line
        self.lines = []
        self.buf = b""
        self.pid = None       # the workload's
        self.causes = []
        ckdir = os.path.join(d, name + ".ckpt")
        os.makedirs(ckdir, exist_ok=True)
        self.p = subprocess.Popen([agtest.AGPROF, "run", "-o", self.out, "--", agtest.PYTHON,
                                   os.path.join(d, "prog.py"), str(STEPS), ckdir],
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=d)
        os.set_blocking(self.p.stdout.fileno(), False)
        self.t0 = time.monotonic()

    def expect(self, cond, cause, detail=""):
        """One check; a failed one's cause goes to the trial's causes."""
        what = "%s (%s killed at %s): %s" % (os.path.basename(self.out), self.victim, self.moment, cause)
        if not check(cond, what, detail):
            self.causes.append(cause)
        return cond

    def fail(self, cause, detail=""):
        self.expect(False, cause, detail)

    def read_until(self, want, until):
        """Lines until want(line) (True) or until (False): EOF counts as the end."""
        until = min(until, self.deadline)
        while time.monotonic() < until:
            try:
                chunk = self.p.stdout.read()
            except (ValueError, OSError):
                chunk = b""
            self.buf += chunk or b""
            while b"\n" in self.buf:
                line, self.buf = self.buf.split(b"\n", 1)
                text = line.decode(errors="replace")
                self.lines.append(text)
                if text.startswith("START"):
                    self.pid = int(text.split()[1])
                elif text.startswith("TRACES"):
                    self.seen.append((time.monotonic(), int(text.split()[1])))
                if want(text):
                    return True
            if chunk == b"":
                return False   # end of file: nobody writes any more
            if not chunk:
                time.sleep(0.01)
        return False

    def alive(self):
        """The workload runs (a zombie waiting for its launcher does not)."""
        try:
            with open("/proc/%d/stat" % self.pid) as fh:
                return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
        except (OSError, TypeError, IndexError):
            return False

    def traces(self):
        return max([0] + [n for _, n in self.seen])

    def committed_before(self, t):
        """The count a commit interval before t: the recording must hold at least that."""
        return max([0] + [n for when, n in self.seen if when <= t - COMMIT_S])

    def find_workload(self):
        """The workload's pid before it printed START: the launcher's child that runs prog.py."""
        while self.pid is None and time.monotonic() < self.deadline:
            for task in glob.glob("/proc/%d/task/*/children" % self.p.pid):
                for child in open(task).read().split():
                    try:  # the program once exec'd: not the keeper, a fork of the launcher
                        with open("/proc/%s/cmdline" % child, "rb") as fh:
                            argv = fh.read().split(b"\0")
                        if argv[0] == agtest.PYTHON.encode() and b"prog.py" in argv[1]:
                            self.pid = int(child)
                    except (OSError, IndexError):
                        pass
            if self.pid is None:
                if self.p.poll() is not None:
                    return
                time.sleep(0.005)

    def wait_moment(self):
        """Read the output up to the moment; False when it never came."""
        r = self.rng
        if self.moment == "startup":
            time.sleep(r.uniform(0.0, 0.3))
            return True
        if self.moment == "import":
            ok = self.read_until(lambda line: line.startswith("START"), self.deadline)
            return ok and (self.read_until(lambda line: False, time.monotonic() + r.uniform(0.0, 1.5)) or True)
        if self.moment == "tracing":
            k = r.randint(1, STEPS - 1)
            ok = self.read_until(lambda line: line == "TRACES %d" % k, self.deadline)
            return ok and (self.read_until(lambda line: False, time.monotonic() + r.uniform(0.0, 0.05)) or True)
        marker = "CHECKPOINT" if self.moment == "checkpoint" else "DONE"
        ok = self.read_until(lambda line: line == marker, self.deadline)
        return ok and (self.read_until(lambda line: False, time.monotonic() + r.uniform(0.0, 0.3)) or True)

    def kill(self):
        """Kill the victim(s); returns the workload's status if it was still to come from the launcher."""
        if self.victim in ("workload", "both"):
            self.find_workload()
        self.kill_time = time.monotonic()
        self.committed = self.committed_before(self.kill_time)
        killed_workload = False
        if self.victim in ("launcher", "both"):
            os.kill(self.p.pid, signal.SIGKILL)
        if self.victim in ("workload", "both") and self.alive():
            try:
                os.kill(self.pid, signal.SIGKILL)
                killed_workload = True
            except ProcessLookupError:
                pass
        self.killed_workload = killed_workload

    def wait_end(self):
        """Read the rest: the workload goes on without its launcher; its own count bounds the recording."""
        self.read_until(lambda line: False, self.deadline)
        try:
            self.status = self.p.wait(timeout=max(1, self.deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.status = None
        self.made = self.traces()
        if self.victim in ("workload", "both"):
            self.made += 1  # a trace made, not printed yet, when the workload died

    def stop(self):
        for pid in (self.p.pid, self.pid):
            if pid:
                agtest.agtestlib.kill_quietly(pid)
        self.p.wait()


def wait_published(out, deadline):
    hidden = []
    while time.monotonic() < deadline:
        hidden = glob.glob(os.path.join(os.path.dirname(out), "." + os.path.basename(out) + ".*"))
        if os.path.exists(out) and not hidden:
            return []
        time.sleep(0.05)
    return hidden or ["(no file)"]


def report(t):
    """`agprof report --format json FILE`'s session object, or None after a failed check."""
    try:
        rc, text, err = agtest.agprof_cmd("report", "--format", "json", t.out,
                                          timeout=max(1, min(REPORT_S, t.deadline - time.monotonic())))
    except subprocess.TimeoutExpired:
        rc, text, err = -1, "", "timed out"
    if not t.expect(rc == 0, "report timed out" if rc == -1 else "report exits %d" % rc, err[-300:]):
        return None
    return json.loads(text)["session"]


def check_status(t, s):
    """Cut short (no exit status) when the launcher died before its finish, else the workload's status."""
    allowed = {128 + signal.SIGKILL} if t.killed_workload else {EXIT}
    if t.killed_workload and t.moment == "finish":
        allowed = {EXIT, 128 + signal.SIGKILL}  # the kill may have come after the exit, before the launcher's wait
    if t.victim == "workload":
        t.expect(t.status in allowed, "agprof run exits %s, not the workload's %s" % (t.status, sorted(allowed)))
        if t.expect(not s.get("cut_short"), "cut short though the launcher lived"):
            t.expect(s["exit_status"] == t.status, "exit status %s, not the %s agprof run reported"
                     % (s["exit_status"], t.status))
    elif s.get("cut_short"):
        t.expect(s["exit_status"] is None, "cut short with a made-up exit status", s["exit_status"])
    elif t.expect(t.moment == "finish", "not cut short though the launcher died before the program's end"):
        # the launcher had finished: the workload had ended by itself
        t.expect(s["exit_status"] == EXIT, "exit status %s, not %d" % (s["exit_status"], EXIT))


def check_recording(t):
    s = report(t)
    if s is None:
        return
    check_status(t, s)
    db = agtest.open_recording(t.out)
    recorded = agtest.q1(db, "SELECT count(*) FROM traces t JOIN functions f ON f.id = t.function_id "
                             "JOIN strings n ON n.id = f.name_id WHERE n.text = 'step'")
    db.close()
    low = t.traces() if t.victim == "workload" else t.committed
    t.expect(low <= recorded, "traces lost", (low, recorded, t.made))
    t.expect(recorded <= t.made, "traces made up", (low, recorded, t.made))
    rc, txt, _ = agtest.agprof_cmd("report", t.out, timeout=REPORT_S)
    t.expect(rc == 0 and ("cut short" in txt or "exit %d" % EXIT in txt or "exit 137" in txt),
             "the text report does not say how the run ended", txt[:300])


def trial(d, name, moment, victim, rng):
    """One kill; returns the causes of its failures (empty: it passed)."""
    t = Trial(d, name, moment, victim, rng)
    try:
        if not t.wait_moment():
            t.fail("the moment never came", t.lines[-3:])
            return t.causes
        t.kill()
        t.wait_end()
        hidden = wait_published(t.out, t.deadline)
        if not t.expect(not hidden, "timeout" if time.monotonic() >= t.deadline else "not published as FILE",
                        hidden):
            return t.causes
        check_recording(t)
        if time.monotonic() >= t.deadline and not t.causes:
            t.fail("timeout")
        return t.causes
    finally:
        t.stop()
        keep = os.environ.get("AGPROF_CRASH_KEEP")
        if t.causes and keep and os.path.exists(t.out):
            os.makedirs(keep, exist_ok=True)
            shutil.copy(t.out, os.path.join(keep, name))
        for f in glob.glob(t.out + "*") + glob.glob(os.path.join(d, "." + name + ".*")):
            shutil.rmtree(f, ignore_errors=True) if os.path.isdir(f) else os.unlink(f)


def table(results):
    """Counts per moment and victim: trials, passes, failures with their causes."""
    print("%-11s %-9s %6s %6s  %s" % ("moment", "victim", "trials", "passed", "failures (cause: count)"))
    for m in MOMENTS:
        for v in VICTIMS:
            rows = [c for (mm, vv, c) in results if mm == m and vv == v]
            if not rows:
                continue
            causes = {}
            for c in rows:
                for cause in set(c):
                    causes[cause] = causes.get(cause, 0) + 1
            print("%-11s %-9s %6d %6d  %s" % (m, v, len(rows), sum(1 for c in rows if not c),
                                              ", ".join("%s: %d" % kv for kv in sorted(causes.items()))))
    print("total: %d trials, %d passed" % (len(results), sum(1 for r in results if not r[2])))


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()
    with open(os.path.join(d, "prog.py"), "w") as fh:
        fh.write(PROGRAM)
    n, rng = agtest.trials_from_argv()
    if n is not None:
        plan = [(rng.choice(MOMENTS), rng.choice(VICTIMS)) for _ in range(n)]
    else:
        plan = [("startup", "launcher"), ("import", "both"), ("tracing", "launcher"),
                ("tracing", "workload"), ("checkpoint", "both"), ("finish", "launcher")]
    results = []
    for i, (moment, victim) in enumerate(plan):
        t0 = time.monotonic()
        causes = trial(d, "r%d.agprof" % i, moment, victim, rng)
        results.append((moment, victim, causes))
        print("trial %d: %s killed at %s: %s (%.1f s)" % (i, victim, moment, "; ".join(causes) or "ok",
                                                         time.monotonic() - t0), flush=True)
    table(results)
    agtest.finish("crash")


if __name__ == "__main__":
    main()
