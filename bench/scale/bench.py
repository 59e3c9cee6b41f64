#!/usr/bin/env python3
"""bench/scale/bench.py - how agprof's commands grow with the number of traces.

    python3 bench/scale/bench.py [--sizes 1000,10000,100000] [--source REC] AGPROF

Records samples/retrace_scalar.py once (a function retraced by a Python
float each step; or takes --source), grows it with grow_traces.py to each
size (cached in /tmp/agprof-scale), and prints, per command and size, the
CPU time (user + system: wall time inflates on a loaded machine) and the
peak resident memory, with the growth per tenfold size: 10x is linear,
100x quadratic.  Commands: report (text and JSON), check, export (Chrome,
CSV), merge (two recordings of half the size) and diff (half against
whole).  view's first frame is not timed here (it needs a terminal:
bench/view/run-bench.sh AGPROF RECORDING times it).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CACHE = "/tmp/agprof-scale"
COMMANDS = [
    ("report", ["report"]),
    ("report json", ["report", "--format", "json"]),
    ("check", ["check", "--max-traces", "5"]),
    ("export chrome", ["export", "--format", "chrome", "-o", "{tmp}/x.json"]),
    ("export csv", ["export", "--format", "csv", "-o", "{tmp}/csv"]),
    ("merge", ["merge", "-o", "{tmp}/m.agprof", "{half}", "{half}"]),
    ("diff", ["diff", "{half}", "{rec}"]),
]


def record_source(agprof):
    os.makedirs(CACHE, exist_ok=True)
    out = os.path.join(CACHE, "source.agprof")
    if not os.path.exists(out):
        py = os.path.join(ROOT, ".venv", "bin", "python")
        subprocess.run([agprof, "run", "-o", out, "--", py, os.path.join(ROOT, "samples", "retrace_scalar.py")],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return out


def grown(source, n):
    out = os.path.join(CACHE, "traces-%d.agprof" % n)
    if not os.path.exists(out):
        subprocess.run([sys.executable, os.path.join(HERE, "grow_traces.py"), source, str(n), out],
                       check=True, stdout=subprocess.DEVNULL)
    return out


def timed(argv):
    """CPU seconds (user + system) and peak RSS (MiB) of one command, its output thrown away."""
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(p.pid, 0)
    cpu = usage.ru_utime + usage.ru_stime
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.exit("bench: %s exited %d: %s" % (" ".join(argv), code, p.stderr.read().decode()[-300:]))
    return cpu, usage.ru_maxrss / 1024.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--source", help="a recording to grow (default: record samples/retrace_scalar.py)")
    ap.add_argument("agprof")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    source = a.source or record_source(a.agprof)
    rows = {}
    for n in sizes:
        rec, half = grown(source, n), grown(source, max(n // 2, 1))
        for name, args in COMMANDS:
            tmp = tempfile.mkdtemp(prefix="agprof-scale-")
            try:
                argv = [x.format(tmp=tmp, rec=rec, half=half) for x in args]
                rows[(name, n)] = timed([a.agprof] + argv + ([] if "{rec}" in args or "{half}" in args else [rec]))
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    print("%-14s" % "command" + "".join("%22s" % ("%d traces" % n) for n in sizes) + "   growth per 10x")
    for name, _ in COMMANDS:
        cells = "".join("%11.2f s %6.0f MiB" % rows[(name, n)] for n in sizes)
        growth = ""
        if len(sizes) > 1:
            t0, t1 = rows[(name, sizes[-2])][0], rows[(name, sizes[-1])][0]
            per10 = (t1 / max(t0, 1e-3)) ** (1 / max(1e-9, __import__("math").log10(sizes[-1] / sizes[-2])))
            growth = "%10.1fx" % per10
        print("%-14s%s%s" % (name, cells, growth))


if __name__ == "__main__":
    main()
