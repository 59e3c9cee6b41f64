"""TensorFlow: a text generator as a tf.Module, run one sequence then a batch of five, then saved.

The generation step is a tf.function over the previous token ids; it is
called with one sequence (shape [1]) and then with a batch of five ([5]):
one real retrace, healthy.  tf.saved_model.save then traces the step
again for the signatures it exports (TensorFlow's own count doubles).
Those traces are the save's, not retraces of the program's calls.
An expert expects no retracing warning (one retrace of the user's), the
save's traces named as the save's, and the serving-signature advice at
the save (an exported function without an input_signature).
"""
import tempfile

import numpy as np
import tensorflow as tf

tf.random.set_seed(7)


class Generator(tf.Module):
    def __init__(self, vocab=32, width=16):
        self.embed = tf.Variable(tf.random.normal([vocab, width], stddev=0.5))
        self.cell = tf.Variable(tf.random.normal([width, width], stddev=0.5))
        self.head = tf.Variable(tf.random.normal([width, vocab], stddev=0.5))

    @tf.function
    def step(self, ids):
        h = tf.tanh(tf.matmul(tf.nn.embedding_lookup(self.embed, ids), self.cell))
        return tf.cast(tf.argmax(tf.matmul(h, self.head), axis=-1), tf.int32)


gen = Generator()
ids = tf.constant([3])
text = []
for t in range(30):
    ids = gen.step(ids)  # corpus: one-sequence
    text.append(int(ids[0]))
batch = tf.constant([1, 2, 3, 4, 5])
for t in range(30):
    batch = gen.step(batch)  # corpus: batch
print("sequence " + " ".join(str(v) for v in text[-8:]))
print("batch " + " ".join(str(v) for v in batch.numpy()))
print("traces before the save %d" % gen.step.experimental_get_tracing_count())
tf.saved_model.save(gen, tempfile.mkdtemp())  # corpus: save
print("traces after the save %d" % gen.step.experimental_get_tracing_count())
