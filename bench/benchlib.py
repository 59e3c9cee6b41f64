"""What the benchmarks share: running a command to completion, timed; pinning programs to CPUs."""
import resource
import subprocess
import sys
import time


def children_cpu():
    """CPU seconds (user + system) of this process's waited-for children and their descendants so far."""
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    return ru.ru_utime + ru.ru_stime


def run_checked(cmd, env=None):
    """Run cmd with its output captured; (wall seconds, CompletedProcess), the CompletedProcess's cpu attribute
    the CPU seconds cmd and its descendants used (time the hypervisor stole from the machine is not in it).
    Exits when cmd fails."""
    cpu0, t0 = children_cpu(), time.perf_counter()
    out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    wall = time.perf_counter() - t0
    out.cpu = children_cpu() - cpu0
    if out.returncode != 0:
        sys.exit("bench: %s failed (%d): %s" % (" ".join(cmd[:4]), out.returncode, out.stderr[-2000:]))
    return wall, out


def pinned(pin):
    """The prefixes that pin (--pin) a program's every thread to CPU 0 and agprof's launcher to CPU 1; empty lists
    when not pinned.  On a shared 2-core machine an unpinned loop's time moves by 20% and more between processes
    (its threads migrating between the CPUs); the launcher's own CPU is measured apart (bench/long_run.py)."""
    return (["taskset", "-c", "0"], ["taskset", "-c", "1"]) if pin else ([], [])
