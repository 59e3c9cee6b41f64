#!/usr/bin/env python3
"""What the collector's hooks cost per eager op, in instructions and cache misses (valgrind's cachegrind).

Timed benchmarks (bench/long_run.py --shared-core) say how much slower an
eager loop runs under agprof; this one says where that goes, and it is the
same on every run: cachegrind simulates the caches, so the machine's load
and the hypervisor do not enter.  It runs bench/eager_loop.py under
`valgrind --tool=cachegrind --cache-sim=yes` for two op counts (--ops,
default 2000 and 10000), bare and under each agprof given, two at a time,
and takes per op the difference of the two runs over the difference of
their op counts: TensorFlow's start-up and the exit cancel out.  It prints
per op, for the bare program and under each agprof, the instructions (Ir),
first-level instruction and data misses (I1mr, D1mr, D1mw) and last-level
misses, then the functions whose per-op counts changed most against the bare
run.  OpenBLAS and OpenMP run one thread and PYTHONHASHSEED is fixed, so
that the bare program's own counts repeat.

On this VM (stop 34): the eager loop's op is ~85,000 instructions with
~2,900 instruction and ~1,700 data misses of its own: TensorFlow's and
Python's code per op is larger than the first-level caches, so every line
the hooks touch misses again at the next op.  A first-level miss costs up
to ~14 cycles (less where it overlaps other work, more when other processes
share the caches), an instruction ~0.5: the misses are most of the hooks'
cost (docs/collector.md, "Cost per op", gives the figures).

usage: bench/hook_cachegrind.py [--ops A,B] [--baseline AGPROF] [--top N] [--keep DIR]
  --baseline: another agprof build (e.g. of the commit before a change), measured beside this one.
"""
import argparse
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def cachegrind_cmd(out_file, python, ops):
    return ["valgrind", "--tool=cachegrind", "--cache-sim=yes", "--cachegrind-out-file=" + out_file,
            python, os.path.join(ROOT, "bench", "eager_loop.py"), str(ops)]


def run_all(jobs, env, tmp):
    """Run (name, cmd) jobs two at a time (the machine's two CPUs), each one's stderr in a file of tmp (a pipe
    could fill while the other job is waited for); exits when one fails."""
    pending, running = list(jobs), []
    while pending or running:
        while pending and len(running) < 2:
            name, cmd = pending.pop(0)
            err = open(os.path.join(tmp, name.replace(" ", ".") + ".err"), "w+")
            running.append((name, err, subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err, env=env)))
        name, err, proc = running.pop(0)
        proc.wait()
        err.seek(0)
        if proc.returncode != 0:
            sys.exit("bench: %s failed (%d): %s" % (name, proc.returncode, err.read()[-2000:]))
        err.close()


def load(path):
    """(event names, {(file's base name, function): [counts]}) of a cachegrind output file."""
    events, per_fn, key, fl = [], {}, None, ""
    with open(path) as f:
        for line in f:
            if line.startswith("events:"):
                events = line.split()[1:]
            elif line.startswith("fl="):
                fl = line[3:].strip().rsplit("/", 1)[-1]
            elif line.startswith("fn="):
                key = (fl, line[3:].strip())
            elif line[:1].isdigit() and key:
                counts = per_fn.setdefault(key, [0] * len(events))
                for i, v in enumerate(line.split()[1:]):
                    counts[i] += int(v)
    return events, per_fn


def per_op(small, large, ops):
    """{function: [per-op counts]} from the runs of ops[0] and ops[1] ops."""
    events, a = load(small)
    _, b = load(large)
    zero = [0] * len(events)
    return events, {k: [(y - x) / (ops[1] - ops[0]) for x, y in zip(a.get(k, zero), b.get(k, zero))]
                    for k in set(a) | set(b)}


def totals(counts):
    return [sum(c[i] for c in counts.values()) for i in range(len(next(iter(counts.values()))))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ops", default="2000,10000")
    ap.add_argument("--python", default=os.path.join(ROOT, ".venv", "bin", "python"))
    ap.add_argument("--agprof", default=os.path.join(ROOT, "build", "cmd", "agprof", "agprof"))
    ap.add_argument("--baseline", help="another agprof build, measured beside this one")
    ap.add_argument("--top", type=int, default=20)
    ap.add_argument("--keep", help="keep cachegrind's output files in this directory")
    args = ap.parse_args()
    ops = [int(x) for x in args.ops.split(",")]
    if len(ops) != 2 or not 0 < ops[0] < ops[1]:
        ap.error("--ops A,B with 0 < A < B")
    if not shutil.which("valgrind"):
        sys.exit("bench: valgrind is not installed (apt-get install valgrind)")
    tmp = args.keep or tempfile.mkdtemp(prefix="agprof-cachegrind-")
    os.makedirs(tmp, exist_ok=True)
    if not args.keep:
        atexit.register(shutil.rmtree, tmp, True)  # on an exit for a failed run too
    env = dict(os.environ, PYTHONHASHSEED="0", OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1")
    configs = [("bare", None)] + [(name, exe) for name, exe in (("agprof", args.agprof), ("baseline", args.baseline))
                                  if exe]
    jobs = []
    for name, exe in configs:
        for n in ops:
            prefix = [exe, "run", "-q", "-f", "-o", os.path.join(tmp, "%s%d.agprof" % (name, n)), "--"] if exe else []
            jobs.append(("%s %d" % (name, n),
                         prefix + cachegrind_cmd(os.path.join(tmp, "cg.%s.%d" % (name, n)), args.python, n)))
    run_all(jobs, env, tmp)
    results = {}
    for name, _ in configs:
        events, results[name] = per_op(*(os.path.join(tmp, "cg.%s.%d" % (name, n)) for n in ops), ops)
    print("per eager op (runs of %d and %d ops):" % tuple(ops))
    print("%-10s" % "" + "".join("%10s" % e for e in events))
    bare = totals(results["bare"])
    for name, _ in configs:
        t = totals(results[name])
        print("%-10s" % name + "".join("%10.1f" % x for x in t))
        if name != "bare":
            print("%-10s" % ("  +" + name)[:10] + "".join("%10.1f" % (x - y) for x, y in zip(t, bare)))
    for name, _ in configs[1:]:
        zero = [0.0] * len(events)
        diff = {k: [x - y for x, y in zip(results[name].get(k, zero), results["bare"].get(k, zero))]
                for k in set(results[name]) | set(results["bare"])}
        print("\n%s against bare, the %d functions whose per-op I1mr + D1mr changed most:" % (name, args.top))
        print("".join("%10s" % e for e in events))
        i1, d1 = events.index("I1mr"), events.index("D1mr")
        for k, v in sorted(diff.items(), key=lambda kv: -abs(kv[1][i1] + kv[1][d1]))[:args.top]:
            print("".join("%10.1f" % x for x in v) + "  %s %s" % (k[0], k[1][:60]))


if __name__ == "__main__":
    main()
