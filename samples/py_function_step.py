"""Python black boxes in graph code: tf.py_function and tf.numpy_function.

1. The tf.data pipeline's map calls `tf.numpy_function(jitter, ...)`: a
   PyFunc node in the tf.data graph, which takes the GIL and runs the
   interpreter for every element.
2. `train_step` is a tf.function, but calls `tf.py_function(log_loss, ...)`
   on every step: an EagerPyFunc node inside the train-step graph.  The
   graph optimizer cannot see into it, it pins execution to the host, and
   each step goes back into Python.

Both functions are traced once (fixed batch shape thanks to
drop_remainder=True); the cost is in executing the black boxes.
Fix: express the Python logic with TF ops (tf.random.stateless_uniform,
tf.print / tf.summary), or move it out of the hot path.
"""
import threading

import numpy as np
import tensorflow as tf

import oracle

BATCH = 16
STEPS = 20

w = tf.Variable(tf.zeros([4, 1]))
seen_losses = []
jitter_calls = [0]
jitter_lock = threading.Lock()


def jitter(x):
    # NumPy, run by the interpreter once per element (in a tf.data thread).
    with jitter_lock:
        jitter_calls[0] += 1
    return (x + np.float32(0.01) * np.sin(x)).astype(np.float32)


def log_loss(loss):
    seen_losses.append(float(loss))
    return loss


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
    w.assign_sub(0.05 * tape.gradient(loss, w))
    loss = tf.py_function(log_loss, [loss], tf.float32)  # agprof: blackbox
    return loss


def make_dataset():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(BATCH * STEPS, 4)).astype(np.float32)
    y = (x.sum(axis=1, keepdims=True) * 0.5).astype(np.float32)

    def augment(xi, yi):
        xi = tf.numpy_function(jitter, [xi], tf.float32)  # agprof: blackbox
        xi.set_shape([4])
        return xi, yi

    return (tf.data.Dataset.from_tensor_slices((x, y))
            .map(augment)
            .batch(BATCH, drop_remainder=True))


def main():
    oracle.track("train_step", train_step)
    for x, y in make_dataset():
        oracle.called("train_step")
        loss = train_step(x, y)
    print("final loss %.4f after %d steps" % (float(loss), len(seen_losses)))
    assert len(seen_losses) == STEPS
    print("tracing count:", train_step.experimental_get_tracing_count())
    oracle.extra("py_function_execs", len(seen_losses))
    oracle.extra("numpy_function_execs", jitter_calls[0])
    # The `for` loop ended when IteratorGetNext failed with OutOfRange.
    oracle.extra("failed_eager_ops", {"IteratorGetNext": 1})


if __name__ == "__main__":
    with oracle.eager_window():
        main()
