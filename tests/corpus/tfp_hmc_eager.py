"""TensorFlow Probability: Hamiltonian Monte Carlo run by tfp.mcmc.sample_chain without tf.function.

The target is a logistic regression's posterior on synthetic data; the
chain is 100 HMC steps of 4 leapfrog steps, in a function the program calls
eagerly: TFP then runs its while loop in Python, one eager dispatch per op
(TFP's documentation wraps sample_chain in tf.function).
An expert expects eager dispatch found as the hot path at the call, with the
advice to put the sampler in a tf.function.
"""
import numpy as np
import tensorflow as tf
import tensorflow_probability as tfp

tfd = tfp.distributions
tf.random.set_seed(43)
rng = np.random.default_rng(43)
X = rng.normal(size=(150, 3)).astype(np.float32)
labels = (X @ np.array([1.0, -1.0, 0.5]) + rng.logistic(size=150) > 0).astype(np.float32)


def target_log_prob(beta):
    prior = tf.reduce_sum(tfd.Normal(0.0, 2.0).log_prob(beta))
    return prior + tf.reduce_sum(tfd.Bernoulli(logits=tf.linalg.matvec(X, beta)).log_prob(labels))


def run_chain():
    kernel = tfp.mcmc.HamiltonianMonteCarlo(target_log_prob, step_size=0.1, num_leapfrog_steps=4)
    return tfp.mcmc.sample_chain(num_results=80, current_state=tf.zeros(3), kernel=kernel,
                                 num_burnin_steps=20, trace_fn=lambda _, r: r.is_accepted, seed=(5, 6))


samples, accepted = run_chain()  # corpus: chain-call
print("acceptance %.2f" % float(tf.reduce_mean(tf.cast(accepted, tf.float32))))
print("beta " + " ".join("%.1f" % v for v in tf.reduce_mean(samples, axis=0).numpy()))
