"""TensorFlow Probability: Bayesian linear regression by variational inference with tfp.vi.fit_surrogate_posterior.

The model is a JointDistributionNamed (weights, a noise scale, the
observations); the surrogate a factored Normal for the weights and a
LogNormal-like Softplus-transformed Normal for the scale, its parameters
tfp.util.TransformedVariables.  fit_surrogate_posterior runs 300 Adam
steps in one tf.function of its own.
An expert expects no warning.
"""
import numpy as np
import tensorflow as tf
import tensorflow_probability as tfp
import keras

tfd, tfb = tfp.distributions, tfp.bijectors
tf.random.set_seed(41)
rng = np.random.default_rng(41)
X = rng.normal(size=(200, 3)).astype(np.float32)
y_obs = (X @ np.array([1.5, -2.0, 0.5], np.float32) + rng.normal(scale=0.3, size=200)).astype(np.float32)

model = tfd.JointDistributionNamed(dict(
    w=tfd.Sample(tfd.Normal(0.0, 2.0), 3),
    sigma=tfd.HalfNormal(1.0),
    y=lambda w, sigma: tfd.Independent(tfd.Normal(tf.linalg.matvec(X, w), sigma[..., None]), 1)))


def target_log_prob(w, sigma):
    return model.log_prob(w=w, sigma=sigma, y=y_obs)


surrogate = tfd.JointDistributionNamed(dict(
    w=tfd.Independent(tfd.Normal(tf.Variable(tf.zeros(3)),
                                 tfp.util.TransformedVariable(tf.fill([3], 0.5), tfb.Softplus())), 1),
    sigma=tfd.TransformedDistribution(
        tfd.Normal(tf.Variable(-1.0), tfp.util.TransformedVariable(0.5, tfb.Softplus())), tfb.Softplus())))

losses = tfp.vi.fit_surrogate_posterior(target_log_prob, surrogate, optimizer=keras.optimizers.Adam(0.05),  # corpus: fit
                                        num_steps=300, sample_size=8, seed=(1, 2))
draws = surrogate.sample(2000, seed=(3, 4))
print("final loss %.0f" % float(tf.reduce_mean(losses[-20:])))
print("w " + " ".join("%.1f" % v for v in tf.reduce_mean(draws["w"], axis=0).numpy()))
print("sigma %.1f" % float(tf.reduce_mean(draws["sigma"])))
