"""Fleet program 1 (tests/integration/test_fleet_export.py): `predict` sees
N batch sizes (argv[1]), so TensorFlow traces it N times; eager ops at the
line that makes each batch."""
import os
import sys

import numpy as np
import tensorflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "samples"))
import oracle  # noqa: E402

w = tf.Variable(tf.ones([6, 1]))


@tf.function
def predict(x):
    return tf.reduce_sum(tf.matmul(x, w))


def main(n):
    oracle.track("predict", predict)
    for size in range(1, n + 1):
        for _ in range(2):
            batch = tf.constant(np.ones((size, 6), np.float32))
            oracle.called("predict")
            predict(batch)
    print("tracing count:", predict.experimental_get_tracing_count())


if __name__ == "__main__":
    main(int(sys.argv[1]))
