"""A tf.function created inside the loop (cause: new-function-object).

`tf.function(scale_and_sum)` builds a NEW tf.function object with an empty
trace cache every time it is evaluated.  The loop below does that on every
iteration, so every call traces (and builds a graph) again, although the
Python function and the argument signature never change.  Each object's own
tracing count is 1, which is why `experimental_get_tracing_count()` on any
single object hides the problem.

Fix: create the tf.function once, outside the loop (or decorate the def).
"""
import tensorflow as tf

import oracle

ITERATIONS = 5


def scale_and_sum(x):
    return tf.reduce_sum(x * 3.0)


def main():
    x = tf.range(10, dtype=tf.float32)
    total = 0.0
    for _ in range(ITERATIONS):
        step = tf.function(scale_and_sum)  # agprof: new-function-object
        oracle.called("scale_and_sum")
        total += float(step(x))
        oracle.snapshot("scale_and_sum", step)  # its count; `step` then dies
    print("total %.1f" % total)


if __name__ == "__main__":
    with oracle.eager_window():
        main()
