"""A graph with more kernels than a thread's kernel cache: totals stay exact.

`large_steps` is 4,200 Mul + AddV2 pairs on a 16-element vector (8,402
kernels with its _Arg and _Retval, more than the collector's 8,192 cache
slots per thread: docs/collector.md, "Kernels"), called CALLS times, each
call counted by the program itself (oracle.called).  Every call then
evicts cache slots whose totals go to the ring before the slot names
another kernel: tests/integration/test_kernels.py (large) checks that
every node still ran once per call by the recording's kernel_totals.
"""
import tensorflow as tf

import oracle

STEPS = 4200
CALLS = 12


@tf.function
def large_steps(x):
    for _ in range(STEPS):
        x = x * 0.999 + 0.001
    return x


def main():
    x = tf.ones([16])
    oracle.track("large_steps", large_steps)
    for _ in range(CALLS):
        large_steps(x).numpy()
        oracle.called("large_steps")
    oracle.extra("function_defs", {
        "large_steps": oracle.executed_kernels(large_steps.get_concrete_function(x)),
    })


main()
