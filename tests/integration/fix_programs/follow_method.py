"""Agent.act() does its TensorFlow work eagerly, op by op, and ends with
self.explore(), a method of the same class that draws NumPy noise.  act
itself holds nothing a trace cannot run, so agprof advised @tf.function on
act; decorated so, the program runs but the noise is drawn once, at trace
time, and frozen into the graph: every step adds the same noise and the
output changes.  An expert expects agprof to follow self.explore() and name
the np.random.normal line.
"""
# expect: names act calls self.explore() at follow_method.py:
# expect: names which calls np.random.normal() at follow_method.py:
# expect: decorate act
# expect: decorated-differs
import numpy as np
import tensorflow as tf

np.random.seed(3)


class Agent:
    def __init__(self):
        self.scale = tf.constant(0.9)

    def explore(self, y):
        return y + tf.constant(np.random.normal(scale=0.1, size=3), tf.float32)

    def act(self, x):
        for _ in range(12):
            x = tf.sqrt(x * x + 1.0) * self.scale
        return self.explore(x)


def main():
    agent = Agent()
    total = 0.0
    for i in range(150):
        total += float(tf.reduce_sum(agent.act(tf.constant([float(i % 7), 1.0, 2.0]))))
    print("total %.4f" % total)


main()
