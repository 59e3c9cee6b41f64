"""A decorator whose arguments are on the next line: the signature replaces
reduce_retracing=True where the parser puts it.
"""
# expect: edit     input_signature=[tf.TensorSpec(shape=None, dtype=tf.float32, name='x')])  # relax
# expect: traces-after 1
import tensorflow as tf


@tf.function(
    reduce_retracing=True)  # relax
def total(x):
    return tf.reduce_sum(x * 2.0)


for v in ([1.0, 2.0], [3.0, 4.0, 5.0], 1.0, [[1.0, 2.0]], 2.0):
    print(float(total(tf.constant(v))))
print("tracing count:", total.experimental_get_tracing_count())
