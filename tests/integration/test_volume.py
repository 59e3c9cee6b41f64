"""Volume: 400,000 eager ops at full speed, none lost.

samples/eager_heavy.py --ops 400000 dispatches exactly 100,000 each of
AddV2, Mul, Sub and Maximum in its loop (the sample reports the number it
planned in the oracle's extra.planned_eager_ops; the TF profiler is off for
this run, AGPROF_ORACLE_NO_PROFILER=1, as 3 million profiler events would
dominate the test).  The collector's rings are drained while the workload
runs; every op must be recorded and dropped_events must stay 0.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check_eq, q1  # noqa: E402

OPS = 400000


def main():
    agtest.need_agprof()
    os.environ["AGPROF_ORACLE_NO_PROFILER"] = "1"
    proc, db, oracle = agtest.run_sample_recorded("eager_heavy.py", ["--ops", str(OPS)])
    check_eq(proc.returncode, 0, "agprof run exit status")
    agtest.check_recording_header(db)
    planned = oracle["extra"]["planned_eager_ops"]
    check_eq(planned, OPS, "ops planned by the sample (sanity)")
    m = agtest.meta(db)
    check_eq(m.get("dropped_events"), "0", "meta dropped_events")
    pid = oracle["pid"]
    counts = {r[0]: r[1] for r in db.execute(
        "SELECT s.text, count(*) FROM eager_ops e JOIN strings s ON s.id = e.op_id "
        "JOIN callsites c ON c.id = e.callsite_id JOIN strings f ON f.id = c.func_id "
        "WHERE e.pid = ? AND f.text = 'step' GROUP BY s.text", (pid,))}
    check_eq(counts, {op: planned // 4 for op in ("AddV2", "Mul", "Sub", "Maximum")},
             "eager ops dispatched from step(), by type")
    check_eq(q1(db, "SELECT dropped_events FROM processes WHERE pid = ?", pid), 0,
             "processes.dropped_events")
    agtest.finish("volume")


if __name__ == "__main__":
    main()
