"""Eager dispatch overhead: a hot loop of tiny ops with no tf.function.

Each iteration dispatches exactly 4 eager ops (AddV2, Mul, Sub, Maximum) on
2x2 tensors, so the kernels cost next to nothing and the time is the
interpreter -> TFE_Execute dispatch the article describes (its "2 million
Python-level dispatches").  The default, --ops 100000, is 25,000 iterations.
The inputs are tensors made before the loop, so no Python constant is
converted (no extra _EagerConst op) inside it.

Options:
  --ops N        number of eager ops to dispatch (rounded down to 4k)
  --marker K     print "AGPROF-MARKER <ops done> pid <pid>" (flushed) after
                 every K ops (K a multiple of 4); used by the SIGKILL test
  --sleep S      sleep S seconds after each marker (lets a test act)

Planted problem: the whole hot path is eager (cause: eager dispatch).
The fix is to wrap `step` in tf.function (or the whole loop, with tf.range).
"""
import argparse
import os
import sys
import time

import tensorflow as tf

import oracle

OPS_PER_STEP = 4


def step(x, y):  # agprof: step-def
    a = tf.add(x, y)  # agprof: eager-hot-loop
    b = tf.multiply(a, y)
    c = tf.subtract(b, x)
    return tf.maximum(c, x)  # agprof: step-end


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", type=int, default=100000)
    ap.add_argument("--marker", type=int, default=0)
    ap.add_argument("--sleep", type=float, default=0.0)
    args = ap.parse_args()
    steps = args.ops // OPS_PER_STEP

    x = tf.constant([[0.5, -1.0], [2.0, 0.25]])
    y = tf.constant([[1.0, 1.0], [-0.5, 0.5]])
    t0 = time.perf_counter()
    loop_t0 = time.monotonic_ns()
    for i in range(steps):
        x = step(x, y)
        done = (i + 1) * OPS_PER_STEP
        if args.marker and done % args.marker == 0:
            print("AGPROF-MARKER %d pid %d" % (done, os.getpid()), flush=True)
            if args.sleep:
                time.sleep(args.sleep)
    loop_t1 = time.monotonic_ns()
    dt = time.perf_counter() - t0
    print("%d eager ops in %.3f s (%.2f us/op)"
          % (steps * OPS_PER_STEP, dt, dt * 1e6 / max(1, steps * OPS_PER_STEP)))
    oracle.extra("planned_eager_ops", steps * OPS_PER_STEP)
    oracle.extra("loop_window_ns", [loop_t0, loop_t1])
    sys.stdout.flush()


if __name__ == "__main__":
    with oracle.eager_window():
        main()
