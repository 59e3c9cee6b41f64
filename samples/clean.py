"""The well-written workload: nothing for agprof to warn about.

- One tf.function, `train_epoch`, holds every hot op: the loop over batches
  is a tf.range loop (a tf.while_loop in the graph), batches are sliced in
  the graph, the forward pass, gradients and the SGD update are graph ops.
- It has an input_signature with fixed shapes, so it is traced exactly once
  and the Python side makes one graph-function call per epoch.
- Variables are created once, outside traced code; no Python side effects,
  no py_function, no Python scalars as arguments (the learning rate is a
  tf.Variable).
"""
import numpy as np
import tensorflow as tf

import oracle

EXAMPLES = 512
FEATURES = 16
BATCH = 64
EPOCHS = 5

rng = np.random.default_rng(0)
X = tf.constant(rng.normal(size=(EXAMPLES, FEATURES)).astype(np.float32))
Y = tf.constant((rng.normal(size=(EXAMPLES, 1)) > 0).astype(np.float32))

w1 = tf.Variable(tf.random.stateless_normal([FEATURES, 32], seed=[1, 2]) * 0.1)
b1 = tf.Variable(tf.zeros([32]))
w2 = tf.Variable(tf.random.stateless_normal([32, 1], seed=[3, 4]) * 0.1)
b2 = tf.Variable(tf.zeros([1]))
learning_rate = tf.Variable(0.1)
params = [w1, b1, w2, b2]


@tf.function(input_signature=[
    tf.TensorSpec([EXAMPLES, FEATURES], tf.float32),
    tf.TensorSpec([EXAMPLES, 1], tf.float32),
])
def train_epoch(x, y):
    total = tf.constant(0.0)
    for i in tf.range(EXAMPLES // BATCH):
        xb = x[i * BATCH:(i + 1) * BATCH]
        yb = y[i * BATCH:(i + 1) * BATCH]
        with tf.GradientTape() as tape:
            h = tf.nn.relu(tf.matmul(xb, w1) + b1)
            logits = tf.matmul(h, w2) + b2
            loss = tf.reduce_mean(
                tf.nn.sigmoid_cross_entropy_with_logits(labels=yb, logits=logits))
        grads = tape.gradient(loss, params)
        for p, g in zip(params, grads):
            p.assign_sub(learning_rate * g)
        total += loss
    return total / (EXAMPLES // BATCH)


def main():
    oracle.track("train_epoch", train_epoch)
    for epoch in range(EPOCHS):
        oracle.called("train_epoch")
        loss = train_epoch(X, Y)
        print("epoch %d loss %.4f" % (epoch, float(loss)))
    print("tracing count:", train_epoch.experimental_get_tracing_count())


if __name__ == "__main__":
    with oracle.eager_window():
        main()
