"""model.predict() called in a loop on small batches (40 calls, 1 to 40 rows).

Keras' documentation warns against it: each predict() builds a tf.data
pipeline and iterator and traces tf.data's functions before it runs the
model, so the set-up costs far more than the model.  Keras' own predict
function is traced once or twice (reduce_retracing); tf.data's map functions
are traced anew on every call.  agprof must state it as the user's call
(`model.predict(x[:n], verbose=0)` at the marked line), not as retraces of
wrapped_fn.

PREDICT_MODE=call or on_batch runs the advised fixes instead (the model
called directly, predict_on_batch), PREDICT_MODE=all the three loops one
after the other on the same model: same output.  Prints each loop's sum of
the predictions and its time.
"""
import os
import time

import numpy as np
import keras

MODE = os.environ.get("PREDICT_MODE", "predict")


def loop(model, x, mode):
    total = 0.0
    t0 = time.perf_counter()
    for n in range(1, 41):
        if mode == "call":
            out = model(x[:n], training=False).numpy()
        elif mode == "on_batch":
            out = model.predict_on_batch(x[:n])
        else:
            out = model.predict(x[:n], verbose=0)  # agprof: library-call
        total += float(out.sum())
    print("%s total %.4f" % (mode, total))
    print("%s loop %.3f s" % (mode, time.perf_counter() - t0))


def main():
    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    x = rng.normal(size=(400, 8)).astype("float32")
    model = keras.Sequential([keras.Input((8,)), keras.layers.Dense(16, activation="relu"),
                              keras.layers.Dense(1)])
    for mode in (("predict", "call", "on_batch") if MODE == "all" else (MODE,)):
        loop(model, x, mode)


if __name__ == "__main__":
    main()
