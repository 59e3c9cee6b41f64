"""TensorFlow core: a linear model whose tf.function step takes the step number as a Python int, for a learning-rate warm-up.

The step computes its learning rate from the step number (linear warm-up
over 40 steps) and is called as train_step(x, y, step) with step from
range(): a Python int is part of the trace's key, so every step traces
again.
An expert expects retracing with the Python-value cause at the call, and a
fix that passes the step as a tensor (same results, no retrace).
"""
import numpy as np
import tensorflow as tf

tf.random.set_seed(33)
rng = np.random.default_rng(33)
x_np = rng.normal(size=(256, 6)).astype(np.float32)
x = tf.constant(x_np)
y = tf.constant((x_np @ np.linspace(-1, 1, 6)[:, None] + 0.3 + rng.normal(scale=0.1, size=(256, 1))).astype(np.float32))
w = tf.Variable(tf.zeros([6, 1]))
b = tf.Variable(0.0)


@tf.function
def train_step(x, y, step):
    lr = 0.1 * tf.minimum(1.0, tf.cast(step + 1, tf.float32) / 40.0)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
    gw, gb = tape.gradient(loss, [w, b])
    w.assign_sub(lr * gw)
    b.assign_sub(lr * gb)
    return loss


for step in range(50):
    loss = train_step(x, y, step)  # corpus: step-call
print("loss %.3f" % float(loss))
print("w " + " ".join("%.2f" % v for v in w.numpy()[:, 0]))
