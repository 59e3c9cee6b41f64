"""Keras 3 callbacks: a custom callback calls model.predict on a probe batch after every training batch (planted).

To watch the model's output on four fixed inputs during training, the
callback runs self.model.predict(probe) in on_train_batch_end.  Each
predict builds a new input pipeline and iterator for four rows: set-up
that costs more than the training step it follows (64 predicts).  The
expert's fix: call the model directly, self.model(probe, training=False),
and since the next line averages the result as a NumPy array, add .numpy().
"""
import numpy as np
import keras

keras.utils.set_random_seed(29)
rng = np.random.default_rng(29)
x = rng.normal(size=(1024, 8)).astype("float32")
y = (np.sin(x[:, :1]) + 0.1 * x[:, 1:2]).astype("float32")
probe = x[:4]


class ProbeLogger(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.history = []

    def on_train_batch_end(self, batch, logs=None):
        out = self.model.predict(probe, verbose=0)  # corpus: predict
        self.history.append(float(out.mean()))


model = keras.Sequential([keras.Input(shape=(8,)), keras.layers.Dense(16, activation="relu"),
                          keras.layers.Dense(1)])
model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
logger = ProbeLogger()
hist = model.fit(x, y, batch_size=32, epochs=2, verbose=0, callbacks=[logger])
print("loss %.3f probe first %.3f last %.3f (%d probes)" % (hist.history["loss"][-1], logger.history[0],
                                                            logger.history[-1], len(logger.history)))
