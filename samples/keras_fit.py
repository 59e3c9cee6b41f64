"""A small Keras model trained with model.fit (2 epochs, random data).

Keras 3 (TensorFlow backend) builds the training loop from two tf.functions
(keras/src/backend/tensorflow/trainer.py, TensorFlowTrainer._make_function):
  - `multi_step_on_iterator(iterator)`, reduce_retracing=True, called once per
    batch from Python (steps_per_execution=1);
  - `one_step_on_data(data)`, called inside it: traced while
    multi_step_on_iterator is traced, then executed inside that graph (never
    called from eager Python code, so no graph-function call of its own).
The data set has a fixed batch size (256 examples, batch 32: no partial
batch), so each is traced once.  No planted problem.

For the oracle, the two tf.function objects are read from the closure of
model.train_function, and the Python-side calls are counted by a callback
(one call of multi_step_on_iterator per on_train_batch_begin).
"""
import numpy as np
import keras

import oracle

EXAMPLES = 256
BATCH = 32
EPOCHS = 2


class CountBatches(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.batches = 0

    def on_train_batch_begin(self, batch, logs=None):
        self.batches += 1


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


def main():
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(EXAMPLES, 10)).astype("float32")
    y = (x[:, 0] + x[:, 1] > 0).astype("int32")

    model = keras.Sequential([
        keras.Input((10,)),
        keras.layers.Dense(16, activation="relu"),
        keras.layers.Dense(2),
    ])
    model.compile(optimizer="adam",
                  loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
                  metrics=["accuracy"])
    counter = CountBatches()
    history = model.fit(x, y, batch_size=BATCH, epochs=EPOCHS, verbose=0,
                        shuffle=False, callbacks=[counter])
    print("loss per epoch:", [round(v, 4) for v in history.history["loss"]])

    fns = closure_functions(model.train_function)
    for name, f in sorted(fns.items()):
        oracle.track(name, f)
        print(name, "tracing count:", f.experimental_get_tracing_count())
    oracle.called("multi_step_on_iterator", counter.batches)
    oracle.called("one_step_on_data", 0)   # runs inside the other graph
    print("batches:", counter.batches)


if __name__ == "__main__":
    with oracle.eager_window():
        main()
