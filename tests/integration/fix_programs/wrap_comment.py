"""samples/collatz.py's eager loop with a comment that names NumPy and print
in its body, and its call written over two lines: the parser sees no call
in the comment and every argument of the call, so @tf.function is written.
The text reader took `np.` and `print(` in the comment for side effects,
and could not read the call's arguments, and wrote nothing.
"""
import time

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
        # like np.where(n % 2 == 0, ...) but scalar; print(n) here to trace the path
        if n % 2 == 0:         # agprof: eager-hot-loop
            n = n // 2
        else:
            n = 3 * n + 1
        steps += 1
    return steps


START_VALUES = range(1, 201)


def main():
    oracle.track("collatz", collatz)
    t0 = time.perf_counter()
    eager_total = 0
    for start in START_VALUES:
        eager_total += int(collatz_eager(
            tf.constant(start)))
    t1 = time.perf_counter()
    graph_total = 0
    for start in START_VALUES:
        oracle.called("collatz")
        graph_total += int(collatz(tf.constant(start)))
    t2 = time.perf_counter()
    assert eager_total == graph_total
    print("total Collatz steps for 1..200: %d" % graph_total)
    print("eager: %.3f s, tf.function (tracing included): %.3f s" % (t1 - t0, t2 - t1))
    print("tracing count:", collatz.experimental_get_tracing_count())


if __name__ == "__main__":
    with oracle.eager_window():
        main()
