"""A random seed passed as a Python list that changes every step: one trace per step.

Stateless random ops take a seed pair, and TensorFlow Probability's samplers
(tfp.mcmc.sample_chain's `seed=`) and tf.random.stateless_* accept it as a
list.  A Python list of ints is a Python value to tf.function: each new pair
is a constant baked into a new graph (retracing by python-value, on seed[0]).

Fix: pass the pair as one tensor, `tf.constant([step, 7], tf.int32)`: the
same values (TensorFlow converts the list to that tensor anyway), one trace.
"""
import tensorflow as tf

import oracle

STEPS = 5


@tf.function
def noisy_step(x, seed):
    return x + tf.random.stateless_normal([4], seed=seed)


def main():
    oracle.track("noisy_step", noisy_step)
    x = tf.zeros([4])
    for step in range(STEPS):
        oracle.called("noisy_step")
        x = noisy_step(x, seed=[step, 7])  # agprof: python-value
    print("x:", [round(float(v), 4) for v in x.numpy()])


if __name__ == "__main__":
    with oracle.eager_window():
        main()
