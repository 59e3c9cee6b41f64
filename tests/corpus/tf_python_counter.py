"""TensorFlow core: a tf.function that counts its calls in a Python global, as the tf.function guide warns against.

The step increments a module-level Python counter and appends to a Python
history on each call; under tf.function both run only while tracing, so
after 200 calls the counter says 1.  The program prints it (the user's
bug, shown as it is).
An expert expects the side effect found at its line: it ran once, for 200
calls.
"""
import numpy as np
import tensorflow as tf

tf.random.set_seed(35)
rng = np.random.default_rng(35)
x = tf.constant(rng.normal(size=(128, 4)).astype(np.float32))
y = tf.constant(rng.normal(size=(128, 1)).astype(np.float32))
w = tf.Variable(tf.zeros([4, 1]))
calls = 0


@tf.function
def train_step(x, y):
    global calls
    calls += 1  # corpus: counter
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
    w.assign_sub(0.1 * tape.gradient(loss, w))
    return loss


for step in range(200):
    loss = train_step(x, y)
print("loss %.4f" % float(loss))
print("calls counted %d" % calls)
