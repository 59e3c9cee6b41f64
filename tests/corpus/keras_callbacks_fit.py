"""Keras 3 functional model with two inputs, fit with EarlyStopping, ReduceLROnPlateau, CSVLogger and a per-epoch callback.

Numeric features and a categorical id (through an Embedding) are merged
in a functional model; fit runs up to 12 epochs with a validation set,
with EarlyStopping on val_loss, lowers the learning rate on plateaus, logs to a
CSV file, and a custom callback scores the validation set once per epoch
with model.predict (one predict over 512 rows per epoch).
Written as clean; its per-epoch predict proved costly (tests/corpus/README.md).
"""
import numpy as np
import keras

keras.utils.set_random_seed(61)
rng = np.random.default_rng(61)
n = 2560
num = rng.normal(size=(n, 8)).astype("float32")
cat = rng.integers(0, 12, size=(n, 1)).astype("int32")
effect = rng.normal(size=12).astype("float32")
y = (num[:, :1] * 0.7 - num[:, 1:2] + effect[cat] + 0.1 * rng.normal(size=(n, 1))).astype("float32")
split = 2048

num_in = keras.Input(shape=(8,), name="num")
cat_in = keras.Input(shape=(1,), dtype="int32", name="cat")
emb = keras.layers.Flatten()(keras.layers.Embedding(12, 4)(cat_in))
h = keras.layers.Dense(32, activation="relu")(keras.layers.Concatenate()([num_in, emb]))
model = keras.Model([num_in, cat_in], keras.layers.Dense(1)(h))
model.compile(optimizer=keras.optimizers.Adam(3e-3), loss="mse")


class ValScore(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.scores = []

    def on_epoch_end(self, epoch, logs=None):
        pred = self.model.predict({"num": num[split:], "cat": cat[split:]}, batch_size=256, verbose=0)  # corpus: epoch-predict
        self.scores.append(float(np.mean(np.abs(pred - y[split:]))))


score = ValScore()
callbacks = [keras.callbacks.EarlyStopping(patience=3, restore_best_weights=True),
             keras.callbacks.ReduceLROnPlateau(factor=0.5, patience=2), keras.callbacks.CSVLogger("log.csv"),
             score]
hist = model.fit({"num": num[:split], "cat": cat[:split]}, y[:split], batch_size=64, epochs=12, verbose=0,
                 validation_data=({"num": num[split:], "cat": cat[split:]}, y[split:]), callbacks=callbacks)
print("epochs %d val_loss %.3f mae %.3f" % (len(hist.history["loss"]), min(hist.history["val_loss"]),
                                             score.scores[-1]))
