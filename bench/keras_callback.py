#!/usr/bin/env python3
"""What agprof.keras.Callback costs a fit while it records nothing, against the same fit without it.

The callback is given batches=(N, N + 1) with N far past the fit's end: every hook runs (the batch
hooks' increment and compare, and what Keras itself does for a callback with batch hooks), nothing
records.  One process, one model, its train function traced before the first round; each round fits
one epoch bare and one with the callback, the order swapped from round to round (a load that drifts
favours neither), each timed from on_train_begin to on_train_end.  Per round: the ratio of the two
fits' wall times, and the difference per batch in microseconds; printed as medians with a 95%
interval (order statistics, bench/long_run.py; 6 rounds at least).  The process CPU ratio (time.process_time: all threads) beside the wall's, which the other
processes of a shared machine move less.  Say the machine's load beside the figures: `uptime` is
printed first and last.

Result (Keras 3.15.1, TensorFlow 2.21, Python 3.11, the shared 2-core machine at load 1.6-2.2 with
another engineer's tests running; `.venv/bin/python bench/keras_callback.py`: 12
rounds, 1000 batches of 32 rows a fit, a 4-32-32-1 MLP, about 0.72 ms a batch): wall ratio 1.022
(0.998 to 1.062), 15.6 us a batch (-1.3 to 45.0), CPU ratio 1.026 (0.996 to 1.078).  The hooks
themselves are an increment and a compare; a likely part of the rest is Keras 3's: a callback with
an on_train_batch_end of its own turns off CallbackList's async dispatch of the batch-end hooks
(callback_list.py, _configure_async_dispatch), so each batch's logs are converted on the fit's thread.
One run with the callback marked async_safe (not sound as the callback is: its window's end would
race the next batch) gave 1.004 (0.965 to 1.156) at load 2-3.7: too noisy to settle it.

usage: bench/keras_callback.py [--rounds N] [--batches N] [--keras keras|tf_keras]
"""
import argparse
import os
import statistics
import sys
import time

from long_run import median_interval, print_load

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")

BATCH = 32


def setup(keras_name, batches):
    """(model, dataset, the keras module): a small MLP over `batches` batches, compiled."""
    import numpy as np
    import tensorflow as tf
    keras = __import__(keras_name)
    rng = np.random.default_rng(0)
    rows = batches * BATCH
    x, y = rng.random((rows, 4), dtype=np.float32), rng.random((rows, 1), dtype=np.float32)
    data = tf.data.Dataset.from_tensor_slices((x, y)).batch(BATCH).cache()
    model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(32, activation="relu"),
                              keras.layers.Dense(32, activation="relu"), keras.layers.Dense(1)])
    model.compile(optimizer="sgd", loss="mse")
    return model, data


def stopwatch(keras):
    """A callback with no batch hook that times the fit from on_train_begin to on_train_end (wall, process CPU):
    the batches, not the fit's set-up and tear-down, whose wall (Keras's and tf.data's threads ending) is
    0.15 s or 0.30 s from one fit to the next here, more than what is measured."""
    class Stopwatch(keras.callbacks.Callback):
        def on_train_begin(self, logs=None):
            self.begin = time.perf_counter(), time.process_time()

        def on_train_end(self, logs=None):
            self.took = time.perf_counter() - self.begin[0], time.process_time() - self.begin[1]
    return Stopwatch()


def timed_fit(model, data, callbacks):
    """(wall s, process CPU s) of one epoch's fit, on_train_begin to on_train_end (the stopwatch is first)."""
    watch = stopwatch(sys.modules[type(model).__module__.split(".")[0]])
    model.fit(data, epochs=1, verbose=0, callbacks=[watch] + callbacks)
    return watch.took


def idle_callback(batches):
    """A Callback whose window opens far past the fit's end: every hook runs, nothing records."""
    import agprof.keras
    far = 1000 * batches
    return agprof.keras.Callback("never.agprof", batches=(far, far + 1), report=False)


def rounds(args, model, data):
    """[(bare wall, bare cpu, callback wall, callback cpu)] of args.rounds rounds, the order alternating."""
    timed_fit(model, data, [])  # traces the train function; a first epoch is slower anyway
    timed_fit(model, data, [idle_callback(args.batches)])
    out = []
    for r in range(args.rounds):
        bare = callback = None
        for with_callback in ((False, True) if r % 2 == 0 else (True, False)):
            if with_callback:
                callback = timed_fit(model, data, [idle_callback(args.batches)])
            else:
                bare = timed_fit(model, data, [])
        out.append(bare + callback)
        print("round %d: bare %.3f s (cpu %.3f), callback %.3f s (cpu %.3f)" % ((r + 1,) + bare + callback))
    return out


def print_median(what, values, fmt):
    interval = median_interval(values)
    span = " (%s to %s)" % (fmt % interval[0], fmt % interval[1]) if interval else " (too few rounds for an interval)"
    print("%s: %s%s" % (what, fmt % statistics.median(values), span))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=12)
    ap.add_argument("--batches", type=int, default=1000, help="batches of %d rows in a fit's one epoch" % BATCH)
    ap.add_argument("--keras", default="keras", choices=("keras", "tf_keras"))
    args = ap.parse_args()
    print_load()
    model, data = setup(args.keras, args.batches)
    got = rounds(args, model, data)
    print("%s, %d rounds of one epoch, %d batches a fit:" % (args.keras, args.rounds, args.batches))
    print_median("  wall ratio, callback / bare", [c / b for b, _, c, _ in got], "%.3f")
    print_median("  per batch, callback - bare (us)", [(c - b) * 1e6 / args.batches for b, _, c, _ in got], "%.1f")
    print_median("  cpu ratio, callback / bare", [c / b for _, b, _, c in got], "%.3f")
    print_load()


if __name__ == "__main__":
    main()
