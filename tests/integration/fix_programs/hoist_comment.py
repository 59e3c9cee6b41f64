"""A comment and a string that read like the build: the parser sees only the
statement.  The text reader took the comment nearest the call for the build
and moved it, leaving the build in the loop.
"""
# expect: edit     step = tf.function(scale_and_sum)
# expect: fix-line 19
# expect: traces-after 1
import tensorflow as tf


def scale_and_sum(x):
    return tf.reduce_sum(x * 3.0)


def main():
    x = tf.range(10, dtype=tf.float32)
    total = 0.0
    steps = []
    for i in range(5):
        step = tf.function(scale_and_sum)
        print("chunk %d: step = tf.function(scale_and_sum) for " % i, end="")
        # was: step = tf.function(scale_and_sum) per chunk
        steps.append(step)
        total += float(step(x + i))
        print("%.1f" % total)
    objects = {id(s): s for s in steps}.values()
    print("tracing count:", sum(s.experimental_get_tracing_count() for s in objects))


main()
