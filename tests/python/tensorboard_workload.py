"""The program test_tensorboard.py runs: two Keras fits recorded by agprof.keras.Callback with a
log_dir, so that the recordings land where TensorBoard's agprof tab looks (log_dir/agprof).

    python tensorboard_workload.py LOG_DIR

The first fit (base.agprof) calls a user tf.function with a Python float once per epoch: each
epoch traces it again (the retracing finding).  The second (new.agprof) passes a tensor: one
trace.  Prints the two recordings' paths, and the traces of each epoch the callback wrote into
LOG_DIR/train (agprof/traces), as JSON.
"""
import json
import os
import sys

import numpy as np
import tensorflow as tf
import keras

import agprof.keras

LOG_DIR = sys.argv[1]
EPOCHS = 4


@tf.function
def scale(v):
    return v * 2.0


class Planted(keras.callbacks.Callback):
    def __init__(self, as_tensor):
        super().__init__()
        self.as_tensor = as_tensor

    def on_epoch_end(self, epoch, logs=None):
        v = float(epoch) + 0.5
        scale(tf.constant(v) if self.as_tensor else v)  # agprof: retrace (as a float)


def fit(name, as_tensor):
    rng = np.random.default_rng(0)
    x, y = rng.random((64, 4), dtype=np.float32), rng.random((64, 1), dtype=np.float32)
    m = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
    m.compile(optimizer="sgd", loss="mse")
    cb = agprof.keras.Callback(name, log_dir=LOG_DIR, report=False)  # relative: under LOG_DIR/agprof
    m.fit(x, y, batch_size=16, epochs=EPOCHS, verbose=0, callbacks=[Planted(as_tensor), cb])
    return cb.path, [s["traces"] for s in cb.report["slices"]]


if __name__ == "__main__":
    (base, base_traces), (new, new_traces) = fit("base.agprof", False), fit("new.agprof", True)
    # the traces of each epoch, as the callback wrote them into LOG_DIR/train
    print(json.dumps({"base": base, "new": new, "traces": {"base": base_traces, "new": new_traces}}))
