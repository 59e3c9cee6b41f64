"""Two Python black boxes in one run, judged by what they cost.

`setup` calls tf.py_function once, a few milliseconds in a run of seconds:
negligible, info.  `train_step` calls a py_function that sleeps 25 ms on
every one of its 30 steps, 0.75 s of the run: a warning.
"""
import time

import tensorflow as tf

import oracle

STEPS = 30
w = tf.Variable(tf.ones([8, 8]))


def note(x):
    return x


def slow_log(x):
    time.sleep(0.025)
    return x


@tf.function
def setup(x):
    return tf.py_function(note, [x], tf.float32)  # agprof: cheap-blackbox


@tf.function
def train_step(x):
    y = tf.matmul(x, w)
    w.assign(tf.tanh(y))
    return tf.py_function(slow_log, [tf.reduce_sum(y)], tf.float32)  # agprof: costly-blackbox


def main():
    x = tf.ones([8, 8])
    setup(tf.constant(1.0))
    total = 0.0
    for _ in range(STEPS):
        total += float(train_step(x))
        for _ in range(20):  # graph-free work that makes the run long
            x = tf.tanh(x) * 0.5 + 0.5
    print("total %.3f" % total)


if __name__ == "__main__":
    with oracle.eager_window():
        main()
