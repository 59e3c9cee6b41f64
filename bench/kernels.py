#!/usr/bin/env python3
"""Cost of recording kernels, on a graph-heavy workload, side by side.

Runs bench/graph_loop.py (a tf.function of ~2,000 small ops called in a
loop) in five configurations, alternating them ROUNDS times in this one
invocation (so all see the same machine load):
  bare          the workload alone
  kernels       under `agprof run` (the default, --kernels=sampled: every
                kernel counted, the sampled calls' kernels one by one)
  kernels-all   under `agprof run --kernels=all` (every kernel one by one;
                only with --all: on a loaded small machine its launcher needs
                minutes to store a million kernel rows)
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

Each run times its loop --repeat times and reports the least (bench/graph_loop.py):
the figures are then the loop's own cost more than the machine's load.

usage: bench/kernels.py [--rounds N] [--calls N] [--repeat R] [--all] [--pin] [--configs A,B] [--python PY]
                        [--agprof PATH] [--base-collector SO [--base-agprof PATH]]
  --pin: the workload (all its threads) on CPU 0 and agprof's launcher on
  CPU 1 (taskset), in every configuration.  On the shared 2-core machine an
  unpinned run of the same loop moves by +-20% from process to process (the
  executor's threads and the main thread migrating between the two CPUs);
  pinned, the bare loop's spread is a few percent, and the launcher, whose
  CPU is measured apart (bench/long_run.py), does not compete with the loop.
  --base-collector SO: one more configuration, kernels-base: the default
  under another collector library (AGPROF_COLLECTOR), e.g. one built from
  an older commit, to compare two collectors in the same rounds, with
  --base-agprof the launcher of that commit (the ring file's layout is
  theirs to share).
  --configs k-floor,k-pass,k-count,k-nostore: the split of the default's
  cost (AGPROF_KBENCH): the hook calling TensorFlow's Compute straight
  through (the cost of the hook's call alone), or once it has the thread's
  state; every kernel counted but no call sampled; the sampled calls timed
  but none of their kernels recorded.
"""
import argparse
import os
import re
import sqlite3
import statistics
import sys
import tempfile

from benchlib import pinned, run_checked

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the split of the default's cost (--configs only, AGPROF_KBENCH): the hook calling straight through (its call
# alone), or after the thread's state; every kernel counted, no call sampled; sampled calls timed, no record
KBENCH = {"k-floor": "floor", "k-pass": "pass", "k-count": "count", "k-nostore": "nostore"}
CONFIGS = ("bare", "kernels", "kernels-all", "no-kernels", "tf-profiler") + tuple(KBENCH) + ("kernels-base",)
OPTIONS = dict({"kernels": [], "kernels-all": ["--kernels=all"], "no-kernels": ["--no-kernels"], "kernels-base": []},
               **{c: [] for c in KBENCH})


def run(cmd, env=None):
    _, out = run_checked(cmd, env)
    m = re.search(r"loop cpu ([0-9.]+) wall ([0-9.]+) calls (\d+) stop ([0-9.]+)", out.stdout)
    if not m:
        sys.exit("bench: no loop timing in the output")
    return float(m.group(1)), float(m.group(2)), float(m.group(4))


def one(config, args, tmp, r):
    loop = [args.python, os.path.join(ROOT, "bench", "graph_loop.py"), str(args.calls), "--repeat", str(args.repeat)]
    program, launcher = pinned(args.pin)
    loop = program + loop
    out = os.path.join(tmp, "%s-%d.agprof" % (config, r))
    if config == "bare":
        return run(loop) + (None,)
    if config == "tf-profiler":
        return run(loop + ["--tf-profiler", os.path.join(tmp, "prof-%d" % r)]) + (None,)
    env = dict(os.environ, AGPROF_KBENCH=KBENCH[config]) if config in KBENCH else None
    if config == "kernels-base":
        env = dict(os.environ, AGPROF_COLLECTOR=args.base_collector)
    agprof = args.base_agprof if config == "kernels-base" and args.base_agprof else args.agprof
    res = run(launcher + [agprof, "run", "-q", "-f", "-o", out] + OPTIONS[config] + ["--"] + loop, env)
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
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--all", action="store_true", help="also run --kernels=all")
    ap.add_argument("--pin", action="store_true", help="the workload on CPU 0, agprof's launcher on CPU 1")
    ap.add_argument("--configs", help="comma-separated subset of the configurations (bare is always run)")
    ap.add_argument("--python", default=os.path.join(ROOT, ".venv", "bin", "python"))
    ap.add_argument("--agprof", default=os.path.join(ROOT, "build", "cmd", "agprof", "agprof"))
    ap.add_argument("--base-collector", help="also run the default under this collector library (kernels-base)")
    ap.add_argument("--base-agprof", help="the launcher for kernels-base (default: --agprof)")
    args = ap.parse_args()
    configs = tuple(c for c in CONFIGS if (args.all or c != "kernels-all") and c not in KBENCH and c != "kernels-base")
    if args.base_collector:
        configs += ("kernels-base",)
    if args.configs:
        configs = tuple(c for c in CONFIGS if c == "bare" or c in args.configs.split(",")
                        or (c == "kernels-base" and args.base_collector))
    tmp = tempfile.mkdtemp(prefix="agprof-bench-kernels-")
    wall = {c: [] for c in configs}
    cpu = {c: [] for c in configs}
    least = {c: {"cpu": [], "wall": []} for c in configs}
    for r in range(args.rounds):
        # rotate the order so that no configuration always runs first
        order = configs[r % len(configs):] + configs[:r % len(configs)]
        res = {c: one(c, args, tmp, r) for c in order}
        line = []
        for c in configs:
            c_cpu, c_wall, stop, rec = res[c]
            least[c]["cpu"].append(c_cpu)
            least[c]["wall"].append(c_wall)
            wall[c].append(c_wall / res["bare"][1])
            cpu[c].append(c_cpu / res["bare"][0])
            extra = (" %d counted, %d one by one, %d dropped" % rec) if rec else (" stop %.2f s" % stop if c == "tf-profiler" else "")
            line.append("%s cpu %.3f s (%.3f) wall %.3f s (%.3f)%s" % (c, c_cpu, cpu[c][-1], c_wall, wall[c][-1], extra))
        print("round %d: %s" % (r + 1, "; ".join(line)))
    print("%d rounds of %d calls (least of %d loops) of a %d-kernel tf.function%s; load %s" % (
        args.rounds, args.calls, args.repeat, 2002, ", workload on CPU 0, launcher on CPU 1" if args.pin else "",
        " ".join(open("/proc/loadavg").read().split()[:3])))
    for c in configs[1:]:
        print("median loop slowdown, %-12s cpu %.3f  wall %.3f%s" % (c, statistics.median(cpu[c]),
              statistics.median(wall[c]), "  (target <= 1.05)" if c == "kernels" else ""))
    # the least of every round against the bare runs' least: what load cannot add to
    for c in configs[1:]:
        print("least over rounds,    %-12s cpu %.3f  wall %.3f" % (c, min(least[c]["cpu"]) / min(least["bare"]["cpu"]),
              min(least[c]["wall"]) / min(least["bare"]["wall"])))


if __name__ == "__main__":
    main()
