"""A tf.data pipeline whose augmentation is a tf.py_function that runs eager
TensorFlow ops inside its Python body.

The body (`augment_py`) runs on tf.data's threads, once per element, and
dispatches a few eager ops each time (tf.constant -> _EagerConst, tf.reverse,
tf.multiply).  Those ops are part of the black box: the py_function node's
executions, not eager dispatch of the main loop, and they have no frame of
the main thread.  The training step is a tf.function (one graph call per
batch), so the main thread does almost no eager dispatch of its own.

Fix: express the augmentation with TF ops inside the map function, so that
tf.data runs it as a graph (and in parallel with num_parallel_calls).
"""
import threading

import numpy as np
import tensorflow as tf

import oracle

ELEMENTS = 200
BATCH = 10
OPS_PER_ELEMENT = 3   # _EagerConst, ReverseV2, Mul (counted below)

body_calls = [0]
body_lock = threading.Lock()
w = tf.Variable(tf.zeros([8, 1]))


def augment_py(x):
    # Eager TensorFlow inside the py_function body, on a tf.data thread.
    with body_lock:
        body_calls[0] += 1
    noise = tf.constant(np.full([8], 0.01, np.float32))
    return tf.multiply(tf.reverse(x, axis=[0]), 1.0) + noise


def augment(x, y):
    x = tf.py_function(augment_py, [x], tf.float32)  # agprof: blackbox
    x.set_shape([8])
    return x, y


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
    w.assign_sub(0.01 * tape.gradient(loss, w))
    return loss


def make_dataset():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(ELEMENTS, 8)).astype(np.float32)
    y = x.sum(axis=1, keepdims=True).astype(np.float32)
    return tf.data.Dataset.from_tensor_slices((x, y)).map(augment).batch(BATCH)  # agprof: dataset


def main():
    oracle.track("train_step", train_step)
    steps = 0
    for x, y in make_dataset():
        oracle.called("train_step")
        train_step(x, y)
        steps += 1
    print("steps %d, py_function bodies %d" % (steps, body_calls[0]))
    oracle.extra("steps", steps)
    oracle.extra("py_function_execs", body_calls[0])
    # The + of two tensors is an AddV2: four eager ops per element.
    oracle.extra("eager_ops_in_body", body_calls[0] * (OPS_PER_ELEMENT + 1))
    oracle.extra("failed_eager_ops", {"IteratorGetNext": 1})


if __name__ == "__main__":
    with oracle.eager_window():
        main()
