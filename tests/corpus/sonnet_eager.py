"""Sonnet 2: an MLP trained with Sonnet's Adam in a step that is not a tf.function (planted).

The training step (forward pass, gradient, snt.optimizers.Adam's update of
8 variables) runs eagerly: every op of every step is dispatched from
Python one by one, about 200 ops a step on batches of 32, 16 epochs.
The expert's fix: decorate train_step with @tf.function (the documented
Sonnet 2 pattern); the same numbers, far fewer dispatches.
"""
import numpy as np
import sonnet as snt
import tensorflow as tf

tf.random.set_seed(47)
rng = np.random.default_rng(47)
x_all = rng.uniform(-2, 2, size=(768, 4)).astype(np.float32)
y_all = (np.cos(x_all).sum(axis=1, keepdims=True)).astype(np.float32)

mlp = snt.nets.MLP([32, 32, 32, 1])
optimizer = snt.optimizers.Adam(3e-3)
mlp(tf.zeros([1, 4]))  # the variables made here, as a checkpoint restore would need


def train_step(x, y):  # corpus: eager-step
    with tf.GradientTape() as tape:  # corpus: eager-step
        loss = tf.reduce_mean(tf.square(mlp(x) - y))  # corpus: eager-step
    optimizer.apply(tape.gradient(loss, mlp.trainable_variables), mlp.trainable_variables)  # corpus: eager-step
    return loss


data = tf.data.Dataset.from_tensor_slices((x_all, y_all)).shuffle(768, seed=5).batch(32, drop_remainder=True)
for epoch in range(16):
    for x, y in data:
        loss = train_step(x, y)  # corpus: eager-step
print("loss %.3f" % float(loss))
