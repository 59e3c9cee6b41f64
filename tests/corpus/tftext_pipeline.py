"""TensorFlow Text in tf.data: batched sentences tokenized, hashed into a bag of words, a Keras classifier fit on them.

tensorflow_text's UnicodeScriptTokenizer runs in a parallel map after
batch (one vectorized call per batch), the token ids are hashed into 64
buckets and counted; the pipeline is cached after the featurizer, its
batches shuffled and prefetched, and model.fit reads it with a validation
set given as its own dataset.
An expert expects no warning.
"""
import numpy as np
import tensorflow as tf
import tensorflow_text as text
import keras

keras.utils.set_random_seed(59)
rng = np.random.default_rng(59)
GOOD, BAD = ["good", "great", "fine", "fun"], ["bad", "awful", "slow", "dull"]
OTHER = ["the", "a", "movie", "plot", "actor", "was", "very", "and", "story", "ending"]
sentences = [" ".join(rng.choice(GOOD + BAD + OTHER, size=int(rng.integers(4, 11)))) for _ in range(1536)]
labels = np.array([float(sum(w in GOOD for w in s.split()) > sum(w in BAD for w in s.split()))
                   for s in sentences], dtype="float32")
tokenizer = text.UnicodeScriptTokenizer()
BUCKETS = 64


def featurize(batch, y):
    ids = tf.strings.to_hash_bucket_fast(tokenizer.tokenize(batch), BUCKETS)
    return tf.reduce_sum(tf.ragged.map_flat_values(tf.one_hot, ids, BUCKETS), axis=1), y


def pipeline(xs, ys, shuffle):
    ds = tf.data.Dataset.from_tensor_slices((xs, ys)).batch(64).map(featurize, num_parallel_calls=tf.data.AUTOTUNE)
    ds = ds.cache()
    return (ds.shuffle(20, seed=3) if shuffle else ds).prefetch(tf.data.AUTOTUNE)


train, val = pipeline(sentences[:1280], labels[:1280], True), pipeline(sentences[1280:], labels[1280:], False)
model = keras.Sequential([keras.Input(shape=(BUCKETS,)), keras.layers.Dense(16, activation="relu"),
                          keras.layers.Dense(1)])
model.compile(optimizer=keras.optimizers.Adam(1e-2), loss=keras.losses.BinaryCrossentropy(from_logits=True),
              metrics=[keras.metrics.BinaryAccuracy(threshold=0.0)])
hist = model.fit(train, validation_data=val, epochs=6, verbose=0)
print("loss %.3f val accuracy %.2f" % (hist.history["loss"][-1], hist.history["val_binary_accuracy"][-1]))
