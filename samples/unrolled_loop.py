"""A Python loop inside a tf.function unrolls into the graph.

`collatz_unrolled` applies STEPS Collatz steps to a vector with
`for _ in range(STEPS)`: the loop runs while tracing, so the graph gets
STEPS copies of the body (thousands of nodes, a slow trace).
`collatz_loop` is the fix: `for _ in tf.range(STEPS)` becomes one
tf.while_loop whose body is traced once.  `three_layers` loops over a
Python list of three weight matrices: unrolled too, but three copies of a
small body is what the author meant, not a problem.  `cell_unrolled`
steps a Keras SimpleRNNCell over CELL_STEPS time steps with `range` and
takes the gradient: the cell makes its variables on the first call (in
the function's first trace, where the body's first pass differs from the
others) and the gradient line makes more nodes than the loop's body, yet
the loop is the unrolled one.

The oracle records each function's FunctionDef node count, the number
TensorFlow itself reports for the graph.
"""
import numpy as np
import tensorflow as tf
import keras

import oracle

STEPS = 100
CELL_STEPS = 40
WEIGHTS = [tf.constant(np.eye(4, dtype=np.float32) * (i + 1)) for i in range(3)]


@tf.function
def collatz_unrolled(n):
    for _ in range(STEPS):       # agprof: unrolled-loop
        n = tf.where(n % 2 == 0, n // 2, 3 * n + 1)
    return n


@tf.function
def collatz_loop(n):
    for _ in tf.range(STEPS):
        n = tf.where(n % 2 == 0, n // 2, 3 * n + 1)
    return n


@tf.function
def three_layers(x):
    for w in WEIGHTS:
        x = tf.nn.relu(tf.matmul(x, w))
    return x


cell = keras.layers.SimpleRNNCell(8)


@tf.function
def cell_unrolled(x):
    with tf.GradientTape() as tape:
        h = tf.zeros([tf.shape(x)[0], 8])
        for t in range(CELL_STEPS):  # agprof: unrolled-loop
            h, _ = cell(x[:, t], [h])
        loss = tf.reduce_sum(h)
    return tape.gradient(loss, cell.trainable_variables)


def main():
    start = tf.constant(np.arange(1, 65, dtype=np.int64))
    for name, f in (("collatz_unrolled", collatz_unrolled), ("collatz_loop", collatz_loop)):
        oracle.track(name, f)
        oracle.called(name)
        out = f(start)
        oracle.extra(name + "_nodes", len(f.get_concrete_function(start).function_def.node_def))
    assert (collatz_loop(start).numpy() == out.numpy()).all()
    oracle.called("collatz_loop")
    oracle.track("three_layers", three_layers)
    x = tf.ones([2, 4])
    for _ in range(3):
        oracle.called("three_layers")
        three_layers(x)
    oracle.extra("three_layers_nodes", len(three_layers.get_concrete_function(x).function_def.node_def))
    seqs = tf.ones([4, CELL_STEPS, 3])
    for _ in range(2):
        cell_unrolled(seqs)


if __name__ == "__main__":
    main()
