"""Keras 3: a small classifier through fit, evaluate and predict (clean).

The ordinary Keras workflow on synthetic data: compile, fit for a few
epochs with a validation split, evaluate, one predict over all the data.
Keras traces its own step functions (multi_step_on_iterator,
one_step_on_data) for train, test and predict: that is the library's
work, done once per mode, not a mistake of this program.
"""
import numpy as np
import keras

keras.utils.set_random_seed(7)
rng = np.random.default_rng(7)
x = rng.normal(size=(512, 16)).astype("float32")
y = (x[:, :4].sum(axis=1) > 0).astype("int32")

model = keras.Sequential([
    keras.Input(shape=(16,)),
    keras.layers.Dense(32, activation="relu"),
    keras.layers.Dense(2, activation="softmax"),
])
model.compile(optimizer=keras.optimizers.Adam(1e-2),
              loss="sparse_categorical_crossentropy", metrics=["accuracy"])
history = model.fit(x, y, batch_size=64, epochs=3, validation_split=0.25, verbose=0)  # corpus: fit
loss, acc = model.evaluate(x, y, batch_size=128, verbose=0)  # corpus: evaluate
probs = model.predict(x, batch_size=128, verbose=0)  # corpus: predict
print("train loss %.3f" % history.history["loss"][-1])
print("eval loss %.3f acc %.3f" % (loss, acc))
print("predicted class 1: %d of %d" % (int((probs[:, 1] > 0.5).sum()), len(x)))
