"""A tf.function called under an eager GradientTape.

Here the training loop is eager and only the model's forward pass,
`forward`, is a tf.function.  When a tf.function is called while an eager
tape is recording and its inputs are watched, TensorFlow does not run the
plain inference function: it builds a forward/backward pair on the first
such call and executes the forward function (`__forward_forward_N`, which
also outputs what the backward pass needs); tape.gradient later runs the
backward function (`__backward_forward_N`).  Calls outside a tape (the
evaluation at the end) execute `__inference_forward_N`.

So each Python-side call of `forward` is exactly one graph-function
execution: the forward function under the tape, the inference function
otherwise.  No planted problem: the sample pins down what agprof must count
as calls of `forward` (the eager loop around it is too short to matter).
"""
import numpy as np
import tensorflow as tf

import oracle

STEPS = 15
EVALS = 4

w = tf.Variable(tf.random.stateless_normal([8, 4], seed=[5, 6]))
b = tf.Variable(tf.zeros([4]))


@tf.function
def forward(x):
    return tf.nn.tanh(tf.matmul(x, w) + b)


def main():
    oracle.track("forward", forward)
    rng = np.random.default_rng(0)
    x = tf.constant(rng.normal(size=(32, 8)).astype(np.float32))
    target = tf.constant(rng.normal(size=(32, 4)).astype(np.float32))
    under_tape = 0
    for step in range(STEPS):
        with tf.GradientTape() as tape:
            oracle.called("forward")
            under_tape += 1
            y = forward(x)
            loss = tf.reduce_mean(tf.square(y - target))
        gw, gb = tape.gradient(loss, [w, b])
        w.assign_sub(0.1 * gw)
        b.assign_sub(0.1 * gb)
    for _ in range(EVALS):
        oracle.called("forward")
        y = forward(x)
    print("loss %.4f" % float(tf.reduce_mean(tf.square(y - target))))
    print("tracing count:", forward.experimental_get_tracing_count())
    oracle.extra("calls_under_tape", under_tape)
    oracle.extra("calls_without_tape", EVALS)


if __name__ == "__main__":
    with oracle.eager_window():
        main()
