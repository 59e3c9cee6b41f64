"""torch_small_ops.py - a dispatch-bound PyTorch GPU workload for agprof's
GPU check (bench/gpu/device-check.sh).

    python torch_small_ops.py [STEPS]

Each step runs two elementwise ops on a 32-element CUDA tensor (x * a, then
+ b): two tiny kernels launched one at a time from Python, the pattern the
gpu-idle and launch-bound rules exist for.  Warm-up steps run first, then a
synchronisation; the line printed at the end gives the counts of the
measured part:
    torch_small_ops: steps=N kernels_at_least=2N result=ok
"""
import sys

import torch


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    if not torch.cuda.is_available():
        print("torch_small_ops: no CUDA device", file=sys.stderr)
        return 1
    dev = torch.device("cuda")
    x = torch.zeros(32, device=dev)
    for _ in range(10):  # warm-up: library loading, allocator, first launches
        x = x * 1.0 + 0.0
    torch.cuda.synchronize()
    for _ in range(steps):
        x = x * 1.0 + 1.0
    torch.cuda.synchronize()
    ok = bool(torch.all(x == float(steps)).item())
    print(f"torch_small_ops: steps={steps} kernels_at_least={2 * steps} result={'ok' if ok else 'wrong'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
