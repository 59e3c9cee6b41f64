"""Kernel-heavy: a TensorFlow Probability NUTS sampler, as in its GP regression notebook, on synthetic data.

A Bayesian logistic regression (8 features, 200 points); NUTS inside one tf.function (AutoGraph off, as TFP's
examples do), a while loop of many small kernels per leapfrog step: one trace, then hundreds of thousands of
kernel executions."""
import sys
import time

import numpy as np
import tensorflow as tf
import tensorflow_probability as tfp

from common import timed_calls

tfd = tfp.distributions
RESULTS = int(sys.argv[1]) if len(sys.argv) > 1 else 2000


def model():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 8)).astype(np.float32)
    w = rng.standard_normal(8).astype(np.float32)
    y = (x @ w + 0.5 * rng.standard_normal(200) > 0).astype(np.float32)
    x, y = tf.constant(x), tf.constant(y)

    def log_prob(weights):
        prior = tf.reduce_sum(tfd.Normal(0.0, 1.0).log_prob(weights), axis=-1)
        logits = tf.linalg.matvec(x, weights)
        return prior + tf.reduce_sum(tfd.Bernoulli(logits=logits).log_prob(y), axis=-1)
    return log_prob


def main():
    log_prob = model()
    kernel = tfp.mcmc.DualAveragingStepSizeAdaptation(
        tfp.mcmc.NoUTurnSampler(log_prob, step_size=0.1, max_tree_depth=6), num_adaptation_steps=RESULTS // 2)

    @tf.function(autograph=False)
    def sample(n):
        return tfp.mcmc.sample_chain(n, current_state=tf.zeros(8), kernel=kernel, trace_fn=None, seed=(1, 2))

    timed_calls("sample", sample, tf.constant(5))
    t0 = time.perf_counter()
    draws = sample(tf.constant(RESULTS))
    print("sampled %d in %.3f s, mean %.3f" % (RESULTS, time.perf_counter() - t0, float(tf.reduce_mean(draws))))


if __name__ == "__main__":
    main()
