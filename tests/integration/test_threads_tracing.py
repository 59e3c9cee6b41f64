"""Threads tracing at once (samples/threads_tracing.py).

Four threads, released by a barrier, each trace their own tf.function five
times with new shapes; each body prints and appends to a list that outlives
the trace.  The collector's Python parts are set up at the first trace, and
that set-up runs Python, which lets the other threads run: a thread that
found it under way used to give up, and its trace went unrecorded (13 or 14
of TensorFlow's 15 with three threads).  Recorded TRIALS times with the
trace watch and twice without it (AGPROF_TRACE_WATCH=0); each time:
- every function's recorded traces (status ok) equal TensorFlow's own
  experimental_get_tracing_count(), and the traces of one function are on
  one thread;
- watched: each trace has exactly one print and one list-append event, at
  the sample's marked lines, attributed to the trace's own function (a
  thread switch between a trace's description and its watch used to hand
  one thread's function to another's trace);
- unwatched: no such event.
With --once (the extra Pythons, tests/pythons): one watched and one unwatched run, every check
above once; the repeats, which look for the collector's set-up race, run on test_python.
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

SAMPLE = "threads_tracing.py"
TRIALS = 3


def trial(tag, env_extra, watched):
    d = agtest.tmpdir()
    out = os.path.join(d, "threads.agprof")
    p = agtest.run_agprof(out, [agtest.PYTHON, agtest.sample(SAMPLE)], env_extra=env_extra)
    check_eq(p.returncode, 0, tag + ": agprof run exit status")
    facts = agtest.facts_of(p.stdout)
    if not check(facts is not None, tag + ": the program's facts line"):
        return
    db = agtest.open_recording(out)
    traces = db.execute(
        "SELECT t.id, n.text AS name, t.tid, t.status FROM traces t JOIN functions f ON f.id = t.function_id"
        " JOIN strings n ON n.id = f.name_id").fetchall()
    by_fn = {}
    for t in traces:
        by_fn.setdefault(t["name"], []).append(t)
    for name, count in sorted(facts["counts"].items()):
        mine = by_fn.get(name, [])
        check_eq(len([t for t in mine if t["status"] == "ok"]), count,
                 "%s: %s's recorded traces = TensorFlow's count" % (tag, name))
        check_eq(len({t["tid"] for t in mine}), 1, "%s: %s traced on one thread" % (tag, name))
    check_eq(sorted(by_fn), sorted(facts["counts"]), tag + ": the recorded functions")
    events = db.execute("SELECT trace_id, kind, line, function FROM trace_events"
                        " WHERE kind IN ('print', 'list-append')").fetchall()
    if not watched:
        check_eq(len(events), 0, tag + ": no watched events without the watch")
        return
    name_of = {t["id"]: t["name"] for t in traces}
    per_trace = {}
    for e in events:
        per_trace.setdefault(e["trace_id"], []).append(e)
    wrong = [(e["trace_id"], e["kind"], e["line"], e["function"]) for e in events
             if e["function"] != name_of.get(e["trace_id"]) or e["line"] != facts["lines"][e["kind"]]]
    check_eq(wrong, [], tag + ": every event on its own trace's function, at the marked line")
    for t in traces:
        kinds = sorted(e["kind"] for e in per_trace.get(t["id"], []))
        check_eq(kinds, ["list-append", "print"], "%s: trace %d of %s watched" % (tag, t["id"], t["name"]))


def main():
    agtest.need_agprof()
    once = "--once" in sys.argv[1:]
    for i in range(1 if once else TRIALS):
        trial("watched %d" % (i + 1), None, True)
    for i in range(1 if once else 2):
        trial("unwatched %d" % (i + 1), {"AGPROF_TRACE_WATCH": "0"}, False)
    agtest.finish("threads_tracing")


if __name__ == "__main__":
    main()
