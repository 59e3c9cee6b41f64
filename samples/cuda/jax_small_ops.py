"""jax_small_ops.py - the same dispatch-bound pattern with JAX (op-by-op
dispatch, no jit around the loop), for agprof's GPU check.

    python jax_small_ops.py [STEPS]

JAX launches through the CUDA driver API (cuLaunchKernel), so this checks
driver-API correlation where torch_small_ops.py checks the runtime API.
Prints:
    jax_small_ops: steps=N kernels_at_least=N result=ok
(XLA may fuse x * a + b of one step into one kernel, hence N, not 2N.)
"""
import sys

import jax
import jax.numpy as jnp


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    if not any(d.platform == "gpu" for d in jax.devices()):
        print("jax_small_ops: no GPU device", file=sys.stderr)
        return 1
    x = jnp.zeros(32)
    for _ in range(10):
        x = x * 1.0 + 0.0
    x.block_until_ready()
    for _ in range(steps):
        x = x * 1.0 + 1.0
    x.block_until_ready()
    ok = bool(jnp.all(x == float(steps)))
    print(f"jax_small_ops: steps={steps} kernels_at_least={steps} result={'ok' if ok else 'wrong'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
