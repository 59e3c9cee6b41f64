"""A tf.data input pipeline feeding a training step, on synthetic data.

Records parsed by a traced map (a few string and numeric ops per element), shuffled, batched, augmented per
batch, prefetched, and consumed by a tf.function training step of a small linear model; three epochs."""
import sys

import numpy as np
import tensorflow as tf

from common import timed_calls

ELEMENTS = int(sys.argv[1]) if len(sys.argv) > 1 else 20000


def parse(line):
    fields = tf.strings.split(line, ",")
    values = tf.strings.to_number(fields, tf.float32)
    return values[:-1], values[-1:]


def augment(x, y):
    noise = tf.random.stateless_normal(tf.shape(x), seed=(1, 2), stddev=0.01)
    return tf.clip_by_value(x + noise, -5.0, 5.0), y


def main():
    rng = np.random.default_rng(0)
    rows = rng.standard_normal((ELEMENTS, 9)).round(3)
    lines = tf.constant([",".join(map(str, r)) for r in rows])
    ds = (tf.data.Dataset.from_tensor_slices(lines).map(parse).shuffle(1024, seed=0).batch(32)
          .map(augment).prefetch(2))
    w = tf.Variable(tf.zeros((8, 1)))
    opt = tf.keras.optimizers.SGD(0.01)

    @tf.function
    def step(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean((tf.matmul(x, w) - y) ** 2)
        opt.apply_gradients([(tape.gradient(loss, w), w)])
        return loss

    x0, y0 = next(iter(ds))
    timed_calls("step", step, x0, y0)
    for epoch in range(3):
        total = tf.constant(0.0)
        for x, y in ds:
            total += step(x, y)
        print("epoch %d loss %.4f" % (epoch, float(total)), flush=True)


if __name__ == "__main__":
    main()
