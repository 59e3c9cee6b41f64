"""SciKeras: a Keras 3 regressor in scikit-learn's cross_val_score (3 folds) behind a StandardScaler pipeline.

KerasRegressor builds a new Keras model from the model function for each
fold and fits it (5 epochs), then scores it on the held-out fold: three
models, each built, fit and evaluated once, as scikit-learn does.
An expert expects no warning: each fold's traces are its new model's own.
"""
import numpy as np
import keras
from scikeras.wrappers import KerasRegressor
from sklearn.model_selection import KFold, cross_val_score
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

keras.utils.set_random_seed(59)
rng = np.random.default_rng(59)
X = rng.normal(loc=5.0, scale=3.0, size=(800, 6)).astype(np.float32)
y = (X[:, 0] - 0.5 * X[:, 1] + 0.1 * X[:, 2] ** 2 + rng.normal(scale=0.2, size=800)).astype(np.float32)


def build(meta):
    model = keras.Sequential([keras.Input(shape=(meta["n_features_in_"],)), keras.layers.Dense(32, activation="relu"),
                              keras.layers.Dense(1)])
    model.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
    return model


reg = make_pipeline(StandardScaler(), KerasRegressor(model=build, epochs=5, batch_size=32, verbose=0, random_state=1))
scores = cross_val_score(reg, X, y, cv=KFold(3, shuffle=True, random_state=0), scoring="r2")  # corpus: cv
print("r2 per fold " + " ".join("%.1f" % s for s in scores))
