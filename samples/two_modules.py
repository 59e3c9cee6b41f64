"""Two instances of one tf.Module class, each building its weight lazily.

The usual way to write a small model of parts (an encoder and a decoder of
one layer class): `__call__` is a tf.function method, so each instance has
its own tf.function object, and each creates its variable at its first
call, which TensorFlow traces twice (once creating it, once more without).
Four traces in all, two tf.function objects, two variables: nothing to
fix, nothing agprof may warn about.  (samples/variable_creation.py is the
bug this resembles: a new instance for every batch.)
"""
import tensorflow as tf

import oracle


class Dense(tf.Module):
    def __init__(self, units):
        super().__init__()
        self.units, self.w = units, None

    @tf.function
    def __call__(self, x):
        if self.w is None:
            self.w = tf.Variable(tf.ones([x.shape[-1], self.units]) * 0.1)
        return tf.nn.relu(x @ self.w)


def main():
    encoder, decoder = Dense(8), Dense(4)
    x = tf.ones([16, 4])
    for _ in range(20):
        y = decoder(encoder(x))
    print("sum %.4f, tracing counts %d %d" % (float(tf.reduce_sum(y)), encoder.__call__.experimental_get_tracing_count(),
                                            decoder.__call__.experimental_get_tracing_count()))


if __name__ == "__main__":
    with oracle.eager_window():
        main()
