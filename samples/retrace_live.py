"""A long loop that retraces every half second (cause: shape), for agprof top.

Each step calls the tf.function `step` on a batch, runs a few eager ops on
the result (eager dispatch in the loop) and reads the next batch from a
tf.data iterator (input wait).  Every --every seconds the batch size
changes, so `step` is traced again; each new trace prints

    retrace N at MONOTONIC_NS batch B

MONOTONIC_NS is time.monotonic_ns(), CLOCK_MONOTONIC, the clock of the
recording: a test can check that `agprof top` showed the retrace within a
bound of it happening.  TensorFlow's own tracing count is the oracle.

Fix: input_signature=[tf.TensorSpec([None, 8], tf.float32)].
"""
import argparse
import sys
import time

import numpy as np
import tensorflow as tf

w = tf.Variable(tf.ones([8, 1]))


@tf.function
def step(x):
    return tf.reduce_sum(tf.matmul(x, w))


def batches(size):
    data = np.ones((64, 8), np.float32)
    return iter(tf.data.Dataset.from_tensor_slices(data).repeat().batch(size))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--seconds", type=float, default=10.0)
    p.add_argument("--every", type=float, default=0.5)
    a = p.parse_args()
    end = time.monotonic() + a.seconds
    size, changed, total = 2, time.monotonic(), 0.0
    it = batches(size)
    while time.monotonic() < end:
        if time.monotonic() - changed >= a.every:
            size, changed = size + 1, time.monotonic()
            it = batches(size)
        before = step.experimental_get_tracing_count()
        y = step(next(it))
        if step.experimental_get_tracing_count() > before:
            print("retrace %d at %d batch %d" % (before, time.monotonic_ns(), size), flush=True)
        total += float(tf.add(tf.multiply(y, 0.5), 1.0))
        time.sleep(0.002)
    print("tracing count:", step.experimental_get_tracing_count(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
