"""One op dominates a graph function's kernel time.

`rank_scores` scores 1024 items against 1024 queries with a small matmul,
then sorts all million scores with tf.sort (a TopKV2 kernel over the whole
vector) to keep the best ten: the sort takes nearly all of the call's kernel
time.  agprof's slow-op rule names TopKV2 and the line that created it;
tf.math.top_k(scores, k=10) would do the same work in a fraction of it.
"""
import tensorflow as tf

import oracle

CALLS = 6


@tf.function
def rank_scores(q, items):
    scores = tf.reshape(tf.matmul(q, items, transpose_b=True), [-1])
    ranked = tf.sort(scores, direction="DESCENDING")     # agprof: slow-op
    return ranked[:10]


def main():
    q = tf.random.stateless_normal([1024, 32], seed=[1, 2])
    items = tf.random.stateless_normal([1024, 32], seed=[3, 4])
    oracle.track("rank_scores", rank_scores)
    for _ in range(CALLS):
        rank_scores(q, items).numpy()
        oracle.called("rank_scores")


main()
