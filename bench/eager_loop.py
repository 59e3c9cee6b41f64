"""The eager-heavy sample's hot loop, timed in CPU seconds of the calling
thread (time.thread_time), so that other processes on a busy machine disturb
the measurement less than wall time.  Used by bench/overhead.py."""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "samples"))
import tensorflow as tf  # noqa: E402
from eager_heavy import OPS_PER_STEP, step  # noqa: E402


def main():
    ops = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    x = tf.constant([[0.5, -1.0], [2.0, 0.25]])
    y = tf.constant([[1.0, 1.0], [-0.5, 0.5]])
    for _ in range(200):  # warm up caches and lazy initialisation
        x = step(x, y)
    c0, w0 = time.thread_time(), time.perf_counter()
    for _ in range(ops // OPS_PER_STEP):
        x = step(x, y)
    print("loop cpu %.6f wall %.6f ops %d" % (time.thread_time() - c0, time.perf_counter() - w0,
                                              ops // OPS_PER_STEP * OPS_PER_STEP))


if __name__ == "__main__":
    main()
