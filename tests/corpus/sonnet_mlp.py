"""Sonnet 2: an MLP regression trained with Sonnet's own Adam in a tf.function step over tf.data batches.

snt.nets.MLP builds its variables on the first call (inside the step's
first trace); snt.optimizers.Adam creates its slots on its first apply.
The step takes full batches only (drop_remainder), 8 epochs.
An expert expects no warning: the first call's variable creation is the
documented pattern and costs one extra trace.
"""
import numpy as np
import sonnet as snt
import tensorflow as tf

tf.random.set_seed(53)
rng = np.random.default_rng(53)
x_all = rng.uniform(-2, 2, size=(1024, 4)).astype(np.float32)
y_all = (np.sin(x_all).sum(axis=1, keepdims=True)).astype(np.float32)

mlp = snt.nets.MLP([64, 64, 1])
optimizer = snt.optimizers.Adam(3e-3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(mlp(x) - y))
    optimizer.apply(tape.gradient(loss, mlp.trainable_variables), mlp.trainable_variables)
    return loss


data = tf.data.Dataset.from_tensor_slices((x_all, y_all)).shuffle(1024, seed=3).batch(64, drop_remainder=True)
for epoch in range(8):
    for x, y in data:
        loss = train_step(x, y)  # corpus: step
print("loss %.3f" % float(loss))
print("variables %d" % len(mlp.trainable_variables))
