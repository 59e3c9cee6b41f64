"""GPflux: a two-layer deep Gaussian process on a 1-D step function, trained with Keras (tf_keras) fit.

Each layer is built with gpflux.helpers.construct_gp_layer (20 inducing
points); a Gaussian likelihood closes the model; DeepGP.as_training_model
gives a tf_keras model compiled with Adam and fit on inputs and targets in
one dict, then the prediction model predicts once.
An expert expects no warning.
"""
import numpy as np
import tensorflow as tf
import tf_keras
import gpflow
import gpflux

tf.random.set_seed(47)
tf_keras.utils.set_random_seed(47)
rng = np.random.default_rng(47)
X = np.sort(rng.uniform(-1, 1, size=(128, 1))).astype(np.float64)
Y = (np.where(X > 0, 1.0, -1.0) + rng.normal(scale=0.05, size=X.shape)).astype(np.float64)

z = np.linspace(-1, 1, 20)[:, None]
layer1 = gpflux.helpers.construct_gp_layer(128, 20, 1, 1, z_init=z.copy())
layer2 = gpflux.helpers.construct_gp_layer(128, 20, 1, 1, z_init=z.copy())
layer2.q_sqrt.assign(layer2.q_sqrt * 1e-3)
dgp = gpflux.models.DeepGP([layer1, layer2], gpflow.likelihoods.Gaussian(0.01))
training = dgp.as_training_model()
training.compile(tf_keras.optimizers.Adam(0.02))
history = training.fit({"inputs": X, "targets": Y}, epochs=10, batch_size=64, verbose=0, shuffle=False)  # corpus: fit
print("loss %.2f" % history.history["loss"][-1])
out = dgp.as_prediction_model()(np.array([[-0.5], [0.5]]))
print("mean at -0.5, 0.5: %.1f %.1f" % tuple(out.f_mean.numpy()[:, 0]))
