"""Op prices (issue 46) of programs that never run their exit handlers.

The collector times the ops an edit adds (_EagerConst, Cast, AddV2,
Identity, and a Cast's first dispatch for a new kernel) in thread CPU at a
process's first trace (collector/op_price.c), so a recording holds them
however the program ends:

exit:   a retracing program that ends in os._exit(0): op_prices holds every
        type, and the report prices the tf.constant its fix adds from them
        (the method names the first trace's timing, not recorded dispatches);
signal: the same program killed by SIGTERM after its loop, asleep;
attach: `agprof attach --duration 3` on a job started without agprof
        (samples/attach_target.py, a retrace every half second): the
        attached recording holds them too.
Prices are checked for sense only (a positive thread CPU time under a
second, the ops timed), never against a time limit.
"""
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

PROGRAM = """\
import os, sys, time
import tensorflow as tf


@tf.function
def noisy_step(x, seed):
    return x + tf.random.stateless_normal([4], seed=seed)


x = tf.zeros([4])
for step in range(5):
    x = noisy_step(x, seed=[step, 7])
print("x:", [round(float(v), 4) for v in x.numpy()], flush=True)
if sys.argv[1] == "exit":
    os._exit(0)
print("asleep", os.getpid(), flush=True)
time.sleep(120)
"""

WARM = ("_EagerConst", "Cast", "AddV2", "Identity")


def check_prices(path, what):
    """op_prices of the recording: each warm type timed in batches, the first Casts, prices in (0, 1 s)."""
    db = agtest.open_recording(path)
    if not check(agtest.q1(db, "SELECT count(*) FROM sqlite_master WHERE name = 'op_prices'") == 1,
                 "%s: the recording has op_prices" % what):
        return
    rows = {r[0]: tuple(r)[1:] for r in db.execute(
        "SELECT s.text, p.samples, p.cpu_ns, p.wall_ns FROM op_prices p JOIN strings s ON s.id = p.op_id")}
    print("%s: %s" % (what, rows))
    for op in WARM + ("Cast:first",):
        row = rows.get(op)
        if not check(row is not None, "%s: a price of %s" % (what, op), sorted(rows)):
            continue
        samples, cpu, wall = row
        check(samples >= (3 if op.endswith(":first") else 50), "%s: %s ops timed" % (what, op), samples)
        check(0 < cpu < 1e9 and 0 < wall < 1e9 * 60, "%s: %s priced above 0 and under a second of CPU" % (what, op),
              (cpu, wall))
    check_eq(agtest.q1(db, "SELECT count(DISTINCT pid) FROM op_prices"), 1, "%s: one process timed them" % what)


def write_program(d):
    path = os.path.join(d, "seed_exit.py")
    with open(path, "w") as fh:
        fh.write(PROGRAM)
    return path


def case_exit(d):
    out = os.path.join(d, "exit.agprof")
    p = agtest.run_agprof(out, [agtest.PYTHON, write_program(d), "exit"], agprof_args=("-q",), cwd=d)
    check(p.returncode == 0, "agprof's exit status: the program's os._exit(0)", (p.returncode, p.stderr[-2000:]), 0)
    check(b"x: [" in p.stdout, "the program's output", p.stdout[-300:])
    check_prices(out, "os._exit")
    rc, rep, err = agtest.agprof_cmd("report", "--format", "json", out)
    check_eq(rc, 0, "agprof report --format json (%s)" % err.strip())
    found = [f for f in json.loads(rep)["findings"] if f["rule"] == "retracing" and f["function"] == "noisy_step"]
    if check(found, "a retracing finding for noisy_step"):
        method = found[0]["saving_method"] or ""
        check("_EagerConst timed at the program's first trace" in method,
              "the added tf.constant priced from the collector's timing", method)


def case_signal(d):
    out = os.path.join(d, "signal.agprof")
    p = subprocess.Popen([agtest.AGPROF, "run", "-q", "-o", out, "--", agtest.PYTHON, write_program(d), "sleep"],
                         cwd=d, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    pid = None
    for line in p.stdout:
        if line.startswith("asleep "):
            pid = int(line.split()[1])
            break
    if check(pid is not None, "the program reached its sleep"):
        os.kill(pid, signal.SIGTERM)
    p.stdout.read()
    check_eq(p.wait(timeout=120), 128 + signal.SIGTERM, "agprof's exit status (the program's SIGTERM)")
    agtest.check_shm_cleaned(p.pid)
    check_prices(out, "SIGTERM")


def case_attach(d):
    job = subprocess.Popen([agtest.PYTHON, os.path.join(agtest.SOURCE_ROOT, "samples", "attach_target.py"), "8"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    check_eq(job.stdout.readline().strip(), "ready", "the job says ready")
    out = os.path.join(d, "attach.agprof")
    r = subprocess.run([agtest.AGPROF, "attach", "-q", "-o", out, "--duration", "3", str(job.pid)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=90)
    check_eq(r.returncode, 0, "agprof attach's status (%s)" % r.stderr.strip())
    job.stdout.read()
    check_eq(job.wait(timeout=60), 0, "the job's exit status")
    if check(os.path.exists(out), "the attached recording"):
        check(agtest.q1(agtest.open_recording(out), "SELECT count(*) FROM traces") >= 1, "it holds a retrace")
        check_prices(out, "attach")


CASES = {"exit": case_exit, "signal": case_signal, "attach": case_attach}


def main():
    agtest.need_agprof()
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        sys.exit("usage: test_op_prices.py %s" % "|".join(CASES))
    start = time.monotonic()
    CASES[sys.argv[1]](agtest.tmpdir())
    print("%.1f s" % (time.monotonic() - start))
    agtest.finish("op_prices-" + sys.argv[1])


if __name__ == "__main__":
    main()
