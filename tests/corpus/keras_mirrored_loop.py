"""Keras 3 under tf.distribute.MirroredStrategy (one CPU replica): a custom training loop over a distributed dataset.

The model, optimizer and metric are made in the strategy's scope; the step
runs strategy.run on each replica's batch inside a tf.function, scales the
loss with tf.nn.compute_average_loss and reduces it across replicas; the
dataset is distributed with experimental_distribute_dataset and its batches
are all full (drop_remainder).
An expert expects no warning.
"""
import numpy as np
import keras
import tensorflow as tf

keras.utils.set_random_seed(17)
rng = np.random.default_rng(17)
features = rng.normal(size=(2048, 20)).astype(np.float32)
labels = (features[:, :5].sum(axis=1) > 0).astype(np.int32)

strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
GLOBAL_BATCH = 64 * strategy.num_replicas_in_sync
with strategy.scope():
    model = keras.Sequential([keras.Input(shape=(20,)), keras.layers.Dense(64, activation="relu"),
                              keras.layers.Dense(2)])
    optimizer = keras.optimizers.SGD(0.05, momentum=0.9)
    accuracy = keras.metrics.SparseCategoricalAccuracy()
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True, reduction="none")
data = tf.data.Dataset.from_tensor_slices((features, labels)).shuffle(2048, seed=1).batch(GLOBAL_BATCH, drop_remainder=True)
dist_data = strategy.experimental_distribute_dataset(data)


def replica_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = tf.nn.compute_average_loss(loss_fn(y, logits), global_batch_size=GLOBAL_BATCH)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    accuracy.update_state(y, logits)
    return loss


@tf.function
def distributed_step(x, y):
    per_replica = strategy.run(replica_step, args=(x, y))
    return strategy.reduce(tf.distribute.ReduceOp.SUM, per_replica, axis=None)


for epoch in range(4):
    total, steps = 0.0, 0
    for x, y in dist_data:  # corpus: epoch-loop
        total += float(distributed_step(x, y))
        steps += 1
print("loss %.3f accuracy %.2f" % (total / steps, float(accuracy.result())))
