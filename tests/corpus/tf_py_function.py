"""TensorFlow core: a training step that computes a robust per-example weight in NumPy through tf.py_function.

The step calls tf.py_function on the residuals every step (a NumPy Huber
weight: np.where on the absolute residual); the interpreter then runs
inside every graph call and the graph cannot be optimised across it.  The
NumPy body has a direct TensorFlow equivalent (tf.where, tf.abs).
An expert expects the Python black box found in the step at its line.
"""
import numpy as np
import tensorflow as tf

tf.random.set_seed(37)
rng = np.random.default_rng(37)
x = tf.constant(rng.normal(size=(512, 10)).astype(np.float32))
y = tf.constant((rng.normal(size=(512, 10)) @ rng.normal(size=(10, 1))).astype(np.float32))
w = tf.Variable(tf.zeros([10, 1]))


def huber_weight(r):
    a = np.abs(r.numpy())
    return np.where(a <= 1.0, 1.0, 1.0 / a).astype(np.float32)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        r = tf.matmul(x, w) - y
        weight = tf.stop_gradient(tf.py_function(huber_weight, [r], tf.float32))  # corpus: py-function
        loss = tf.reduce_mean(weight * tf.square(r))
    w.assign_sub(0.05 * tape.gradient(loss, w))
    return loss


for step in range(300):
    loss = train_step(x, y)
print("loss %.4f" % float(loss))
print("w " + " ".join("%.2f" % v for v in w.numpy()[:4, 0]))
