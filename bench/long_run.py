#!/usr/bin/env python3
"""A long eager run, bare and under `agprof run` with default settings, side by side.

Runs bench/eager_loop.py (the eager-heavy sample's loop of 4 tiny eager ops)
for --ops ops, bare and under agprof, alternating, --rounds times each in
this one invocation (both see the same machine load), and prints per round
and as medians:
  - the whole-run wall-time ratio (agprof / bare), TensorFlow's start-up and
    the recording's finish included (issue 11's target: <= 1.02);
  - the recording's size, and bytes per recorded event with the table and
    each index apart (sqlite3's dbstat; issue 11's target: <= 32 bytes per
    kept event, indexes included);
  - the launcher's own CPU per recorded event (getrusage of agprof itself,
    printed with AGPROF_TIMING=1: the program's CPU is not in it; target
    <= 0.5 us) and how long the recording's finish took after the program
    ended (index building, links, the WAL folded back).
Say the machine's load beside the figures: `uptime` is printed first and last.

usage: bench/long_run.py [--rounds N] [--ops N] [--python PY] [--agprof PATH] [--keep DIR]
"""
import argparse
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TIMING = re.compile(r"agprof: timing: launcher cpu ([0-9.]+) s .* finish ([0-9.]+) s")


def run(cmd, env=None):
    t0 = time.perf_counter()
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        sys.exit("bench: %s failed (%d): %s" % (cmd[0], out.returncode, out.stderr[-2000:]))
    return wall, out.stderr


def storage(path):
    """(events kept, {table or index: bytes}) of a recording."""
    with sqlite3.connect(path) as db:
        events = sum(db.execute("SELECT count(*) FROM %s" % t).fetchone()[0]
                     for t in ("eager_ops", "function_calls", "blackbox_execs", "session_runs"))
        sizes = dict(db.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"))
        dropped = int(db.execute("SELECT value FROM meta WHERE key = 'dropped_events'").fetchone()[0])
    return events, sizes, dropped


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ops", type=int, default=20000000)
    ap.add_argument("--python", default=os.path.join(ROOT, ".venv", "bin", "python"))
    ap.add_argument("--agprof", default=os.path.join(ROOT, "build", "cmd", "agprof", "agprof"))
    ap.add_argument("--keep", help="keep the recordings in this directory")
    args = ap.parse_args()
    sample = [args.python, os.path.join(ROOT, "bench", "eager_loop.py"), str(args.ops)]
    tmp = args.keep or tempfile.mkdtemp(prefix="agprof-longrun-")
    os.makedirs(tmp, exist_ok=True)
    env = dict(os.environ, AGPROF_TIMING="1")
    print("load:", subprocess.run(["uptime"], stdout=subprocess.PIPE, text=True).stdout.strip())
    ratios, per_event, cpu_us, finishes, sizes_mb = [], [], [], [], []
    for r in range(args.rounds):
        bare, _ = run(sample)
        out = os.path.join(tmp, "long%d.agprof" % r)
        wall, err = run([args.agprof, "run", "-q", "-f", "-o", out, "--"] + sample, env=env)
        m = TIMING.search(err)
        if not m:
            sys.exit("bench: no timing line from agprof (AGPROF_TIMING)")
        events, sizes, dropped = storage(out)
        size = os.path.getsize(out)
        ratios.append(wall / bare)
        per_event.append(size / max(1, events))
        cpu_us.append(float(m.group(1)) * 1e6 / max(1, events))
        finishes.append(float(m.group(2)))
        sizes_mb.append(size / 1e6)
        parts = ", ".join("%s %.1f" % (k, v / max(1, events)) for k, v in
                          sorted(sizes.items(), key=lambda kv: -kv[1]) if v / max(1, events) >= 0.5)
        print("round %d: wall bare %.2f s, agprof %.2f s (ratio %.3f); %d events (%d dropped), %.1f MB,"
              " %.1f B/event (%s); launcher cpu %.2f us/event; finish %.2f s"
              % (r + 1, bare, wall, wall / bare, events, dropped, size / 1e6, per_event[-1], parts,
                 cpu_us[-1], finishes[-1]))
        if not args.keep:
            os.unlink(out)
    print("%d rounds of %d eager ops" % (args.rounds, args.ops))
    print("median whole-run wall ratio: %.3f (target <= 1.02)" % statistics.median(ratios))
    print("median recording: %.1f MB, %.1f bytes per event, indexes included (target <= 32)"
          % (statistics.median(sizes_mb), statistics.median(per_event)))
    print("median launcher cpu: %.2f us per event (target <= 0.5)" % statistics.median(cpu_us))
    print("median finish after the program ended: %.2f s" % statistics.median(finishes))
    print("load:", subprocess.run(["uptime"], stdout=subprocess.PIPE, text=True).stdout.strip())


if __name__ == "__main__":
    main()
