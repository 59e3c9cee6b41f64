"""The recording's budget for graph calls and black-box runs (issue 11,
schema 7): past --max-events a tf.function step loop's calls and its
tf.py_function's runs are kept as exact per-second aggregates
(function_call_buckets, blackbox_buckets) instead of rows, and every count
still adds up.

samples/graph_budget.py calls train_step STEPS times (oracle.called: the
program's own counter) and its py_function counts its own runs.

1. --max-events 400: the report's train_step calls = the program's count,
   its black-box runs = the program's count, rows + aggregated in the file
   = both; the first call and the kernel-sampled calls stay rows; the
   kernel totals keep their graph function (one MatMul per step); each
   bucket's histogram adds up to its count; the report (text and JSON)
   says how many were aggregated; tracing count = TF's own.
2. agprof merge of two such recordings: the merged report's calls and
   black-box runs are the two runs' sums, each rank's steps its own.
3. The launcher (agprof itself) killed with SIGKILL while it aggregates:
   the open buckets were written at each commit, so the recording opens,
   says it was aggregating, and its calls and eager AddV2 ops (rows +
   aggregated; --eager: one per step) are at least what the live recording
   had committed just before the kill (at least every step up to the marker
   read 0.6 s before) and at most what the program ran.
"""
import glob
import json
import os
import signal
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq, q1  # noqa: E402

STEPS = 2500
BUDGET = 400


def record(d, name, steps=STEPS):
    out = os.path.join(d, name + ".agprof")
    oracle = os.path.join(d, name + ".json")
    cmd = [agtest.AGPROF, "run", "-o", out, "--max-events", str(BUDGET), "--", agtest.PYTHON,
           agtest.sample("graph_budget.py"), "--steps", str(steps)]
    env = dict(os.environ, AGPROF_ORACLE=oracle, AGPROF_ORACLE_NO_PROFILER="1")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=agtest.SOURCE_ROOT,
                       timeout=240)
    check_eq(p.returncode, 0, name + ": agprof exit status (%s)" % p.stderr[-800:].decode("utf-8", "replace"))
    with open(oracle) as f:
        return out, json.load(f)


def report(path):
    rc, out, err = agtest.agprof_cmd("report", "--format", "json", path)
    check_eq(rc, 0, "agprof report --format json %s (%s)" % (path, err[-300:]))
    return json.loads(out)


def file_counts(db):
    """(calls, black-box runs): rows + aggregated, straight from the file."""
    calls = q1(db, "SELECT count(*) FROM function_calls") + \
        q1(db, "SELECT coalesce(sum(count), 0) FROM function_call_buckets")
    bb = q1(db, "SELECT count(*) FROM blackbox_execs") + q1(db, "SELECT coalesce(sum(count), 0) FROM blackbox_buckets")
    return calls, bb


def train_step_calls(rep):
    return sum(f["calls"] for f in rep["functions"] if f["name"] == "train_step")


