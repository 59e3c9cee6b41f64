"""Side effects of a trace from every kind of frame the trace watch's frame
hook decides for (docs/collector.md, "Pitfalls inside traced code"):
the user's code through AutoGraph (print, time, random.random, a global list's
append), a user callback TensorFlow calls back (tf.nest.map_structure), a
tf.function traced inside another's trace, a user method reached through
a library-like helper, and a trace that fails.  tests/integration/
test_watch_hook.py records it with the frame hook (3.10, 3.11), or
sys.monitoring in user frames (3.12, 3.13), and with the profile function on
throughout (AGPROF_TRACE_WATCH=profile): same trace events."""
import random
import sys
import time

import tensorflow as tf

seen = []
tools_seen = []
if len(sys.argv) > 1 and sys.argv[1] == "--take-tools":
    for tool in (2, 3, 4):  # what another profiler may hold: the watch falls back to the profile function
        sys.monitoring.use_tool_id(tool, "other")


def monitor_tools():
    """sys.monitoring's tool names now (3.12+): which watch runs."""
    mon = getattr(sys, "monitoring", None)
    return [mon.get_tool(i) for i in range(6)] if mon else []


def noisy(x):
    print("callback", x.shape)  # agprof: callback-print
    return x * 2.0


@tf.function
def inner(x):
    print("inner traced")  # agprof: inner-print
    return x + 1.0


class Model:
    def step(self, x):
        t = time.time()  # agprof: time
        seen.append(x)  # agprof: append
        tools_seen.extend(monitor_tools())
        return x * float(t > 0)


model = Model()


@tf.function
def outer(x):
    print("outer traced")  # agprof: outer-print
    y = tf.nest.map_structure(noisy, x)
    y = inner(y)
    r = random.random()  # agprof: random
    return model.step(y) + float(r > 0)


@tf.function
def broken(x):
    seen_by = {x: 1}  # agprof: trace-error
    return x + len(seen_by)


for n in (2, 3):
    outer(tf.zeros([n]))
try:
    broken(tf.constant(1.0))
except TypeError as e:  # a tensor is no dict key: the trace fails
    print("trace failed:", type(e).__name__)
print("traces", outer.experimental_get_tracing_count(), inner.experimental_get_tracing_count())
print("tools during traces", sorted(set(str(n) for n in tools_seen)), "after", monitor_tools())
