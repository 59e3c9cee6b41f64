"""Keras 3: a small hyper-parameter sweep, one new model per width, each fit once (clean).

Building a fresh model for each configuration is the point of a sweep:
each model's fit traces Keras' step functions once more, and that is not
avoidable.  An expert expects no retracing or tracing-overhead warning.
"""
import numpy as np
import keras

rng = np.random.default_rng(17)
x = rng.normal(size=(256, 6)).astype("float32")
y = (np.abs(x).sum(axis=1, keepdims=True) > 4.5).astype("float32")

for width in (4, 8, 16, 32):
    keras.utils.set_random_seed(17)
    model = keras.Sequential([keras.Input(shape=(6,)), keras.layers.Dense(width, activation="relu"),  # corpus: build
                              keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
    history = model.fit(x, y, batch_size=32, epochs=2, verbose=0)  # corpus: fit
    print("width %2d loss %.3f" % (width, history.history["loss"][-1]))
