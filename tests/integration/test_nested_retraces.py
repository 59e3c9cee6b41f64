"""Retraces inside another function's retraces are counted once (issue 46).

The program (written here): outer, a tf.function taking a Python int,
calls inner with it; each new value traces outer again and, inside that
trace, inner again.  TensorFlow's experimental_get_tracing_count() says 12
for each.  The same time is not two findings' savings:
- the recording holds 12 traces of each, as TensorFlow counts;
- inner's retraces lie inside outer's (same thread, spans);
- outer: a retracing finding above info with a saving; inner: info, its
  message names outer ("ran inside retraces of outer"), its saving 0;
- every finding's saving is at most its cost (the cost counts what the fix
  removes: a retrace's tracing and its new graph's first-call set-up), and
  none is cut to a bound (the estimates hold on their own).
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

PROGRAM = '''import tensorflow as tf


@tf.function
def inner(x, k):
    return tf.reduce_sum(x * k)


@tf.function
def outer(x, step):
    return inner(x, step) + 1.0


x = tf.ones([64, 64])
for i in range(12):
    outer(x, i)
print("tracing count outer:", outer.experimental_get_tracing_count())
print("tracing count inner:", inner.experimental_get_tracing_count())
'''


def main():
    agtest.need_agprof()
    tmp = agtest.tmpdir()
    with open(os.path.join(tmp, "prog.py"), "w") as fh:
        fh.write(PROGRAM)
    rec = os.path.join(tmp, "n.agprof")
    p = agtest.run_agprof(rec, [agtest.PYTHON, "prog.py"], cwd=tmp)
    check_eq(p.returncode, 0, "the program under agprof (%s)" % p.stderr.decode(errors="replace")[-500:])
    counts = dict(line.split(": ") for line in p.stdout.decode().splitlines() if line.startswith("tracing count"))
    check_eq(counts, {"tracing count outer": "12", "tracing count inner": "12"}, "TensorFlow's counts")
    db = agtest.open_recording(rec)
    spans = {}
    for name, tid, start, end in db.execute(
            "SELECT n.text, t.tid, t.start_ns, t.end_ns FROM traces t JOIN functions f ON f.id = t.function_id"
            " JOIN strings n ON n.id = f.name_id ORDER BY t.start_ns"):
        spans.setdefault(name, []).append((tid, start, end))
    check_eq({k: len(v) for k, v in spans.items()}, {"outer": 12, "inner": 12}, "traces recorded")
    inside = sum(any(ti == to and so <= si and ei <= eo for to, so, eo in spans.get("outer", []))
                 for ti, si, ei in spans.get("inner", []))
    check_eq(inside, 12, "inner's traces inside outer's (spans on one thread)")
    rc, out, err = agtest.agprof_cmd("report", "--format", "json", rec)
    check_eq(rc, 0, "report (%s)" % err)
    findings = json.loads(out)["findings"] if rc == 0 else []
    by_fn = {f["function"]: f for f in findings if f["rule"] == "retracing"}
    o, i = by_fn.get("outer"), by_fn.get("inner")
    if check(o, "a retracing finding for outer", findings):
        check(o["severity"] != "info" and o["saving_ns"] > 0, "outer: above info, with a saving", o)
    if check(i, "a retracing finding for inner", findings):
        check_eq(i["severity"], "info", "inner: info")
        check_eq(i["saving_ns"], 0, "inner: no saving of its own")
        check("ran inside retraces of outer" in i["message"], "inner's message names outer", i["message"])
    for f in findings:
        what = "%s %s" % (f["rule"], f["function"])
        check(f["saving_ns"] <= f["cost_ns"], what + ": saving at most its cost", (f["saving_ns"], f["cost_ns"]))
        check("cut to" not in (f["saving_method"] or ""), what + ": no estimate cut to a bound", f["saving_method"])
    agtest.finish("nested_retraces")


main()
