"""A TF1-style graph-mode training loop: tf.compat.v1.Session, no tf.function.

The graph (two placeholders, one dense layer, a GradientDescentOptimizer) is
built once; the loop then calls Session.run at two lines:

1. the train step, every step: feeds x and y, fetches the train op (a
   target) and the loss (a fetch);
2. an evaluation every EVAL_EVERY steps: feeds x and y, fetches the loss and
   the predictions.

plus the variables' initializer, run once.  Nothing here is a pitfall: the
point is that a graph-mode program has a profile too (where its Session.run
time goes, by line).  The program counts its own Session.run calls per
marked line for the oracle (extra.session_runs: runs, and the feeds,
fetches and targets each run hands to the C API's TF_SessionRun).
"""
import argparse

import numpy as np
import tensorflow as tf

import oracle

tf1 = tf.compat.v1
tf1.disable_eager_execution()

BATCH = 32
EVAL_EVERY = 10


def build():
    x = tf1.placeholder(tf.float32, [None, 8], name="x")
    y = tf1.placeholder(tf.float32, [None, 1], name="y")
    w = tf1.get_variable("w", [8, 1], initializer=tf1.zeros_initializer())
    b = tf1.get_variable("b", [1], initializer=tf1.zeros_initializer())
    pred = tf.matmul(x, w) + b
    loss = tf.reduce_mean(tf.square(pred - y))
    train = tf1.train.GradientDescentOptimizer(0.05).minimize(loss)
    return x, y, pred, loss, train


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=300)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    data_x = rng.normal(size=(BATCH * 4, 8)).astype(np.float32)
    data_y = data_x.sum(axis=1, keepdims=True).astype(np.float32) * 0.25
    x, y, pred, loss, train = build()
    train_runs = eval_runs = 0
    with tf1.Session() as sess:
        sess.run(tf1.global_variables_initializer())  # agprof: session-init
        for step in range(args.steps):
            lo = (step % 4) * BATCH
            feed = {x: data_x[lo:lo + BATCH], y: data_y[lo:lo + BATCH]}
            sess.run([train, loss], feed_dict=feed)  # agprof: session-train
            train_runs += 1
            if step % EVAL_EVERY == 0:
                sess.run([loss, pred], feed_dict=feed)  # agprof: session-eval
                eval_runs += 1
    # Each Session.run: (feeds, fetches, targets) as the C API receives them.
    oracle.extra("session_runs", {
        "session-train": {"runs": train_runs, "feeds": 2, "fetches": 1, "targets": 1},
        "session-eval": {"runs": eval_runs, "feeds": 2, "fetches": 2, "targets": 0},
        "session-init": {"runs": 1, "feeds": 0, "fetches": 0, "targets": 1},
    })


if __name__ == "__main__":
    main()
