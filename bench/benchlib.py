"""What the benchmarks share: running a command to completion, timed; pinning programs to CPUs."""
import os
import resource
import subprocess
import sys
import tempfile
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
        failed(cmd, out.returncode, out.stderr)
    return wall, out


def failed(cmd, returncode, stderr):
    """Exit the benchmark: cmd failed."""
    sys.exit("bench: %s failed (%d): %s" % (" ".join(cmd[:4]), returncode, stderr[-2000:]))


def pinned(pin):
    """The prefixes that pin (--pin) a program's every thread to CPU 0 and agprof's launcher to CPU 1; empty lists
    when not pinned.  On a shared 2-core machine an unpinned loop's time moves by 20% and more between processes
    (its threads migrating between the CPUs); the launcher's own CPU is measured apart (bench/long_run.py)."""
    return (["taskset", "-c", "0"], ["taskset", "-c", "1"]) if pin else ([], [])


def run_side_by_side(cmds, env=None):
    """Start every command of cmds at once, each with its output captured; [(wall seconds, CPU seconds of it and
    its descendants, stdout, stderr)] in cmds' order, each wall from the common start to that command's exit.
    Exits when one fails."""
    with tempfile.TemporaryDirectory(prefix="agprof-bench-") as tmp:
        files = [(open(os.path.join(tmp, "%d.out" % i), "w+"), open(os.path.join(tmp, "%d.err" % i), "w+"))
                 for i in range(len(cmds))]
        t0 = time.perf_counter()
        procs = [subprocess.Popen(cmd, stdout=out, stderr=err, text=True, env=env)
                 for cmd, (out, err) in zip(cmds, files)]
        ended = {}
        while len(ended) < len(procs):
            pid, status, ru = os.wait4(-1, 0)  # these are this process's only children while it runs
            ended[pid] = (time.perf_counter() - t0, ru.ru_utime + ru.ru_stime, os.waitstatus_to_exitcode(status))
        results = []
        for cmd, proc, (out, err) in zip(cmds, procs, files):
            proc.returncode = ended[proc.pid][2]  # reaped above: keep Popen from waiting again
            out.seek(0)
            err.seek(0)
            results.append((ended[proc.pid][0], ended[proc.pid][1], out.read(), err.read()))
            out.close()
            err.close()
            if proc.returncode != 0:
                failed(cmd, proc.returncode, results[-1][3])
    return results
