"""Concurrent recorders: no interference, no lost or mixed events.

eight: eight `agprof run` at once under one user (one shared buffer folder,
  /dev/shm/agprof-<uid>, its locks and start-up sweep: the second four start,
  and sweep, while the first four run).  Run k traces k+2 times and makes
  k+22 calls; each recording holds exactly its own program's counts (TF's
  experimental_get_tracing_count(), its own call counter) and only its
  own process, every session folder is gone at the end.
two: two recorders aimed at one program: `agprof run` of a program that
  itself records a block with agprof.record() (under agprof run that opens
  and closes the capture window, docs/collector.md), and an `agprof attach`
  of it from outside while it runs (refused: exit 8, already recording).
  The program ends as without them; the run's recording holds every trace
  (tracing count) and every call inside the block (its own counter).
"""
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

PROGRAM = r'''
import os, sys, time
import tensorflow as tf
k = int(sys.argv[1])
@tf.function
def step(x, lr):
    return x * lr
x = tf.ones([4])
calls = 0
for i in range(k + 2):
    step(x, 0.5 + i)          # a new Python float: a trace
    calls += 1
for i in range(20):
    step(x, 0.5)              # the first one's signature: a call only
    calls += 1
    time.sleep(0.02)
print("PID", os.getpid(), "TRACES", step.experimental_get_tracing_count(), "CALLS", calls, flush=True)
'''

NESTED = r'''
import os, sys, time
import tensorflow as tf
import agprof
@tf.function
def step(x, lr):
    return x * lr
x = tf.ones([4])
step(x, 0.5)
print("READY", os.getpid(), flush=True)
inside = 0
with agprof.record(os.path.join(sys.argv[1], "inner.agprof")):
    for i in range(40):
        step(x, 1.5 + (i % 5))  # five traces, then calls
        inside += 1
        time.sleep(0.1)
print("TRACES", step.experimental_get_tracing_count(), "INSIDE", inside, flush=True)
'''


def counts(out, name="step"):
    """(traces, calls, pids) of function name in the recording at out."""
    db = agtest.open_recording(out)
    fn = "JOIN functions f ON f.id = t.function_id JOIN strings n ON n.id = f.name_id WHERE n.text = ?"
    traces = agtest.q1(db, "SELECT count(*) FROM traces t " + fn, name)
    calls = agtest.q1(db, "SELECT count(*) FROM function_calls c JOIN strings n ON n.id = c.name_id "
                          "WHERE n.text LIKE ? ESCAPE '!'", "%!_inference!_" + name + "!_%")  # its concrete functions
    pids = {r[0] for r in db.execute("SELECT pid FROM processes")}
    db.close()
    return traces, calls, pids


def parse(text):
    words = text.split()
    return {words[i]: int(words[i + 1]) for i in range(0, len(words) - 1) if words[i].isupper()}


def case_eight(d):
    prog = os.path.join(d, "prog.py")
    with open(prog, "w") as fh:
        fh.write(PROGRAM)
    runs = []
    for k in range(8):
        out = os.path.join(d, "run%d.agprof" % k)
        p = subprocess.Popen([agtest.AGPROF, "run", "-q", "-o", out, "--", agtest.PYTHON, prog, str(k)],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=d)
        runs.append((k, out, p))
        if k == 3:
            time.sleep(3)  # the next four sweep the folder while these run
    programs = {}
    for k, out, p in runs:
        stdout, stderr = p.communicate(timeout=400)
        check_eq(p.returncode, 0, "run %d: exit status (%s)" % (k, stderr.decode(errors="replace")[-300:]))
        agtest.check_shm_cleaned(p.pid)
        programs[k] = parse(stdout.decode(errors="replace"))
    all_pids = {o.get("PID") for o in programs.values()}
    for k, out, p in runs:
        o = programs[k]
        if not check(o.get("TRACES") == k + 2 and o.get("CALLS") == k + 22, "run %d: the program's own counts" % k, o):
            continue
        traces, calls, pids = counts(out)
        check_eq(traces, o["TRACES"], "run %d: traces recorded = the program's tracing count" % k)
        check_eq(calls, o["CALLS"], "run %d: calls recorded = the program's call count" % k)
        check(o["PID"] in pids and not (pids & all_pids) - {o["PID"]},
              "run %d: its own process, none of the other runs'" % k, sorted(pids), o["PID"])
    folder = "/dev/shm/agprof-%d" % os.geteuid()
    if os.path.isdir(folder):
        check_eq(os.stat(folder).st_mode & 0o777, 0o700, "the shared buffer folder is the user's alone")


def case_two(d):
    prog = os.path.join(d, "nested.py")
    with open(prog, "w") as fh:
        fh.write(NESTED)
    out = os.path.join(d, "outer.agprof")
    env = dict(os.environ, PYTHONPATH=os.path.join(agtest.SOURCE_ROOT, "python"))
    p = subprocess.Popen([agtest.AGPROF, "run", "-q", "-o", out, "--", agtest.PYTHON, prog, d],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=d, env=env, text=True)
    ready = p.stdout.readline().split()
    if not check(ready[:1] == ["READY"], "the program starts", ready):
        p.kill()
        return
    time.sleep(0.5)
    r = subprocess.run([agtest.AGPROF, "attach", "-q", "-o", os.path.join(d, "attach.agprof"), "--duration", "1",
                        ready[1]], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=120)
    check_eq(r.returncode, 8, "agprof attach of a program under agprof run: refused (%s)" % r.stderr.strip())
    check("agprof run" in r.stderr, "its message names the recorder that has it", r.stderr)
    stdout, stderr = p.communicate(timeout=300)
    check_eq(p.returncode, 0, "agprof run: the program's exit status (%s)" % stderr[-300:])
    o = parse(stdout)
    check(o.get("TRACES") == 6 and o.get("INSIDE") == 40, "the program ends as without recorders", stdout)
    traces, calls, _ = counts(out)
    check_eq(traces, o.get("TRACES"), "the run's recording: every trace (tracing count)")
    check(o.get("INSIDE", 0) <= calls <= o.get("INSIDE", 0) + 1, "the run's recording: every call inside "
          "agprof.record()'s block (and the one before it, if the window was open then)", calls, o.get("INSIDE"))
    check(not os.path.exists(os.path.join(d, "attach.agprof")), "the refused attach made no file")


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()
    {"eight": case_eight, "two": case_two}[sys.argv[1]](d)
    agtest.finish("concurrent-" + sys.argv[1])


if __name__ == "__main__":
    main()
