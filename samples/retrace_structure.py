"""Retracing because the number or nesting of arguments changes
(cause: input-structure).

`combine` takes a list of feature tensors (and an optional mask).  Each call
site below passes a different structure: 2 tensors, 3 tensors, a list with a
dict inside, and once the optional `mask` argument.  The flattened structure
of the inputs is part of the trace cache key, so each new structure is a new
trace even though every tensor has the same shape and dtype.

Fix: keep one structure (stack the features into one tensor, always pass the
mask), or declare input_signature.
"""
import tensorflow as tf

import oracle


@tf.function
def combine(features, mask=None):
    total = tf.zeros([4])
    for f in tf.nest.flatten(features):
        total += f
    if mask is not None:
        total *= mask
    return total


def main():
    oracle.track("combine", combine)
    a = tf.ones([4])
    b = tf.fill([4], 2.0)
    c = tf.fill([4], 3.0)
    structures = [
        ([a, b], None),
        ([a, b], None),            # same structure: cache hit
        ([a, b, c], None),         # three tensors
        ([a, {"extra": b}], None),  # nesting changed
        ([a, b], tf.ones([4])),    # the optional argument is now passed
        ([a, b, c], None),         # seen before: cache hit
    ]
    for features, mask in structures:
        oracle.called("combine")
        traces_before = combine.experimental_get_tracing_count()
        if mask is None:
            out = combine(features)  # agprof: input-structure
        else:
            out = combine(features, mask)  # agprof: input-structure
        if combine.experimental_get_tracing_count() > traces_before:
            oracle.traced_with("combine", features=features, mask=mask)
        print(out.numpy().tolist())
    print("tracing count:", combine.experimental_get_tracing_count())


if __name__ == "__main__":
    with oracle.eager_window():
        main()
