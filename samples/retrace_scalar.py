"""Retracing because a Python float changes every epoch (cause: python-value).

`lr` is a plain Python float.  tf.function keys its trace cache on Python
values by value (the signature shows `Literal[0.1]`), and bakes the value into
the graph as a constant: every new learning rate is a new trace and a new
graph.  With the decay below, each of the EPOCHS epochs retraces once, and the
steps inside an epoch reuse that epoch's graph.

Fix: pass `tf.constant(lr)` (or keep the rate in a tf.Variable).
"""
import numpy as np, tensorflow as tf  # one statement, as users write it: agprof fix finds tf in it

import oracle

EPOCHS = 6
STEPS_PER_EPOCH = 5

w = tf.Variable(tf.zeros([8, 1]))


@tf.function
def sgd_step(x, y, lr):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
    w.assign_sub(lr * tape.gradient(loss, w))
    return loss


def main():
    oracle.track("sgd_step", sgd_step)
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(32, 8)).astype(np.float32))
    y = tf.constant(rng.normal(size=(32, 1)).astype(np.float32))
    lr = 0.1
    for epoch in range(EPOCHS):
        for _ in range(STEPS_PER_EPOCH):
            oracle.called("sgd_step")
            traces_before = sgd_step.experimental_get_tracing_count()
            loss = sgd_step(x, y, lr)  # agprof: python-value
            if sgd_step.experimental_get_tracing_count() > traces_before:
                oracle.traced_with("sgd_step", x=x, y=y, lr=lr)
        print("epoch %d lr %.5f loss %.4f" % (epoch, lr, float(loss)))
        lr *= 0.7
    print("tracing count:", sgd_step.experimental_get_tracing_count())


if __name__ == "__main__":
    with oracle.eager_window():
        main()
