"""A second module for samples/trace_recursion.py: a different tf.function
that happens to have the same __name__ as the sample's recursive one."""
import tensorflow as tf


@tf.function
def recursive_fn(x):
    return tf.reduce_sum(tf.tanh(x) * 2.0)
