"""A keyword argument after a string holding "k(n)": the edit wraps the
argument of the call, never the text inside the string.
"""
# expect: edit int(k(n=tf.constant(n, tf.int32)))
# expect: traces-after 1
import tensorflow as tf


@tf.function
def k(n):
    return tf.reduce_sum(tf.range(n))


for n in (3, 4, 5):
    print("k(n) =", int(k(n=n)))
print("tracing count:", k.experimental_get_tracing_count())
