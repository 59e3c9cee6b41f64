#!/usr/bin/env python3
"""The trace watch's cost on one trace-heavy function (docs/collector.md, "The profile function in user frames
only" and "The trace watch on CPython 3.12 and later"): a 60-step Python loop of the user's calling a helper,
in a tf.function(reduce_retracing=False) traced 15 times with new shapes; the median of the calling thread's
CPU per trace (the graph's one call included).

Each round starts the configurations side by side, every process on one CPU (taskset), so that all see the
machine at the same speed:
  bare       the program without agprof;
  nowatch    `agprof run` with AGPROF_TRACE_WATCH=0 (traces recorded, not watched);
  profile    AGPROF_TRACE_WATCH=profile (the profile function on for the whole trace);
  watch      `agprof run` as shipped (3.10, 3.11: the frame hook; 3.12, 3.13: sys.monitoring in user frames).
It prints each round's medians in ms and, last, the median over the rounds.

usage: bench/watch_micro.py [--python PY] [--agprof PATH] [--rounds N] [--cpu N] [--configs a,b]
       bench/watch_micro.py --child [--traces N]   (the workload itself)
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = {"bare": None, "nowatch": {"AGPROF_TRACE_WATCH": "0"}, "profile": {"AGPROF_TRACE_WATCH": "profile"},
           "watch": {}}


def child(traces):
    import time

    import tensorflow as tf

    def helper(x, i):
        y = tf.sin(x) * 1.01 + float(i)
        return y - tf.reduce_mean(y) * 0.5

    @tf.function(reduce_retracing=False)
    def f(x):
        for i in range(60):
            x = helper(x, i)
        return x

    cpu = []
    for n in range(1, traces + 1):
        t0 = time.thread_time_ns()
        f(tf.zeros([n]))
        cpu.append(time.thread_time_ns() - t0)
    print("trace-cpu-ms %.2f traces %d" % (statistics.median(cpu) / 1e6, f.experimental_get_tracing_count()))


def command(args, config, rec):
    prog = [args.python, os.path.abspath(__file__), "--child"]
    pin = ["taskset", "-c", str(args.cpu)]
    if CONFIGS[config] is None:
        return pin + prog, dict(os.environ)
    return pin + [args.agprof, "run", "-q", "-f", "-o", rec, "--"] + prog, dict(os.environ, **CONFIGS[config])


def one_round(args, configs, tmp, r):
    """The configurations side by side; {config: median ms}."""
    procs = {}
    for c in configs:
        cmd, env = command(args, c, os.path.join(tmp, "%s-%d.agprof" % (c, r)))
        procs[c] = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = {}
    for c, p in procs.items():
        text = p.communicate()[0].decode("utf-8", "replace")
        line = [ln for ln in text.splitlines() if ln.startswith("trace-cpu-ms")]
        if p.returncode or not line or not line[-1].endswith("traces 15"):
            sys.exit("%s: failed (exit %d): %s" % (c, p.returncode, text[-300:]))
        out[c] = float(line[-1].split()[1])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child", action="store_true")
    ap.add_argument("--traces", type=int, default=15)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--agprof", default=os.path.join(ROOT, "build", "cmd", "agprof", "agprof"))
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--configs", default="bare,nowatch,profile,watch")
    args = ap.parse_args()
    if args.child:
        child(args.traces)
        return
    configs = args.configs.split(",")
    rounds = []
    with tempfile.TemporaryDirectory(prefix="watch-micro-") as tmp:
        for r in range(args.rounds):
            order = configs[r % len(configs):] + configs[:r % len(configs)]  # who starts first rotates
            rounds.append(one_round(args, order, tmp, r))
            print("round %d: %s" % (r + 1, "  ".join("%s %.1f" % (c, rounds[-1][c]) for c in configs)), flush=True)
    print("median: %s  (ms of thread CPU per trace, %s)" % (
        "  ".join("%s %.1f" % (c, statistics.median(x[c] for x in rounds)) for c in configs), args.python))


if __name__ == "__main__":
    main()
