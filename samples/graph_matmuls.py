"""A graph of a few large matmuls: kernel time is the call's time.

`dense_chain` multiplies a 512x512 activation through three 512x512
weight matrices: three MatMul kernels of about a millisecond each per call,
so the executor's own time is a small share of each call and no rule has
anything to say (neither graph-dispatch-bound nor slow-op: MatMul is the
work a model is expected to spend its time in).
"""
import tensorflow as tf

import oracle

N = 512
CALLS = 20


@tf.function
def dense_chain(x, w1, w2, w3):
    h = tf.nn.relu(tf.matmul(x, w1))
    h = tf.nn.relu(tf.matmul(h, w2))
    return tf.matmul(h, w3)


def main():
    x = tf.random.stateless_normal([N, N], seed=[1, 2])
    ws = [tf.random.stateless_normal([N, N], seed=[3, i]) * 0.05 for i in range(3)]
    oracle.track("dense_chain", dense_chain)
    for _ in range(CALLS):
        dense_chain(x, *ws).numpy()
        oracle.called("dense_chain")
    oracle.extra("function_defs", {
        "dense_chain": oracle.executed_kernels(dense_chain.get_concrete_function(x, *ws)),
    })


main()
