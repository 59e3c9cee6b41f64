"""Cost of eager ops and graph calls per block of 2000 steps (wall and this
process's CPU time), printed per block
(bench for `agprof attach`: compare blocks before, during and after an attach
with a run under `agprof run`).  Usage: attach_overhead.py BLOCKS"""
import sys
import time

import tensorflow as tf


@tf.function
def step(x):
    return tf.reduce_sum(x * 2.0)


def main(blocks):
    x = tf.ones([8])
    print("ready", flush=True)
    for b in range(blocks):
        t, c = time.perf_counter(), time.process_time()
        for _ in range(2000):
            y = x + 1.0  # eager op
            step(y)      # graph call
        print("block %d %.1f us/step %.1f cpu-us/step" % (b, (time.perf_counter() - t) / 2000 * 1e6,
                                                          (time.process_time() - c) / 2000 * 1e6), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]))
