"""Keras's model.fit with run_eagerly=True left on after debugging.

Every train step then runs op by op from Python (thousands of eager ops at
the fit line, no graph call), the eager-hotspot pattern in library code:
wrapping the user's loop in a tf.function is no fix, the switch is.  agprof
fix sets it to False (tests/integration/test_fix.py, cause eager-switch);
Keras then traces its train step once and runs each step as a graph call.
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
    model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  run_eagerly=True)  # agprof: run-eagerly
    history = model.fit(x, y, batch_size=32, epochs=2, verbose=0, shuffle=False)  # agprof: eager-hotspot
    print("loss per epoch:", [round(v, 2) for v in history.history["loss"]])
    print("batches:", 2 * len(x) // 32, "tensorflow", tf.__version__.split(".")[0])


if __name__ == "__main__":
    with oracle.eager_window():
        main()
