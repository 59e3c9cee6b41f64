"""The trace watch in user frames only, the frame hook on CPython 3.10 and
3.11, sys.monitoring on 3.12 and 3.13 (collector/pymonitor.c), sees what the
profile function on throughout sees (docs/collector.md, "Pitfalls inside
traced code").

samples/watch_frames.py makes side effects from each kind of frame the hook
decides for: the user's code through AutoGraph (print, time.time, a
random.random, a global list's append), a user callback that
TensorFlow's tf.nest calls back (the hook turns the profile function back
on below a TensorFlow frame), a tf.function traced inside another's trace
(its root reached from frames the hook had turned off), and a trace that
fails on a TypeError raised in TensorFlow's code (the trace function set
by the hook when that frame unwinds, so the root sees the exception).
Recorded twice with real TensorFlow: as shipped, and with
AGPROF_TRACE_WATCH=profile (the profile function on for the whole trace,
the mechanism before the hook).  Checked:
- TensorFlow's own tracing counts (2 traces of outer, 2 of inner);
- on 3.12+, that the traced code saw agprof's sys.monitoring tool as
  shipped, not with AGPROF_TRACE_WATCH=profile, and no tool is left after
  the traces either way; and a third run whose program holds the tool ids
  agprof may take (2, 3, 4): the watch falls back to the profile function,
  with the same events, and leaves the program's tools as they were;
- each marked line has its event (print at the three print lines, time,
  random, list-append, exception at the dict line);
- the two recordings' trace events are the same rows (kind, name, line,
  count, detail, repeats, loop line, function), node lines included.
"""
import os
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

SAMPLE = "watch_frames.py"
EXPECT = {"outer-print": "print", "inner-print": "print", "callback-print": "print", "time": "time",
          "random": "random", "append": "list-append", "trace-error": "exception"}


def events(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        rows = db.execute("SELECT kind, name, file, line, count, detail, repeats, loop_line, function"
                          " FROM trace_events ORDER BY trace_seq, kind, name, line").fetchall()
    finally:
        db.close()
    return [(k, n, os.path.basename(f or ""), ln, c, d, r, lp, fn) for k, n, f, ln, c, d, r, lp, fn in rows]


def run(tag, env_extra, args=()):
    out = os.path.join(agtest.tmpdir(), "watch-%s.agprof" % tag)
    proc = agtest.run_agprof(out, [agtest.PYTHON, agtest.sample(SAMPLE)] + list(args), env_extra=env_extra)
    text = proc.stdout.decode("utf-8", "replace")
    check_eq(proc.returncode, 0, tag + ": exit status")
    check("traces 2 2" in text, tag + ": TensorFlow traced outer and inner twice each", text[-300:])
    check("trace failed: TypeError" in text, tag + ": broken's trace failed", text[-300:])
    if sys.version_info >= (3, 12):
        tools = [ln for ln in text.splitlines() if ln.startswith("tools during traces")]
        check(tools, tag + ": the sample printed the tools", text[-300:])
        line = tools[-1] if tools else ""
        check(("'agprof'" in line) == (tag == "hook"), tag + ": sys.monitoring tool agprof during the traces", line)
        left = "[None, None, 'other', 'other', 'other', None]" if args else "[None, None, None, None, None, None]"
        check(line.endswith("after " + left), tag + ": no tool of agprof's left after", line)
    return events(out)


def main():
    agtest.need_agprof()
    hooked = run("hook", None)
    profiled = run("profile", {"AGPROF_TRACE_WATCH": "profile"})
    marks = agtest.marker_lines(SAMPLE)
    for mark, kind in EXPECT.items():
        line = marks[mark][0]
        hit = [e for e in hooked if e[0] == kind and e[2] == SAMPLE and e[3] == line]
        check(hit, "hook: a %s event at line %d (%s)" % (kind, line, mark), [e[:4] for e in hooked if e[0] != "node-line"])
    check_eq(len(hooked), len(profiled), "as many trace events with the hook as with the profile function on")
    only_hook = sorted(set(hooked) - set(profiled))
    only_profile = sorted(set(profiled) - set(hooked))
    check(not only_hook and not only_profile, "the same trace events either way",
          "hook only %s, profile only %s" % (only_hook[:5], only_profile[:5]))
    if sys.version_info >= (3, 12):
        taken = run("taken", None, ["--take-tools"])
        check_eq(sorted(taken), sorted(profiled), "tool ids taken: the profile function's trace events")
    agtest.finish("watch_hook")


if __name__ == "__main__":
    main()
