"""The article's three-layer MLP with a custom training loop.

`train_step` is one tf.function holding the forward pass, the GradientTape,
the gradients and the optimizer update, so each call of it is a single
graph-function execution (`__inference_train_step_N`).  Every batch has the
same shape and dtype, so it is traced exactly once.  No planted problem: this
is the pattern the article recommends.
"""
import numpy as np
import tensorflow as tf

import oracle

BATCH = 64
FEATURES = 20
CLASSES = 3
STEPS = 60

tf.random.set_seed(0)


class MLP(tf.Module):
    def __init__(self):
        super().__init__()
        init = tf.keras.initializers.GlorotUniform(seed=1)
        self.w1 = tf.Variable(init((FEATURES, 64)), name="w1")
        self.b1 = tf.Variable(tf.zeros([64]), name="b1")
        self.w2 = tf.Variable(init((64, 32)), name="w2")
        self.b2 = tf.Variable(tf.zeros([32]), name="b2")
        self.w3 = tf.Variable(init((32, CLASSES)), name="w3")
        self.b3 = tf.Variable(tf.zeros([CLASSES]), name="b3")

    def __call__(self, x):
        h = tf.nn.relu(tf.matmul(x, self.w1) + self.b1)
        h = tf.nn.relu(tf.matmul(h, self.w2) + self.b2)
        return tf.matmul(h, self.w3) + self.b3


model = MLP()
optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


def main():
    oracle.track("train_step", train_step)
    rng = np.random.default_rng(0)
    x_all = rng.normal(size=(STEPS * BATCH, FEATURES)).astype(np.float32)
    y_all = (x_all[:, 0] > 0).astype(np.int32) + (x_all[:, 1] > 1).astype(np.int32)
    x_all = tf.constant(x_all)
    y_all = tf.constant(y_all)
    for step in range(STEPS):
        x = x_all[step * BATCH:(step + 1) * BATCH]
        y = y_all[step * BATCH:(step + 1) * BATCH]
        oracle.called("train_step")
        loss = train_step(x, y)
        if step % 20 == 0:
            print("step %d loss %.4f" % (step, float(loss)))
    print("tracing count:", train_step.experimental_get_tracing_count())


if __name__ == "__main__":
    with oracle.eager_window():
        main()
