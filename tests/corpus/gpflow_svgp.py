"""GPflow: sparse variational GP trained with Adam over minibatches (clean).

The SVGP pattern of GPflow's documentation: inducing points, a minibatch
iterator over a repeated, shuffled tf.data.Dataset, the model's
training_loss_closure, and an optimisation step compiled once with
tf.function (tf_keras' Adam, as GPflow uses it; the optimizer makes its slot variables on the first call).
"""
import numpy as np
import tensorflow as tf
import gpflow
from gpflow.keras import tf_keras

rng = np.random.default_rng(4)
N = 2000
X = rng.uniform(-3, 3, size=(N, 1))
Y = np.sin(2 * X) + 0.2 * rng.normal(size=X.shape)
Z = np.linspace(-3, 3, 15)[:, None]

model = gpflow.models.SVGP(gpflow.kernels.SquaredExponential(), gpflow.likelihoods.Gaussian(),
                           inducing_variable=Z, num_data=N)
batches = iter(tf.data.Dataset.from_tensor_slices((X, Y)).repeat().shuffle(N, seed=4).batch(100))
loss = model.training_loss_closure(batches, compile=False)
optimizer = tf_keras.optimizers.Adam(learning_rate=0.02)


@tf.function
def optimisation_step():
    optimizer.minimize(loss, model.trainable_variables)


for step in range(200):
    optimisation_step()  # corpus: step
print("elbo %.0f" % float(model.elbo((X, Y))))
print("noise %.2f" % float(model.likelihood.variance.numpy()))
