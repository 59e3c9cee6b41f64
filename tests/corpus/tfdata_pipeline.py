"""TensorFlow tf.data: map, shuffle, batch and prefetch feeding a train step (clean).

The input pipeline the tf.data performance guide recommends (a parallel
map, batching, prefetch with AUTOTUNE) feeding a linear model's step
compiled once with tf.function.  The pipeline is cheap next to the step.
"""
import numpy as np
import tensorflow as tf

tf.random.set_seed(8)
rng = np.random.default_rng(8)
features = rng.normal(size=(4096, 10)).astype("float32")
labels = (features @ rng.normal(size=(10,)).astype("float32") > 0).astype("float32")


def standardize(x, y):
    return (x - tf.reduce_mean(x)) / (tf.math.reduce_std(x) + 1e-6), y


dataset = (tf.data.Dataset.from_tensor_slices((features, labels))
           .shuffle(4096, seed=8)
           .map(standardize, num_parallel_calls=tf.data.AUTOTUNE)  # corpus: map
           .batch(128)
           .prefetch(tf.data.AUTOTUNE))

w = tf.Variable(tf.zeros([10, 1]))
b = tf.Variable(0.0)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = tf.squeeze(x @ w, 1) + b
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
    gw, gb = tape.gradient(loss, [w, b])
    w.assign_sub(0.5 * gw)
    b.assign_sub(0.5 * gb)
    return loss


for epoch in range(5):
    for x, y in dataset:
        loss = train_step(x, y)  # corpus: step
    print("epoch %d loss %.3f" % (epoch, float(loss)))
