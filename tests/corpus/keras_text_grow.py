"""Keras 3: greedy text generation whose tf.function is fed the whole sequence so far, one token longer each step.

A small Embedding-GRU-Dense next-token model is fit on a synthetic token
stream; generation then wraps "model call, take the last position's argmax"
in a tf.function and calls it on the growing prefix: every call has a new
length, so every call traces again (TensorFlow warns after a few).
An expert expects a retracing finding at the call, the cause the changing
shape, with the advice to let the length vary (input_signature with None,
or reduce_retracing).
"""
import numpy as np
import keras
import tensorflow as tf

keras.utils.set_random_seed(13)
rng = np.random.default_rng(13)
VOCAB = 20
stream = (np.arange(3000) * 3 % VOCAB).astype(np.int32)
starts = rng.integers(0, 3000 - 17, size=768)
x = np.stack([stream[s:s + 16] for s in starts])
y = np.stack([stream[s + 1:s + 17] for s in starts])
model = keras.Sequential([keras.Input(shape=(None,), dtype="int32"), keras.layers.Embedding(VOCAB, 16),
                          keras.layers.GRU(24, return_sequences=True), keras.layers.Dense(VOCAB)])
model.compile(optimizer=keras.optimizers.Adam(1e-2),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
history = model.fit(x, y, epochs=3, batch_size=64, verbose=0)
print("loss %.2f" % history.history["loss"][-1])


@tf.function
def next_token(prefix):
    return tf.argmax(model(prefix)[:, -1], axis=-1, output_type=tf.int32)


ids = tf.constant([[1, 4, 7]], dtype=tf.int32)
for t in range(30):
    nxt = next_token(ids)  # corpus: grow-call
    ids = tf.concat([ids, nxt[:, None]], axis=1)
print("generated " + " ".join(str(v) for v in ids.numpy()[0, 3:19]))
