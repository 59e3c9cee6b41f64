#!/usr/bin/env python3
"""Memory and time of `agprof merge` against the number of inputs.

usage: bench/merge/bench.py [--counts 10,50,200] [--runs R] AGPROF RECORDING

Copies RECORDING (any recording, e.g. one worker of tests/integration/
test_multiworker.py's job or `agprof run -o r.agprof -- python
samples/mlp_train.py`) N times for each N of --counts, then merges them R
times (default 3, alternating the counts) and prints, side by side, the
median wall time, the median peak resident memory and the time per input.
The goal: memory flat in N (the merge streams each input through SQLite
and keeps a few hundred bytes per input between its two passes).  Not a
test: timings depend on the machine and its load.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time


def run_wait4(cmd):
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit("%s exited %d: %s" % (" ".join(cmd[:4]), code, p.stderr.read().decode()[-500:]))
    return wall, ru.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--counts", default="10,50,200")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("agprof")
    ap.add_argument("recording")
    a = ap.parse_args()
    counts = [int(c) for c in a.counts.split(",")]
    d = tempfile.mkdtemp(prefix="agprof-bench-merge-")
    try:
        inputs = []
        for i in range(max(counts)):
            p = os.path.join(d, "w-%d.agprof" % i)
            shutil.copy(a.recording, p)
            inputs.append(p)
        res = {n: [] for n in counts}
        for _ in range(a.runs):
            for n in counts:  # alternate the counts so that load drifts hit all alike
                out = os.path.join(d, "merged.agprof")
                res[n].append(run_wait4([a.agprof, "merge", "--force", "-o", out] + inputs[:n]))
        size = os.path.getsize(a.recording) / 1024.0
        print("input: %s (%.0f KiB), %d runs each, load %.2f" % (a.recording, size, a.runs, os.getloadavg()[0]))
        print("%8s %12s %14s %16s" % ("inputs", "median wall", "median maxRSS", "wall per input"))
        for n in counts:
            wall = statistics.median(w for w, _ in res[n])
            rss = statistics.median(r for _, r in res[n])
            print("%8d %11.2fs %11.1f MiB %13.1f ms" % (n, wall, rss, wall / n * 1000))
    finally:
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main()
