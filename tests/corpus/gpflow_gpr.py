"""GPflow: exact GP regression optimised with gpflow.optimizers.Scipy (clean).

GPR with a squared-exponential kernel on noisy samples of a sine; the
Scipy optimizer wraps the training loss in one tf.function (compile=True,
its default) and L-BFGS-B calls it for each evaluation; then predict_f.
"""
import numpy as np
import gpflow

rng = np.random.default_rng(1)
X = np.sort(rng.uniform(0, 6, size=(40, 1)), axis=0)
Y = np.sin(X) + 0.1 * rng.normal(size=X.shape)

model = gpflow.models.GPR((X, Y), kernel=gpflow.kernels.SquaredExponential())
result = gpflow.optimizers.Scipy().minimize(model.training_loss, model.trainable_variables,  # corpus: minimize
                                            options=dict(maxiter=100))
Xnew = np.linspace(0, 6, 7)[:, None]
mean, var = model.predict_f(Xnew)
print("converged %s" % bool(result.success))
print("lengthscale %.2f" % float(model.kernel.lengthscales.numpy()))
print("mean " + " ".join("%.2f" % v for v in mean.numpy()[:, 0]))
