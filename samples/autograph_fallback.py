"""AutoGraph gives up on a function and runs it as plain Python.

Two lambdas on one line: AutoGraph cannot tell their sources apart, logs
"AutoGraph could not transform <function <lambda>> and will run it as-is"
(in a warning buried in TensorFlow's log), and calls them unconverted
inside `model`.  Here that is harmless, but a Python `if` on a tensor
inside them would not be converted.  `model_fixed` uses functions defined
with def, one per statement, which AutoGraph converts.
"""
import tensorflow as tf

import oracle

double, inc = (lambda x: x * 2.0), (lambda x: x + 1.0)   # agprof: autograph-fallback


def double_def(x):
    return x * 2.0


def inc_def(x):
    return x + 1.0


@tf.function
def model(x):
    return inc(double(x))


@tf.function
def model_fixed(x):
    return inc_def(double_def(x))


def main():
    oracle.track("model", model)
    oracle.track("model_fixed", model_fixed)
    for _ in range(3):
        oracle.called("model")
        a = model(tf.constant([1.0, 2.0]))
        oracle.called("model_fixed")
        b = model_fixed(tf.constant([1.0, 2.0]))
    assert a.numpy().tolist() == b.numpy().tolist() == [3.0, 5.0]


if __name__ == "__main__":
    main()