def check_histograms(db, table):
    bad = 0
    for count, blob in db.execute("SELECT count, histogram FROM " + table):
        blob = blob or b""
        if len(blob) % 4 or sum(struct.unpack("<%dI" % (len(blob) // 4), blob)) != count:
            bad += 1
    check_eq(bad, 0, table + ": buckets whose histogram does not add up to their count")


def graph_case(d):
    path, oracle = record(d, "graph")
    steps = oracle["functions"]["train_step"]["calls"]
    runs = oracle["extra"]["py_function_execs"]
    check_eq((steps, runs), (STEPS, STEPS), "the program's own counters")
    db = agtest.open_recording(path)
    agtest.check_recording_header(db)
    m = agtest.meta(db)
    check_eq(m.get("aggregate_reason"), "max-events", "meta aggregate_reason")
    check_eq(m.get("dropped_events"), "0", "meta dropped_events")
    agg_calls = q1(db, "SELECT coalesce(sum(count), 0) FROM function_call_buckets")
    agg_bb = q1(db, "SELECT coalesce(sum(count), 0) FROM blackbox_buckets")
    check(agg_calls > STEPS // 2 and agg_bb > STEPS // 2, "most calls and runs aggregated", (agg_calls, agg_bb))
    check_eq(file_counts(db), (steps, runs), "rows + aggregated in the file = the program's counts")
    check_eq((m.get("aggregated_calls"), m.get("aggregated_blackbox_execs")), (str(agg_calls), str(agg_bb)),
             "meta aggregated_calls, aggregated_blackbox_execs")
    check_eq(q1(db, "SELECT count(*) FROM function_call_buckets WHERE graph_function_id IS NULL"), 0,
             "every call bucket linked to its graph function")
    check_eq(q1(db, "SELECT count(*) FROM blackbox_buckets WHERE blackbox_node_id IS NULL"), 0,
             "every black-box bucket linked to its node")
    check(q1(db, "SELECT min(start_ns) FROM function_calls") < q1(db, "SELECT min(start_ns) FROM function_call_buckets"),
          "the first call stays a row")
    check(q1(db, "SELECT count(*) FROM function_calls WHERE kernel_detail = 1 AND start_ns >= ?",
             int(m["aggregate_from_ns"])) > 0, "kernel-sampled calls past the switch stay rows")
    # a kernel total names the last call it ran under, nearly always an aggregated one: its function's still
    check_eq(q1(db, "SELECT coalesce(sum(t.count), 0) FROM kernel_totals t JOIN graph_nodes n ON n.id = t.node_id"
                " JOIN graph_functions g ON g.id = t.graph_function_id WHERE n.name = 'MatMul'"), steps,
             "train_step's MatMul kernels, each total linked to its graph function")
    check_histograms(db, "function_call_buckets")
    check_histograms(db, "blackbox_buckets")
    rep = report(path)
    s = rep["session"]
    check_eq(train_step_calls(rep), steps, "report: train_step calls = the program's count")
    check_eq(s["function_calls"], steps, "report: session.function_calls")
    check_eq(s["blackbox_execs"], runs, "report: session.blackbox_execs = the py_function's own count")
    check_eq(sum(f["traces"] for f in rep["functions"] if f["name"] == "train_step"),
             oracle["functions"]["train_step"]["tracing_count"], "traces = experimental_get_tracing_count()")
    b = s["budget"]
    check(b is not None and b["aggregated_calls"] == agg_calls and b["aggregated_blackbox_execs"] == agg_bb,
          "JSON session.budget", b)
    check(s["function_call_ns"] >= q1(db, "SELECT coalesce(sum(total_ns), 0) FROM function_call_buckets"),
          "the report's call time includes the buckets'", s["function_call_ns"])
    rc, text, _ = agtest.agprof_cmd("report", path)
    check("%d graph calls, %d py_function runs" % (agg_calls, agg_bb) in text, "the text report says them", text[:700])
    fn = [f for f in rep["functions"] if f["name"] == "train_step"][0]
    check_eq(fn["blackbox_execs"], runs, "report: train_step's black-box runs")
    rc, _, err = agtest.agprof_cmd("check", path)
    check(rc in (0, 1), "agprof check reads it", (rc, err[-300:]))
    db.close()
    return path, steps, runs


def merged_case(d, first, steps, runs):
    second, oracle = record(d, "graph2", 1500)
    merged = os.path.join(d, "merged.agprof")
    rc, _, err = agtest.agprof_cmd("merge", "-o", merged, first, second)
    check_eq(rc, 0, "agprof merge exit status (%s)" % err.strip())
    db = agtest.open_recording(merged)
    want = (steps + oracle["functions"]["train_step"]["calls"], runs + oracle["extra"]["py_function_execs"])
    check_eq(file_counts(db), want, "merged file: calls and black-box runs of both")
    db.close()
    rep = report(merged)
    s = rep["session"]
    check_eq((s["function_calls"], s["blackbox_execs"]), want, "merged report: calls and black-box runs of both")
    check_eq([r["steps"] for r in rep["ranks"]], [steps, oracle["functions"]["train_step"]["calls"]],
             "merged report: each rank's steps (ranks.sql) include the aggregated calls")


def hidden_recording(d, name):
    """The recording while agprof runs: the hidden file beside FILE (run --help)."""
    found = glob.glob(os.path.join(d, "." + name + ".*"))
    found = [f for f in found if not f.endswith(("-wal", "-shm", "-journal"))]
    check(len(found) == 1, "one hidden recording beside %s" % name, found)
    return found[0] if found else os.path.join(d, name)


def add_ops(db):
    """The eager AddV2 ops, rows and aggregated."""
    return q1(db, "SELECT count(*) FROM eager_ops e JOIN strings s ON s.id = e.op_id WHERE s.text = 'AddV2'") + \
        q1(db, "SELECT coalesce(sum(b.count), 0) FROM eager_op_buckets b JOIN strings s ON s.id = b.op_id"
           " WHERE s.text = 'AddV2'")


def live_counts(path):
    """(calls, AddV2 ops) the live recording has committed (WAL: a reader sees the last commit)."""
    db = agtest.open_recording(path)
    try:
        return file_counts(db)[0], add_ops(db)
    finally:
        db.close()


def launcher_kill_case(d):
    out = os.path.join(d, "killed.agprof")
    cmd = [agtest.AGPROF, "run", "-o", out, "--max-events", str(BUDGET), "--", agtest.PYTHON,
           agtest.sample("graph_budget.py"), "--forever", "--eager", "--marker", "100"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                         cwd=agtest.SOURCE_ROOT)
    victim, done = None, 0
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline and done < 2000:
        parts = p.stdout.readline().decode().split()
        if not parts:
            break
        if parts[0] == "AGPROF-MARKER":
            done, victim = int(parts[1]), int(parts[3])
    if not check(victim is not None and done >= 2000, "markers from graph_budget.py", done):
        p.kill()
        p.wait()
        return
    time.sleep(0.6)  # more than a commit interval: the buckets of these steps are committed
    out = hidden_recording(d, "killed.agprof")
    committed, committed_ops = live_counts(out)
    os.kill(p.pid, signal.SIGKILL)  # the launcher, not the workload
    p.wait(timeout=60)
    time.sleep(0.3)
    os.kill(victim, signal.SIGKILL)
    rest = p.stdout.read().decode().split("\n")
    ran = max([done] + [int(x.split()[1]) for x in rest if x.startswith("AGPROF-MARKER")]) + 100
    check(committed >= done and committed_ops >= done, "the live recording held every call and op up to a commit ago",
          (committed, committed_ops, done))
    # the keeper (writer/keeper.c) moves it to FILE, marked cut short: nobody saw the program's exit
    final = os.path.join(os.path.dirname(out), "killed.agprof")
    deadline = time.monotonic() + 30
    while not os.path.exists(final) and time.monotonic() < deadline:
        time.sleep(0.1)
    check(os.path.exists(final) and not os.path.exists(out), "the killed launcher's recording is FILE, not hidden",
          os.listdir(os.path.dirname(out)))
    out = final
    db = agtest.open_recording(out)
    calls, ops = file_counts(db)[0], add_ops(db)
    check(committed <= calls <= ran, "calls after the launcher's SIGKILL: committed <= rows + aggregated <= ran",
          (committed, calls, ran))
    check(committed_ops <= ops <= ran, "eager ops after the launcher's SIGKILL: committed <= rows + aggregated <= ran",
          (committed_ops, ops, ran))
    check(q1(db, "SELECT coalesce(sum(count), 0) FROM eager_op_buckets") > 0, "aggregated eager ops were committed")
    check(q1(db, "SELECT coalesce(sum(count), 0) FROM function_call_buckets") > 0, "aggregated calls were committed")
    check_eq(agtest.meta(db).get("aggregate_reason"), "max-events", "meta aggregate_reason after the launcher's SIGKILL")
    m = agtest.meta(db)
    check(m.get("cut_short") and "exit_status" not in m, "meta: cut short, no made-up exit status", m)
    db.close()
    rc, text, err = agtest.agprof_cmd("report", out)
    check_eq(rc, 0, "agprof report after the launcher's SIGKILL (%s)" % err[-300:])
    check("graph calls" in text and "budget:" in text, "the report says the budget and the calls", text[:600])
    b = report(out)["session"]["budget"]
    check(b is not None and b["aggregated_eager_ops"] > 0 and b["aggregated_calls"] > 0,
          "JSON budget after the launcher's SIGKILL (no meta counts: the buckets')", b)


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()
    first, steps, runs = graph_case(d)
    merged_case(d, first, steps, runs)
    launcher_kill_case(d)
    agtest.finish("budget_graph")


if __name__ == "__main__":
    main()
