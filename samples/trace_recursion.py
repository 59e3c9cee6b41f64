"""A trace that raises deep inside itself, then ordinary traces after it.

TensorFlow's tf.function guide shows a tf.function calling itself on a
tensor: tracing follows the call again at every level (the tensor has no
value to stop on) until Python's RecursionError, which the caller catches.
After it, the program goes on: a tf.function `outer` whose trace calls
`inner`, whose trace raises ValueError, which `outer`'s Python catches (an
exception at depth 2 that the outer trace survives), then `inner` traced
on its own; a different tf.function of the same name
(samples/trace_recursion_other.py) is traced for three shapes, and a step
with a Keras optimizer runs, whose first call traces twice because the
optimizer creates its variables on the first trace.

An expert expects: one failed trace tree of recursive_fn (one tf.function
object, no retrace, a trace-error about the recursion at its line), one
failed trace of inner inside outer's ok trace (a trace-error at the raise),
the
other recursive_fn's shape retraces with estimates of its own, the step's
second trace as TensorFlow's follow-up of variable creation (no finding),
every later trace timed at its real length, and no cost or saving above
the run's wall time.  Prints `facts {json}`: TensorFlow's tracing counts
and the program's own timers.
"""
import json
import time

import keras
import tensorflow as tf

import trace_recursion_other as other


@tf.function
def recursive_fn(n):
    if n > 0:
        return recursive_fn(n - 1)  # agprof: trace-error
    return 1


@tf.function
def inner(x):
    if x.shape[0] > 3:
        raise ValueError("x is too long for inner")  # agprof: inner-error
    return x * 2.0


@tf.function
def outer(x):
    try:
        return inner(x)
    except ValueError:  # the inner trace failed; this trace goes on
        return x + 1.0


def main():
    start = time.perf_counter()
    facts = {"call_s": {}}
    t = time.perf_counter()
    try:
        recursive_fn(tf.constant(5))
        facts["raised"] = None
    except Exception as e:  # StagingError around the RecursionError
        facts["raised"] = "%s: %s" % (type(e).__name__, str(e).strip().splitlines()[-1])
    facts["call_s"]["recursion"] = time.perf_counter() - t

    t = time.perf_counter()
    outer(tf.ones([5]))
    inner(tf.ones([2]))
    facts["call_s"]["outer_inner"] = time.perf_counter() - t

    for n in (3, 4, 5):
        t = time.perf_counter()
        other.recursive_fn(tf.ones([n]))
        facts["call_s"]["other_%d" % n] = time.perf_counter() - t

    w = tf.Variable(tf.ones([4, 4]))
    opt = keras.optimizers.Adam(0.01)

    @tf.function
    def train_step(x):
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(tf.matmul(x, w) ** 2)
        opt.apply_gradients(zip(tape.gradient(loss, [w]), [w]))
        return loss

    x = tf.ones([2, 4])
    t = time.perf_counter()
    train_step(x)
    facts["call_s"]["train_step_first"] = time.perf_counter() - t
    for _ in range(5):
        train_step(x)
    facts["tracing_count"] = {
        "recursive_fn": recursive_fn.experimental_get_tracing_count(),
        "other.recursive_fn": other.recursive_fn.experimental_get_tracing_count(),
        "train_step": train_step.experimental_get_tracing_count(),
        "inner": inner.experimental_get_tracing_count(),
        "outer": outer.experimental_get_tracing_count(),
    }
    facts["wall_s"] = time.perf_counter() - start
    print("facts " + json.dumps(facts, sort_keys=True))


if __name__ == "__main__":
    main()
