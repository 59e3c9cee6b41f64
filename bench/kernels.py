#!/usr/bin/env python3
"""Cost of recording kernels, on a graph-heavy workload, side by side.

Runs bench/graph_loop.py (a tf.function of ~2,000 small ops called in a
loop) in five configurations, alternating them ROUNDS times in this one
invocation (so all see the same machine load):
  bare          the workload alone
  kernels       under `agprof run` (the default, --kernels=sampled: every
                kernel counted, the sampled calls' kernels one by one)
  kernels-all   under `agprof run --kernels=all` (every kernel one by one)
  no-kernels    under `agprof run --no-kernels`
  tf-profiler   alone, with TensorFlow's own profiler started around the loop
and prints, per configuration, the median ratio of the loop's CPU time
(all threads of the workload: what the collector adds to the program,
robust to other processes) and of its wall time to the bare run of the same
round, plus per round the kernels counted (kernel_totals), those recorded
one by one (kernels) and those dropped (the launcher is a separate process,
and at a million kernels a second it cannot store them all one by one), and
TensorFlow profiler's stop() time.
Target (issue 10): kernels <= 1.05x.  Same method as bench/overhead.py.

usage: bench/kernels.py [--rounds N] [--calls N] [--python PY] [--agprof PATH]
"""
import argparse
import os
import re
import sqlite3
import statistics
import sys
import tempfile

from benchlib import run_checked

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = ("bare", "kernels", "kernels-all", "no-kernels", "tf-profiler")
OPTIONS = {"kernels": [], "kernels-all": ["--kernels=all"], "no-kernels": ["--no-kernels"]}


def run(cmd):
    _, out = run_checked(cmd)
    m = re.search(r"loop cpu ([0-9.]+) wall ([0-9.]+) calls (\d+) stop ([0-9.]+)", out.stdout)
    if not m:
        sys.exit("bench: no loop timing in the output")
    return float(m.group(1)), float(m.group(2)), float(m.group(4))


def one(config, args, tmp, r):
    loop = [args.python, os.path.join(ROOT, "bench", "graph_loop.py"), str(args.calls)]
    out = os.path.join(tmp, "%s-%d.agprof" % (config, r))
    if config == "bare":
        return run(loop) + (None,)
    if config == "tf-profiler":
        return run(loop + ["--tf-profiler", os.path.join(tmp, "prof-%d" % r)]) + (None,)
    res = run([args.agprof, "run", "-q", "-f", "-o", out] + OPTIONS[config] + ["--"] + loop)
    with sqlite3.connect(out) as db:
        counted = db.execute("SELECT coalesce(sum(count), 0) FROM kernel_totals").fetchone()[0]
        kernels = db.execute("SELECT count(*) FROM kernels").fetchone()[0]
        dropped = int(db.execute("SELECT value FROM meta WHERE key = 'dropped_events'").fetchone()[0])
        dropped += db.execute("SELECT coalesce(sum(dropped_kernels), 0) FROM processes").fetchone()[0]
    os.unlink(out)
    return res + ((counted, kernels, dropped),)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--python", default=os.path.join(ROOT, ".venv", "bin", "python"))
    ap.add_argument("--agprof", default=os.path.join(ROOT, "build", "cmd", "agprof", "agprof"))
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="agprof-bench-kernels-")
    wall = {c: [] for c in CONFIGS}
    cpu = {c: [] for c in CONFIGS}
    for r in range(args.rounds):
        # rotate the order so that no configuration always runs first
        order = CONFIGS[r % len(CONFIGS):] + CONFIGS[:r % len(CONFIGS)]
        res = {c: one(c, args, tmp, r) for c in order}
        line = []
        for c in CONFIGS:
            c_cpu, c_wall, stop, rec = res[c]
            wall[c].append(c_wall / res["bare"][1])
            cpu[c].append(c_cpu / res["bare"][0])
            extra = (" %d counted, %d one by one, %d dropped" % rec) if rec else (" stop %.2f s" % stop if c == "tf-profiler" else "")
            line.append("%s cpu %.3f s (%.3f) wall %.3f s (%.3f)%s" % (c, c_cpu, cpu[c][-1], c_wall, wall[c][-1], extra))
        print("round %d: %s" % (r + 1, "; ".join(line)))
    print("%d rounds of %d calls of a %d-kernel tf.function; load %s" % (
        args.rounds, args.calls, 2003, " ".join(open("/proc/loadavg").read().split()[:3])))
    for c in CONFIGS[1:]:
        print("median loop slowdown, %-12s cpu %.3f  wall %.3f%s" % (c, statistics.median(cpu[c]),
              statistics.median(wall[c]), "  (target <= 1.05)" if c == "kernels" else ""))


if __name__ == "__main__":
    main()
