"""The program test_keras_callback.py runs: real Keras fits with agprof.keras.Callback.

    python keras_workload.py keras3|tf_keras OUT_DIR

keras3 uses Keras 3 (`import keras`) and never imports tf_keras; tf_keras
uses tf-keras 2 only.  Each case writes its recording into OUT_DIR and what
the test compares it with (TensorFlow's own counters, the times of each
batch, the callback's findings and report) into OUT_DIR/CASE.json.
The planted retrace: a user tf.function called once per epoch with a
Python float, so each epoch traces it again.
"""
import json
import os
import sys
import time
import warnings

import numpy as np
import tensorflow as tf

import agprof

FLAVOUR, OUT = sys.argv[1], sys.argv[2]
if FLAVOUR == "tf_keras":
    import tf_keras as keras
else:
    import keras

EPOCHS, BATCH, ROWS = 3, 16, 70  # 5 batches an epoch, the last of 6 rows (drop_remainder=False)


@tf.function
def scale(v):
    return v * 2.0


class Planted(keras.callbacks.Callback):
    def on_epoch_end(self, epoch, logs=None):
        scale(float(epoch) + 0.5)  # agprof: retrace


class BatchClock(keras.callbacks.Callback):
    """The monotonic time (the recording's clock) at each batch's begin and end, numbered from 1."""

    def on_train_begin(self, logs=None):
        self.n, self.spans = 0, {}

    def on_train_batch_begin(self, batch, logs=None):
        self.n += 1
        self.spans[self.n] = [time.monotonic_ns(), None]

    def on_train_batch_end(self, batch, logs=None):
        self.spans[self.n][1] = time.monotonic_ns()


def data():
    rng = np.random.default_rng(0)
    x, y = rng.random((ROWS, 4), dtype=np.float32), rng.random((ROWS, 1), dtype=np.float32)
    return tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH, drop_remainder=False)


def model():
    m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
    m.compile(optimizer="sgd", loss="mse", steps_per_execution=1)
    return m


def dump(case, **facts):
    with open(os.path.join(OUT, case + ".json"), "w") as f:
        json.dump(facts, f)


def callback(case, **kwargs):
    return agprof.keras.Callback(os.path.join(OUT, case + ".agprof"), **kwargs)


def whole():
    """The whole fit, the planted retrace, TensorBoard summaries."""
    cb = callback("whole", log_dir=os.path.join(OUT, "logs"))
    model().fit(data(), epochs=EPOCHS, verbose=0, callbacks=[Planted(), cb])
    dump("whole", tracing_count=scale.experimental_get_tracing_count(), findings=cb.findings, report=cb.report,
         bases=[c.__module__ + "." + c.__qualname__ for c in type(cb).__mro__],
         is_keras_callback=isinstance(cb, keras.callbacks.Callback))


def window(case, **kwargs):
    """A window of the fit: each batch's span, to place the recorded calls in their batches."""
    clock = BatchClock()
    model().fit(data(), epochs=EPOCHS, verbose=0, callbacks=[clock, callback(case, **kwargs)])
    dump(case, spans=clock.spans)


def evaluate():
    cb = callback("evaluate")
    model().evaluate(data(), verbose=0, callbacks=[cb])
    dump("evaluate", findings=cb.findings)


def nested():
    """Under an outer agprof.record(): the callback warns once and records nothing; the fit goes on."""
    cb = callback("nested")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with agprof.record(os.path.join(OUT, "outer.agprof"), quiet=True):
            history = model().fit(data(), epochs=2, verbose=0, validation_data=data(), callbacks=[cb])
    dump("nested", epochs_run=len(history.history["loss"]), findings=cb.findings,
         warnings=[(w.category.__name__, str(w.message)) for w in caught if "agprof" in str(w.message)])


def main():
    whole()
    if FLAVOUR == "keras3":
        window("batches", batches=(3, 6))
        window("epochs", epochs=(2, 2))
        evaluate()
        nested()
    dump("modules", tf_keras="tf_keras" in sys.modules)


if __name__ == "__main__":
    main()
