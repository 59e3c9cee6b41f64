"""A tf.Module exported for serving, then reloaded and called.

`Classifier.serve` is a tf.function with an input_signature (a [None, 6]
float32 batch): the article's hard requirement for a serving entry point.
It is traced on its first call, whatever batch size it is called with (the
second call, another batch size, reuses the graph), and tf.saved_model.save
traces it once more (TF 2.21 traces the entry points again in its saving
context): tracing count 2.

tf.saved_model.load registers the saved graph functions again from their
FunctionDefs (not traced).  The reloaded `serve` is a RestoredFunction, itself
a tf.function whose Python function is TF's `restored_function_body`: it is
traced once at its first call (a small graph that calls the loaded
function), then each call executes `__inference_restored_function_body_N`.

No planted problem.  The oracle reports `serve` (the original) and
`restored_function_body` (the reloaded entry point) separately.
"""
import shutil
import tempfile

import numpy as np
import tensorflow as tf

import oracle

tf.random.set_seed(0)


class Classifier(tf.Module):
    def __init__(self):
        super().__init__()
        self.w = tf.Variable(tf.random.normal([6, 3], seed=2), name="w")
        self.b = tf.Variable(tf.zeros([3]), name="b")

    @tf.function(input_signature=[tf.TensorSpec([None, 6], tf.float32, name="x")])
    def serve(self, x):
        return tf.nn.softmax(tf.matmul(x, self.w) + self.b)


def main():
    module = Classifier()
    oracle.track("serve", module.serve)
    rng = np.random.default_rng(0)
    for batch in (2, 5):
        oracle.called("serve")
        module.serve(tf.constant(rng.normal(size=(batch, 6)).astype(np.float32)))

    export_dir = tempfile.mkdtemp(prefix="agprof-serving-")
    try:
        tf.saved_model.save(module, export_dir,
                            signatures={"serving_default": module.serve})
        restored = tf.saved_model.load(export_dir)
        oracle.track("restored_function_body", restored.serve)
        for batch in (1, 4, 7):
            x = tf.constant(rng.normal(size=(batch, 6)).astype(np.float32))
            oracle.called("restored_function_body")
            y = restored.serve(x)
            print("batch %d -> %s, rows sum to %.3f" % (batch, y.shape, float(tf.reduce_sum(y)) / batch))
    finally:
        shutil.rmtree(export_dir, ignore_errors=True)
    print("tracing count:", module.serve.experimental_get_tracing_count())


if __name__ == "__main__":
    with oracle.eager_window():
        main()
