"""Call sites when TensorFlow is first called from a warm frame.

Libraries often make their first tensor while they are imported, from a
helper they have already called many times (GPflow does, importing
itself: every eager op of a GPflow program was recorded without a line).
By then CPython has quickened the helper's code: its first instructions
are rewritten.  The collector learns the interpreter's frame layout at the
first TensorFlow call made with the GIL held, from the frames on the stack
then; the layout must be found whatever state their code is in.

Planted problem: an eager hot loop (cause: eager dispatch), whose ops must
all carry the loop's line.
"""
import tensorflow as tf

import oracle


def constant_of(value, as_tensor):
    if not as_tensor:
        return value
    return tf.constant(value)


# Plain calls first: CPython quickens constant_of's code (3.11 after a few
# calls, 3.12 at once).  Then the process's first TensorFlow op, from it.
DEFAULTS = [constant_of(v, False) for v in range(100)]
ONE = constant_of(1.0, True)

STEPS = 500


def main():
    x = ONE
    y = tf.constant(0.5)
    for _ in range(STEPS):
        x = tf.add(tf.multiply(x, y), y)  # agprof: eager-hot-loop
    print("x = %.4f after %d steps" % (float(x), STEPS))
    oracle.extra("planned_eager_ops", 2 * STEPS)


if __name__ == "__main__":
    with oracle.eager_window():
        main()
