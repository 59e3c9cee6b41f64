"""The recording's budget (issue 11): past --max-events / --max-size, eager
ops are kept as exact per-second aggregates (eager_op_buckets) instead of
rows, and every count still adds up.

samples/eager_heavy.py dispatches exactly OPS/4 each of AddV2, Mul, Sub and
Maximum from step() (its oracle's extra.planned_eager_ops): the oracle.

1. The same loop recorded with --max-events 2000 and with the default
   budget (1 million: every op a row): per op type the counts are equal in
   both reports and equal the sample's own count; rows + aggregated ops in
   the file = what ran; the report's eager time is the rows' and the
   buckets' summed time exactly, and close to the run without a budget
   (another run: within a factor on a busy machine); each bucket's
   histogram adds up to its count; the report (text and JSON) says when it
   switched; eager-hotspot fires at the same line in both.
2. --max-size 1 (MB): the switch happens on size, the counts still add up;
   kernels of no call stop being stored one by one at the switch, counted
   in kernel_totals and meta kernels_refused.
3. The workload killed (SIGKILL) while ops are being aggregated: the
   recording opens and holds every op up to the kill (the loop is asleep
   after its marker, so exactly that many).
"""
import json
import os
import signal
import sqlite3
import struct
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq, q1  # noqa: E402

OPS = 24000
BUDGET = 2000
SIZE_OPS = 140000  # size_case: past two bursts of kernels of no call (kernels_case)
STEP_OPS = ("AddV2", "Mul", "Sub", "Maximum")


def record(d, name, opts, args=("--ops", str(OPS))):
    out = os.path.join(d, name + ".agprof")
    oracle = os.path.join(d, name + ".json")
    cmd = [agtest.AGPROF, "run", "-o", out] + list(opts) + ["--", agtest.PYTHON, agtest.sample("eager_heavy.py")]
    env = dict(os.environ, AGPROF_ORACLE=oracle, AGPROF_ORACLE_NO_PROFILER="1")
    p = subprocess.run(cmd + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                       cwd=agtest.SOURCE_ROOT, timeout=240)
    check_eq(p.returncode, 0, name + ": agprof exit status (%s)" % p.stderr[-800:].decode("utf-8", "replace"))
    with open(oracle) as f:
        return out, json.load(f), p.stderr.decode("utf-8", "replace")


def report(path):
    rc, out, err = agtest.agprof_cmd("report", "--format", "json", path)
    check_eq(rc, 0, "agprof report --format json %s (%s)" % (path, err[-300:]))
    return json.loads(out)


def step_ops(rep):
    return {o["op"]: o["count"] for o in rep["eager_ops"] if o["op"] in STEP_OPS}


def hotspot_line(rep):
    lines = [f["location"]["line"] for f in rep["findings"] if f["rule"] == "eager-hotspot" and f["location"]]
    return lines[0] if lines else None


def file_counts(db):
    """(ops kept as rows, ops in buckets, summed cost of both) straight from the file."""
    rows = q1(db, "SELECT count(*) FROM eager_ops")
    agg = q1(db, "SELECT coalesce(sum(count), 0) FROM eager_op_buckets")
    ns = q1(db, "SELECT coalesce(sum(end_ns - start_ns + python_ns), 0) FROM eager_ops") + \
        q1(db, "SELECT coalesce(sum(total_ns + python_ns), 0) FROM eager_op_buckets")
    return rows, agg, ns


