"""Fleet program 2: `normalize` is called with N dtypes (argv[1], at most
4), one trace each.  record_many.py runs main() many times in one process,
each run with fresh tf.function objects (functions())."""
import os
import sys

import tensorflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "samples"))
import oracle  # noqa: E402

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16]


def normalize(x):
    return (x - tf.reduce_mean(x)) / (tf.math.reduce_std(x) + tf.cast(1e-3, x.dtype))


def functions():
    """A run's own tf.function objects: each traces as a first run's would."""
    return {"normalize": tf.function(normalize)}


def main(n, fns):
    for dtype in DTYPES[:n]:
        for _ in range(3):
            x = tf.cast(tf.range(8), dtype)
            oracle.called("normalize")
            fns["normalize"](x)
    print("tracing count:", fns["normalize"].experimental_get_tracing_count())


if __name__ == "__main__":
    fns = functions()
    oracle.track("normalize", fns["normalize"])
    main(int(sys.argv[1]), fns)
