"""samples/input_bound.py with its map call over several lines, as black
writes a long one: the parser gives the call's last argument, and
num_parallel_calls goes after it.  The text reader found no closing bracket
on the map's line and gave up.
"""
import sys
import time

import numpy as np
import tensorflow as tf

import oracle

PARALLEL = "--parallel" in sys.argv[1:]
ELEMENTS = 96
BATCH = 4
SIZE = 256
ROUNDS = 40

w = tf.Variable(tf.zeros([SIZE, 1]))


def heavy(x):
    m = tf.reshape(x, [SIZE, SIZE])
    for _ in range(ROUNDS):
        m = tf.tanh(tf.matmul(m, m) * 0.01)
    return tf.reduce_mean(m, axis=1)


@tf.function
def train_step(x):
    loss = tf.reduce_mean(tf.matmul(x, w))
    if PARALLEL:
        # A step with real work, which the prefetched pipeline overlaps.
        m = tf.random.stateless_normal([512, 512], seed=[1, 2])
        for _ in range(8):
            m = tf.tanh(tf.matmul(m, m) * 0.01)
        loss += tf.reduce_mean(m)
    w.assign_sub(0.001 * tf.ones_like(w) * loss)
    return loss


def make_dataset():
    x = np.random.default_rng(0).normal(size=(ELEMENTS, SIZE * SIZE)).astype(np.float32)
    ds = tf.data.Dataset.from_tensor_slices(x)  # agprof: dataset
    if PARALLEL:
        return ds.map(heavy, num_parallel_calls=tf.data.AUTOTUNE).batch(BATCH).prefetch(tf.data.AUTOTUNE)
    return ds.map(  # agprof: slow-map
        heavy,
    ).batch(BATCH)


def main():
    oracle.track("train_step", train_step)
    ds = make_dataset()
    steps = 0
    wait_ns = 0
    it = iter(ds)
    t0 = time.monotonic_ns()
    while True:
        a = time.monotonic_ns()
        try:
            x = next(it)
        except StopIteration:
            wait_ns += time.monotonic_ns() - a
            break
        wait_ns += time.monotonic_ns() - a
        oracle.called("train_step")
        train_step(x)
        steps += 1
    loop_ns = time.monotonic_ns() - t0
    print("steps %d, waited %.2f s of %.2f s for input" % (steps, wait_ns / 1e9, loop_ns / 1e9))
    oracle.extra("steps", steps)
    oracle.extra("input_wait_ns", wait_ns)
    oracle.extra("loop_ns", loop_ns)
    oracle.extra("failed_eager_ops", {"IteratorGetNext": 1})


if __name__ == "__main__":
    with oracle.eager_window():
        main()
