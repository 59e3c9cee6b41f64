"""Keras 3 with a hand-written training loop: GradientTape in a tf.function (clean).

The pattern of Keras' "writing a training loop from scratch" guide, on
synthetic regression data: a model, an optimizer, a loss, a metric, and a
train step compiled once with tf.function over a batched tf.data.Dataset.
The optimizer creates its slot variables on the first call, so TensorFlow
traces the step a second time then: ordinary, once per program.
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(11)
rng = np.random.default_rng(11)
x = rng.normal(size=(1024, 8)).astype("float32")
w = rng.normal(size=(8, 1)).astype("float32")
y = x @ w + 0.1 * rng.normal(size=(1024, 1)).astype("float32")

model = keras.Sequential([keras.Input(shape=(8,)), keras.layers.Dense(16, activation="tanh"),
                          keras.layers.Dense(1)])
optimizer = keras.optimizers.SGD(learning_rate=0.05)
loss_fn = keras.losses.MeanSquaredError()
train_mae = keras.metrics.MeanAbsoluteError()
dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1024, seed=11).batch(64)


@tf.function
def train_step(xb, yb):
    with tf.GradientTape() as tape:
        pred = model(xb, training=True)
        loss = loss_fn(yb, pred)
    grads = tape.gradient(loss, model.trainable_weights)
    optimizer.apply_gradients(zip(grads, model.trainable_weights))
    train_mae.update_state(yb, pred)
    return loss


for epoch in range(4):
    for xb, yb in dataset:
        loss = train_step(xb, yb)  # corpus: step
    print("epoch %d loss %.3f mae %.3f" % (epoch, float(loss), float(train_mae.result())))
    train_mae.reset_state()
