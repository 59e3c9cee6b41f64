"""Keras 3 recurrent cell stepped by a Python for-loop over time inside a tf.function (planted).

A sequence encoder written by hand: a keras.layers.GRUCell applied to
each of 64 time steps in `for t in range(T)`.  Inside a tf.function a
Python loop is unrolled: the graph holds 64 copies of the cell (thousands
of nodes) and tracing it takes long.  The expert's fix: let the loop run
in the graph (keras.layers.RNN(cell), or `for t in tf.range(T)` with a
TensorArray), one cell in the graph.
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(41)
rng = np.random.default_rng(41)
T = 64
seqs = rng.normal(size=(256, T, 4)).astype("float32")
targets = seqs[:, :, 0].sum(axis=1, keepdims=True).astype("float32") / 8.0
cell = keras.layers.GRUCell(16)
head = keras.layers.Dense(1)
optimizer = keras.optimizers.Adam(1e-2)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        h = tf.zeros([tf.shape(x)[0], 16])
        for t in range(T):  # corpus: unrolled
            h, _ = cell(x[:, t], [h])
        loss = tf.reduce_mean(tf.square(head(h) - y))
    variables = cell.trainable_variables + head.trainable_variables
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss


for epoch in range(3):
    for i in range(0, len(seqs), 64):
        loss = train_step(seqs[i:i + 64], targets[i:i + 64])  # corpus: step
    print("epoch %d loss %.3f" % (epoch, float(loss)))
