"""TensorFlow Probability: NUTS on a small Bayesian linear regression (clean).

The joint distribution is written with tfd.JointDistributionSequential,
its log-density pinned to synthetic data, and tfp.mcmc.sample_chain runs
the No-U-Turn sampler with step-size adaptation inside one tf.function,
called once: the documented way to run a sampler.  An expert expects no
advice here (in particular no jit_compile for a function called once).
"""
import numpy as np
import tensorflow as tf
import tensorflow_probability as tfp

tfd = tfp.distributions
rng = np.random.default_rng(2)
x = rng.uniform(-2, 2, size=60).astype("float32")
y = (1.5 * x - 0.5 + 0.3 * rng.normal(size=60)).astype("float32")

model = tfd.JointDistributionSequential([
    tfd.Normal(0.0, 2.0),                       # slope
    tfd.Normal(0.0, 2.0),                       # intercept
    lambda b, a: tfd.Independent(tfd.Normal(a[..., None] * x + b[..., None], 0.3),
                                 reinterpreted_batch_ndims=1),
])


def target_log_prob(slope, intercept):
    return model.log_prob([slope, intercept, y])


@tf.function(autograph=False)
def run_chain():
    nuts = tfp.mcmc.NoUTurnSampler(target_log_prob, step_size=0.1, max_tree_depth=5)
    kernel = tfp.mcmc.DualAveragingStepSizeAdaptation(nuts, num_adaptation_steps=80)
    return tfp.mcmc.sample_chain(
        num_results=150, num_burnin_steps=100,
        current_state=[tf.zeros([2]), tf.zeros([2])],
        kernel=kernel, trace_fn=None, seed=[4, 2])


slope, intercept = run_chain()  # corpus: sample
print("slope %.1f intercept %.1f" % (float(tf.reduce_mean(slope)), float(tf.reduce_mean(intercept))))
