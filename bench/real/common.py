"""What the real workloads share: a timer around a function's first and second call, printed in one line per
function for bench/real_overhead.py ("first-call NAME FIRST SECOND at START END cpu FIRST_CPU SECOND_CPU": seconds
of the first call, which traces, and of the second, which does not; the first call's start and end on
CLOCK_MONOTONIC in nanoseconds, the collector's clock, so that the traces recorded inside it can be picked out; and
the two calls' CPU seconds on the calling thread).  first - second is the program's own measure of its tracing."""
import time


def timed_calls(name, fn, *args):
    """Call fn(*args) twice, print the two times; the result of the second call."""
    m0, t0, c0 = time.monotonic_ns(), time.perf_counter(), time.thread_time()
    fn(*args)
    m1, t1, c1 = time.monotonic_ns(), time.perf_counter(), time.thread_time()
    out = fn(*args)
    t2, c2 = time.perf_counter(), time.thread_time()
    print("first-call %s %.6f %.6f at %d %d cpu %.6f %.6f" % (name, t1 - t0, t2 - t1, m0, m1, c1 - c0, c2 - c1),
          flush=True)
    return out
