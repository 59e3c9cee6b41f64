"""XLA with changing input shapes (jit_compile=True).

`dense_gelu` is compiled with XLA (jit_compile=True).  An XLA cluster is
compiled for one concrete shape: every new batch size means a new trace AND a
new XLA compilation, the latency spikes the article warns about for online
serving with variable batch sizes.  The loop below serves requests of batch
size 1, 8, 3, 8, 17, 1: four distinct shapes, four traces/compilations.

Fix: pad requests to a few fixed bucket sizes, or do not jit-compile a
function whose shapes vary.
"""
import numpy as np
import tensorflow as tf

import oracle

tf.random.set_seed(0)
kernel = tf.Variable(tf.random.normal([32, 32], seed=1))


@tf.function(jit_compile=True)
def dense_gelu(x):
    return tf.nn.gelu(tf.matmul(x, kernel))


def main():
    oracle.track("dense_gelu", dense_gelu)
    rng = np.random.default_rng(0)
    for batch in (1, 8, 3, 8, 17, 1):
        x = tf.constant(rng.normal(size=(batch, 32)).astype(np.float32))
        oracle.called("dense_gelu")
        y = dense_gelu(x)  # agprof: jit-shapes
        print("batch %2d -> %s" % (batch, y.shape))
    print("tracing count:", dense_gelu.experimental_get_tracing_count())


if __name__ == "__main__":
    with oracle.eager_window():
        main()
