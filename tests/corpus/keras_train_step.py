"""Keras 3: a Model subclass overriding train_step, trained with fit (clean).

Keras' "customizing what happens in fit()" pattern with the TensorFlow
backend: train_step computes the loss under a GradientTape and applies the
gradients itself; fit compiles it into its own step function once.
"""
import numpy as np
import tensorflow as tf
import keras


class TwoTower(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(24, activation="relu")
        self.out = keras.layers.Dense(1)
        self.loss_tracker = keras.metrics.Mean(name="loss")

    def call(self, inputs):
        return self.out(self.hidden(inputs))

    def train_step(self, data):
        xb, yb = data
        with tf.GradientTape() as tape:
            pred = self(xb, training=True)
            loss = tf.reduce_mean(tf.square(pred - yb))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        return {"loss": self.loss_tracker.result()}

    @property
    def metrics(self):
        return [self.loss_tracker]


keras.utils.set_random_seed(5)
rng = np.random.default_rng(5)
x = rng.uniform(-1, 1, size=(768, 6)).astype("float32")
y = np.sin(x.sum(axis=1, keepdims=True)).astype("float32")
model = TwoTower()
model.compile(optimizer=keras.optimizers.Adam(5e-3))
history = model.fit(x, y, batch_size=32, epochs=3, verbose=0)  # corpus: fit
print("losses " + " ".join("%.3f" % v for v in history.history["loss"]))
