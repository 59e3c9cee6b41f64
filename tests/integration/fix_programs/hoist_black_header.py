"""A loop header continued on two lines, as black writes it (`):` on a line
of its own at the loop's indentation): the parser gives the loop's extent.
The text reader took the `):` line for the block around the build and
found no loop.
"""
# expect: edit     step = tf.function(scale_and_sum)
# expect: traces-after 1
import tensorflow as tf


def scale_and_sum(x, w):
    return tf.reduce_sum(x * w)


def main():
    xs = [tf.fill([4], float(i)) for i in range(5)]
    ws = [tf.constant(float(i) / 2) for i in range(5)]
    total = 0.0
    steps = []
    for x, w in zip(
        xs, ws
    ):
        step = tf.function(scale_and_sum)
        steps.append(step)
        total += float(step(x, w))
    print("total %.2f" % total)
    objects = {id(s): s for s in steps}.values()
    print("tracing count:", sum(s.experimental_get_tracing_count() for s in objects))


main()
