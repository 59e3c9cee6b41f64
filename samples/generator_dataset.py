"""Dataset.from_generator consumed to the end.

TensorFlow runs a generator through three Python black boxes (PyFunc
nodes), each in its own tf.data function: one that creates the Python
iterator (once per pass), one that calls next() on it (once per element,
plus the call that ends the pass), and one that drops it at the end.
agprof must charge each run to its own node and name the user's
from_generator line.  The sample counts what really happened: how often
the iterator was created and how often next() was called.
"""
import numpy as np
import tensorflow as tf

import oracle

STEPS = 60

counts = {"iter": 0, "next": 0}


class Source:
    """An iterator that counts its own next() calls."""

    def __init__(self):
        counts["iter"] += 1
        self.i = 0

    def __iter__(self):
        return self

    def __next__(self):
        counts["next"] += 1
        if self.i >= STEPS:
            raise StopIteration
        self.i += 1
        return np.full([4], self.i, np.float32)


@tf.function
def step(x):
    return tf.reduce_sum(x * 2.0)


def main():
    oracle.track("step", step)
    ds = tf.data.Dataset.from_generator(Source, output_signature=tf.TensorSpec([4], tf.float32))  # agprof: generator
    n = 0
    for x in ds:
        oracle.called("step")
        step(x)
        n += 1
    print("elements %d, iterators %d, next() calls %d" % (n, counts["iter"], counts["next"]))
    oracle.extra("elements", n)
    oracle.extra("iterator_inits", counts["iter"])
    oracle.extra("next_calls", counts["next"])
    oracle.extra("failed_eager_ops", {"IteratorGetNext": 1})


if __name__ == "__main__":
    with oracle.eager_window():
        main()
