"""TensorFlow's tf.experimental.numpy: k-means steps in NumPy syntax (clean).

tnp's NumPy API (argmin, sum, take, where, broadcasting) inside a
tf.function, called once per iteration on tensors of one shape: a single
trace, then graph calls.
"""
import numpy as np
import tensorflow as tf
import tensorflow.experimental.numpy as tnp

rng = np.random.default_rng(6)
centres_true = np.array([[0, 0], [4, 4], [0, 5]], dtype="float32")
points = tnp.asarray(np.concatenate([c + rng.normal(size=(300, 2)).astype("float32")
                                     for c in centres_true]))


@tf.function
def kmeans_step(points, centres):
    d = tnp.sum((points[:, None, :] - centres[None, :, :]) ** 2, axis=-1)
    assign = tnp.argmin(d, axis=1)
    one_hot = tf.one_hot(assign, centres.shape[0], dtype=points.dtype)
    counts = tnp.sum(one_hot, axis=0)
    sums = tnp.matmul(tnp.transpose(one_hot), points)
    new = tnp.where(counts[:, None] > 0, sums / tnp.maximum(counts[:, None], 1.0), centres)
    return new, tnp.sum(tnp.min(d, axis=1))


centres = tnp.asarray(points.numpy()[[0, 300, 600]])
for it in range(30):
    centres, inertia = kmeans_step(points, centres)  # corpus: step
order = np.argsort(centres.numpy()[:, 0] * 10 + centres.numpy()[:, 1])
print("inertia %.1f" % float(inertia))
print("centres " + " ".join("(%.1f,%.1f)" % tuple(centres.numpy()[i]) for i in order))
