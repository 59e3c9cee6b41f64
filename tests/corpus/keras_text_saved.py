"""Keras 3: a next-token model trained on a synthetic token stream, exported as a SavedModel, loaded and served to generate text.

An Embedding-GRU-Dense model learns a periodic sequence of token ids with a
little noise, fit for a few epochs; model.export writes a SavedModel whose
serve endpoint takes any batch and length.  The loaded endpoint then
generates 40 tokens, fed the last 12 ids each time (a fixed window).
An expert expects no warning: the endpoint has an input signature and is
called with one shape throughout.
"""
import tempfile

import numpy as np
import keras
import tensorflow as tf

keras.utils.set_random_seed(12)
rng = np.random.default_rng(12)
VOCAB, WINDOW = 24, 12
stream = (np.arange(4000) * 5 % VOCAB + (rng.random(4000) < 0.05)).astype(np.int32) % VOCAB
starts = rng.integers(0, 4000 - WINDOW - 1, size=1024)
x = np.stack([stream[s:s + WINDOW] for s in starts])
y = np.stack([stream[s + 1:s + WINDOW + 1] for s in starts])

model = keras.Sequential([keras.Input(shape=(None,), dtype="int32"), keras.layers.Embedding(VOCAB, 16),
                          keras.layers.GRU(32, return_sequences=True), keras.layers.Dense(VOCAB)])
model.compile(optimizer=keras.optimizers.Adam(1e-2),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
history = model.fit(x, y, epochs=4, batch_size=64, verbose=0)
print("loss %.2f" % history.history["loss"][-1])

path = tempfile.mkdtemp() + "/generator"
model.export(path, format="tf_saved_model", verbose=False)  # corpus: export
served = tf.saved_model.load(path)
ids = list(stream[:WINDOW])
for t in range(40):
    logits = served.serve(tf.constant([ids[-WINDOW:]], dtype=tf.int32))  # corpus: serve
    ids.append(int(tf.argmax(logits[0, -1])))
print("generated " + " ".join(str(i) for i in ids[WINDOW:WINDOW + 16]))
