"""Batches of changing length with a Python scale beside them: no signature
can be written (scale is not a tensor), so reduce_retracing=True, which
leaves its one relaxed retrace: two traces, not five.
"""
# expect: edit @tf.function(reduce_retracing=True)
# expect: traces-after 2
import tensorflow as tf


@tf.function
def scaled(x, scale):
    return tf.reduce_sum(x) * scale


for n in (3, 4, 5, 6, 7):
    print(float(scaled(tf.ones([n, 2]), 2.0)))
print("tracing count:", scaled.experimental_get_tracing_count())
