"""Keras 3: a reinforcement-learning style rollout whose policy cannot be traced as it is.

An actor network picks an action for a small simulated environment (NumPy
physics in a class of the program's own).  The policy function calls the
actor, converts its output with .numpy() and adds NumPy exploration noise:
decorating the policy with @tf.function would crash on .numpy() (a symbolic
tensor has none) and, with .numpy() removed, freeze the noise into the
graph as a constant.  The actor call alone can go in a graph.
An expert expects agprof to find the eager dispatch at the actor call, say
what in the policy cannot be traced, and advise the actor call alone.
"""
import numpy as np
import keras
import tensorflow as tf

keras.utils.set_random_seed(5)
rng = np.random.default_rng(5)
actor = keras.Sequential([keras.Input(shape=(6,)), keras.layers.Dense(32, activation="tanh"),
                          keras.layers.Dense(32, activation="tanh"), keras.layers.Dense(2)])


class Cart:
    """A toy environment: NumPy only."""

    def __init__(self):
        self.state = np.zeros(6, np.float32)

    def step(self, action):
        self.state = (0.95 * self.state + 0.05 * np.tanh(np.repeat(action, 3))).astype(np.float32)
        return self.state, float(-np.square(self.state).sum())


def policy(state):
    out = actor(state[None, :])  # corpus: actor-call
    noise = rng.normal(scale=0.05, size=2)
    return out.numpy()[0] + noise


env = Cart()
state = env.state
total = 0.0
for step in range(400):
    action = policy(state)
    state, reward = env.step(action)
    total += reward
print("return %.3f" % total)
print("state " + " ".join("%.3f" % v for v in state))
