#!/usr/bin/env python3
"""The GPU analysis and rules on recordings made on a real NVIDIA H200
(tests/gpu/h200/, written by bench/gpu/device-check.sh there: driver 580.159,
CUPTI 13.0, PyTorch 2.11 with CUDA 13).  CI has no GPU; these are the real
device's records, so the decoder's output, the model and the rules are
checked on what a real GPU wrote, not only on records laid out by hand.

Oracles: each workload's own printed counts (NAME.txt beside the recording:
small_kernels launches exactly KERNELS kernels and makes known copies),
checked with bench/gpu/check_recording.py's SQL; and the pattern each
workload was written to have:
  small_kernels  tiny kernels launched one by one: gpu-idle (dispatch-bound)
                 and launch-bound; its 201 cudaMemcpy calls through the loop:
                 host-device-sync
  torch-sync     .item() every step: host-device-sync
  torch-sleep    the host sleeps 0.5 ms between launches: gpu-idle, the
                 host-bound case (the host was not dispatching)
  torch-matmul   8192x8192 bf16 matmuls back to back: no GPU rule
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from agtestlib import SOURCE_ROOT, agprof, check, check_eq, finish, need_agprof  # noqa: E402

HERE = os.path.join(SOURCE_ROOT, "tests", "gpu", "h200")
GPU_RULES = ("gpu-idle", "launch-bound", "host-device-sync")

# recording -> {rule: text its message must hold}, rules that must stay quiet
EXPECT = {
    "small_kernels": ({"gpu-idle": "dispatch-bound", "launch-bound": "ran 10000 times",
                       "host-device-sync": "cudaMemcpy (copy) was called 201 times"}, ()),
    "torch-sync": ({"host-device-sync": "cudaStreamSynchronize (sync) was called 20"}, ()),
    "torch-sleep": ({"gpu-idle": "waits for host work that is not dispatch"}, ()),
    "torch-matmul": ({}, GPU_RULES),
}


def counts(name):
    """The workload's own last line: {'kernels': N, ...}."""
    with open(os.path.join(HERE, name + ".txt")) as f:
        line = f.read().strip().splitlines()[-1]
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", line)}


def check_counts(name, rec):
    c = counts(name)
    args = [sys.executable, os.path.join(SOURCE_ROOT, "bench", "gpu", "check_recording.py"), rec]
    if "htod" in c:
        args += ["--kernels", str(c["kernels"]), "--htod", str(c["htod"]), "--dtoh", str(c["dtoh"]),
                 "--memsets", str(c["memsets"]), "--name", "add_one(float*, int)"]
    else:
        args += ["--kernels-at-least", str(c["kernels_at_least"])]
    p = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=120)
    out = p.stdout.decode("utf-8", "replace")
    check(p.returncode == 0, "%s: check_recording.py against the program's counts:\n%s" % (name, out))


def check_rules(name, rec):
    fire, quiet = EXPECT[name]
    rc, out, err = agprof("report", "--format", "json", rec)
    if not check_eq(rc, 0, "%s: report exit status (%s)" % (name, err.strip())):
        return
    report = json.loads(out)
    check_eq(report["gpu"]["status"], "on", "%s: GPU tracing on" % name)
    found = {}
    for f in report["findings"]:
        if f["rule"] in GPU_RULES:
            found.setdefault(f["rule"], []).append(f["message"])
    for rule, text in fire.items():
        msgs = found.get(rule, [])
        check(any(text in m for m in msgs), "%s: %s fires saying '%s' (got %r)" % (name, rule, text, msgs))
    for rule in quiet:
        check(rule not in found, "%s: %s stays quiet (got %r)" % (name, rule, found.get(rule)))


def main():
    need_agprof()
    for name in EXPECT:
        rec = os.path.join(HERE, name + ".agprof")
        check_counts(name, rec)
        check_rules(name, rec)
    finish("gpu-h200-recordings")


if __name__ == "__main__":
    main()
