"""One worker of a 2-worker MultiWorkerMirroredStrategy job (custom loop).

Run one process per task with TF_CONFIG set (tests/integration/
test_multiworker.py picks two free loopback ports and starts both):

    TF_CONFIG='{"cluster":{"worker":["127.0.0.1:P0","127.0.0.1:P1"]},
                "task":{"type":"worker","index":0}}' python samples/multiworker.py

`train_step` runs strategy.run() inside one tf.function: each call is one
graph-function execution holding the gradient all-reduce, so every step is
a barrier across the workers.  Planted problems, one worker only, chosen by
the environment:
  MW_STRAGGLER=I  task I sleeps MW_SLEEP_MS before every other step  # agprof: straggler
  MW_RETRACE=I    task I calls `train_step` once with a Python float
                  learning rate that changes, retracing on that rank only
Without TF_CONFIG it runs as a single worker.
"""
import json
import os
import time

import numpy as np
import tensorflow as tf

import oracle

STEPS = int(os.environ.get("MW_STEPS", "8"))
BATCH = 16
FEATURES = 8

task = json.loads(os.environ.get("TF_CONFIG", "{}")).get("task", {})
index = int(task.get("index", 0))
straggler = int(os.environ.get("MW_STRAGGLER", "-1"))
retracer = int(os.environ.get("MW_RETRACE", "-1"))
sleep_s = int(os.environ.get("MW_SLEEP_MS", "300")) / 1000.0

strategy = tf.distribute.MultiWorkerMirroredStrategy()
with strategy.scope():
    w = tf.Variable(tf.zeros([FEATURES, 1]), name="w")
    b = tf.Variable(tf.zeros([1]), name="b")


@tf.function
def train_step(x, y, lr):
    def step_fn(x, y):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(tf.matmul(x, w) + b - y))
        gw, gb = tape.gradient(loss, [w, b])
        ctx = tf.distribute.get_replica_context()
        gw, gb = ctx.all_reduce(tf.distribute.ReduceOp.MEAN, [gw, gb])
        w.assign_sub(lr * gw)
        b.assign_sub(lr * gb)
        return loss
    return strategy.run(step_fn, args=(x, y))


def main():
    oracle.track("train_step", train_step)
    rng = np.random.default_rng(index)
    x = tf.constant(rng.normal(size=(BATCH, FEATURES)).astype(np.float32))
    y = tf.constant(rng.normal(size=(BATCH, 1)).astype(np.float32))
    lr = tf.constant(0.1)
    for step in range(STEPS):
        if index == straggler and step % 2 == 1:
            time.sleep(sleep_s)  # agprof: straggler
        # a Python float is part of the trace key: a new value retraces
        rate = 0.05 if (index == retracer and step == STEPS // 2) else lr  # agprof: rank-retrace
        oracle.called("train_step")
        loss = train_step(x, y, rate)
    oracle.extra("task_index", index)
    oracle.extra("steps", STEPS)
    print("task %d loss %.4f tracing count: %d" % (index, float(loss), train_step.experimental_get_tracing_count()))


if __name__ == "__main__":
    main()
