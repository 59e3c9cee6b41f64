"""Keras 3: a target network's soft update (DDPG, SAC), in a tf.function called every step.

The online network trains a step, then the target's weights move a little
toward it: target = tau * online + (1 - tau) * target, for each weight.
The multiplies are most of the update function's kernel time, and they are
the update itself: there is nothing to move out of it.
An expert expects no slow-op finding on the update (issue 45, class 5).
"""
import numpy as np
import keras
import tensorflow as tf

keras.utils.set_random_seed(2)
rng = np.random.default_rng(2)


def make():
    return keras.Sequential([keras.Input(shape=(256,)), keras.layers.Dense(512, activation="relu"),
                             keras.layers.Dense(512, activation="relu"), keras.layers.Dense(1)])


online, target = make(), make()
target.set_weights(online.get_weights())
optimizer = keras.optimizers.Adam(1e-3)
x = tf.constant(rng.normal(size=(64, 256)).astype(np.float32))
y = tf.constant(rng.normal(size=(64, 1)).astype(np.float32))


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(online(x, training=True) - y))
    optimizer.apply_gradients(zip(tape.gradient(loss, online.trainable_variables), online.trainable_variables))
    return loss


@tf.function
def soft_update(tau):
    for t, o in zip(target.weights, online.weights):
        t.assign(tau * o + (1.0 - tau) * t)  # corpus: soft-update


tau = tf.constant(0.01)
for step in range(300):
    loss = train_step(x, y)
    soft_update(tau)
print("loss %.4f" % float(loss))
print("target mean %.5f" % float(tf.reduce_mean(target.weights[0])))
