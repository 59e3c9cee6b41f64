"""A Python int the function only uses through Python arithmetic, n + 1 and
2 * n: no graph constant equals n, but two move with it in every trace (one
at n + 1, one at 2 * n), both int32; n as an int32 tensor computes the same.
"""
# expect: edit tf.constant(n, tf.int32)
# expect: traces-after 1
import tensorflow as tf


@tf.function
def k(n):
    total = tf.reduce_sum(tf.range(n + 1))
    return total * (2 * n)


for n in (3, 4, 5, 6):
    print(int(k(n)))
print("tracing count:", k.experimental_get_tracing_count())
