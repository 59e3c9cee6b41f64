"""A tf.Module saved for serving the wrong ways, and the right way.

`Scorer.predict` has no input_signature: tf.saved_model.save exports it
only for the shapes it happened to be traced with, and it is no serving
signature (the article: serving entry points must have one).
`Scorer.fast` has an input_signature but jit_compile=True, and the program
calls it with three batch sizes: XLA compiles again for every new shape,
which in online serving means latency spikes.  `Scorer.serve` is the fix:
an input_signature with None for the batch dimension, no XLA.
"""
import shutil
import tempfile

import numpy as np
import tensorflow as tf

import oracle


class Scorer(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(tf.ones([6, 3]), name="w")

    @tf.function
    def predict(self, x):
        return tf.matmul(x, self.w)

    @tf.function(jit_compile=True, input_signature=[tf.TensorSpec([None, 6], tf.float32)])
    def fast(self, x):
        return tf.nn.softmax(tf.matmul(x, self.w))

    @tf.function(input_signature=[tf.TensorSpec([None, 6], tf.float32)])
    def serve(self, x):
        return tf.nn.softmax(tf.matmul(x, self.w))


def main():
    module = Scorer()
    for name in ("predict", "fast", "serve"):
        oracle.track(name, getattr(module, name))
    rng = np.random.default_rng(0)
    for batch in (2, 5, 7):
        x = tf.constant(rng.normal(size=(batch, 6)).astype(np.float32))
        for name in ("predict", "fast", "serve"):
            oracle.called(name)
            getattr(module, name)(x)
    export_dir = tempfile.mkdtemp(prefix="agprof-nosig-")
    try:
        tf.saved_model.save(module, export_dir)  # agprof: serving-signature
    finally:
        shutil.rmtree(export_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
