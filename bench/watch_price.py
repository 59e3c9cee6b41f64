#!/usr/bin/env python3
"""What the trace watch costs each trace, against what the collector says it cost (collector_ns): the price
model of pytrace.c trace_end() checked trace by trace on real traced code (docs/collector.md, the paragraphs
from "Its own time").

Each workload traces one function again and again (new shapes or new tf.function objects), after a warm-up
trace (the process's first: the watch's set-up), under `agprof run` with
AGPROF_WATCH_ALTERNATE=1 (every other trace not watched) and AGPROF_WATCH_PRICE=1 (each trace's thread CPU, the
watch's own calls, the frames, events, toggles and op frames it saw, and the slowdown it priced, on stderr).
The watch's true cost on a watched trace is its thread CPU (the child's own clock around the call) less the
mean of the unwatched traces on either side, in the same process: the same caches, the same CPU speed, the
same load.  The collector's estimate is the calls plus the priced slowdown.  Printed per workload: the medians
over the pairs of all rounds, and last a least-squares price per frame, event, toggle and op frame of the cost
the calls leave (what a count-based price would be).

Workloads (synthetic data, the libraries the setup installs in .venv):
  micro      a 60-step Python loop of the user's calling a helper (bench/watch_micro.py's);
  keras      a Keras model of 8 Dense layers called in a new tf.function per trace (Keras's frames);
  autograph  a user function with a Python while over a tensor and an if, converted by AutoGraph;
  gpflow     a GPflow SVGP's training loss in a new tf.function per trace (GPflow's and TFP's frames).

usage: bench/watch_price.py [--workloads micro,keras,autograph,gpflow] [--rounds N] [--traces N] [--cpu N]
                            [--python PY] [--agprof PATH]
       bench/watch_price.py --child WORKLOAD --traces N   (the workload itself)
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PRICE = re.compile(r"agprof: watch-price seq (\d+) watched (\d) cpu (\d+) calls (\d+) slowdown (\d+) frames (\d+)"
                   r" events (\d+) toggles (\d+) op_frames (\d+) ppm (\d+)")


def micro_fn():
    import tensorflow as tf

    def helper(x, i):
        y = tf.sin(x) * 1.01 + float(i)
        return y - tf.reduce_mean(y) * 0.5

    def body(x):
        for i in range(60):
            x = helper(x, i)
        return x
    fn = tf.function(body, reduce_retracing=False)
    return lambda n: fn(tf.zeros([n]))


def keras_fn():
    import keras
    import tensorflow as tf
    model = keras.Sequential([keras.Input((16,))] + [keras.layers.Dense(16, activation="relu") for _ in range(8)])

    def call(n):
        return tf.function(lambda x: model(x, training=True))(tf.zeros([n, 16]))
    return call


def autograph_fn():
    import tensorflow as tf

    def body(x):
        i = tf.constant(0)
        while i < 20:
            if tf.reduce_sum(x) > 0:
                x = x * 0.5 + 1.0
            else:
                x = x - 1.0
            i += 1
        return x
    fn = tf.function(body, reduce_retracing=False)
    return lambda n: fn(tf.ones([n]))


def gpflow_fn():
    import numpy as np
    import gpflow
    import tensorflow as tf
    rng = np.random.default_rng(0)
    x = rng.uniform(-3, 3, (200, 1))
    y = np.sin(x) + 0.1 * rng.normal(size=x.shape)
    model = gpflow.models.SVGP(gpflow.kernels.SquaredExponential(), gpflow.likelihoods.Gaussian(),
                               inducing_variable=np.linspace(-3, 3, 10)[:, None], num_data=200)
    return lambda n: tf.function(lambda: model.training_loss((x[:n + 20], y[:n + 20])))()


WORKLOADS = {"micro": micro_fn, "keras": keras_fn, "autograph": autograph_fn, "gpflow": gpflow_fn}


def child(workload, traces):
    import time
    import tensorflow as tf
    tf.function(lambda x: x + 1)(tf.zeros([1]))  # warm-up: the process's first trace (the watch's set-up)
    call = WORKLOADS[workload]()
    call(1)  # the workload's own first trace: imports, caches
    cpu = []
    for n in range(2, traces + 2):
        t0 = time.thread_time_ns()
        call(n)
        cpu.append(time.thread_time_ns() - t0)
    print("trace-cpu-ns " + " ".join(str(c) for c in cpu))


def run_round(args, workload, tmp, r):
    """One process: its traces alternately watched and not; [(cpu, watched, calls, slowdown, frames, events,
    toggles, op frames, ppm)] per trace, in order."""
    prog = [args.python, os.path.abspath(__file__), "--child", workload, "--traces", str(args.traces)]
    cmd = ["taskset", "-c", str(args.cpu), args.agprof, "run", "-q", "-f", "-o", os.path.join(tmp, "w%d.agprof" % r),
           "--"] + prog
    p = subprocess.run(cmd, env=dict(os.environ, AGPROF_WATCH_PRICE="1", AGPROF_WATCH_ALTERNATE="1"),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    o, e = p.stdout.decode("utf-8", "replace"), p.stderr.decode("utf-8", "replace")
    line = [ln for ln in o.splitlines() if ln.startswith("trace-cpu-ns")]
    rows = [tuple(int(v) for v in m.groups()) for m in PRICE.finditer(e)]
    if p.returncode or not line or len(rows) < args.traces:
        sys.exit("%s: failed (exit %d): %s" % (workload, p.returncode, (o + e)[-500:]))
    cpu = [int(v) for v in line[-1].split()[1:]]
    return [(c, row[1]) + row[3:] for c, row in zip(cpu, rows[-args.traces:])]


def pairs(traces):
    """(true cost, trace) of each watched trace with an unwatched one on either side: its CPU less theirs."""
    out = []
    for i in range(1, len(traces) - 1):
        if traces[i][1] and not traces[i - 1][1] and not traces[i + 1][1]:
            out.append((traces[i][0] - (traces[i - 1][0] + traces[i + 1][0]) / 2, traces[i]))
    return out


def lstsq(rows):
    """Least squares y = a*frames + b*events + c*toggles + d*op_frames over rows (y, frames, events, toggles,
    op_frames); (a, b, c, d) or None."""
    try:
        import numpy as np
    except ImportError:
        return None
    a = np.array([r[1:] for r in rows], dtype=float)
    y = np.array([r[0] for r in rows], dtype=float)
    return np.linalg.lstsq(a, y, rcond=None)[0] if len(rows) >= 4 else None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--child")
    ap.add_argument("--traces", type=int, default=10)
    ap.add_argument("--workloads", default="micro,keras,autograph,gpflow")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cpu", type=int, default=1)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--agprof", default=os.path.join(ROOT, "build", "cmd", "agprof", "agprof"))
    args = ap.parse_args()
    if args.child:
        child(args.child, args.traces)
        return
    print(subprocess.run(["uptime"], stdout=subprocess.PIPE, text=True).stdout.strip(), flush=True)
    fits = []
    with tempfile.TemporaryDirectory(prefix="watch-price-") as tmp:
        for w in args.workloads.split(","):
            per = []
            for r in range(args.rounds):
                per += pairs(run_round(args, w, tmp, r))
            if not per:
                continue
            true = statistics.median(t for t, _ in per)
            med = [statistics.median(tr[k] for _, tr in per) for k in range(9)]
            est = statistics.median(tr[2] + tr[3] for _, tr in per)
            base = med[0] - true
            print("%-9s %d pairs; unwatched %.1f ms/trace; the watch costs %.2f ms (%.1f%%); collector says %.2f ms"
                  " (%+.1f%% of the trace; calls %.2f, slowdown %.2f at %.1f%%); the slowdown is %.1f%% of the"
                  " watched trace less the calls; frames %d events %d toggles %d op frames %d"
                  % (w, len(per), base / 1e6, true / 1e6, 100 * true / base, est / 1e6, 100 * (est - true) / base,
                     med[2] / 1e6, med[3] / 1e6, med[8] / 1e4, 100 * (true - med[2]) / (med[0] - med[2]),
                     med[4], med[5], med[6], med[7]), flush=True)
            fits += [(t - tr[2], tr[4], tr[5], tr[6], tr[7]) for t, tr in per]
    coef = lstsq(fits)
    if coef is not None:
        print("least squares over every trace: %.1f ns a frame, %.1f ns an event, %.1f ns a toggle, %.1f ns an op"
              " frame" % tuple(coef))
    print(subprocess.run(["uptime"], stdout=subprocess.PIPE, text=True).stdout.strip())


if __name__ == "__main__":
    main()
