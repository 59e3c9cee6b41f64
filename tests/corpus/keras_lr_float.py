"""Keras 3 model, hand-written step with a decaying learning rate passed as a Python float (planted).

A user's custom loop: the learning rate decays each step and is passed to
the tf.function as a Python float.  TensorFlow bakes a Python number into
the graph, so every new value traces the step again: 24 traces.  The fix
is to pass a tensor (tf.constant(lr, tf.float32)); the numbers are the
same, the step traces once.
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(13)
rng = np.random.default_rng(13)
x = rng.normal(size=(768, 5)).astype("float32")
y = (x @ np.array([[1.0], [-2.0], [0.5], [0.0], [1.5]], dtype="float32")).astype("float32")
model = keras.Sequential([keras.Input(shape=(5,)), keras.layers.Dense(8, activation="relu"),
                          keras.layers.Dense(1)])


@tf.function
def train_step(xb, yb, lr):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
    grads = tape.gradient(loss, model.trainable_variables)
    for v, g in zip(model.trainable_variables, grads):
        v.assign_sub(lr * g)
    return loss


lr = 0.05
for step in range(24):
    start = (step * 32) % len(x)
    loss = train_step(x[start:start + 32], y[start:start + 32], lr)  # corpus: lr-call
    lr = lr * 0.97
print("final loss %.4f" % float(loss))
