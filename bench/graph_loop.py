"""The graph-heavy workload of bench/kernels.py: a tf.function of about
2,000 small ops (a Python loop unrolled while tracing: STEPS Mul + AddV2
pairs on a 16-element vector) called CALLS times.  Prints the loop's wall
time and its CPU time over all the process's threads (time.process_time:
the executor runs the kernels on its inter-op threads), which other
processes on a busy machine disturb much less than wall time.

usage: graph_loop.py CALLS [--tf-profiler DIR] [--repeat R]
  --tf-profiler DIR: TensorFlow's own profiler (tf.profiler.experimental)
  runs around the timed loops; its stop() (collecting and writing the trace)
  is timed apart.
  --repeat R: time the loop R times and print the least CPU and the least
  wall time: on a loaded machine the least is the best estimate of what
  the loop itself costs (other processes only ever add to it)."""
import sys
import time

import tensorflow as tf

STEPS = 1000


@tf.function
def tiny_steps(x):
    for _ in range(STEPS):
        x = x * 0.999 + 0.001
    return x


def option(name, default):
    return sys.argv[sys.argv.index(name) + 1] if name in sys.argv[:-1] else default


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    prof = option("--tf-profiler", None)
    repeat = int(option("--repeat", "1"))
    x = tf.ones([16])
    for _ in range(5):  # trace, instantiate, warm up
        tiny_steps(x).numpy()
    if prof:
        tf.profiler.experimental.start(prof)
    cpu = wall = float("inf")
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        for _ in range(calls):
            x = tiny_steps(x)
        x.numpy()
        cpu, wall = min(cpu, time.process_time() - c0), min(wall, time.perf_counter() - w0)
    s0 = time.perf_counter()
    if prof:
        tf.profiler.experimental.stop()
    print("loop cpu %.6f wall %.6f calls %d stop %.6f" % (cpu, wall, calls, time.perf_counter() - s0))


if __name__ == "__main__":
    main()
