#!/usr/bin/env python3
"""Time `agprof report` and `agprof check` on a large recording.

usage: bench/report/bench.py [--events N] [--runs R] [--keep DIR] AGPROF

Generates (once, cached in DIR, default /tmp/agprof-bench) a schema-valid
recording of N events (default 10 million) with gen-recording.py, then runs
each command R times (default 3) and prints the best and median wall time
and the peak resident memory.  Targets: report under 1 s, check under
0.5 s, memory under 200 MiB.  Not a test: timings depend on the machine.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def run_wait4(cmd):
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        os.execv(cmd[0], cmd)
    _, status, ru = os.wait4(pid, 0)
    wall = time.monotonic() - t0
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit("%s exited %d" % (" ".join(cmd), code))
    return wall, ru.ru_maxrss, ru.ru_utime + ru.ru_stime


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=10_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep", default="/tmp/agprof-bench")
    ap.add_argument("agprof")
    a = ap.parse_args()
    os.makedirs(a.keep, exist_ok=True)
    rec = os.path.join(a.keep, "bench-%d.agprof" % a.events)
    if not os.path.exists(rec):
        print("generating %s (%d events) ..." % (rec, a.events), flush=True)
        subprocess.check_call([sys.executable, os.path.join(HERE, "gen-recording.py"), "--events", str(a.events),
                               os.path.join(ROOT, "common", "schema.sql"), rec + ".tmp"])
        os.rename(rec + ".tmp", rec)
    # Warm the page cache: the benchmark measures agprof, not the disk.
    with open(rec, "rb") as fh:
        while fh.read(1 << 24):
            pass
    agprof = os.path.abspath(a.agprof)
    os.environ.setdefault("AGPROF_RULES_DIR", os.path.join(ROOT, "rules"))
    cases = [
        ("report", [agprof, "report", rec], 1.0),
        ("report --format json", [agprof, "report", "--format", "json", rec], 1.0),
        ("check --max-traces 5 --max-eager-share 50", [agprof, "check", rec, "--max-traces", "5",
                                                       "--max-eager-share", "50"], 0.5),
        # --fail-on runs the rules, hence the whole analysis (as `report` does).
        ("check --fail-on error", [agprof, "check", rec, "--fail-on", "error"], 0.5),
    ]
    print("recording: %s, %d events, %.0f MiB, %d CPUs" % (rec, a.events, os.path.getsize(rec) / 2**20,
                                                           os.cpu_count()))
    ok = True
    for name, cmd, target in cases:
        walls, rss, cpu = [], 0, []
        for _ in range(a.runs):
            w, r, c = run_wait4(cmd)
            walls.append(w)
            cpu.append(c)
            rss = max(rss, r)
        best = min(walls)
        verdict = "ok" if best < target and rss < 200 * 1024 else "SLOW" if best >= target else "BIG"
        ok = ok and verdict == "ok"
        print("%-45s best %.3f s  median %.3f s  cpu %.3f s  peak RSS %.1f MiB  (target %.1f s, 200 MiB) %s"
              % (name, best, statistics.median(walls), min(cpu), rss / 1024, target, verdict))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
