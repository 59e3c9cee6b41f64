"""Fleet program 1 (tests/integration/test_fleet_export.py): `predict` sees
N batch sizes (argv[1]), so TensorFlow traces it N times; eager ops at the
line that makes each batch.  record_many.py runs main() many times in one
process, each run with fresh tf.function objects (functions())."""
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "samples"))
import oracle  # noqa: E402

w = tf.Variable(tf.ones([6, 1]))


def predict(x):
    return tf.reduce_sum(tf.matmul(x, w))


def functions():
    """A run's own tf.function objects: each traces as a first run's would."""
    return {"predict": tf.function(predict)}


def main(n, fns):
    for size in range(1, n + 1):
        for _ in range(2):
            batch = tf.constant(np.ones((size, 6), np.float32))
            oracle.called("predict")
            fns["predict"](batch)
    print("tracing count:", fns["predict"].experimental_get_tracing_count())


if __name__ == "__main__":
    fns = functions()
    oracle.track("predict", fns["predict"])
    main(int(sys.argv[1]), fns)
