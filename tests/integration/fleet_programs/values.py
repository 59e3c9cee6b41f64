"""Fleet program 3: `scale` takes a Python float, N values (argv[1]): one
trace per value; and `step`, traced once, every run.  record_many.py runs
main() many times in one process, each run with fresh tf.function objects
(functions())."""
import os
import sys

import tensorflow as tf

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "samples"))
import oracle  # noqa: E402


def scale(x, factor):
    return x * factor


def step(x):
    return x + 1.0


def functions():
    """A run's own tf.function objects: each traces as a first run's would."""
    return {"scale": tf.function(scale), "step": tf.function(step)}


def main(n, fns):
    x = tf.ones([4])
    for i in range(n):
        oracle.called("scale")
        x = fns["scale"](x, 0.5 + i)
        oracle.called("step")
        x = fns["step"](x)
    print("tracing count:", fns["scale"].experimental_get_tracing_count())


if __name__ == "__main__":
    fns = functions()
    for name, f in fns.items():
        oracle.track(name, f)
    main(int(sys.argv[1]), fns)
