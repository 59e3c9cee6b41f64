"""Many recordings of one fleet program in one process
(tests/integration/test_fleet_export.py): TensorFlow is imported once, then
each run is a block `with agprof.record(OUT)` that calls the program's
main(N) with fresh tf.function objects (its functions()), so that a run
traces as a process of its own would.  Beside each recording,
OUT.oracle.json as samples/oracle.py writes it: TensorFlow's own
experimental_get_tracing_count() of the block's objects, and the block's
CLOCK_MONOTONIC bounds (window_ns), the clock agprof stamps events with.

Usage: record_many.py PROGRAM.py OUT=N [OUT=N ...]  (not under agprof run:
there agprof.record() opens a capture window, it makes no recording)."""
import importlib.util
import json
import os
import sys
import time

import tensorflow as tf  # noqa: F401  once, before any recording
import agprof


def load(path):
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write_oracle(out, fns, window):
    doc = {"sample": os.path.basename(out), "pid": os.getpid(), "window_ns": window,
           "functions": {name: {"tracing_count": int(f.experimental_get_tracing_count())}
                         for name, f in fns.items()}}
    with open(out + ".oracle.json.tmp", "w") as fh:
        json.dump(doc, fh, indent=1, sort_keys=True)
    os.replace(out + ".oracle.json.tmp", out + ".oracle.json")


def main(program, runs):
    prog = load(program)
    for run in runs:
        out, n = run.rsplit("=", 1)
        fns = prog.functions()
        t0 = time.monotonic_ns()
        with agprof.record(out, quiet=True):
            prog.main(int(n), fns)
        write_oracle(out, fns, [t0, time.monotonic_ns()])


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
