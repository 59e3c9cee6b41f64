"""The disk filling at random points of a real TensorFlow run (issue 40).

Each trial mounts a tmpfs of a random size (log-uniform from 192 KiB to
4 MiB; the suite's five trials one in each band from 8 KiB, in a private mount namespace: `unshare -m`, nothing visible outside
the test) and records there a small program that traces once per step
(a Python float), runs eager ops, writes a tf.train.Checkpoint beside the
recording at its middle step and exits with status 7.  The disk fills at
the schema's creation, while tracing, at the checkpoint, at the finish's
indexes, or never, depending on the size.  Checks per trial:
- the recording could not be created (the disk too small for the schema):
  agprof run exits 2 with one error line, the program is not started, and
  no file, hidden or not, is left;
- otherwise the program runs to its end with its own output, agprof run
  exits with the program's status (7: a failure of the program takes
  precedence over 3, agprof(1)), says so in at most one error line, the
  recording is FILE (no hidden file left; a write-ahead log the finish had
  no room to fold in stays beside it as FILE-wal, and a warning names it),
  `agprof report FILE` exits 0,
  its exit status is 7 or, when the disk filled before the finish could
  write it, absent (never a made-up one), it holds no trace the program did
  not make, and a run that reported no failure holds every trace.

    test_disk_trials.py                       the suite: 5 seeded trials, one per size band
    test_disk_trials.py --trials N [--seed S] N random sizes, then a table

Needs root and unshare (a tmpfs mount); otherwise it says so and passes
nothing: exit 77, meson's skip.
"""
import math
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check  # noqa: E402

PROGRAM = r'''
import os, sys
import tensorflow as tf
print("IMPORTED", flush=True)

@tf.function
def step(x, lr):
    return x * lr

v = tf.Variable(tf.ones([64]))
ckpt = tf.train.Checkpoint(v=v)
steps = int(sys.argv[1])
for i in range(steps):
    step(v, 0.5 + i)          # a Python float: one trace per step
    for _ in range(200):
        v.assign_add(tf.ones([64]) * 1e-3)
    print("TRACES", step.experimental_get_tracing_count(), flush=True)
    if i == steps // 2:
        try:
            ckpt.write(os.path.join(sys.argv[2], "ckpt"))
            print("CHECKPOINTED", flush=True)
        except Exception as e:  # the same full disk: the program's own affair
            print("CHECKPOINT FAILED", type(e).__name__, flush=True)
print("DONE", flush=True)
sys.exit(7)
'''
STEPS = 12
EXIT = 7
LOW, HIGH = 192 << 10, 4 << 20   # random trials: the schema alone takes about 240 kB
BANDS = ((8 << 10, 48 << 10), (48 << 10, 256 << 10), (256 << 10, 1 << 20), (1 << 20, 2 << 20), (2 << 20, 4 << 20))
SCRIPT = ('m=$1 o=$2 size=$3; shift 3\n'
          'mount -t tmpfs -o size=$size agprof-trial "$m" || exit 200\n'
          '"$AGPROF" run -o "$m/run.agprof" -- "$@" "$m" >"$o/stdout" 2>"$o/stderr"\n'
          'rc=$?\nrm -rf "$m/ckpt"*\ncp -a "$m"/. "$o/files"/\nexit $rc\n')


def run(d, prog, size):
    """(agprof's exit status, stdout, stderr, files dir) of one run on a tmpfs of size bytes; None: no mount."""
    mnt, out = os.path.join(d, "mnt"), os.path.join(d, "out")
    for x in (mnt, out):
        shutil.rmtree(x, ignore_errors=True)
        os.mkdir(x)
    os.mkdir(os.path.join(out, "files"))
    p = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", SCRIPT, "sh", mnt, out, str(size),
                        agtest.PYTHON, prog, str(STEPS)], env=dict(os.environ, AGPROF=agtest.AGPROF),
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=240)
    if p.returncode == 200 or not os.path.exists(os.path.join(out, "stderr")):
        return None
    text = {}
    for name in ("stdout", "stderr"):
        with open(os.path.join(out, name), "rb") as fh:
            text[name] = fh.read().decode("utf-8", "replace")
    return p.returncode, text["stdout"], text["stderr"], os.path.join(out, "files")


def made_traces(stdout):
    counts = [int(l.split()[1]) for l in stdout.splitlines() if l.startswith("TRACES ")]
    return counts[-1] if counts else 0


