"""A call spread over two lines: the argument's span comes from the parser,
not from the text of the line TensorFlow names.
"""
# expect: edit tf.constant(n, tf.int32)
# expect: traces-after 1
import tensorflow as tf


@tf.function
def k(n):
    return tf.reduce_sum(tf.range(n))


for n in (3, 4, 5):
    print(int(k(
        n)))
print("tracing count:", k.experimental_get_tracing_count())
