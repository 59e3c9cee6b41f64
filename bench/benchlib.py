"""What the benchmarks share: running a command to completion, timed."""
import subprocess
import sys
import time


def run_checked(cmd, env=None):
    """Run cmd with its output captured; (wall seconds, CompletedProcess). Exits when cmd fails."""
    t0 = time.perf_counter()
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    wall = time.perf_counter() - t0
    if out.returncode != 0:
        sys.exit("bench: %s failed (%d): %s" % (" ".join(cmd[:4]), out.returncode, out.stderr[-2000:]))
    return wall, out
