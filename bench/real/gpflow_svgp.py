"""Trace-heavy: GPflow models trained the way its notebooks train them, on synthetic data.

An SVGP on 2,000 points trained with Adam through a tf.function step (as the `large_data` notebook does), for
three kernels (each a new model: a new trace of its step), and a GPR fitted with gpflow.optimizers.Scipy
(compiled: a trace of the loss and its gradient).  Tracing is a large share of the run."""
import sys

import numpy as np
import gpflow
import tensorflow as tf

from gpflow.keras import tf_keras

from common import timed_calls

STEPS = int(sys.argv[1]) if len(sys.argv) > 1 else 60


def data(n, seed):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-3, 3, (n, 1))
    return x, np.sin(3 * x) + 0.3 * rng.standard_normal((n, 1))


def svgp(kernel, name):
    x, y = data(2000, 1)
    z = np.linspace(-3, 3, 30)[:, None]
    model = gpflow.models.SVGP(kernel, gpflow.likelihoods.Gaussian(), z, num_data=len(x))
    loss = model.training_loss_closure((tf.constant(x), tf.constant(y)), compile=True)
    opt = tf_keras.optimizers.Adam(0.01)

    @tf.function
    def step():
        opt.minimize(loss, model.trainable_variables)

    timed_calls(name, step)
    for _ in range(STEPS):
        step()
    return float(loss())


def gpr():
    x, y = data(300, 2)
    model = gpflow.models.GPR((x, y), kernel=gpflow.kernels.Matern52() + gpflow.kernels.Linear())
    res = gpflow.optimizers.Scipy().minimize(model.training_loss, model.trainable_variables,
                                             options=dict(maxiter=60), compile=True)
    return float(res.fun)


def main():
    for name, kernel in (("svgp_rbf", gpflow.kernels.SquaredExponential()),
                         ("svgp_matern", gpflow.kernels.Matern32()),
                         ("svgp_sum", gpflow.kernels.SquaredExponential() + gpflow.kernels.Periodic(
                             gpflow.kernels.SquaredExponential()))):
        print(name, "loss %.3f" % svgp(kernel, name))
    print("gpr loss %.3f" % gpr())


if __name__ == "__main__":
    main()
