"""Gaussian-process regression sampled with NUTS, after TensorFlow
Probability's "Gaussian Process Regression" notebook (synthetic data, few
steps): tfp.mcmc.NoUTurnSampler inside sample_chain, in a tf.function called
once.

The graph is >1,000 nodes of TFP's code run as ~140,000 small kernels, most
of the call's time the executor's own: the shape graph-dispatch-bound looks
for.  But the function runs once: XLA would compile it before that one call
(the issue's NUTS notebook went from 4.5-6.4 s to 28-41 s with
jit_compile=True), and the nodes come from TFP's lines, not the user's.
agprof must not advise jit_compile, nor point into site-packages.

JIT=1 runs it with jit_compile=True.  Prints the first call's time and the
samples' means.
"""
import os
import time

import numpy as np
import tensorflow as tf
import tensorflow_probability as tfp

tfb, tfd, psd_kernels = tfp.bijectors, tfp.distributions, tfp.math.psd_kernels
JIT = os.environ.get("JIT") == "1"

rng = np.random.default_rng(1)
points = rng.uniform(-1.0, 1.0, (30, 1)).astype(np.float64)
observations = (np.sin(3 * np.pi * points[..., 0]) + rng.normal(0, .1, 30)).astype(np.float64)


def build_gp(amplitude, length_scale, observation_noise_variance):
    kernel = psd_kernels.ExponentiatedQuadratic(amplitude, length_scale)
    return tfd.GaussianProcess(kernel=kernel, index_points=points,
                               observation_noise_variance=observation_noise_variance)


gp_joint_model = tfd.JointDistributionNamed({
    'amplitude': tfd.LogNormal(loc=np.float64(0.), scale=np.float64(1.)),
    'length_scale': tfd.LogNormal(loc=np.float64(0.), scale=np.float64(1.)),
    'observation_noise_variance': tfd.LogNormal(loc=np.float64(0.), scale=np.float64(1.)),
    'observations': build_gp,
})


def target_log_prob(amplitude, length_scale, observation_noise_variance):
    return gp_joint_model.log_prob({'amplitude': amplitude, 'length_scale': length_scale,
                                    'observation_noise_variance': observation_noise_variance,
                                    'observations': observations})


sampler = tfp.mcmc.TransformedTransitionKernel(
    tfp.mcmc.NoUTurnSampler(target_log_prob_fn=target_log_prob, step_size=tf.cast(0.1, tf.float64)),
    bijector=[tfb.Softplus(), tfb.Softplus(), tfb.Softplus()])
adaptive_sampler = tfp.mcmc.DualAveragingStepSizeAdaptation(
    inner_kernel=sampler, num_adaptation_steps=8, target_accept_prob=tf.cast(0.75, tf.float64))
initial_state = [tf.cast(v, tf.float64) for v in [1., 1., 1.]]


@tf.function(autograph=False, jit_compile=JIT)
def do_sampling():
    return tfp.mcmc.sample_chain(kernel=adaptive_sampler, current_state=initial_state,
                                 num_results=20, num_burnin_steps=10, trace_fn=None, seed=(0, 1))


t0 = time.perf_counter()
samples = do_sampling()  # agprof: one-call
print("first call %.2f s" % (time.perf_counter() - t0))
print("means", [round(float(np.mean(s)), 3) for s in samples])
