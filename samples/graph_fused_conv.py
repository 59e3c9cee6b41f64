"""A convolution with its bias and activation, which grappler fuses.

`conv_fn` is Conv2D, BiasAdd and Relu; on CPU grappler replaces the three
with one kernel (_FusedConv2D, or oneDNN's _MklNativeFusedConv2D) that takes
its name from the last op it fuses, Relu.  The convolution is the work a
conv function is expected to spend its time on: agprof must name that
kernel Conv2D+BiasAdd+Relu, not "Relu took 100% of conv_fn's kernel time"
(slow-op).  No finding is expected.
"""
import tensorflow as tf

import oracle

CALLS = 30

kernel = tf.Variable(tf.random.stateless_normal([3, 3, 16, 32], seed=[1, 2]))
bias = tf.Variable(tf.zeros([32]))


@tf.function
def conv_fn(x):
    y = tf.nn.conv2d(x, kernel, strides=1, padding="SAME")
    return tf.nn.relu(tf.nn.bias_add(y, bias))


def main():
    x = tf.random.stateless_normal([8, 64, 64, 16], seed=[3, 4])
    oracle.track("conv_fn", conv_fn)
    for _ in range(CALLS):
        conv_fn(x).numpy()
        oracle.called("conv_fn")


main()
