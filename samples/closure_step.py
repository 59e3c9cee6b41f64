"""A training step with no parameters, reading its batches inside the graph.

The pattern of GPflow's documented minibatch loop (and many custom loops):
the tf.function closes over an iterator, the model and a Keras optimizer,
and takes no argument.  Its first call creates the optimizer's slot
variables, so TensorFlow traces it a second time; the first trace's graph,
though it holds the IteratorGetNext, never runs.  TensorFlow gives a
function without parameters the input signature (): the user wrote none.
The program counts its own steps ("steps N").
"""
import numpy as np, tensorflow as tf, keras  # noqa: F401

STEPS = 64

rng = np.random.default_rng(0)
x = rng.normal(size=(1024, 8)).astype("float32")
y = (x @ rng.normal(size=(8, 1))).astype("float32")
batches = iter(tf.data.Dataset.from_tensor_slices((x, y)).repeat().batch(32))
w = tf.Variable(tf.zeros([8, 1]))
opt = keras.optimizers.Adam(0.05)


@tf.function
def step():
    xb, yb = next(batches)
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(xb @ w - yb))
    opt.apply_gradients([(tape.gradient(loss, w), w)])
    return loss


steps = 0
for _ in range(STEPS):
    loss = step()
    steps += 1
print("steps", steps, "loss %.4f" % float(loss), "tracing count", step.experimental_get_tracing_count())
