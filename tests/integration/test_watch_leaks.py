"""The trace watch keeps its profile function out of code that is not the
user's, even when that code has no file of its own (collector/pywatch.c
origin_verdict(), pytrace.py exec_origin()).

A library (a directory given to `agprof run --library`) builds 400
namedtuples in a function the user's tf.function calls; AutoGraph converts
that function inside the trace, and each namedtuple's __new__ is code
compiled from a string ("<string>"), which belongs to no module.  Before
stop 43 it was taken for the user's code: the profile function went on and
off around each of them (GPflow's loss: 140,526 profile events a trace).
Recorded with real TensorFlow, AGPROF_WATCH_PRICE=1 printing what the
watch did in each trace; checked on CPython 3.11 (the frame hook reading
the function a frame runs; 3.10's frames name none, 3.12+ watch through
sys.monitoring):
- TensorFlow's own tracing count (2), and 2 traces recorded;
- each trace's profile events and switches: a few dozen, not thousands
  (the build before: 1,600 and more events a trace);
- the user's print inside the traced function still found at its line in
  both traces, and no side effect at the library's lines.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

LIBRARY = '''import collections

Pair = collections.namedtuple("Pair", "a b")


def build(x):
    pairs = [Pair(i, i + 1) for i in range(400)]
    return x * float(len(pairs))
'''

PROGRAM = '''import sys

import tensorflow as tf

sys.path.insert(0, sys.argv[1])
import leaklib  # noqa: E402


@tf.function
def step(x):
    print("tracing step")  # the user's side effect
    return leaklib.build(x)


step(tf.constant(1.0))
step(tf.constant([1.0, 2.0]))
print("traces", step.experimental_get_tracing_count())
'''

PRICE = re.compile(r"agprof: watch-price seq (\d+) watched (\d) .* events (\d+) toggles (\d+)")


def main():
    agtest.need_agprof()
    tmp = agtest.tmpdir()
    lib = os.path.join(tmp, "lib")
    os.makedirs(lib, exist_ok=True)
    with open(os.path.join(lib, "leaklib.py"), "w") as f:
        f.write(LIBRARY)
    prog = os.path.join(tmp, "leaks.py")
    with open(prog, "w") as f:
        f.write(PROGRAM)
    out = os.path.join(tmp, "leaks.agprof")
    proc = agtest.run_agprof(out, [agtest.PYTHON, prog, lib], env_extra={"AGPROF_WATCH_PRICE": "1"},
                             agprof_args=("--library", lib))
    text, err = proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    check_eq(proc.returncode, 0, "exit status (%s)" % err[-500:])
    check("traces 2" in text, "TensorFlow's tracing count", text[-300:], "traces 2")
    db = agtest.open_recording(out)
    check_eq(db.execute("SELECT count(*) FROM traces").fetchone()[0], 2, "traces recorded")
    prints = db.execute("SELECT count(*), min(e.line) FROM trace_events e WHERE e.kind = 'print'"
                        " AND e.file = ?", (prog,)).fetchone()
    prints = tuple(prints) if prints else None
    check_eq(prints, (2, 11), "the user's print in both traces, at its line")
    check_eq(db.execute("SELECT count(*) FROM trace_events WHERE file LIKE ? AND kind NOT IN"
                        " ('node-line', 'nodes', 'node-sources')", (lib + "%",)).fetchone()[0], 0,
             "no side effect at the library's lines (its ops' node lines are its)")
    rows = [tuple(int(v) for v in m.groups()) for m in PRICE.finditer(err)]
    check_eq(len(rows), 2, "what the watch did, per trace (AGPROF_WATCH_PRICE)")
    if sys.version_info[:2] == (3, 11):
        for seq, watched, events, toggles in rows:
            check(watched == 1 and events < 200 and toggles < 200,
                  "trace %d: profile events and switches (the namedtuples' __new__ follow the library)" % seq,
                  (watched, events, toggles), "watched, < 200 each")
    agtest.finish("watch_leaks")


if __name__ == "__main__":
    main()
