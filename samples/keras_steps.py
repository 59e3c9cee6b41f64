"""Keras's model.fit over many small steps, with a callback counting them.

A long training run scaled down: 512 steps of a small dense model.  Keras
runs each step as one call of its train function (multi_step_on_iterator),
which reads its iterator inside the graph; recorded with a small
--max-events, most of those calls are past the budget and kept as
aggregates, and the report must still count every step (the program's own
counter, printed as "steps N").
"""
import numpy as np, tensorflow as tf, keras  # noqa: F401  (tf: the TensorFlow the collector hooks)

x = np.random.default_rng(0).random((2048, 32)).astype("float32")
y = np.random.default_rng(1).integers(0, 4, 2048)
model = keras.Sequential([keras.Input(shape=(32,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(4)])
model.compile(loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True), optimizer="sgd")


class CountSteps(keras.callbacks.Callback):
    steps = 0

    def on_train_batch_end(self, batch, logs=None):
        CountSteps.steps += 1


model.fit(x, y, batch_size=8, epochs=2, verbose=0, callbacks=[CountSteps()])
print("steps", CountSteps.steps)
