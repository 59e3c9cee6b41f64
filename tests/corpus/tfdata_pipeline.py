"""TensorFlow tf.data: shuffle, repeat, batch, vectorized map, prefetch feeding a train step (clean).

The input pipeline the tf.data performance guide recommends (one iterator
over the repeated data, batch before a vectorized map run in parallel,
prefetch with AUTOTUNE) feeding a small MLP's step compiled once with
tf.function.  The pipeline is cheap next to the step.
"""
import numpy as np
import tensorflow as tf

tf.random.set_seed(8)
rng = np.random.default_rng(8)
features = rng.normal(size=(4096, 10)).astype("float32")
labels = (features @ rng.normal(size=(10,)).astype("float32") > 0).astype("float32")


def standardize_rows(x, y):
    mean = tf.reduce_mean(x, axis=1, keepdims=True)
    return (x - mean) / (tf.math.reduce_std(x, axis=1, keepdims=True) + 1e-6), y


dataset = (tf.data.Dataset.from_tensor_slices((features, labels))
           .shuffle(1024, seed=8)
           .repeat(5)
           .batch(128)
           .map(standardize_rows, num_parallel_calls=tf.data.AUTOTUNE)  # corpus: map
           .prefetch(tf.data.AUTOTUNE))

init = tf.keras.initializers.GlorotUniform(seed=8)
w1 = tf.Variable(init([10, 256]))
w2 = tf.Variable(init([256, 256]))
w3 = tf.Variable(init([256, 1]))
params = [w1, w2, w3]


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        h = tf.nn.relu(tf.nn.relu(x @ w1) @ w2)
        logits = tf.squeeze(h @ w3, 1)
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(labels=y, logits=logits))
    for p, g in zip(params, tape.gradient(loss, params)):
        p.assign_sub(0.1 * g)
    return loss


for step, (x, y) in enumerate(dataset):
    loss = train_step(x, y)  # corpus: step
    if step % 32 == 31:
        print("step %d loss %.3f" % (step + 1, float(loss)))
