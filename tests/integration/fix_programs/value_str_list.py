"""A batch of sentences passed as a Python list of str: every new list is
baked into the graph, a trace per batch.  The whole list becomes one string
tensor (not its first element), and the advice says so.
"""
# expect: edit lengths(tf.constant(batch, tf.string))
# expect: recommendation Pass batch, a list of Python values that change
# expect: traces-after 1
import tensorflow as tf


@tf.function
def lengths(batch):
    return tf.strings.length(tf.strings.strip(batch))


sentences = ["a cat", "the dog ", " fish", "a bird", "an owl", "one frog", "two eels", "the end"]
for start in range(0, 8, 2):
    batch = sentences[start:start + 2]
    print("lengths", lengths(batch).numpy().tolist())
print("tracing count:", lengths.experimental_get_tracing_count())
