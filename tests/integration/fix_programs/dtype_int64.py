"""Integer tensors of three widths, cast to int64 inside the function: the
cast at the call site must be to int64 (what the graph computes with), never
to the first call's int32.
"""
# expect: edit tf.cast(a, tf.int64)
# expect: traces-after 1
import tensorflow as tf


@tf.function
def widen(a):
    a = tf.cast(a, tf.int64)
    b = a * a + 3000000000
    # a graph of some size: a retrace of two ops costs less than the Cast a
    # new dtype's first call adds, and agprof rightly offers no edit for it
    for _ in range(12):
        b = b + a - a
    return b


for a in (tf.constant([3, 4], tf.int32), tf.constant([5, 6], tf.int16), tf.constant([7, 8], tf.int64),
          tf.constant([1, 2], tf.int32)):
    print(widen(a))
print("tracing count:", widen.experimental_get_tracing_count())
