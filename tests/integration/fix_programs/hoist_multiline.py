"""A tf.function built over several lines inside the loop: the parser gives
the whole statement, which moves above the loop.  The text reader looked
for `tf.function(` and the function's name on one line and found neither.
"""
# expect: edit step = tf.function(
# expect: fix-line 21
# expect: traces-after 1
# expect: old-facts predate the assignments
# expect: no-facts-no-edit no `... = tf.function(scale_and_sum)` line above the call
import tensorflow as tf


def scale_and_sum(x):
    return tf.reduce_sum(x * 3.0)


def main():
    x = tf.range(10, dtype=tf.float32)
    total = 0.0
    steps = []
    for i in range(5):
        step = tf.function(
            scale_and_sum,
            reduce_retracing=True)
        steps.append(step)
        total += float(step(x + i))
    print("total %.1f" % total)
    objects = {id(s): s for s in steps}.values()
    print("tracing count:", sum(s.experimental_get_tracing_count() for s in objects))


main()
