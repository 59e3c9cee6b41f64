"""Keras 3: model.predict called in a loop on small batches (planted mistake).

Keras documents predict() as meant for large inputs: each call builds a
data adapter and an iterator and runs the predict function; for a few
rows, calling the model directly (or predict_on_batch) is the fast way.
Here a scoring loop calls predict once per 8-row request, 40 times.
An expert expects agprof to name this user line and that advice.
"""
import numpy as np
import keras

keras.utils.set_random_seed(3)
rng = np.random.default_rng(3)
x = rng.normal(size=(320, 12)).astype("float32")
model = keras.Sequential([keras.Input(shape=(12,)), keras.layers.Dense(32, activation="relu"),
                          keras.layers.Dense(3, activation="softmax")])

scores = []
for start in range(0, len(x), 8):
    batch = x[start:start + 8]
    probs = model.predict(batch, verbose=0)  # corpus: predict-loop
    scores.append(probs.argmax(axis=1))
classes = np.concatenate(scores)
print("requests %d" % (len(x) // 8))
print("class counts " + " ".join(str(int((classes == k).sum())) for k in range(3)))
