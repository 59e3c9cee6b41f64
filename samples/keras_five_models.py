"""Five small Keras models of different widths, each compiled and fit once.

Each model.fit builds the model's train function (Keras' tf.functions
multi_step_on_iterator and one_step_on_data, keras/src/backend/tensorflow/
trainer.py) and a tf.data pipeline whose map functions tf.data traces; the
optimizer's variables are created at the first step, so one_step_on_data is
traced twice per model.  Every trace belongs to Keras or tf.data, made once
per model the user creates on purpose: nothing to warn about, and
`agprof check --max-traces 3` must pass (the user wrote no tf.function).

For the oracle, each model's tf.function objects are read from the closure
of model.train_function (as keras_fit.py does) and their tracing counts
summed per name.
"""
import numpy as np
import keras

import oracle

WIDTHS = (4, 8, 16, 32, 64)


def closure_functions(fn):
    """The tf.function objects captured by Keras's train_function closure."""
    found = {}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        value = cell.cell_contents
        if not hasattr(value, "experimental_get_tracing_count"):
            value = getattr(value, "__wrapped__", None)  # _autoconvert_optionals
        if hasattr(value, "experimental_get_tracing_count"):
            found[name] = value
    return found


def build(width):
    model = keras.Sequential([keras.Input((8,)),
                              keras.layers.Dense(width, activation="relu"),
                              keras.layers.Dense(1, activation="sigmoid")])
    model.compile(optimizer="adam", loss="binary_crossentropy")
    return model


def main():
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(128, 8)).astype("float32")
    y = (x.sum(axis=1, keepdims=True) > 0).astype("float32")
    for width in WIDTHS:
        model = build(width)
        hist = model.fit(x, y, epochs=1, batch_size=64, verbose=0)  # agprof: five-models
        print(width, round(hist.history["loss"][-1], 4))
        for name, f in sorted(closure_functions(model.train_function).items()):
            oracle.snapshot(name, f)


if __name__ == "__main__":
    main()
