"""A long tf.function step loop with a tf.py_function in every step: the
high-rate events are graph calls and black-box runs, not eager ops (the
recording's budget, issue 11: past --max-events they become aggregates).

`train_step` is traced once (fixed shapes) and called --steps times; each
call runs `tf.py_function(count_step, ...)` once, so the program's own
counters say how many graph calls and black-box runs there were
(oracle extra.steps, extra.py_function_execs).  The loop itself dispatches no
eager op besides the call, unless --eager: then one eager AddV2 per step too
(the only AddV2 the program dispatches eagerly).

Options:
  --steps N      calls of train_step (default 3000)
  --marker K     print "AGPROF-MARKER <steps done> pid <pid>" (flushed)
                 after every K steps; used by the SIGKILL test
  --sleep S      sleep S seconds after each marker
  --forever      after the steps, keep calling train_step until killed
  --eager        one eager tf.add per step as well

Planted problem: a Python black box on every step (blackbox rule).
"""
import argparse
import os
import time

import tensorflow as tf

import oracle

w = tf.Variable(tf.ones([2, 2]))
py_calls = [0]


def count_step(x):
    py_calls[0] += 1
    return x


@tf.function
def train_step(x):
    y = tf.matmul(x, w)
    y = tf.py_function(count_step, [y], tf.float32)  # agprof: blackbox
    return y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=3000)
    ap.add_argument("--marker", type=int, default=0)
    ap.add_argument("--sleep", type=float, default=0.0)
    ap.add_argument("--forever", action="store_true")
    ap.add_argument("--eager", action="store_true")
    args = ap.parse_args()
    oracle.track("train_step", train_step)
    x = tf.ones([2, 2])
    one = tf.ones([2, 2])
    done = 0
    while done < args.steps or args.forever:
        oracle.called("train_step")
        train_step(x)
        if args.eager:
            tf.add(x, one)
        done += 1
        if args.marker and done % args.marker == 0:
            print("AGPROF-MARKER %d pid %d" % (done, os.getpid()), flush=True)
            if args.sleep:
                time.sleep(args.sleep)
    print("%d steps, %d py_function runs, tracing count %d"
          % (done, py_calls[0], train_step.experimental_get_tracing_count()))
    oracle.extra("steps", done)
    oracle.extra("py_function_execs", py_calls[0])


if __name__ == "__main__":
    main()
