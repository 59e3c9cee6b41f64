"""TensorFlow Text: a tf.function featurizer fed each batch of sentences as a Python list (planted).

A bag-of-words classifier's features come from a tf.function that
tokenizes with tensorflow_text's WhitespaceTokenizer, hashes the tokens
into buckets and counts them.  The loop passes each batch as a Python list
of str: TensorFlow bakes the strings into the graph as constants, so every
new batch traces the featurizer again (20 batches, 20 traces).  The fix is
to pass the batch as one string tensor (tf.constant(batch)): the same
features, one trace.
"""
import numpy as np
import tensorflow as tf
import tensorflow_text as text

tf.random.set_seed(23)
rng = np.random.default_rng(23)
GOOD, BAD = ["good", "great", "fine", "fun"], ["bad", "awful", "slow", "dull"]
OTHER = ["the", "a", "movie", "plot", "actor", "was", "very", "and", "story", "ending"]
sentences = [" ".join(rng.choice(GOOD + BAD + OTHER, size=int(rng.integers(4, 11)))) for _ in range(160)]
labels = np.array([[float(sum(w in GOOD for w in s.split()) > sum(w in BAD for w in s.split()))]
                   for s in sentences], dtype="float32")
tokenizer = text.WhitespaceTokenizer()
BUCKETS = 64


@tf.function
def featurize(batch):
    ids = tf.strings.to_hash_bucket_fast(tokenizer.tokenize(batch), BUCKETS)
    return tf.reduce_sum(tf.ragged.map_flat_values(tf.one_hot, ids, BUCKETS), axis=1)


w = tf.Variable(tf.zeros([BUCKETS, 1]))
b = tf.Variable(0.0)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.nn.sigmoid_cross_entropy_with_logits(y, x @ w + b))
    gw, gb = tape.gradient(loss, [w, b])
    w.assign_sub(0.5 * gw)
    b.assign_sub(0.5 * gb)
    return loss


for start in range(0, len(sentences), 8):
    batch = sentences[start:start + 8]
    feats = featurize(batch)  # corpus: list-call
    loss = train_step(feats, labels[start:start + 8])
acc = np.mean((featurize(tf.constant(sentences)).numpy() @ w.numpy() + b.numpy() > 0) == (labels > 0.5))
print("loss %.3f accuracy %.2f" % (float(loss), acc))
