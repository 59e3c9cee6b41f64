"""Node lines read as the ops are made (collector/pyframe.c agp_py_op_line)
give what the ops' StackTraces give (pytrace.py _innermost_user_line).

samples/keras_fit.py (Keras' own train, test and predict functions: no
AutoGraph-generated code on the stack, every op's line comes from the
collector) and samples/watch_frames.py (the user's AutoGraph-converted code
and a trace inside a trace: on 3.11 the collector writes the frames and
pytrace.py maps the generated ones by their conversions' source maps; on
3.10, whose frames name no function, read from StackTraces) run with
AGPROF_NODE_LINES_CHECK=1, which reads every op's StackTrace as well and
compares: no op differs, and the collector gave lines (CPython 3.10 and
3.11; on 3.12+ it gives none).  keras_fit.py runs
a second time without the check: its node-line events and its graph
nodes' lines are the rows of the checked run (whose node lines came from
the StackTraces).
"""
import os
import re
import sqlite3
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

CHECK = re.compile(r"agprof: node lines check: (\d+) ops, (\d+) from the collector, (\d+) differ")


def rows(path):
    db = sqlite3.connect("file:%s?mode=ro" % path, uri=True)
    try:
        events = db.execute("SELECT trace_seq, name, file, line, count, repeats, loop_line FROM trace_events"
                            " WHERE kind IN ('node-line', 'nodes') ORDER BY 1, 2, 3, 4").fetchall()
        nodes = db.execute("SELECT file, line, count(*) FROM graph_nodes WHERE file IS NOT NULL"
                           " GROUP BY 1, 2 ORDER BY 1, 2").fetchall()
    finally:
        db.close()
    return events, nodes


def run(sample, tag, checked):
    out = os.path.join(agtest.tmpdir(), "%s.agprof" % tag)
    proc = agtest.run_agprof(out, [agtest.PYTHON, agtest.sample(sample)],
                             env_extra={"AGPROF_NODE_LINES_CHECK": "1"} if checked else None)
    err = proc.stderr.decode("utf-8", "replace")
    check(proc.returncode == 0, tag + ": exit status 0", err[-2000:])
    m = CHECK.search(err)
    if checked:
        check(m, tag + ": the check's summary", err[-2000:])
    return out, [int(x) for x in m.groups()] if m else None, err


def main():
    agtest.need_agprof()
    rec, (ops, made, differ), err = run("keras_fit.py", "keras-checked", True)
    check(differ == 0, "keras_fit: no op whose collector line differs from its StackTrace's",
          "\n".join(ln for ln in err.splitlines() if "node line of" in ln)[:2000])
    if sys.version_info[:2] in ((3, 10), (3, 11)):
        check(ops > 100 and made == ops, "keras_fit: every op's line from the collector (%d of %d)" % (made, ops))
    else:  # 3.12's trampoline frames: the StackTraces are read (pyframe.c)
        check(ops > 100 and made == 0, "keras_fit: no op's line from the collector (%d of %d)" % (made, ops))
    plain, _, _ = run("keras_fit.py", "keras", False)
    a, b = rows(rec), rows(plain)
    check(a[0] and a[1], "keras_fit: node lines and graph nodes' lines recorded")
    check_eq(b[0], a[0], "keras_fit: node-line events without the check")
    check_eq(b[1], a[1], "keras_fit: graph nodes' lines without the check")
    _, (ops, made, differ), err = run("watch_frames.py", "watch-checked", True)
    check(differ == 0, "watch_frames: no op whose collector line differs",
          "\n".join(ln for ln in err.splitlines() if "node line of" in ln)[:2000])
    check(ops > 0, "watch_frames: node lines read (%d ops, %d from the collector)" % (ops, made))
    if sys.version_info[:2] == (3, 11):  # the generated frames mapped by their conversions' source maps
        check(made == ops, "watch_frames: every op's line from the collector, AutoGraph's code on the stack"
              " (%d of %d; before stop 43, 2)" % (made, ops))
    agtest.finish("node_lines")


if __name__ == "__main__":
    main()
