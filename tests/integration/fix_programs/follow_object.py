"""step() does its TensorFlow work eagerly, op by op, and ends with
noise.perturb(x): a method of an instance of the user's own Explorer class
(noise = Explorer(0.1) at the top of the file) that draws NumPy noise.  step
itself holds nothing a trace cannot run, so agprof advised @tf.function on
step; decorated so, the program runs but the noise is drawn once, at trace
time, and frozen into the graph: every step adds the same noise and the
output changes.  An expert expects agprof to follow noise.perturb() into
Explorer and name the np.random.normal line.
"""
# expect: names step calls noise.perturb() at follow_object.py:
# expect: names which calls np.random.normal() at follow_object.py:
# expect: decorate step
# expect: decorated-differs
import numpy as np
import tensorflow as tf

np.random.seed(5)


class Explorer:
    def __init__(self, scale):
        self.scale = scale

    def perturb(self, y):
        return y + tf.constant(np.random.normal(scale=self.scale, size=3), tf.float32)


noise = Explorer(0.1)


def step(x):
    for _ in range(12):
        x = tf.sqrt(x * x + 1.0) * 0.9
    return noise.perturb(x)


def main():
    total = 0.0
    for i in range(150):
        total += float(tf.reduce_sum(step(tf.constant([float(i % 7), 1.0, 2.0]))))
    print("total %.4f" % total)


main()
