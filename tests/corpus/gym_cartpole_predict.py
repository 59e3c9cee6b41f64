"""Gymnasium: CartPole episodes acted by a Keras Q-network called through model.predict on each single observation.

A small Q-network picks the greedy action with some epsilon exploration;
each step calls model.predict on one observation.  Keras documents predict
for large inputs: every call builds a data pipeline and iterator for one
row.  Episodes are cut at 20 steps.  Then a short DQN-style fit on the collected transitions.
An expert expects the predict call found at its line, with the advice to
call the model directly (or predict_on_batch).
"""
import gymnasium as gym
import numpy as np
import keras

keras.utils.set_random_seed(61)
rng = np.random.default_rng(61)
q_net = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(32, activation="relu"),
                          keras.layers.Dense(32, activation="relu"), keras.layers.Dense(2)])
q_net.compile(optimizer=keras.optimizers.Adam(1e-3), loss="mse")
env = gym.make("CartPole-v1")
transitions, lengths = [], []
for episode in range(2):
    obs, _ = env.reset(seed=episode)
    for t in range(20):
        q = q_net.predict(obs[None, :], verbose=0)  # corpus: predict
        action = int(rng.integers(2)) if rng.random() < 0.2 else int(np.argmax(q[0]))
        nxt, reward, done, truncated, _ = env.step(action)
        transitions.append((obs, action, reward, nxt, done))
        obs = nxt
        if done or truncated:
            break
    lengths.append(t + 1)
obs_b = np.array([t[0] for t in transitions], np.float32)
target = q_net.predict(obs_b, verbose=0)
nxt_q = q_net.predict(np.array([t[3] for t in transitions], np.float32), verbose=0).max(axis=1)
for i, (_, a, r, _, d) in enumerate(transitions):
    target[i, a] = r + (0.0 if d else 0.9 * nxt_q[i])
q_net.fit(obs_b, target, epochs=2, batch_size=32, verbose=0)
print("episode lengths " + " ".join(str(n) for n in lengths))
