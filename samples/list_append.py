"""The article's list-append bug and its TensorArray fix.

Inside a tf.function, a `for i in tf.range(n)` loop becomes a tf.while_loop:
its body is traced ONCE, so a Python side effect such as `result.append(x)`
runs once, at trace time, not once per iteration: the list ends up holding one
symbolic tensor from the loop body, and `len(result)` is the Python int 1,
baked into the graph as a constant, whatever n is.  No error, no warning.
tf.TensorArray is the graph-friendly accumulator: `ta.write(i, x)` is an op,
executed every iteration.

Both functions are traced once (same int32 scalar argument every call).
"""
import tensorflow as tf

import oracle


@tf.function
def squares_buggy(n):
    result = []
    for i in tf.range(n):
        result.append(i * i)  # agprof: python-side-effect
    return len(result)


def _step_parts(parts, step):
    moved = []  # made anew in each body trace: a structure, not an accumulator
    for p in parts:
        moved.append(p + step)
    return moved


@tf.function
def parts_step(n):
    """A loop body whose helper builds a list of per-part tensors, as
    TensorFlow Probability's MCMC kernels do: right, no finding."""
    x, y = tf.constant(0), tf.constant(1)
    for _ in tf.range(n):
        x, y = _step_parts([x, y], 2)
    return x + y


@tf.function
def squares_fixed(n):
    ta = tf.TensorArray(tf.int32, size=0, dynamic_size=True)
    for i in tf.range(n):
        ta = ta.write(i, i * i)
    return ta.stack()


def main():
    oracle.track("squares_buggy", squares_buggy)
    oracle.track("squares_fixed", squares_fixed)
    oracle.track("parts_step", parts_step)
    for n in (5, 10, 20):
        oracle.called("squares_buggy")
        buggy = squares_buggy(tf.constant(n))
        oracle.called("squares_fixed")
        fixed = squares_fixed(tf.constant(n))
        print("n=%d: list has %s element(s), TensorArray has %d"
              % (n, int(buggy), int(tf.size(fixed))))
        assert int(tf.size(fixed)) == n
        oracle.called("parts_step")
        assert int(parts_step(tf.constant(n))) == 4 * n + 1
    oracle.extra("buggy_length", int(buggy))


if __name__ == "__main__":
    with oracle.eager_window():
        main()
