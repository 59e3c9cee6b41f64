"""Nested loops, neither of which the build depends on: it moves above the
outer one, and one object serves every epoch.  The text reader moved it
above the inner loop only: one new object per epoch, still retracing.
"""
# expect: edit     step = tf.function(scale_and_sum)
# expect: fix-line 21
# expect: traces-after 1
# expect: old-facts predate the assignments
# expect: no-facts-edit         step = tf.function(scale_and_sum)
import tensorflow as tf


def scale_and_sum(x):
    return tf.reduce_sum(x * 3.0)


def main():
    chunks = [tf.fill([8], float(i)) for i in range(3)]
    total = 0.0
    steps = []
    for epoch in range(3):
        for chunk in chunks:
            step = tf.function(scale_and_sum)
            steps.append(step)
            total += float(step(chunk + epoch))
    print("total %.1f" % total)
    objects = {id(s): s for s in steps}.values()
    print("tracing count:", sum(s.experimental_get_tracing_count() for s in objects))


main()
