#!/usr/bin/env python3
"""Collector overhead on the eager-heavy sample, measured side by side.

Runs samples/eager_heavy.py bare and under `agprof run`, alternating, ROUNDS
times each, in this one invocation (so both see the same machine load), and
prints:
  - the median ratio of the hot loop's time (under agprof / bare), from each
    pair of neighbouring runs: the loop is the sample's own `step` (4 eager
    ops), timed by bench/eager_loop.py in CPU time of the calling thread, so
    that neither TensorFlow's start-up nor other processes dilute it;
  - the collector's cost per recorded event in nanoseconds:
    (loop time under agprof - bare loop time) / events recorded in the loop;
  - the whole-run wall-time ratio, start-up and the recording's finish included.
Targets (issue: agprof run): ratio <= 1.05, cost <= 200 ns per event.

usage: bench/overhead.py [--rounds N] [--ops N] [--python PY] [--agprof PATH]
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


def run(cmd, env=None):
    wall, out = run_checked(cmd, env)
    m = re.search(r"loop cpu ([0-9.]+) wall ([0-9.]+) ops (\d+)", out.stdout)
    if not m:
        sys.exit("bench: no loop timing in the output")
    return float(m.group(1)), wall


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--ops", type=int, default=200000)
    ap.add_argument("--python", default=os.path.join(ROOT, ".venv", "bin", "python"))
    ap.add_argument("--agprof", default=os.path.join(ROOT, "build", "cmd", "agprof", "agprof"))
    args = ap.parse_args()
    sample = [args.python, os.path.join(ROOT, "bench", "eager_loop.py"), str(args.ops)]
    tmp = tempfile.mkdtemp(prefix="agprof-bench-")
    ratios, wall_ratios, costs = [], [], []
    for r in range(args.rounds):
        bare_loop, bare_wall = run(sample)
        out = os.path.join(tmp, "r%d.agprof" % r)
        loop, wall = run([args.agprof, "run", "-q", "-f", "-o", out, "--"] + sample)
        with sqlite3.connect(out) as db:
            events = db.execute("SELECT count(*) FROM eager_ops").fetchone()[0]
            dropped = int(db.execute("SELECT value FROM meta WHERE key = 'dropped_events'").fetchone()[0])
        if dropped:
            print("round %d: %d events dropped" % (r + 1, dropped))
        ratios.append(loop / bare_loop)
        wall_ratios.append(wall / bare_wall)
        costs.append((loop - bare_loop) * 1e9 / max(1, events))
        print("round %d: bare loop %.3f s, under agprof %.3f s (ratio %.3f), %d events, %.0f ns/event; wall %.2f s vs %.2f s"
              % (r + 1, bare_loop, loop, loop / bare_loop, events, costs[-1], bare_wall, wall))
    print("%d rounds of %d eager ops" % (args.rounds, args.ops))
    print("median hot-loop slowdown ratio: %.3f (target <= 1.05)" % statistics.median(ratios))
    print("median collector cost per event: %.0f ns (target <= 200 ns)" % statistics.median(costs))
    print("median whole-run wall-time ratio: %.3f (TensorFlow start-up and the recording's finish included)"
          % statistics.median(wall_ratios))


if __name__ == "__main__":
    main()
