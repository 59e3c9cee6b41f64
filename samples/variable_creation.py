"""tf.Variables created inside traced code, again at trace after trace.

The article: "a tf.Variable created inside a traced function is created
again at each trace; create variables outside, or lift them with
tf.init_scope".

Planted here, the lazy-weight pattern in a per-instance tf.function:
`LazyScale.__call__` is a tf.function method, so every LazyScale instance
gets its own tf.function object with its own trace cache, and the weight is
created by the first trace (`if self.w is None: self.w = tf.Variable(...)`).
TensorFlow allows variable creation on a tf.function object's first call
only, and handles it by tracing the function twice: once with variable
creation allowed (the variable is created, lifted out of the graph), then
once more with creation forbidden (by then `self.w` is set, so no error).
So every new instance costs two traces and one new variable.

The loop builds a new LazyScale for every batch (the classic "layer
constructed inside the training loop" bug): each batch retraces twice and
creates one more variable, and nothing fails.  The same happens to a Keras
model or layer rebuilt in a loop.  (An unconditional `tf.Variable(...)` in a
tf.function, by contrast, raises "tf.function only supports singleton
tf.Variables created on the first call" at the second trace; wrapping it in
`tf.init_scope()` does not change that.)

Fix: build the layer once, outside the loop.

The oracle counts the variables really created with a Python counter next to
the tf.Variable(...) line, which only runs while tracing.
"""
import tensorflow as tf

import oracle

BATCHES = 4
variables_created = 0


class LazyScale(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = None

    @tf.function
    def __call__(self, x):
        global variables_created
        if self.w is None:
            variables_created += 1
            self.w = tf.Variable(tf.ones([x.shape[-1]]))  # agprof: variable-creation
        return x * self.w


def main():
    x = tf.ones([4, 3])
    per_object = []
    for _ in range(BATCHES):
        layer = LazyScale()          # new instance, new tf.function object
        oracle.called("__call__")
        y = layer(x)
        oracle.called("__call__")
        y = layer(x)                 # same instance, same input: cache hit
        oracle.snapshot("__call__", layer.__call__)
        per_object.append(layer.__call__.experimental_get_tracing_count())
    print("tracing count per LazyScale instance:", per_object)
    print("variables created while tracing:", variables_created)
    print("result", y.numpy().sum())
    oracle.extra("variables_created", {"__call__": variables_created})


if __name__ == "__main__":
    with oracle.eager_window():
        main()
