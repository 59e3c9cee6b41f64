"""A Python float halved in Python before it meets a float64 variable: the
graph holds lr / 2 (a float64 constant, half the value in every trace), so
the tensor must be float64 (a float32 one makes the product raise).
"""
# expect: edit tf.constant(lr, tf.float64)
# expect: traces-after 1
import tensorflow as tf

w = tf.Variable([1.0, 2.0, 3.0], dtype=tf.float64)


@tf.function
def h(lr):
    return tf.reduce_sum(w * (lr / 2))


for lr in (0.1, 0.25, 1.0 / 3):
    print(repr(float(h(lr))))
print("tracing count:", h.experimental_get_tracing_count())
