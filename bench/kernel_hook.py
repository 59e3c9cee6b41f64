#!/usr/bin/env python3
"""The kernel hook's own cost per kernel, from perf samples, side by side.

Runs bench/graph_loop.py (a tf.function of 2,002 small kernels called in a
loop) under `agprof run` inside `perf record` (software cpu-clock, so it
works on a VM without hardware counters), once per collector library given,
alternating them ROUNDS times, and prints per collector the CPU time
sampled inside its kernel hooks (the ThreadPoolDevice::Compute and
ComputeAsync definitions, with what they inline; not the collector's GOT
scan at import, nor the clock reads of sampled calls, which are in the
vDSO) divided by the kernels it counted (kernel_totals): nanoseconds of
hook per kernel, and the hook's share of all the run's samples.  On a
loaded machine both move with the load (a cache miss costs more), the
share less than the loop's time in bench/kernels.py.  What it cannot see:
a cache miss the hook takes that the kernel would have taken anyway (it
counts against the hook), and lines the hook evicts (they count against
TensorFlow): bench/kernels.py remains the measure of the goal.

usage: bench/kernel_hook.py [--rounds N] [--calls N] [--freq HZ] [NAME=COLLECTOR.so[,KBENCH] ...]
  with no NAME=PATH, the build's collector (AGPROF_COLLECTOR selects the others);
  KBENCH sets AGPROF_KBENCH (count: no call sampled; nostore: sampled calls timed, no records).
Besides the hook, per kernel counted: the clock reads (vDSO samples), the
ring records (agp_emit_kernel) and the launcher's CPU (its process: it
stores the records), all from the same perf samples.
"""
import argparse
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def samples_in(data, dso):
    """perf samples in the kernel hooks of the object named dso (the
    collector's other work, such as its GOT scan at import, left out), and
    of the whole run; and the split of the rest of what kernels cost: the
    clock reads of sampled calls (the vDSO), the collector's ring records
    (agp_emit_kernel), and the launcher (comm agprof: it stores them)."""
    out = subprocess.run(["perf", "report", "-i", data, "-n", "--no-children", "--sort", "comm,dso,sym", "--stdio"],
                         capture_output=True, text=True, check=True).stdout
    mine = total = 0
    split = {"vdso": 0, "emit": 0, "launcher": 0}
    for m in re.finditer(r"^\s+[0-9.]+%\s+(\d+)\s+(\S+)\s+(\S+)\s+\[.\]\s+(.*)$", out, re.M):
        n, comm, obj, sym = int(m.group(1)), m.group(2), m.group(3), m.group(4)
        total += n
        if comm == "agprof":
            split["launcher"] += n
        elif obj == dso and "ThreadPoolDevice::Compute" in sym:
            mine += n
        elif obj == dso and "agp_emit_kernel" in sym:
            split["emit"] += n
        elif obj == "[vdso]":
            split["vdso"] += n
    return mine, total, split


def one(args, tmp, name, lib):
    rec, data = os.path.join(tmp, name + ".agprof"), os.path.join(tmp, name + ".data")
    lib, _, kbench = lib.partition(",")
    env = dict(os.environ, AGPROF_COLLECTOR=lib, AGPROF_KBENCH=kbench)
    cmd = ["perf", "record", "-q", "-F", str(args.freq), "-o", data, "--", args.agprof, "run", "-q", "-f", "-o", rec,
           "--", args.python, os.path.join(ROOT, "bench", "graph_loop.py"), str(args.calls)]
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    with sqlite3.connect(rec) as db:
        kernels = db.execute("SELECT coalesce(sum(count), 0) FROM kernel_totals").fetchone()[0]
    mine, total, split = samples_in(data, os.path.basename(lib))
    os.unlink(rec)
    os.unlink(data)
    if not kernels:
        sys.exit("bench: %s counted no kernels" % name)
    per = {k: v / args.freq / kernels * 1e9 for k, v in split.items()}
    return mine / args.freq / kernels * 1e9, mine, total, per


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--calls", type=int, default=1000)
    ap.add_argument("--freq", type=int, default=4000)
    ap.add_argument("--python", default=os.path.join(ROOT, ".venv", "bin", "python"))
    ap.add_argument("--agprof", default=os.path.join(ROOT, "build", "cmd", "agprof", "agprof"))
    ap.add_argument("libs", nargs="*", help="NAME=path of a collector library")
    args = ap.parse_args()
    libs = [tuple(a.split("=", 1)) for a in args.libs] or [
        ("build", os.path.join(ROOT, "build", "collector", "libagprof-collector.so"))]
    tmp = tempfile.mkdtemp(prefix="agprof-bench-hook-")
    ns = {name: [] for name, _ in libs}
    other = {name: {"vdso": [], "emit": [], "launcher": []} for name, _ in libs}
    for r in range(args.rounds):
        order = libs[r % len(libs):] + libs[:r % len(libs)]
        line = []
        for name, lib in order:
            per, mine, total, split = one(args, tmp, name, lib)
            ns[name].append(per)
            for k, v in split.items():
                other[name][k].append(v)
            line.append("%s %.1f ns/kernel (%d of %d samples, %.1f%%; clock %.1f, records %.1f, launcher %.1f)" % (
                name, per, mine, total, 100.0 * mine / total, split["vdso"], split["emit"], split["launcher"]))
        print("round %d: %s" % (r + 1, "; ".join(line)), flush=True)
    print("%d rounds of %d calls of a 2002-kernel tf.function; load %s" % (
        args.rounds, args.calls, " ".join(open("/proc/loadavg").read().split()[:3])))
    for name, _ in libs:
        print("median hook cost, %-10s %.1f ns per kernel; clock reads %.1f, ring records %.1f, launcher %.1f" % (
            name, statistics.median(ns[name]), *(statistics.median(other[name][k]) for k in ("vdso", "emit", "launcher"))))


if __name__ == "__main__":
    main()
