"""A library (samples/fakelib/site-packages/minilib) builds a new tf.function
on every minimize() call (cause: new-function-object).

The trace happens in the library's frame; the line the user can change is
the minimize() call in main(), marked with an agprof comment.  agprof must
name that line as the location and the library's line beside it.

Fix: call minimize() once with more steps, or keep the compiled function.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "fakelib", "site-packages"))

import tensorflow as tf  # noqa: E402

import oracle  # noqa: E402
from minilib import Minimizer  # noqa: E402

ROUNDS = 5


def loss(v):
    # Enough ops that tracing costs something measurable.
    x = v
    for _ in range(40):
        x = tf.sin(x) * 0.9 + tf.cos(x) * 0.1
    return tf.reduce_sum(x * x)


def main():
    v = tf.Variable(tf.ones([8]))
    opt = Minimizer(steps=3)
    for _ in range(ROUNDS):
        oracle.called("step", opt.steps)
        opt.minimize(loss, v)  # agprof: library-retrace
        oracle.snapshot("step", opt.last_function)
    print("v[0] %.4f" % float(v[0]))


if __name__ == "__main__":
    with oracle.eager_window():
        main()
