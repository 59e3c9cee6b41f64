#!/usr/bin/env python3
"""check_recording.py - compare an agprof recording's GPU tables with what the
workload says it did (bench/gpu/device-check.sh runs it).

    check_recording.py REC [--kernels N | --kernels-at-least N] [--htod N]
                       [--dtoh N] [--memsets N] [--name NAME]...

Checks: GPU tracing on; kernel and copy counts; every kernel and copy tied
to its launching API call (same pid and correlation id); launch latency
(kernel start - call start) not negative; every GPU timestamp inside the
recording's [start_ns, end_ns] on the host clock; demangled names present.
Prints one line per check (PASS/FAIL) and a JSON summary; exit 1 on any FAIL.
"""
import argparse
import json
import sqlite3
import sys


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("recording")
    ap.add_argument("--kernels", type=int)
    ap.add_argument("--kernels-at-least", type=int)
    ap.add_argument("--htod", type=int)
    ap.add_argument("--dtoh", type=int)
    ap.add_argument("--memsets", type=int)
    ap.add_argument("--name", action="append", default=[],
                    help="a demangled kernel name that must be recorded (repeatable)")
    a = ap.parse_args()

    db = sqlite3.connect(f"file:{a.recording}?mode=ro", uri=True)
    q = lambda sql, *p: db.execute(sql, p).fetchall()
    one = lambda sql, *p: q(sql, *p)[0][0]
    failures = []

    def check(ok, what):
        print(("PASS " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    meta = dict(q("SELECT key, value FROM meta"))
    procs = q("SELECT pid, gpu_status, gpu_detail FROM processes ORDER BY pid")
    on = [p for p in procs if p[1] == "on"]
    for pid, st, detail in procs:
        print(f"info process {pid}: gpu {st}: {detail}")
    check(bool(on), "GPU tracing on in some process")

    kernels = one("SELECT count(*) FROM gpu_activity WHERE kind = 'kernel'")
    if a.kernels is not None:
        check(kernels == a.kernels, f"kernels recorded {kernels} == launched {a.kernels}")
    if a.kernels_at_least is not None:
        check(kernels >= a.kernels_at_least, f"kernels recorded {kernels} >= {a.kernels_at_least}")
    copies = dict(q("SELECT copy_kind, count(*) FROM gpu_activity WHERE kind = 'memcpy' GROUP BY copy_kind"))
    if a.htod is not None:
        check(copies.get("HtoD", 0) == a.htod, f"HtoD copies {copies.get('HtoD', 0)} == {a.htod}")
    if a.dtoh is not None:
        check(copies.get("DtoH", 0) == a.dtoh, f"DtoH copies {copies.get('DtoH', 0)} == {a.dtoh}")
    memsets = one("SELECT count(*) FROM gpu_activity WHERE kind = 'memset'")
    if a.memsets is not None:
        check(memsets == a.memsets, f"memsets {memsets} == {a.memsets}")

    uncorrelated = one(
        "SELECT count(*) FROM gpu_activity g WHERE g.kind IN ('kernel', 'memcpy', 'memset')"
        " AND NOT EXISTS (SELECT 1 FROM gpu_api_calls c"
        " WHERE c.pid = g.pid AND c.correlation_id = g.correlation_id)")
    check(kernels > 0 and uncorrelated == 0,
          f"every kernel and copy tied to its launching call ({uncorrelated} not)")
    lat = q("SELECT g.start_ns - c.start_ns FROM gpu_activity g JOIN gpu_api_calls c"
            " ON c.pid = g.pid AND c.correlation_id = g.correlation_id WHERE g.kind = 'kernel'")
    lat = sorted(r[0] for r in lat)
    neg = sum(1 for v in lat if v < 0)
    check(bool(lat) and neg == 0, f"launch latency never negative ({neg} negative of {len(lat)})")
    start, end = int(meta.get("start_ns", 0)), int(meta.get("end_ns", 0))
    outside = one("SELECT count(*) FROM gpu_activity WHERE start_ns < ? OR end_ns > ? OR end_ns < start_ns",
                  start, end)
    check(outside == 0, f"GPU timestamps inside the run [{start}, {end}] ({outside} outside)")
    names = {r[0] for r in q("SELECT DISTINCT s.text FROM gpu_activity g JOIN strings s ON s.id = g.name_id"
                             " WHERE g.kind = 'kernel'")}
    for n in a.name:
        check(n in names, f"kernel name '{n}' recorded (demangled)")

    summary = {
        "kernels": kernels, "copies": copies, "memsets": memsets,
        "api_calls": one("SELECT count(*) FROM gpu_api_calls"),
        "api_with_external_id": one("SELECT count(*) FROM gpu_api_calls WHERE external_id <> 0"),
        "streams": one("SELECT count(DISTINCT stream) FROM gpu_activity WHERE kind = 'kernel'"),
        "launch_latency_ns": {
            "p50": lat[len(lat) // 2] if lat else None,
            "p95": lat[int((len(lat) - 1) * 0.95)] if lat else None,
            "max": lat[-1] if lat else None,
        },
        "kernel_names": sorted(names)[:20],
        "gpu_detail": [p[2] for p in on],
        "failures": failures,
    }
    print(json.dumps(summary, indent=1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
