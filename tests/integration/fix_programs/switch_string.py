"""Keras's run_eagerly=True, and a message that quotes it: the parser sees one
switch, the keyword argument, and the edit sets it to False.  The text
reader counted the words in the string as a second switch and gave up.
"""
import numpy as np
import tensorflow as tf
import keras

import oracle


def main():
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(1024, 10)).astype("float32")
    y = (x[:, 0] + x[:, 1] > 0).astype("int32")
    model = keras.Sequential([keras.Input((10,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(2)])
    print("debugging: compiled with run_eagerly=True, one op at a time")
    model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  run_eagerly=True)  # agprof: run-eagerly
    history = model.fit(x, y, batch_size=32, epochs=2, verbose=0, shuffle=False)  # agprof: eager-hotspot
    print("loss per epoch:", [round(v, 2) for v in history.history["loss"]])
    print("batches:", 2 * len(x) // 32, "tensorflow", tf.__version__.split(".")[0])


if __name__ == "__main__":
    with oracle.eager_window():
        main()
