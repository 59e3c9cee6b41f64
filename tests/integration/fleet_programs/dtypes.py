"""Fleet program 2: `normalize` is called with N dtypes (argv[1], at most
4), one trace each."""
import os
import sys

import tensorflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "samples"))
import oracle  # noqa: E402

DTYPES = [tf.float32, tf.float64, tf.float16, tf.bfloat16]


@tf.function
def normalize(x):
    return (x - tf.reduce_mean(x)) / (tf.math.reduce_std(x) + tf.cast(1e-3, x.dtype))


def main(n):
    oracle.track("normalize", normalize)
    for dtype in DTYPES[:n]:
        for _ in range(3):
            x = tf.cast(tf.range(8), dtype)
            oracle.called("normalize")
            normalize(x)
    print("tracing count:", normalize.experimental_get_tracing_count())


if __name__ == "__main__":
    main(int(sys.argv[1]))