def errors_of(stderr):
    return [l for l in stderr.splitlines() if l.startswith("agprof: error") or l.startswith("error")]


def not_created(rc, stdout, stderr, files):
    """The disk too small for the schema: exit 2, one line, nothing started, nothing left."""
    causes = []
    if stdout.strip():
        causes.append("the program ran though the recording could not be created")
    if len(errors_of(stderr)) != 1:
        causes.append("%d error lines" % len(errors_of(stderr)))
    if os.listdir(files):
        causes.append("files left: %s" % sorted(os.listdir(files)))
    return causes


def recorded(rc, stdout, stderr, files):
    """The run went on: the program's own end and status, FILE readable, nothing made up."""
    causes = []
    rec = os.path.join(files, "run.agprof")
    if "DONE" not in stdout:
        causes.append("the program did not run to its end")
    if rc != EXIT:
        causes.append("agprof run exits %d, not the program's %d" % (rc, EXIT))
    if len(errors_of(stderr)) > 1:
        causes.append("%d error lines" % len(errors_of(stderr)))
    # a WAL the finish could not fold in stays beside FILE, and agprof says so
    wal_said = "run.agprof-wal' (no room" in stderr
    left = [n for n in os.listdir(files) if n != "run.agprof" and not (n == "run.agprof-wal" and wal_said)]
    if left:
        causes.append("files left beside FILE: %s" % left)
    if not os.path.exists(rec):
        return causes + ["no FILE"]
    p = subprocess.run([agtest.AGPROF, "report", "--format", "json", rec], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=120)
    if p.returncode != 0:
        return causes + ["report exits %d: %s" % (p.returncode, p.stderr.decode("utf-8", "replace")[-200:])]
    import json
    s = json.loads(p.stdout)["session"]
    if s["exit_status"] not in (EXIT, None):
        causes.append("exit status %s in the recording" % s["exit_status"])
    if s["exit_status"] is None and not errors_of(stderr):
        causes.append("no exit status though the recording did not fail")
    db = agtest.open_recording(rec)
    got = agtest.q1(db, "SELECT count(*) FROM traces t JOIN functions f ON f.id = t.function_id "
                        "JOIN strings n ON n.id = f.name_id WHERE n.text = 'step'")
    db.close()
    made = made_traces(stdout)
    if got > made:
        causes.append("traces made up (%d recorded, %d made)" % (got, made))
    if not errors_of(stderr) and got != made:
        causes.append("traces lost without a failure (%d recorded, %d made)" % (got, made))
    return causes


def trial(d, prog, size):
    """(outcome, causes of failure) of one run on a tmpfs of size bytes; None: no mount here."""
    got = run(d, prog, size)
    if got is None:
        return None
    rc = got[0]
    if rc == 2:
        return "not created", not_created(*got)
    if errors_of(got[2]):
        outcome = "disk filled"
    else:
        outcome = "WAL kept" if "-wal' (no room" in got[2] else "fitted"
    return outcome, recorded(*got)


def main():
    agtest.need_agprof()
    if os.geteuid() != 0 or not shutil.which("unshare"):
        print("SKIP: needs root and unshare for a tmpfs")
        sys.exit(77)
    d = agtest.tmpdir()
    prog = os.path.join(d, "prog.py")
    with open(prog, "w") as fh:
        fh.write(PROGRAM)
    n, rng = agtest.trials_from_argv()
    if n is not None:
        sizes = [int(math.exp(rng.uniform(math.log(LOW), math.log(HIGH)))) for _ in range(n)]
    else:
        sizes = [rng.randrange(lo, hi) for lo, hi in BANDS]
    rows = []
    for size in sizes:
        r = trial(d, prog, size)
        if r is None:
            print("SKIP: cannot mount a tmpfs here")
            sys.exit(77)
        outcome, causes = r
        rows.append((size, outcome, causes))
        print("%8d bytes: %-11s %s" % (size, outcome, "; ".join(causes) or "ok"), flush=True)
        check(not causes, "%d-byte disk (%s)" % (size, outcome), causes)
    for outcome in ("not created", "disk filled", "WAL kept", "fitted"):
        these = [r for r in rows if r[1] == outcome]
        if these:
            print("%-11s %3d trials, %3d passed" % (outcome, len(these), sum(1 for r in these if not r[2])))
    agtest.finish("disk_trials")


if __name__ == "__main__":
    main()
