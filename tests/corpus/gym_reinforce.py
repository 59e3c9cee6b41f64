"""Gymnasium: REINFORCE on CartPole, a Keras policy acting through a tf.function and trained once per episode.

The policy's logits for one observation come from a tf.function with an
input signature; the action is sampled in NumPy; after each episode a
tf.function step with an input signature of any length ([None, 4]) takes
the whole episode's observations, actions and discounted returns.
An expert expects no warning: the environment's Python loop is the
program's work, and neither function traces again when episode lengths
change.
"""
import gymnasium as gym
import numpy as np
import keras
import tensorflow as tf

keras.utils.set_random_seed(67)
rng = np.random.default_rng(67)
policy = keras.Sequential([keras.Input(shape=(4,)), keras.layers.Dense(32, activation="tanh"), keras.layers.Dense(2)])
optimizer = keras.optimizers.Adam(1e-2)


@tf.function(input_signature=[tf.TensorSpec([1, 4], tf.float32)])
def logits_of(obs):
    return policy(obs)[0]


@tf.function(input_signature=[tf.TensorSpec([None, 4], tf.float32), tf.TensorSpec([None], tf.int32),
                              tf.TensorSpec([None], tf.float32)])
def train_episode(obs, actions, returns):
    with tf.GradientTape() as tape:
        logp = tf.nn.log_softmax(policy(obs, training=True))
        chosen = tf.gather(logp, actions, batch_dims=1)
        loss = -tf.reduce_mean(chosen * returns)
    optimizer.apply_gradients(zip(tape.gradient(loss, policy.trainable_variables), policy.trainable_variables))
    return loss


env = gym.make("CartPole-v1")
lengths = []
for episode in range(12):
    obs, _ = env.reset(seed=100 + episode)
    seen, acts, rewards = [], [], []
    for t in range(300):
        logits = logits_of(tf.constant(obs[None, :], tf.float32)).numpy()  # corpus: act
        p = np.exp(logits - logits.max())
        action = int(rng.choice(2, p=p / p.sum()))
        seen.append(obs)
        acts.append(action)
        obs, reward, done, truncated, _ = env.step(action)
        rewards.append(reward)
        if done or truncated:
            break
    returns, g = np.zeros(len(rewards)), 0.0
    for i in reversed(range(len(rewards))):
        g = rewards[i] + 0.99 * g
        returns[i] = g
    returns = ((returns - returns.mean()) / (returns.std() + 1e-6)).astype(np.float32)
    train_episode(np.array(seen, np.float32), np.array(acts, np.int32), returns)
    lengths.append(len(rewards))
print("episode lengths " + " ".join(str(n) for n in lengths))
