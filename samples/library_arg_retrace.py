"""A library (samples/fakelib/site-packages/minilosses) passes an argument
of its internal tf.function penalty() as a tensor on one call and as Python
values (False, 2) on others: penalty() retraces, by python-value, inside
the library.  The user calls only minilosses.loss(), always with tensors, at
the line marked with an agprof comment.

An expert says: the library does it (its line that passes the value, not
its decorator helper), the user's line led there, and nothing in the user's
code fixes it: info, with the library line named for a bug report; no edit.

With the argument `keyword`, the user's own line passes weight by name to
minilosses.scaled(), which passes it on unchanged: a tensor, then False,
then 2.  The user's call reaches the argument, so the finding stays a
warning and the advice is to pass it as a tensor.  With `positional`, the
same call passes weight by position (scaled's third parameter): the same.
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "fakelib", "site-packages"))

import tensorflow as tf  # noqa: E402

import oracle  # noqa: E402
import minilosses  # noqa: E402
from minilosses import losses  # noqa: E402

STEPS = 20


def main():
    y_true = tf.random.stateless_normal([64], seed=[1, 2])
    w = tf.Variable(tf.zeros([64]))
    weight = tf.constant(0.5)
    oracle.track("penalty", losses.penalty.__wrapped__)
    total = 0.0
    keyword, positional = sys.argv[1:] == ["keyword"], sys.argv[1:] == ["positional"]
    for step in range(STEPS):
        oracle.called("penalty", 1 if keyword or positional else 3)
        given = (weight, False, 2)[step % 3]
        if keyword:
            value = minilosses.scaled(y_true, w * 1.0, weight=given)  # agprof: user-keyword
        elif positional:
            value = minilosses.scaled(y_true, w * 1.0, given)  # agprof: user-positional
        else:
            value = minilosses.loss(y_true, w * 1.0, weight)  # agprof: library-arg
        w.assign_add(0.01 * tf.ones([64]))
        total += float(value)
    print("total %.4f" % total)


if __name__ == "__main__":
    with oracle.eager_window():
        main()
