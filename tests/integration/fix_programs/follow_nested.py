"""make_step() builds the step function as a closure.  step does its
TensorFlow work eagerly, op by op, and ends with jitter(x): a function
nested in make_step beside it, that draws NumPy noise.  step itself holds
nothing a trace cannot run, so agprof advised @tf.function on step;
decorated so, the program runs but the noise is drawn once, at trace time,
and frozen into the graph: the output changes.  An expert expects agprof to
follow jitter() to make_step's nested def and name the np.random.normal
line.
"""
# expect: names step calls jitter() at follow_nested.py:
# expect: names which calls np.random.normal() at follow_nested.py:
# expect: decorate step
# expect: decorated-differs
import numpy as np
import tensorflow as tf

np.random.seed(7)


def make_step(scale):
    def jitter(y):
        return y + tf.constant(np.random.normal(scale=scale, size=3), tf.float32)

    def step(x):
        for _ in range(12):
            x = tf.sqrt(x * x + 1.0) * 0.9
        return jitter(x)

    return step


def main():
    run = make_step(0.1)
    total = 0.0
    for i in range(150):
        total += float(tf.reduce_sum(run(tf.constant([float(i % 7), 1.0, 2.0]))))
    print("total %.4f" % total)


main()
