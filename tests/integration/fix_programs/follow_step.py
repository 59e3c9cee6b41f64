"""step() does its TensorFlow work eagerly, op by op, and ends with a call
of jitter(), a function of the user's own file follow_helpers.py, which
calls to_host(), which calls .numpy() and adds NumPy noise.  step itself
holds nothing a trace cannot run, so agprof offered @tf.function on step;
decorated so, the program crashes at trace time (a symbolic tensor has no
.numpy()).  An expert expects agprof to follow the calls, name the chain
down to the .numpy() line, and offer no decorator.
"""
# expect: names step calls helpers.jitter() at follow_step.py:
# expect: names which calls to_host() at follow_helpers.py:
# expect: names which calls y.numpy() at follow_helpers.py:
# expect: decorate step
# expect: with follow_helpers.py
# expect: decorated-fails AttributeError
import numpy as np
import tensorflow as tf

import follow_helpers as helpers


def step(x):
    for _ in range(12):
        x = tf.sqrt(x * x + 1.0) * 0.9
    return helpers.jitter(x)


def main():
    total = 0.0
    for i in range(150):
        total += float(np.sum(step(tf.constant([float(i % 7), 1.0, 2.0]))))
    print("total %.4f" % total)


main()
