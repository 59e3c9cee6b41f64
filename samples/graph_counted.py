"""A small graph called often enough to be sampled: kernel totals are exact.

`small_steps` is 20 Mul + AddV2 pairs on a 16-element vector (a Python
loop unrolled while tracing), called at least CALLS times and for at least
SECONDS after the first, each call counted by the program itself (oracle.called).  Under
`agprof run`'s default (--kernels=sampled) the collector records the
kernels of a few calls one by one (each graph function's first 5 calls on a
thread, then one whenever 256 times the last sampled call's duration, at
most doubling from one sample to the next, has passed: SECONDS is long
enough for some of those) and counts every execution of every kernel:
tests/integration/test_kernels.py checks both against the program's count
and the FunctionDef.

usage: graph_counted.py [--large | --long]
  --large: 4,200 pairs (8,402 kernels with its _Arg and _Retval, more than
  the collector's 8,192 kernel cache slots per thread: docs/collector.md,
  "Kernels"), called 12 times: every call evicts cache slots, whose totals
  go to the ring before the slot names another kernel (test_kernels.py large).
  --long: small_steps called 10 times, then `long_loop`, a tf.while_loop of
  LOOP iterations (a Mul and two AddV2 a turn, with the loop's own kernels:
  some 400,000 kernels a call, an MCMC sampler's shape), called 3 times:
  each call's detail is cut past 65,536 kernels on a thread (test_kernels.py
  cut).
"""
import sys
import time

import tensorflow as tf

import oracle

STEPS, CALLS, SECONDS = (4200, 12, 0.0) if "--large" in sys.argv[1:] else (20, 130, 1.0)
LONG = "--long" in sys.argv[1:]
if LONG:
    CALLS, SECONDS = 10, 0.0
LOOP, LONG_CALLS = 30000, 3


@tf.function
def small_steps(x):
    for _ in range(STEPS):
        x = x * 0.999 + 0.001
    return x


@tf.function
def long_loop(x):
    return tf.while_loop(lambda i, x: i < LOOP, lambda i, x: (i + 1, x * 0.999 + 0.001), (tf.constant(0), x))[1]


def main():
    x = tf.ones([16])
    oracle.track("small_steps", small_steps)
    small_steps(x).numpy()  # traces it: SECONDS count from here
    oracle.called("small_steps")
    n, t0 = 1, time.perf_counter()
    while n < CALLS or time.perf_counter() - t0 < SECONDS:
        small_steps(x).numpy()
        oracle.called("small_steps")
        n += 1
    if LONG:
        oracle.track("long_loop", long_loop)
        for _ in range(LONG_CALLS):
            long_loop(x).numpy()
            oracle.called("long_loop")
        oracle.extra("loop", LOOP)
    oracle.extra("function_defs", {
        "small_steps": oracle.executed_kernels(small_steps.get_concrete_function(x)),
    })


main()
