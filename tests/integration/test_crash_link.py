"""A cut-short recording keeps its kernels linked to their calls (issue 40).

A graph function called in a loop, its CPU kernels recorded one by one for
the sampled calls; `agprof run`'s launcher is killed (SIGKILL) mid-run, as
test_crash.py does, and its keeper publishes what was committed.  The
kernels' link to their call (kernels.call_id) was a map in the launcher's
memory, resolved at the finish: the kernels of a killed run stayed with no
call.  Checked against a complete run of the same program:
- no kernel is left unresolved (call_id < 0);
- every kernel that ran within a committed sampled call (the loop runs one
  call at a time, so the time says which) names that call, and a linked
  kernel ran within the call it names;
- each sampled call has the complete run's kernels per call (the last one
  may miss those of another thread's ring that the kill lost);
- `agprof report --format json`'s graph_ops give `step` the complete run's
  kernels per call, nodes, op types and creation lines (the writer's link
  tables are committed with the rows), and `report --ops` lists its ops;
- the link tables are gone from the published recording.

    AGPROF=build/cmd/agprof/agprof AGPROF_SOURCE_ROOT=. .venv/bin/python tests/integration/test_crash_link.py
"""
import glob
import json
import os
import signal
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

PROGRAM = r'''
import os, sys, time
import tensorflow as tf

@tf.function
def step(x, w):
    y = tf.matmul(x, w)
    y = tf.nn.relu(y) + 1.0
    return tf.reduce_sum(y * y)

x = tf.random.normal([64, 64])
w = tf.random.normal([64, 64])
print("START", os.getpid(), flush=True)
for i in range(int(sys.argv[1])):
    step(x, w)
    print("CALL", i, flush=True)
    time.sleep(0.01)
print("DONE", flush=True)
'''
CALLS = 120          # the complete run
KILL_AFTER = 120     # calls printed before the launcher is killed (the killed run has no end of its own)
COMMIT_S = 0.8       # more than the writer's commit interval (0.25 s) and its poll
DEADLINE_S = 180


def per_call(db):
    """{call id: kernels} of the sampled calls (kernel_detail), calls with no kernel included."""
    return {r[0]: r[1] for r in db.execute(
        "SELECT c.id, (SELECT count(*) FROM kernels k WHERE k.call_id = c.id) FROM function_calls c"
        " WHERE c.kernel_detail = 1 ORDER BY c.id")}


def step_ops(path):
    """report JSON's graph_ops entry of step, or None."""
    rc, text, err = agtest.agprof_cmd("report", "--format", "json", path, timeout=120)
    if not check(rc == 0, "report --format json exits 0", (rc, err[-300:]), 0):
        return None
    fns = [f for f in json.loads(text)["graph_ops"]["functions"] if f["function"] == "step"]
    return fns[0] if len(fns) == 1 else None


def complete_run(d):
    out = os.path.join(d, "complete.agprof")
    p = agtest.run_agprof(out, [agtest.PYTHON, os.path.join(d, "prog.py"), str(CALLS)], cwd=d)
    check_eq(p.returncode, 0, "the complete run's status")
    db = agtest.open_recording(out)
    counts = per_call(db)
    db.close()
    return out, counts


def killed_run(d):
    """Kill the launcher after KILL_AFTER calls; the published recording's path (None on a timeout)."""
    out = os.path.join(d, "cut.agprof")
    p = subprocess.Popen([agtest.AGPROF, "run", "-o", out, "--", agtest.PYTHON, os.path.join(d, "prog.py"),
                          "1000000"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=d)
    deadline, workload = time.monotonic() + DEADLINE_S, None
    try:
        for line in p.stdout:
            if line.startswith(b"START"):
                workload = int(line.split()[1])
            if line.startswith(b"CALL %d" % KILL_AFTER) or time.monotonic() > deadline:
                break
        time.sleep(COMMIT_S)
        os.kill(p.pid, signal.SIGKILL)
        p.wait()
        while time.monotonic() < deadline:
            hidden = glob.glob(os.path.join(d, ".cut.agprof.*"))
            if os.path.exists(out) and not hidden:
                return out
            time.sleep(0.05)
        check(False, "the keeper published the killed run's recording")
        return None
    finally:
        if workload:
            agtest.agtestlib.kill_quietly(workload)
        p.stdout.close()


def check_links(db):
    """Each kernel linked to the sampled call whose span holds it, and to no other."""
    check_eq(agtest.q1(db, "SELECT count(*) FROM kernels WHERE call_id < 0"), 0, "kernels left unresolved")
    unlinked = agtest.q1(db, "SELECT count(*) FROM kernels k JOIN function_calls c ON c.kernel_detail = 1"
                             " AND c.pid = k.pid AND k.start_ns >= c.start_ns AND k.end_ns <= c.end_ns"
                             " WHERE k.call_id IS NOT c.id")
    check_eq(unlinked, 0, "kernels within a committed sampled call that do not name it")
    outside = agtest.q1(db, "SELECT count(*) FROM kernels k JOIN function_calls c ON c.id = k.call_id"
                            " WHERE k.start_ns < c.start_ns OR k.end_ns > c.end_ns")
    check_eq(outside, 0, "linked kernels outside their call")


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()
    with open(os.path.join(d, "prog.py"), "w") as fh:
        fh.write(PROGRAM)
    full, full_counts = complete_run(d)
    want = sorted(set(full_counts.values()))
    check(len(want) == 1 and want[0] > 0, "the complete run's sampled calls have one kernel count", want)
    cut = killed_run(d)
    if cut is None or not want:
        agtest.finish("crash_link")
    db = agtest.open_recording(cut)
    check(agtest.meta(db).get("cut_short") is not None, "the killed run's recording is cut short")
    check_links(db)
    check_eq(agtest.q1(db, "SELECT group_concat(name) FROM sqlite_schema WHERE name LIKE 'link!_%' ESCAPE '!'"),
             None, "the writer's link tables left in the recording")
    counts = per_call(db)
    check(len(counts) >= 5, "sampled calls committed before the kill", len(counts), ">= 5")
    body = list(counts.values())[:-1]  # the last call's kernels of another thread may be in the lost transaction
    check_eq(sorted(set(body)), want[:1], "kernels per sampled call (but the last), as in the complete run")
    db.close()
    a, b = step_ops(full), step_ops(cut)
    if check(a is not None and b is not None, "report JSON graph_ops has step", (a is None, b is None)):
        for key in ("kernels_per_call", "nodes", "top_line", "top_line_nodes"):
            check_eq(b[key], a[key], "report JSON: step's %s" % key)
        check_eq(sorted(o["op_type"] for o in b["op_types"]), sorted(o["op_type"] for o in a["op_types"]),
                 "report JSON: step's op types")
        check(a["top_line"] is not None, "the complete run names step's nodes' creation line", a["top_line"])
        check_eq(sorted((o["name"], o["op_type"], json.dumps(o["location"])) for o in b["ops"]),
                 sorted((o["name"], o["op_type"], json.dumps(o["location"])) for o in a["ops"]),
                 "report JSON: step's ops and their creation lines")
        # the report leaves the first call (its trace's run) out of both
        check_eq(sum(1 for n in counts.values() if n) - b["sampled_calls"],
                 sum(1 for n in full_counts.values() if n) - a["sampled_calls"],
                 "report JSON: step's sampled calls are the committed ones with kernels")
    rc, text, _ = agtest.agprof_cmd("report", "--ops", cut, timeout=120)
    check(rc == 0 and "Ops of step" in text, "report --ops lists step's ops", text[-600:])
    agtest.finish("crash_link")


if __name__ == "__main__":
    main()
