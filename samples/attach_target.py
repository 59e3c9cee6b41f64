"""A TensorFlow job started without agprof, for `agprof attach` (tests/integration/test_attach.py).

Eager ops all the time, a retrace of `step` every half second (its Python
int argument changes), and its own counters printed every 50 ms against
time.monotonic_ns(), the clock of the recording's start_ns/end_ns:
    m=<ns> traces=<TF's tracing count> eager=<eager ops issued>
"""
import sys
import time

import tensorflow as tf


@tf.function
def step(x, n):
    return tf.reduce_sum(x) * n


def main(seconds):
    x = tf.ones([8])
    t0, eager, printed = time.monotonic(), 0, 0.0
    print("ready", flush=True)
    while time.monotonic() - t0 < seconds:
        k = int((time.monotonic() - t0) / 0.5)
        y = x * 2.0  # one eager op
        eager += 1
        step(y, k)
        if time.monotonic() - printed >= 0.05:
            printed = time.monotonic()
            print("m=%d traces=%d eager=%d" % (time.monotonic_ns(), step.experimental_get_tracing_count(), eager),
                  flush=True)
        time.sleep(0.002)
    print("done traces=%d eager=%d" % (step.experimental_get_tracing_count(), eager), flush=True)


if __name__ == "__main__":
    main(float(sys.argv[1]) if len(sys.argv) > 1 else 10.0)
