"""abs(1), abs(2.5), abs(3): the int graphs compute in int32, the float one
in float32; one tensor dtype would change what one of them returns.
"""
# expect: no-edit as int32 in one and as float32 in another
import tensorflow as tf


@tf.function
def g(x):
    return tf.abs(x)


for v in (1, 2.5, 3):
    print(g(v))
print("tracing count:", g.experimental_get_tracing_count())