def check_histograms(db, name):
    bad = 0
    for count, blob in db.execute("SELECT count, histogram FROM eager_op_buckets"):
        blob = blob or b""
        if len(blob) % 4 or sum(struct.unpack("<%dI" % (len(blob) // 4), blob)) != count:
            bad += 1
    check_eq(bad, 0, name + ": buckets whose histogram does not add up to their count")


def budget_case(d):
    full, oracle_full, _ = record(d, "full", [])
    small, oracle, err = record(d, "small", ["--max-events", str(BUDGET)])
    planned = oracle["extra"]["planned_eager_ops"]
    check_eq(planned, OPS, "ops the sample planned")
    check("aggregated past the budget" in err, "agprof's summary says ops were aggregated", err[-400:])
    db = agtest.open_recording(small)
    agtest.check_recording_header(db)
    m = agtest.meta(db)
    check_eq(m.get("aggregate_reason"), "max-events", "meta aggregate_reason")
    check_eq(m.get("dropped_events"), "0", "meta dropped_events")
    rows, agg, ns = file_counts(db)
    check_eq(rows, BUDGET, "eager_ops rows: the budget (no graph calls in this run)")
    check_eq(str(agg), m.get("aggregated_eager_ops"), "meta aggregated_eager_ops = the buckets' ops")
    check_histograms(db, "small")
    rep_small, rep_full = report(small), report(full)
    want = {op: planned // 4 for op in STEP_OPS}
    check_eq(step_ops(rep_small), want, "per-op counts with the budget = the program's own")
    check_eq(step_ops(rep_full), want, "per-op counts without a budget = the program's own")
    s = rep_small["session"]
    check_eq(s["eager_ops"] + s["input_waits"], rows + agg, "report's eager ops = rows + aggregated ops")
    check_eq(s["eager_ns"] + s["input_ns"], ns, "report's eager time = the rows' and the buckets' time")
    ratio = s["eager_ns"] / max(1, rep_full["session"]["eager_ns"])
    check(0.4 < ratio < 2.5, "eager time with the budget close to the run without it", ratio, "0.4..2.5")
    b = s["budget"]
    check(b is not None and b["reason"] == "max-events" and b["aggregated_eager_ops"] == agg,
          "JSON session.budget", b)
    check(b and b["aggregate_from_ns"] >= int(m["start_ns"]), "the switch is after the start", b)
    check(rep_full["session"]["budget"] is None, "no budget line without the switch", rep_full["session"]["budget"])
    line = hotspot_line(rep_full)
    check(line is not None, "eager-hotspot fires without a budget", [f["rule"] for f in rep_full["findings"]])
    check_eq(hotspot_line(rep_small), line, "eager-hotspot's line with the budget")
    rc, text, _ = agtest.agprof_cmd("report", small)
    check("budget: eager ops kept as per-second aggregates from" in text and "--max-events %d" % BUDGET in text,
          "the text report says from when", text[:600])
    rc, text, _ = agtest.agprof_cmd("check", small)
    check(rc in (0, 1), "agprof check reads it", rc)
    rate_reason_case(d, small)
    chrome_case(d, small, rows, agg)
    db.close()
    merged_case(d, full, small, agg, m)


def rate_reason_case(d, small):
    """The same recording as if the launcher had switched because it fell behind (meta aggregate_reason 'rate',
    docs/collector.md): the report names that cause, not the budget."""
    path = os.path.join(d, "rate.agprof")
    with open(small, "rb") as src, open(path, "wb") as dst:
        dst.write(src.read())
    with sqlite3.connect(path) as db:
        db.execute("UPDATE meta SET value = 'rate' WHERE key = 'aggregate_reason'")
    db.close()
    rc, text, _ = agtest.agprof_cmd("report", path)
    check("budget: eager ops kept as per-second aggregates from" in text and
          "events came faster than the launcher could store them one by one" in text and "--max-events" not in text,
          "the text report says the launcher fell behind", text[:600])
    check_eq(report(path)["session"]["budget"]["reason"], "rate", "JSON session.budget.reason")


def kernels_case(db, m):
    """Kernels of no call stop being stored one by one at the switch.  Before, a thread went on storing its kernels
    1,024 in every 65,536 (AGP_KDETAIL_BURST, _EVERY): with SIZE_OPS ops the burst at 131,072 at least is past a
    1 MB switch.  The switch comes at a commit, after a poll that drained the threads' rings in turn: a thread
    drained after the main one may hold a few kernels that started after the first op to be aggregated, never a
    burst; the rest are counted only, and the collector stops sampling them."""
    switch = int(m["aggregate_from_ns"])
    late = db.execute("SELECT tid, count(*) FROM kernels WHERE call_id IS NULL AND start_ns > ? GROUP BY tid",
                      (switch,)).fetchall()
    check(sum(n for _, n in late) <= 64, "kernels of no call stored one by one after the switch (per thread)",
          [tuple(r) for r in late], "64 at most")
    # the launcher tells the collector at the switch (agp_shm_header.detail_off): it samples none after it, so
    # only kernels already in a ring are refused, never a whole burst (the writer alone refused 3,072 here)
    refused = int(m.get("kernels_refused") or 0)
    check(refused < 1024, "kernels of no call sampled past the switch (meta kernels_refused)", refused, "< 1024")
    # the collector sends only the kernels it samples; kernel_totals counts them all
    stored, counted = q1(db, "SELECT count(*) FROM kernels"), q1(db, "SELECT sum(count) FROM kernel_totals")
    check(stored + refused <= counted, "kernels stored + refused <= every kernel counted (kernel_totals)",
          (stored, refused), "<= %d" % counted)


def chrome_case(d, path, rows, agg):
    """agprof export --format chrome: the kept ops as slices, the aggregated ones as per-second counters."""
    out = os.path.join(d, "small.json")
    rc, _, err = agtest.agprof_cmd("export", "--format", "chrome", "-o", out, path)
    check_eq(rc, 0, "agprof export exit status (%s)" % err.strip())
    with open(out) as f:
        events = json.load(f)["traceEvents"]
    slices = sum(1 for e in events if e.get("cat") == "eager" and e["ph"] == "X")
    check_eq(slices, rows, "Chrome trace: one eager slice per kept op")
    counters = [e for e in events if e.get("cat") == "eager-aggregate"]
    check(counters and all(e["ph"] == "C" for e in counters), "Chrome trace: aggregated ops as counters",
          counters[:2])
    check_eq(sum(v for e in counters for v in e["args"].values()), agg,
             "Chrome trace: the counters' per-second ops add up to the aggregated ops")
    check_eq(set(k for e in counters for k in e["args"]), set(STEP_OPS), "Chrome trace: a counter per op type")


def merged_case(d, full, small, agg, m):
    """agprof merge of the run without a budget (first) and the one with: the budget's keys are the second's."""
    merged = os.path.join(d, "merged.agprof")
    rc, _, err = agtest.agprof_cmd("merge", "-o", merged, full, small)
    check_eq(rc, 0, "agprof merge exit status (%s)" % err.strip())
    db = agtest.open_recording(merged)
    mm = agtest.meta(db)
    db.close()
    check_eq(mm.get("aggregated_eager_ops"), str(agg), "merged meta aggregated_eager_ops = the second rank's")
    check_eq(mm.get("aggregate_from_ns"), m.get("aggregate_from_ns"), "merged meta aggregate_from_ns")
    b = report(merged)["session"]["budget"]
    check(b is not None and b["aggregated_eager_ops"] == agg, "merged report's session.budget", b)


def size_case(d):
    path, oracle, _ = record(d, "size", ["--max-size", "1"], ("--ops", str(SIZE_OPS)))
    db = agtest.open_recording(path)
    m = agtest.meta(db)
    check_eq(m.get("aggregate_reason"), "max-size", "meta aggregate_reason with --max-size 1")
    rows, agg, _ = file_counts(db)
    check(0 < rows < SIZE_OPS and agg > 0, "--max-size: some ops as rows, the rest aggregated", (rows, agg))
    kernels_case(db, m)
    counts = step_ops(report(path))
    check_eq(counts, {op: oracle["extra"]["planned_eager_ops"] // 4 for op in STEP_OPS},
             "--max-size: per-op counts = the program's own")
    db.close()


def sigkill_case(d):
    out = os.path.join(d, "kill.agprof")
    marker = 8000
    cmd = [agtest.AGPROF, "run", "-o", out, "--max-events", str(BUDGET), "--", agtest.PYTHON,
           agtest.sample("eager_heavy.py"), "--ops", str(marker * 10), "--marker", str(marker), "--sleep", "30"]
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                         cwd=agtest.SOURCE_ROOT)
    victim = None
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        parts = p.stdout.readline().decode().split()
        if not parts:
            break
        if parts[0] == "AGPROF-MARKER":
            victim = int(parts[3])
            break
    if not check(victim is not None, "a marker from eager_heavy.py"):
        p.kill()
        p.wait()
        return
    time.sleep(1.5)  # asleep: its last bucket's second has ended and been written
    os.kill(victim, signal.SIGKILL)
    check_eq(p.wait(timeout=120), 137, "agprof exit status, workload killed by SIGKILL")
    db = agtest.open_recording(out)
    agtest.check_recording_header(db)
    counts = {r[0]: r[1] for r in db.execute(
        "SELECT s.text, sum(n) FROM (SELECT op_id, 1 AS n FROM eager_ops UNION ALL"
        " SELECT op_id, count FROM eager_op_buckets) JOIN strings s ON s.id = op_id GROUP BY s.text")}
    check_eq({op: counts.get(op, 0) for op in STEP_OPS}, {op: marker // 4 for op in STEP_OPS},
             "ops up to the kill, rows and aggregates together")
    check_eq(agtest.meta(db).get("aggregate_reason"), "max-events", "meta aggregate_reason after SIGKILL")
    rc, _, err = agtest.agprof_cmd("report", out)
    check_eq(rc, 0, "agprof report after SIGKILL (%s)" % err[-300:])
    db.close()


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()
    budget_case(d)
    size_case(d)
    sigkill_case(d)
    agtest.finish("budget")


if __name__ == "__main__":
    main()
