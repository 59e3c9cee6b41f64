"""Keras 3: a small GAN on 2-D points, a Model subclass whose train_step updates the discriminator then the generator.

Each network has its own optimizer; the step draws its latent noise with a
keras.random.SeedGenerator and tracks both losses in Mean metrics.  Trained
with fit on a tf.data pipeline of 16 full batches an epoch.
An expert expects no warning: Keras traces the step once and runs it as a
graph on every batch.
"""
import numpy as np
import keras
import tensorflow as tf

keras.utils.set_random_seed(21)
rng = np.random.default_rng(21)
LATENT = 8
centres = ((1.0, 1.0), (-1.0, 1.0), (0.0, -1.0), (1.0, -1.0))
points = np.concatenate([rng.normal(loc=c, scale=0.1, size=(256, 2)) for c in centres]).astype(np.float32)
rng.shuffle(points)


class PointGAN(keras.Model):
    def __init__(self):
        super().__init__()
        self.generator = keras.Sequential([keras.Input(shape=(LATENT,)), keras.layers.Dense(32, activation="relu"),
                                           keras.layers.Dense(32, activation="relu"), keras.layers.Dense(2)])
        self.discriminator = keras.Sequential([keras.Input(shape=(2,)), keras.layers.Dense(32, activation="relu"),
                                               keras.layers.Dense(1)])
        self.noise_seed = keras.random.SeedGenerator(3)
        self.d_tracker = keras.metrics.Mean(name="d_loss")
        self.g_tracker = keras.metrics.Mean(name="g_loss")

    def compile(self, d_optimizer, g_optimizer):
        super().compile()
        self.d_optimizer, self.g_optimizer = d_optimizer, g_optimizer
        self.bce = keras.losses.BinaryCrossentropy(from_logits=True)

    @property
    def metrics(self):
        return [self.d_tracker, self.g_tracker]

    def train_step(self, real):
        n = tf.shape(real)[0]
        fake = self.generator(keras.random.normal((n, LATENT), seed=self.noise_seed))
        with tf.GradientTape() as tape:
            on_real = self.discriminator(real, training=True)
            on_fake = self.discriminator(fake, training=True)
            d_loss = self.bce(tf.ones_like(on_real), on_real) + self.bce(tf.zeros_like(on_fake), on_fake)
        weights = self.discriminator.trainable_weights
        self.d_optimizer.apply_gradients(zip(tape.gradient(d_loss, weights), weights))
        with tf.GradientTape() as tape:
            judged = self.discriminator(self.generator(keras.random.normal((n, LATENT), seed=self.noise_seed),
                                                       training=True))
            g_loss = self.bce(tf.ones_like(judged), judged)
        weights = self.generator.trainable_weights
        self.g_optimizer.apply_gradients(zip(tape.gradient(g_loss, weights), weights))
        self.d_tracker.update_state(d_loss)
        self.g_tracker.update_state(g_loss)
        return {m.name: m.result() for m in self.metrics}


gan = PointGAN()
gan.compile(keras.optimizers.Adam(2e-3, beta_1=0.5), keras.optimizers.Adam(2e-3, beta_1=0.5))
data = tf.data.Dataset.from_tensor_slices(points).batch(64).prefetch(2)
history = gan.fit(data, epochs=12, verbose=0)  # corpus: fit
print("d_loss %.2f g_loss %.2f" % (history.history["d_loss"][-1], history.history["g_loss"][-1]))
samples = gan.generator(keras.random.normal((200, LATENT), seed=9)).numpy()
print("sample spread %.1f" % float(samples.std()))
