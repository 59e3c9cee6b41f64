"""Eager ops reached through the frames each CPython puts between the
user's line and TensorFlow (tests/pythons/test_frames.py).

- `x % 2.0`: C calls Tensor.__mod__ (3.12 pushes its interpreter
  trampoline, file "<shim>", below it);
- `framelib.Scaler(x)`: a library class's __init__ (3.13 pushes its
  __init__ clean-up frame, file "__init__");
- `Acc(x)`: the user's own class, the same way.
Every eager op of the loop belongs at a marked line of this file.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "site-packages"))

import tensorflow as tf  # noqa: E402

import framelib  # noqa: E402

STEPS = 1500


class Acc:
    def __init__(self, x):
        self.v = x + 1.0               # frames: user-init


def main():
    x = tf.constant(3.0)               # frames: constant
    total = 0.0
    for _ in range(STEPS):
        n = x % 2.0 + x // 2.0         # frames: operator
        s = framelib.Scaler(x)         # frames: library-init
        a = Acc(x)                     # frames: call-user-init
        total += 1.0
    print("steps %d, last %.1f %.1f %.1f" % (total, float(n), float(s.y), float(a.v)))


if __name__ == "__main__":
    main()
