"""A scalar, then vectors, then a matrix: the rank changes, which
reduce_retracing=True traces again for; shape=None serves every rank.
"""
# expect: edit input_signature=[tf.TensorSpec(shape=None, dtype=tf.float32, name='x')]
# expect: recommendation shape=None
# expect: traces-after 1
import tensorflow as tf


@tf.function
def total(x):
    return tf.reduce_sum(x * 2.0)


for v in (1.0, [1.0, 2.0], [3.0, 4.0, 5.0], [[1.0, 2.0]]):
    print(float(total(tf.constant(v))))
print("tracing count:", total.experimental_get_tracing_count())
