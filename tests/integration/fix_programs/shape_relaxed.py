"""reduce_retracing=True already, and still three traces: the signature
replaces the option, never recommends it again.
"""
# expect: edit @tf.function(input_signature=[tf.TensorSpec(shape=None, dtype=tf.float32, name='x')])
# expect: recommendation already has reduce_retracing=True
# expect: traces-after 1
import tensorflow as tf


@tf.function(reduce_retracing=True)
def total(x):
    return tf.reduce_sum(x * 2.0)


for v in ([1.0, 2.0], [3.0, 4.0, 5.0], 1.0, [[1.0, 2.0]], 2.0):
    print(float(total(tf.constant(v))))
print("tracing count:", total.experimental_get_tracing_count())
