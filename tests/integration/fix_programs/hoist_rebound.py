"""The function is made anew in the loop (a closure per rate): the build
reads a name the loop binds, so it cannot move.  The text reader saw only
plain names in the arguments and moved the build above the loop, where the
closure is not made yet (NameError).
"""
# expect: no-edit read scale_and_sum, which line 21 binds inside the loop
import tensorflow as tf


def make(rate):
    def scale_and_sum(x):
        return tf.reduce_sum(x * rate)
    return scale_and_sum


def main():
    x = tf.range(10, dtype=tf.float32)
    total = 0.0
    steps = []
    for rate in (1.0, 2.0, 3.0, 4.0):
        scale_and_sum = make(rate)
        step = tf.function(scale_and_sum)
        steps.append(step)
        total += float(step(x))
    print("total %.1f" % total)
    objects = {id(s): s for s in steps}.values()
    print("tracing count:", sum(s.experimental_get_tracing_count() for s in objects))


main()
