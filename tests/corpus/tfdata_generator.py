"""TensorFlow tf.data: a Python generator augments each image in NumPy, read with from_generator by a fast step (planted).

The generator crops, flips and adds noise to each 24x24 image in NumPy,
one element at a time, and the pipeline batches it with nothing after:
the training step (a small Keras model in a tf.function) waits for every
batch.  The generator is the slow stage: prefetch or parallel calls do
not make Python faster.  The expert's fix: move the augmentation into
TensorFlow ops in a parallel map over from_tensor_slices (or at least
overlap the generator with the step).
"""
import numpy as np
import tensorflow as tf
import keras

keras.utils.set_random_seed(31)
rng = np.random.default_rng(31)
images = rng.normal(size=(256, 24, 24)).astype("float32")
targets = (images[:, 8:16, 8:16].mean(axis=(1, 2)) > 0).astype("float32")


def examples():
    r = np.random.default_rng(7)
    for epoch_item in range(1024):
        i = epoch_item % len(images)
        top, left = r.integers(0, 5, size=2)
        img = images[i, top:top + 20, left:left + 20]
        if r.random() < 0.5:
            img = img[:, ::-1]
        img = img + r.normal(scale=0.05, size=img.shape).astype("float32")
        img = (img - img.mean()) / (img.std() + 1e-6)
        yield img.reshape(-1), targets[i]


dataset = tf.data.Dataset.from_generator(  # corpus: generator
    examples, output_signature=(tf.TensorSpec([400], tf.float32), tf.TensorSpec([], tf.float32))).batch(32)
model = keras.Sequential([keras.Input(shape=(400,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(1)])
optimizer = keras.optimizers.SGD(0.05)
loss_fn = keras.losses.BinaryCrossentropy(from_logits=True)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y[:, None], model(x, training=True))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    return loss


for epoch in range(2):
    for x, y in dataset:
        loss = train_step(x, y)  # corpus: step
    print("epoch %d loss %.4f" % (epoch, float(loss)))
