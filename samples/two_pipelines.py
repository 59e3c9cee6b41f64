"""Two tf.data pipelines on one thread: a quick one read first, a slow one the loop waits for.

A quick from_generator dataset is created and read a little; then a slow
one (its generator sleeps SLOW seconds per element) is read by the
training loop.  agprof must tell them apart: the input-bound finding names
the slow dataset's line and its generator with its time per element, the
generator's runs are charged to its own from_generator line, and no
prefetch is advised (TensorFlow 2.21 prefetches at the end of a pipeline
by itself; `--prefetch` writes one into the program too).  `--map` makes the
slow stage a map whose tf.py_function sleeps (serial: it holds the GIL).
"""
import sys
import time

import numpy as np
import tensorflow as tf

import oracle

SLOW = 0.02
ELEMENTS = 30
counts = {"quick": 0, "slow": 0, "map": 0}


def quick():
    for i in range(1000):
        counts["quick"] += 1
        yield np.float32(i)


def slow():
    for i in range(ELEMENTS):
        counts["slow"] += 1
        if "--map" not in sys.argv:
            time.sleep(SLOW)
        yield np.full([8], i, np.float32)


def sleepy(x):
    counts["map"] += 1
    time.sleep(SLOW)
    return x


@tf.function
def step(x):
    return tf.reduce_sum(x * 2.0)


def main():
    fast = tf.data.Dataset.from_generator(quick, output_signature=tf.TensorSpec([], tf.float32))  # agprof: quick
    for _ in fast.take(5):
        pass
    ds = tf.data.Dataset.from_generator(slow, output_signature=tf.TensorSpec([8], tf.float32))  # agprof: slow
    if "--map" in sys.argv:
        ds = ds.map(lambda x: tf.py_function(sleepy, [x], tf.float32))  # agprof: map
    if "--prefetch" in sys.argv:
        ds = ds.prefetch(tf.data.AUTOTUNE)  # agprof: prefetch
    total = 0.0
    for x in ds:  # agprof: loop
        total += float(step(x))
    print("total %.1f" % total)
    oracle.extra("total", total)
    oracle.extra("counts", counts)
    oracle.extra("failed_eager_ops", {"IteratorGetNext": 1})


if __name__ == "__main__":
    main()
