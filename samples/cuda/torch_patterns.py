"""torch_patterns.py - PyTorch GPU workloads with one known pattern each, for
checking that agprof's GPU rules fire where they should and stay quiet where
they should not (bench/gpu/device-check.sh).

    python torch_patterns.py MODE [STEPS]

MODE:
  sync     each step: two small kernels, then .item() (a device-to-host copy
           and a wait): host-device-sync should fire
  sleep    each step: one small matmul, then the host sleeps 0.5 ms: the GPU
           idles most of the run; gpu-idle should fire
  matmul   each step: one 8192x8192 bf16 matmul, no wait until the end: the
           GPU is saturated; no GPU rule should fire

The last line gives the measured part's counts:
    torch_patterns: mode=M steps=N kernels_at_least=K result=ok
"""
import sys
import time

import torch


def sync_steps(dev, steps):
    x = torch.zeros(32, device=dev)
    total = 0.0
    for _ in range(steps):
        x = x * 1.0 + 1.0
        total = x[0].item()     # the copy and the wait under test
    return steps * 2, total == float(steps)


def sleep_steps(dev, steps):
    a = torch.full((256, 256), 1.0 / 256, device=dev)
    x = a
    for _ in range(steps):
        x = a @ x
        time.sleep(0.0005)      # host work that is not dispatching
    torch.cuda.synchronize()
    return steps, bool(torch.allclose(x, a))


def matmul_steps(dev, steps):
    a = torch.full((8192, 8192), 1.0 / 8192, device=dev, dtype=torch.bfloat16)
    c = a
    for _ in range(steps):
        c = a @ a
    torch.cuda.synchronize()
    return steps, bool(torch.allclose(c.float(), a.float(), rtol=0.05))


MODES = {"sync": (sync_steps, 2000), "sleep": (sleep_steps, 2000), "matmul": (matmul_steps, 400)}


def main():
    if len(sys.argv) < 2 or sys.argv[1] not in MODES:
        print("usage: torch_patterns.py sync|sleep|matmul [STEPS]", file=sys.stderr)
        return 2
    mode = sys.argv[1]
    fn, default_steps = MODES[mode]
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else default_steps
    if not torch.cuda.is_available():
        print("torch_patterns: no CUDA device", file=sys.stderr)
        return 1
    dev = torch.device("cuda")
    fn(dev, 10)                 # warm-up: library loading, allocator, first launches
    torch.cuda.synchronize()
    kernels, ok = fn(dev, steps)
    print(f"torch_patterns: mode={mode} steps={steps} kernels_at_least={kernels} "
          f"result={'ok' if ok else 'wrong'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
