"""XLA with changing input shapes (jit_compile=True).

`dense_gelu` is compiled with XLA (jit_compile=True).  An XLA cluster is
compiled for one concrete shape: every new batch size means a new trace AND a
new XLA compilation, the latency spikes the article warns about for online
serving with variable batch sizes.  The loop below serves requests of batch
size 1, 8, 3, 8, 17, 1: four distinct shapes, four traces/compilations.

Fix: pad requests to a few fixed bucket sizes, or do not jit-compile a
function whose shapes vary.

`mean_embedding` (jit_compile=True too) reads a tf.data pipeline whose
padded_batch pads each batch to its own longest sequence: 4 lengths, 4
compilations.  The advice names that padded_batch (padded_shapes, one
length for every batch), as an input_signature with None would remove the
retraces but not the compilations.
"""
import numpy as np
import tensorflow as tf

import oracle

tf.random.set_seed(0)
kernel = tf.Variable(tf.random.normal([32, 32], seed=1))


@tf.function(jit_compile=True)
def dense_gelu(x):
    return tf.nn.gelu(tf.matmul(x, kernel))


table = tf.Variable(tf.random.normal([10, 8], seed=2))


@tf.function(jit_compile=True)
def mean_embedding(ids):
    return tf.reduce_mean(tf.gather(table, ids), axis=1)


def padded_loop():
    seqs = [[1, 2], [3, 4], [1, 2, 3], [4, 5, 6], [7, 8, 9, 1], [2, 3], [1, 2, 3, 4, 5], [6]]
    ds = tf.data.Dataset.from_tensor_slices(tf.ragged.constant(seqs)).map(lambda s: s)
    ds = ds.padded_batch(2)  # agprof: padded-batch
    for ids in ds:
        y = mean_embedding(ids)  # agprof: jit-padded
    print("padded batches -> %s" % (y.shape,))


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
    padded_loop()  # outside the oracle's window: its counts are dense_gelu's
