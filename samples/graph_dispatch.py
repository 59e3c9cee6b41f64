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


def timed_call(fn, x):
    """One call's wall time (ns), after the pause."""
    time.sleep(PAUSE_S)
    t0 = time.monotonic_ns()
    fn(x).numpy()
    elapsed = time.monotonic_ns() - t0
    oracle.called(fn.__name__)
    return elapsed


def timed(fns, x):
    """Per-call wall times (ns) of CALLS calls of each of fns after a warm-up call of each, the functions
    alternating call by call: a load that comes and goes on the machine falls on both alike (timed one loop
    after the other, a full CI run once left the two medians 11 us apart; they are 500-600 us apart)."""
    for fn in fns:
        fn(x).numpy()
        oracle.called(fn.__name__)
    times = [[] for _ in fns]
    for _ in range(CALLS):
        for fn, t in zip(fns, times):
            t.append(timed_call(fn, x))
    return times


def main():
    x = tf.ones([16])
    oracle.track("tiny_steps", tiny_steps)
    oracle.track("tiny_steps_xla", tiny_steps_xla)
    plain, xla = timed([tiny_steps, tiny_steps_xla], x)
    oracle.extra("plain_call_ns", sorted(plain)[len(plain) // 2])
    oracle.extra("xla_call_ns", sorted(xla)[len(xla) // 2])
    oracle.extra("timed_calls", CALLS)
    oracle.extra("function_defs", {
        "tiny_steps": oracle.executed_kernels(tiny_steps.get_concrete_function(x)),
    })


main()
