"""Child processes that run TensorFlow: multiprocessing with the fork start
method.

The parent imports TensorFlow but does not initialize its runtime (no op run)
before forking: TensorFlow's thread pools do not survive fork(), so a child
forked from a parent that already ran ops can hang.  Each of the WORKERS
children then runs its own eager loop (OPS_PER_CHILD ops) and reports its pid
and its eager op count, measured by the TensorFlow profiler inside the child,
back to the parent.  After the children finish, the parent runs a few eager
ops of its own.

agprof must follow the forks: every child pid must appear in `processes`,
with its eager ops recorded under that pid.  No planted problem.
"""
import multiprocessing as mp
import os

import tensorflow as tf

import oracle

WORKERS = 3
OPS_PER_CHILD = 2000


def child(index):
    x = tf.constant([1.0, 2.0])
    y = tf.constant([0.5, 0.5])
    with oracle.eager_window() as window:
        for _ in range(OPS_PER_CHILD // 2):  # 2 ops per iteration
            x = tf.multiply(tf.add(x, y), y)
    return {"pid": os.getpid(), "index": index,
            "eager_ops": window.eager_ops, "eager_window_ns": window.window_ns,
            "sum": float(tf.reduce_sum(x))}


def main():
    ctx = mp.get_context("fork")
    pool = ctx.Pool(WORKERS)
    results = pool.map(child, range(WORKERS))
    pool.close()   # let the workers exit normally (Pool.__exit__ would
    pool.join()    # terminate them with SIGTERM)
    for r in results:
        print("child %d (pid %d) sum %.4f" % (r["index"], r["pid"], r["sum"]))
    oracle.extra("children", results)
    z = tf.reduce_sum(tf.constant([1.0, 2.0, 3.0]))
    print("parent", os.getpid(), float(z))


if __name__ == "__main__":
    main()
