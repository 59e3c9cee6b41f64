"""The build inside a `with` inside the loop: it moves above the loop, out
of the `with` (a tf.function keeps no name scope from where it is made).
The text reader took the `with` for the block around the build and found
no loop.
"""
# expect: edit     step = tf.function(scale_and_sum)
# expect: traces-after 1
import tensorflow as tf


def scale_and_sum(x):
    return tf.reduce_sum(x * 3.0)


def main():
    x = tf.range(10, dtype=tf.float32)
    total = 0.0
    steps = []
    for i in range(5):
        with tf.name_scope("chunk"):
            step = tf.function(scale_and_sum)
            steps.append(step)
            total += float(step(x + i))
    print("total %.1f" % total)
    objects = {id(s): s for s in steps}.values()
    print("tracing count:", sum(s.experimental_get_tracing_count() for s in objects))


main()
