"""TensorFlow Probability: a tf.function built inside the scoring loop (planted).

A mixture model's log-likelihood scored over chunks of data; the user
wraps the scoring function in tf.function inside the loop, so each chunk
gets a new tf.function object with an empty cache and traces again.  The
fix is to build it once, above the loop; the sums are the same.
"""
import numpy as np
import tensorflow as tf
import tensorflow_probability as tfp

tfd = tfp.distributions
rng = np.random.default_rng(21)
data = np.concatenate([rng.normal(-2, 0.5, 600), rng.normal(1.5, 1.0, 600)]).astype("float32")
mixture = tfd.MixtureSameFamily(
    mixture_distribution=tfd.Categorical(probs=[0.5, 0.5]),
    components_distribution=tfd.Normal(loc=[-2.0, 1.5], scale=[0.5, 1.0]))


def chunk_log_likelihood(chunk):
    return tf.reduce_sum(mixture.log_prob(chunk))


total = 0.0
for start in range(0, len(data), 100):
    score = tf.function(chunk_log_likelihood)  # corpus: new-function
    total += float(score(tf.constant(data[start:start + 100])))
print("log likelihood %.1f" % total)
