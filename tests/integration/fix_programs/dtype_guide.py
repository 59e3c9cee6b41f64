"""The tf.function guide's double(): an int32, a float32 (1.1) and a float64
tensor.  Each graph adds in its own dtype, so no cast keeps the results: the
old edit, double(tf.cast(a, tf.int32)), printed 2 for 2.2.
"""
# expect: no-edit the graphs compute a as int32 in one and float32 in another
import tensorflow as tf


@tf.function
def double(a):
    return a + a


for a in (tf.constant(1), tf.constant(1.1), tf.constant(2.5, tf.float64)):
    print(double(a))
print("tracing count:", double.experimental_get_tracing_count())
