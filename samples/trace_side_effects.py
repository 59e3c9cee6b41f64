"""Python side effects inside tf.functions run while tracing, not per call.

`noisy_step` is traced twice (two input shapes) and called six times: its
print() prints twice, its global counter counts traces (2) instead of calls
(6), and random.random() is drawn once per trace and frozen into each graph
as a constant, so every call of one graph adds the same "noise".
`quiet_step` is the fix: tf.print prints on every call, a tf.Variable counts
calls, tf.random.uniform draws anew on every call.  `debug_once` prints at
trace time in a function traced once: the debugging aid TensorFlow
documents ("this prints when the function is traced"), worth an info only.
"""
import random

import tensorflow as tf

import oracle

calls_seen = 0


@tf.function
def noisy_step(x):
    global calls_seen
    print("tracing noisy_step")  # agprof: print-side-effect
    calls_seen += 1              # agprof: global-side-effect
    noise = random.random()      # agprof: random-side-effect
    return x * 2.0 + noise


counter = tf.Variable(0)


@tf.function
def quiet_step(x):
    tf.print("quiet_step called")
    counter.assign_add(1)
    return x * 2.0 + tf.random.uniform([])


@tf.function
def debug_once(x):
    print("tracing debug_once")  # agprof: debug-print
    return x + 1.0


def main():
    oracle.track("noisy_step", noisy_step)
    oracle.track("quiet_step", quiet_step)
    oracle.track("debug_once", debug_once)
    outputs = set()
    for size in (2, 3):
        for _ in range(3):
            x = tf.zeros([size])
            oracle.called("noisy_step")
            outputs.add(float(noisy_step(x)[0]))
            oracle.called("quiet_step")
            quiet_step(x)
    for _ in range(5):
        oracle.called("debug_once")
        debug_once(tf.constant(1.0))
    # Six calls, but the Python counter counts traces and the "random" noise
    # took only one value per graph.
    oracle.extra("calls_seen", calls_seen)
    oracle.extra("distinct_noise", len(outputs))
    oracle.extra("counter", int(counter.numpy()))
    print("python counter %d, tf.Variable counter %d, distinct noise values %d"
          % (calls_seen, int(counter.numpy()), len(outputs)))


if __name__ == "__main__":
    main()
