"""TensorFlow Probability: a distribution fit by maximum likelihood (clean).

A Gamma distribution with trainable parameters (tfp.util.TransformedVariable
keeps them positive) fit to synthetic data with tfp.math.minimize and a
Keras Adam optimizer; minimize compiles its optimisation loop once.
"""
import numpy as np
import tensorflow as tf
import tensorflow_probability as tfp
import keras

tfd = tfp.distributions
rng = np.random.default_rng(9)
data = rng.gamma(shape=3.0, scale=0.5, size=400).astype("float32")

concentration = tfp.util.TransformedVariable(1.0, tfp.bijectors.Softplus(), name="concentration")
rate = tfp.util.TransformedVariable(1.0, tfp.bijectors.Softplus(), name="rate")
dist = tfd.Gamma(concentration=concentration, rate=rate)


def neg_log_likelihood():
    return -tf.reduce_mean(dist.log_prob(data))


losses = tfp.math.minimize(neg_log_likelihood, num_steps=300,  # corpus: minimize
                           optimizer=keras.optimizers.Adam(learning_rate=0.05))
print("final nll %.3f" % float(losses[-1]))
print("concentration %.2f rate %.2f" % (float(tf.convert_to_tensor(concentration)),
                                        float(tf.convert_to_tensor(rate))))
