"""Retracing because batch shapes change (cause: shape).

The data set has 100 examples and is cut into batches of 32, then 24, then
50: the batch shapes are [32,10] x3, [4,10] (the last partial batch), then
[24,10] x4, [4,10], then [50,10] x2.  Every shape the function has not seen
is a new trace and a new graph: 4 traces for 11 calls.

Fix: input_signature=[tf.TensorSpec([None, 10], tf.float32)], drop the last
batch, or reduce_retracing=True.
"""
import numpy as np
import tensorflow as tf

import oracle

N = 100
w = tf.Variable(tf.ones([10, 1]))


@tf.function
def predict(x):
    return tf.reduce_sum(tf.matmul(x, w))


def main():
    oracle.track("predict", predict)
    rng = np.random.default_rng(0)
    data = rng.normal(size=(N, 10)).astype(np.float32)
    total = 0.0
    for batch_size in (32, 24, 50):
        for start in range(0, N, batch_size):
            batch = tf.constant(data[start:start + batch_size])
            oracle.called("predict")
            traces_before = predict.experimental_get_tracing_count()
            total += float(predict(batch))  # agprof: shape
            if predict.experimental_get_tracing_count() > traces_before:
                oracle.traced_with("predict", x=batch)
    print("sum of predictions %.4f" % total)
    print("tracing count:", predict.experimental_get_tracing_count())


if __name__ == "__main__":
    with oracle.eager_window():
        main()
