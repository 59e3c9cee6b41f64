"""Retracing because the same function gets tensors of different dtypes
(cause: dtype).

`normalize` is written once but called with float32, then float64, then int32
tensors of the same shape: each dtype is part of the trace cache key, so each
is a new trace (and a new graph).  A forgotten `.astype(np.float32)` on data
loaded with NumPy (float64 by default) produces exactly this.

Fix: convert inputs to one dtype before the call, or declare input_signature.
"""
import numpy as np
import tensorflow as tf

import oracle


@tf.function
def normalize(x):
    x = tf.cast(x, tf.float32)
    return (x - tf.reduce_mean(x)) / (tf.math.reduce_std(x) + 1e-6)


def main():
    oracle.track("normalize", normalize)
    rng = np.random.default_rng(0)
    raw = rng.normal(size=(16, 4))
    for dtype in (np.float32, np.float32, np.float64, np.int32, np.float64):
        x = tf.constant((raw * 10).astype(dtype))
        oracle.called("normalize")
        traces_before = normalize.experimental_get_tracing_count()
        out = normalize(x)  # agprof: dtype
        if normalize.experimental_get_tracing_count() > traces_before:
            oracle.traced_with("normalize", x=x)
        print(x.dtype.name, "->", out.dtype.name, "%.4f" % float(tf.reduce_max(out)))
    print("tracing count:", normalize.experimental_get_tracing_count())


if __name__ == "__main__":
    with oracle.eager_window():
        main()
