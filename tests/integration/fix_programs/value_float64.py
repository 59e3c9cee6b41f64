"""A Python float times a float64 variable: the graph constant is float64, so
the tensor must be too (a float32 one makes the product raise).
"""
# expect: edit tf.constant(v, tf.float64)
# expect: traces-after 1
import tensorflow as tf

w = tf.Variable([1.0, 2.0, 3.0], dtype=tf.float64)


@tf.function
def h(x):
    return tf.reduce_sum(w * x)


for v in (0.1, 0.25, 1.0 / 3):
    print(repr(float(h(v))))
print("tracing count:", h.experimental_get_tracing_count())
