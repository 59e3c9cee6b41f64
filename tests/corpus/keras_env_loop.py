"""Keras 3: a control loop stepping a simulated environment, the model called eagerly in it.

The loop at module level calls the model on each observation, takes the
action with NumPy (argmax of .numpy()) and steps an environment written in
plain Python and NumPy.  The loop cannot move into a tf.function (the
environment is Python); the model call alone can.
An expert expects agprof to name the model call and advise it alone in a
graph, never the loop.
"""
import numpy as np
import keras
import tensorflow as tf

keras.utils.set_random_seed(11)
model = keras.Sequential([keras.Input(shape=(8,)), keras.layers.Dense(48, activation="relu"),
                          keras.layers.Dense(48, activation="relu"), keras.layers.Dense(4)])


class Grid:
    """A toy environment in NumPy: the observation drifts toward the chosen action's corner."""

    def __init__(self):
        self.obs = np.linspace(-1, 1, 8).astype(np.float32)

    def step(self, action):
        target = np.zeros(8, np.float32)
        target[2 * action:2 * action + 2] = 1.0
        self.obs = (0.9 * self.obs + 0.1 * target).astype(np.float32)
        return self.obs, float(target @ self.obs)


env = Grid()
obs = env.obs
score = 0.0
counts = [0, 0, 0, 0]
for t in range(500):
    logits = model(obs[None, :])  # corpus: model-call
    action = int(np.argmax(logits.numpy()))
    obs, reward = env.step(action)
    counts[action] += 1
    score += reward
print("score %.3f" % score)
print("actions " + " ".join(str(c) for c in counts))
