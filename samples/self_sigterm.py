"""A workload that dies from SIGTERM (default action) after some eager ops.

It prints a line, runs OPS eager ops, then sends itself SIGTERM; Python's
default disposition terminates the process, so a shell would report status
143 (128 + 15), and so must `agprof run`.
"""
import os
import signal
import sys

import tensorflow as tf

OPS = 200


def main():
    x = tf.constant(1.0)
    y = tf.constant(2.0)
    for _ in range(OPS):
        x = tf.add(x, y)
    print("about to be terminated after %d ops" % OPS, flush=True)
    os.kill(os.getpid(), signal.SIGTERM)
    signal.pause()
    sys.exit("still alive after SIGTERM")  # not reached


if __name__ == "__main__":
    main()
