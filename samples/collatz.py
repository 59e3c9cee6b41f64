"""The article's Collatz loop, eagerly and as a tf.function.

AutoGraph turns the Python `while` and `if` on tensors into tf.while_loop and
tf.cond while tracing, so `collatz` runs as one graph function per call and is
traced once: every call passes an int32 scalar tensor (same signature).

The eager twin `collatz_eager` runs the same loop op by op: every `n % 2`,
`n == 0`, `n // 2`, `3 * n + 1`, ... is one eager op dispatched from Python,
so it is the planted problem here (the hot loop is not covered by
tf.function).  The oracle counts those ops with TensorFlow's own profiler.
"""
import tensorflow as tf

import oracle


@tf.function
def collatz(n):
    steps = tf.constant(0)
    while n != 1:              # AutoGraph: tf.while_loop
        if n % 2 == 0:         # AutoGraph: tf.cond
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def collatz_eager(n):
    steps = tf.constant(0)
    while n != 1:              # Python loop on an eager tensor: one op per test
        if n % 2 == 0:         # agprof: eager-hot-loop
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


def main():
    oracle.track("collatz", collatz)
    eager_total = 0
    for start in (27, 97):
        eager_total += int(collatz_eager(tf.constant(start)))
    graph_total = 0
    for start in range(1, 201):
        oracle.called("collatz")
        graph_total += int(collatz(tf.constant(start)))
    print("eager steps:", eager_total)
    print("graph steps for 1..200:", graph_total)
    print("tracing count:", collatz.experimental_get_tracing_count())


if __name__ == "__main__":
    with oracle.eager_window():
        main()
