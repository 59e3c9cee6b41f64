"""Fleet program 3: `scale` takes a Python float, N values (argv[1]): one
trace per value; and `step`, traced once, every run."""
import os
import sys

import tensorflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "samples"))
import oracle  # noqa: E402


@tf.function
def scale(x, factor):
    return x * factor


@tf.function
def step(x):
    return x + 1.0


def main(n):
    oracle.track("scale", scale)
    oracle.track("step", step)
    x = tf.ones([4])
    for i in range(n):
        oracle.called("scale")
        x = scale(x, 0.5 + i)
        oracle.called("step")
        x = step(x)
    print("tracing count:", scale.experimental_get_tracing_count())


if __name__ == "__main__":
    main(int(sys.argv[1]))
