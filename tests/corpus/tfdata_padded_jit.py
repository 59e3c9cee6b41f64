"""TensorFlow tf.data padded_batch of variable-length sequences into a jit_compile=True step (planted).

Token sequences of 5 to 80 ids (most short, a few long) are padded per
batch to the batch's own longest sequence, so the step's input shape
changes from batch to batch (7 lengths in 10 batches).
The step is compiled with XLA (jit_compile=True): every new length traces
the function again and compiles it again.  The expert's fix: give every
batch one shape (padded_batch(..., padded_shapes=([80], [])), cheap
here) or bucket the lengths; reduce_retracing or an input_signature with
None would keep one trace but XLA still compiles per length.
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(43)
rng = np.random.default_rng(43)
VOCAB = 50
lengths = np.minimum(4 + rng.geometric(0.08, size=320), 80)
seqs = [rng.integers(1, VOCAB, size=n).astype("int32") for n in lengths]
labels = np.array([float((s % 2).mean() > 0.5) for s in seqs], dtype="float32")
# a ragged row is a plain tensor of its own length inside map, as padded_batch needs
dataset = tf.data.Dataset.from_tensor_slices((tf.ragged.constant(seqs), labels)).map(lambda ids, y: (ids, y))
dataset = dataset.padded_batch(32)  # corpus: padded
embed = keras.layers.Embedding(VOCAB, 8)
head = keras.layers.Dense(1)
optimizer = keras.optimizers.SGD(0.5)


@tf.function(jit_compile=True)
def train_step(ids, y):
    with tf.GradientTape() as tape:
        mask = tf.cast(ids > 0, tf.float32)[:, :, None]
        pooled = tf.reduce_sum(embed(ids) * mask, axis=1) / tf.reduce_sum(mask, axis=1)
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(y[:, None], head(pooled)))
    variables = embed.trainable_variables + head.trainable_variables
    optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables))
    return loss


for epoch in range(2):
    for ids, y in dataset:
        loss = train_step(ids, y)  # corpus: step
    print("epoch %d loss %.4f" % (epoch, float(loss)))
