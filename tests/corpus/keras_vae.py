"""Keras 3: a variational autoencoder on 16-dimensional synthetic data, a Model subclass with its own train_step.

The encoder gives a mean and a log-variance, a sampling layer draws the code
with the reparameterisation trick (keras.random.normal with a SeedGenerator),
the decoder reconstructs; the loss is the reconstruction error plus the KL
term.  Trained with fit on NumPy arrays, then the encoder maps a few points
once with predict.
An expert expects no warning.
"""
import numpy as np
import keras
import tensorflow as tf

keras.utils.set_random_seed(4)
rng = np.random.default_rng(4)
codes = rng.normal(size=(1536, 2)).astype(np.float32)
mixing = rng.normal(size=(2, 16)).astype(np.float32)
x_train = np.tanh(codes @ mixing) + rng.normal(scale=0.05, size=(1536, 16)).astype(np.float32)


class Sampling(keras.layers.Layer):
    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self.seed = keras.random.SeedGenerator(8)

    def call(self, mean, log_var):
        eps = keras.random.normal(tf.shape(mean), seed=self.seed)
        return mean + tf.exp(0.5 * log_var) * eps


inputs = keras.Input(shape=(16,))
h = keras.layers.Dense(64, activation="relu")(inputs)
mean, log_var = keras.layers.Dense(2)(h), keras.layers.Dense(2)(h)
encoder = keras.Model(inputs, [mean, log_var, Sampling()(mean, log_var)])
decoder = keras.Sequential([keras.Input(shape=(2,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(16)])


class VAE(keras.Model):
    def __init__(self, encoder, decoder):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder
        self.loss_tracker = keras.metrics.Mean(name="loss")
        self.kl_tracker = keras.metrics.Mean(name="kl")

    @property
    def metrics(self):
        return [self.loss_tracker, self.kl_tracker]

    def train_step(self, x):
        with tf.GradientTape() as tape:
            m, lv, z = self.encoder(x, training=True)
            recon = tf.reduce_mean(tf.reduce_sum(tf.square(x - self.decoder(z, training=True)), axis=1))
            kl = tf.reduce_mean(-0.5 * tf.reduce_sum(1 + lv - tf.square(m) - tf.exp(lv), axis=1))
            loss = recon + kl
        grads = tape.gradient(loss, self.trainable_weights)
        self.optimizer.apply_gradients(zip(grads, self.trainable_weights))
        self.loss_tracker.update_state(loss)
        self.kl_tracker.update_state(kl)
        return {"loss": self.loss_tracker.result(), "kl": self.kl_tracker.result()}


vae = VAE(encoder, decoder)
vae.compile(optimizer=keras.optimizers.Adam(3e-3))
history = vae.fit(x_train, epochs=10, batch_size=64, verbose=0)  # corpus: fit
print("loss %.2f kl %.2f" % (history.history["loss"][-1], history.history["kl"][-1]))
m, _, _ = encoder.predict(x_train[:256], verbose=0)
print("code spread %.1f" % float(m.std()))
