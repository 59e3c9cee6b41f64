"""Thousands of tiny ops in one graph: the executor's per-op cost dominates.

`tiny_steps` applies STEPS elementwise updates to a small vector with a
Python `for _ in range(STEPS)`: the loop runs while tracing, so the graph
gets 2 * STEPS tiny kernels (a Mul and an AddV2 per step), each far cheaper
than the executor's work of scheduling it.  agprof's graph-dispatch-bound
rule names the line that made them and estimates what jit_compile=True
saves.  `tiny_steps_xla` is the same function compiled with XLA: the sample
times both itself (after a warm-up call each), so the test can compare the
estimate with what compiling really saved.

The oracle also holds, per function, the kernels the executor runs per call
according to TensorFlow's own FunctionDef (see tests/integration/test_kernels.py).
"""
import time

import tensorflow as tf

import oracle

STEPS = 600
CALLS = 60


@tf.function
def tiny_steps(x):
    for _ in range(STEPS):
        x = x * 0.999 + 0.001        # agprof: graph-dispatch-bound
    return x


@tf.function(jit_compile=True)
def tiny_steps_xla(x):
    for _ in range(STEPS):
        x = x * 0.999 + 0.001
    return x


# Pause between calls (outside the timed part): a call makes over a thousand
# kernel records in a millisecond, and the pause lets agprof's launcher
# store them all even on a loaded machine, so that the test's counts are
# exact (sustained, a rate like this one makes kernels give way: README).
PAUSE_S = 0.02


def timed(fn, x):
    """Per-call wall times (ns) of CALLS calls after a warm-up call."""
    fn(x).numpy()
    oracle.called(fn.__name__)
    times = []
    for _ in range(CALLS):
        time.sleep(PAUSE_S)
        t0 = time.monotonic_ns()
        fn(x).numpy()
        times.append(time.monotonic_ns() - t0)
        oracle.called(fn.__name__)
    return times


def main():
    x = tf.ones([16])
    oracle.track("tiny_steps", tiny_steps)
    oracle.track("tiny_steps_xla", tiny_steps_xla)
    plain = timed(tiny_steps, x)
    xla = timed(tiny_steps_xla, x)
    oracle.extra("plain_call_ns", sorted(plain)[len(plain) // 2])
    oracle.extra("xla_call_ns", sorted(xla)[len(xla) // 2])
    oracle.extra("timed_calls", CALLS)
    oracle.extra("function_defs", {
        "tiny_steps": oracle.executed_kernels(tiny_steps.get_concrete_function(x)),
    })


main()
