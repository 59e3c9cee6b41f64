"""Traces that fail: a Python `if` on a tensor AutoGraph does not convert,
and a dict keyed by tensors.

`relu_buggy` has AutoGraph off (as in a function AutoGraph cannot see): its
`if x > 0` asks for the Python truth value of a symbolic tensor and the
trace raises OperatorNotAllowedInGraphError.  `count_buggy` keys a dict by a
tensor: tensors are unhashable, the trace raises TypeError.  The program
catches both and goes on, as a training script with a fallback path would:
the failed traces are easy to miss.  `relu_fixed` keeps the condition a
tensor expression (tf.where); `count_fixed` keys the dict by Python values.
"""
import tensorflow as tf

import oracle


@tf.function(autograph=False)
def relu_buggy(x):
    if x > 0:                    # agprof: tensor-if
        return x
    return 0.0 * x


@tf.function
def count_buggy(x):
    seen = {x: 1}                # agprof: tensor-dict
    return x + len(seen)


@tf.function
def relu_fixed(x):
    return tf.where(x > 0, x, 0.0 * x)


@tf.function
def count_fixed(x):
    seen = {"x": x}
    return x + len(seen)


def main():
    oracle.track("relu_buggy", relu_buggy)
    oracle.track("count_buggy", count_buggy)
    oracle.track("relu_fixed", relu_fixed)
    oracle.track("count_fixed", count_fixed)
    failures = 0
    for value in (1.0, -2.0):
        x = tf.constant(value)
        for name, f in (("relu_buggy", relu_buggy), ("count_buggy", count_buggy)):
            try:
                oracle.called(name)
                f(x)
            except (TypeError, tf.errors.OperatorNotAllowedInGraphError) as e:
                failures += 1
                print("%s failed: %s" % (name, type(e).__name__))
        oracle.called("relu_fixed")
        relu_fixed(x)
        oracle.called("count_fixed")
        count_fixed(x)
    oracle.extra("failures", failures)


if __name__ == "__main__":
    main()
