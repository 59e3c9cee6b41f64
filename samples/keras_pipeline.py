"""Keras's model.fit, then the user's own tf.data pipeline, read in a loop.

model.fit(validation_split=...) builds tf.data pipelines of its own (its
data adapter: a map of `permutation`, a flat_map, a map of `grab_batch`)
and reads them inside its train graph; some of their functions are traced
without a dataset op the collector sees.  The user's pipeline after it maps
`augment`: agprof must name that map's function `augment`, not give it the
function Keras traced last (tests/integration/test_real_code.py).
"""
import numpy as np
import tensorflow as tf
import keras


def augment(a, b):
    return a * 2.0, b


def main():
    keras.utils.set_random_seed(0)
    x = np.random.default_rng(0).normal(size=(256, 8)).astype("float32")
    y = (x[:, 0] > 0).astype("int32")
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(2)])
    model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    model.fit(x, y, batch_size=32, epochs=1, validation_split=0.25, verbose=0)
    ds = tf.data.Dataset.from_tensor_slices((x, y)).map(augment).batch(32)  # agprof: user-pipeline
    total = 0.0
    for a, b in ds:
        total += float(tf.reduce_sum(a))
    print("total", round(total, 3))


if __name__ == "__main__":
    main()
