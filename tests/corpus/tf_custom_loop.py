"""TensorFlow core: a two-layer network as a tf.Module, trained by a custom loop over tf.data batches.

The variables are tf.Variables of the module; the step is a tf.function
with an input_signature (any batch size), computing the loss under a
GradientTape and applying plain SGD with assign_sub.  Three epochs of a
shuffled, batched dataset whose last batch is partial.
An expert expects no warning: one trace serves every batch.
"""
import numpy as np
import tensorflow as tf

tf.random.set_seed(31)
rng = np.random.default_rng(31)
x_all = rng.normal(size=(1000, 8)).astype(np.float32)
y_all = (np.sin(x_all[:, :1]) + 0.5 * x_all[:, 1:2] ** 2).astype(np.float32)


class TwoLayer(tf.Module):
    def __init__(self, width=32):
        super().__init__()
        self.w1 = tf.Variable(tf.random.normal([8, width], stddev=0.3))
        self.b1 = tf.Variable(tf.zeros([width]))
        self.w2 = tf.Variable(tf.random.normal([width, 1], stddev=0.3))
        self.b2 = tf.Variable(tf.zeros([1]))

    def __call__(self, x):
        return tf.matmul(tf.nn.relu(tf.matmul(x, self.w1) + self.b1), self.w2) + self.b2


net = TwoLayer()


@tf.function(input_signature=[tf.TensorSpec([None, 8], tf.float32), tf.TensorSpec([None, 1], tf.float32)])
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(net(x) - y))
    for v, g in zip(net.trainable_variables, tape.gradient(loss, net.trainable_variables)):
        v.assign_sub(0.05 * g)
    return loss


data = tf.data.Dataset.from_tensor_slices((x_all, y_all)).shuffle(1000, seed=2).batch(48)
for epoch in range(6):
    losses = [float(train_step(x, y)) for x, y in data]  # corpus: step
print("last epoch loss %.3f" % np.mean(losses))
print("traces %d" % train_step.experimental_get_tracing_count())
