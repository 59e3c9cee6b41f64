"""Capture windows: a training-like loop whose own counters are the oracle.

Each step dispatches exactly --ops-per-step eager AddV2 ops on prebuilt 2x2
tensors (no constant conversion), then calls the tf.function `train_step`
once.  The program keeps its own count and writes, to the JSON file named
by --out, every AddV2 it dispatched with CLOCK_MONOTONIC before and after
it (time.monotonic_ns, the clock agprof records with), and every
train_step call with its number, so a test can tell which ops a capture
window must hold.

Options:
  --steps N          steps (default 20)
  --ops-per-step K   eager AddV2 ops per step (default 10)
  --sleep S          sleep S seconds after each step (default 0)
  --api PHASES       call agprof.start()/agprof.stop() before the steps
                     listed, e.g. "3:start,6:stop" (needs agprof importable)
  --wait-file PATH   after each step listed in --wait-at, print
                     "AGPROF-MARKER <step>" and wait until PATH.<step> exists
  --wait-at LIST     comma-separated step numbers for --wait-file
  --out PATH         where to write the counters (JSON)

No planted problem (used by tests/integration/test_capture.py).
"""
import argparse
import json
import os
import sys
import time

import tensorflow as tf


@tf.function
def train_step(x):
    return tf.reduce_sum(x * 2.0)


def parse_api(text):
    plan = {}
    for item in filter(None, (text or "").split(",")):
        step, what = item.split(":")
        plan[int(step)] = what
    return plan


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--ops-per-step", type=int, default=10)
    ap.add_argument("--sleep", type=float, default=0.0)
    ap.add_argument("--api", default="")
    ap.add_argument("--wait-file", default="")
    ap.add_argument("--wait-at", default="")
    ap.add_argument("--out", default="")
    a = ap.parse_args()
    plan = parse_api(a.api)
    waits = {int(s) for s in a.wait_at.split(",") if s}
    if plan:
        import agprof
    x = tf.ones([2, 2])
    y = tf.ones([2, 2])
    ops, calls = [], []
    train_step(x)  # trace before the loop: call 1 is this warm-up
    calls.append([1, time.monotonic_ns(), time.monotonic_ns()])
    for step in range(1, a.steps + 1):
        if plan.get(step) == "start":
            agprof.start()
        elif plan.get(step) == "stop":
            agprof.stop()
        for _ in range(a.ops_per_step):
            t0 = time.monotonic_ns()
            x = tf.add(x, y)
            ops.append([step, t0, time.monotonic_ns()])
        t0 = time.monotonic_ns()
        train_step(x)
        calls.append([len(calls) + 1, t0, time.monotonic_ns()])
        if step in waits and a.wait_file:
            print("AGPROF-MARKER %d" % step, flush=True)
            while not os.path.exists("%s.%d" % (a.wait_file, step)):
                time.sleep(0.01)
        if a.sleep:
            time.sleep(a.sleep)
    if plan.get(a.steps + 1) == "stop":
        agprof.stop()
    if a.out:
        with open(a.out, "w") as f:
            json.dump({"ops": ops, "calls": calls, "pid": os.getpid()}, f)
    print("capture_steps: %d steps, %d AddV2, %d train_step calls" % (a.steps, len(ops), len(calls)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
