"""Keras 3 model, hand-written step taking its hyper-parameters as a Python dict whose learning rate changes (planted).

The loop computes a warm-up-then-decay learning rate in Python each step
and passes it, with a fixed L2 weight, in a dict to the tf.function.
TensorFlow bakes each Python number into the graph, so every new
learning rate traces the step again (30 steps, 30 traces).  The fix is to
pass the changing value as a tensor ({"lr": tf.constant(lr), ...}): the
same numbers, one trace.
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(37)
rng = np.random.default_rng(37)
x = rng.normal(size=(960, 6)).astype("float32")
y = (x @ rng.normal(size=(6, 1)) + 0.1 * rng.normal(size=(960, 1))).astype("float32")
model = keras.Sequential([keras.Input(shape=(6,)), keras.layers.Dense(12, activation="tanh"), keras.layers.Dense(1)])


@tf.function
def train_step(xb, yb, hp):
    with tf.GradientTape() as tape:
        mse = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
        l2 = tf.add_n([tf.reduce_sum(tf.square(v)) for v in model.trainable_variables])
        loss = mse + hp["l2"] * l2
    grads = tape.gradient(loss, model.trainable_variables)
    for v, g in zip(model.trainable_variables, grads):
        v.assign_sub(hp["lr"] * g)
    return mse


for step in range(30):
    lr = 0.1 * min(1.0, (step + 1) / 5) * 0.95 ** step
    start = (step * 32) % len(x)
    mse = train_step(x[start:start + 32], y[start:start + 32], {"lr": lr, "l2": 1e-4})  # corpus: dict-call
print("final mse %.4f" % float(mse))
