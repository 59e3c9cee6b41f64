"""f(1), f(1.0), f(2), f(3.5): Python ints and floats into a float32
product.  Every graph holds the number as a float32 constant, so
tf.constant(v, tf.float32) keeps the results (ints included).
"""
# expect: edit tf.constant(v, tf.float32)
# expect: traces-after 1
import tensorflow as tf

w = tf.Variable([1.0, 2.0, 3.0])


@tf.function
def f(x):
    return tf.reduce_sum(w * x)


for v in (1, 1.0, 2, 3.5):
    print(float(f(v)))
print("tracing count:", f.experimental_get_tracing_count())
