"""Trace-heavy: Keras `fit` of several small models on synthetic data.

Five small models (dense and convolutional, different widths), each compiled and fitted for a few epochs, then
evaluated and used for predict: every model traces its own train, test and predict functions.  A sixth with
many small ops per step (a stack of 24 thin layers) makes the step kernel-heavy."""
import sys

import numpy as np
import keras

from common import timed_calls

EPOCHS = int(sys.argv[1]) if len(sys.argv) > 1 else 3


def dense(width, depth):
    layers = [keras.Input((16,))] + [keras.layers.Dense(width, activation="relu") for _ in range(depth)]
    return keras.Sequential(layers + [keras.layers.Dense(1)])


def conv(filters):
    return keras.Sequential([keras.Input((16, 16, 1)), keras.layers.Conv2D(filters, 3, activation="relu"),
                             keras.layers.MaxPooling2D(), keras.layers.Flatten(), keras.layers.Dense(1)])


def fit(name, model, x, y):
    model.compile(optimizer="adam", loss="mse")
    timed_calls(name, lambda: model.fit(x, y, batch_size=64, epochs=1, verbose=0))
    model.fit(x, y, batch_size=64, epochs=EPOCHS, verbose=0)
    loss = model.evaluate(x, y, batch_size=256, verbose=0)
    model.predict(x[:256], verbose=0)
    print("%s loss %.3f" % (name, loss), flush=True)


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2048, 16)).astype("float32")
    y = (x[:, :1] * 2 + 0.1 * rng.standard_normal((2048, 1))).astype("float32")
    img = rng.standard_normal((1024, 16, 16, 1)).astype("float32")
    yi = img.mean(axis=(1, 2))
    for name, model in (("dense_32x2", dense(32, 2)), ("dense_64x3", dense(64, 3)), ("dense_16x4", dense(16, 4)),
                        ("dense_8x24", dense(8, 24))):
        fit(name, model, x, y)
    for name, filters in (("conv_8", 8), ("conv_16", 16)):
        fit(name, conv(filters), img, yi)


if __name__ == "__main__":
    main()
