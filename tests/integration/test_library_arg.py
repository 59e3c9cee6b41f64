"""A library's own line passes a tf.function's argument (issue 45, class 3)
and a negligible py_function (class 5), recorded with real TensorFlow.

samples/library_arg_retrace.py calls minilosses.loss() (a library in a
site-packages directory of the test tree) with tensors only; the library
calls its internal tf.function penalty(), behind its own decorator helper,
with the caller's tensor, then False, then 2.  Checked:
- traces of penalty equal experimental_get_tracing_count() (the oracle);
- the False retrace's recorded call-site chain holds the decorator's line,
  the library line that passed the value, then the user's marked line;
- `agprof report --format json`: the retracing finding is info, at the
  user's line with the library line that passes the value beside it (not
  the decorator helper's); its message says that the library does it, and
  its advice is to report it to minilosses, not to pass a tensor;
- `agprof fix` writes no edit for it, and says why;
- with `keyword`, the user's own line passes weight by name to
  minilosses.scaled(), which passes it on: a warning, "Pass weight as a
  tensor", the library's forwarding line beside the user's;
- with `positional`, the user's line passes weight by position (scaled's
  third parameter, read from its recorded signature): the same warning.
samples/pyfunc_negligible.py: a py_function run once for ~2 ms among seconds
of work is an info finding; one sleeping 25 ms on each of 30 steps stays a
warning.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agtest  # noqa: E402
from agtest import check, check_eq  # noqa: E402

SAMPLE = "library_arg_retrace.py"
PYFUNC = "pyfunc_negligible.py"
LOSSES = os.path.join(agtest.SAMPLES, "fakelib", "site-packages", "minilosses", "losses.py")
ARROW = "\u2192"


def marked(path, tag):
    with open(path) as fh:
        return [no for no, text in enumerate(fh, 1) if ("# " + tag) in text]


def record(d, name, sample, args=(), oracle=False):
    out = os.path.join(d, name + ".agprof")
    env = dict(os.environ)
    if oracle:
        env["AGPROF_ORACLE"] = os.path.join(d, name + ".json")
    p = subprocess.run([agtest.AGPROF, "run", "-q", "-o", out, "--", agtest.PYTHON, agtest.sample(sample)] +
                       list(args), env=env, cwd=agtest.SOURCE_ROOT, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=240)
    check_eq(p.returncode, 0, "agprof run %s %s" % (sample, " ".join(args)))
    if p.returncode:
        sys.stdout.write(p.stderr.decode("utf-8", "replace")[-3000:])
    return out


def report(rec, *args):
    rc, out, err = agtest.agprof_cmd("report", *(list(args) + [rec]))
    check_eq(rc, 0, "agprof report %s" % " ".join(args))
    return out


def loc(d):
    return (os.path.realpath(d["file"]), d["line"]) if d else None


def penalty_finding(doc):
    found = [f for f in doc.get("findings", []) if f["rule"] == "retracing" and f.get("function") == "penalty"]
    check_eq(len(found), 1, "one retracing finding for penalty")
    return found[0] if found else {}


def check_chain(rec, oracle_path, user_line, value_line, wrapper_line):
    with open(oracle_path) as fh:
        truth = json.load(fh)["functions"]["penalty"]
    db = agtest.open_recording(rec)
    rows = db.execute("SELECT t.callsite_id FROM traces t JOIN functions f ON f.id = t.function_id"
                      " JOIN strings s ON s.id = f.name_id WHERE s.text = 'penalty' ORDER BY t.start_ns").fetchall()
    check_eq(len(rows), truth["tracing_count"], "traces of penalty (oracle)")
    chain = []
    site = rows[1][0] if len(rows) > 1 else None
    while site is not None and len(chain) < 8:
        r = db.execute("SELECT s.text, c.line, c.library, c.parent_id FROM callsites c JOIN strings s"
                       " ON s.id = c.file_id WHERE c.id = ?", (site,)).fetchone()
        chain.append((os.path.basename(r[0]), r[1], r[2]))
        site = r[3]
    db.close()
    check_eq(chain, [("losses.py", wrapper_line, 1), ("losses.py", value_line, 1), (SAMPLE, user_line, 0)],
             "the False retrace's chain: decorator helper, the library line that passes it, the user's line")


def check_library_passes(d):
    user_line = agtest.marker_lines(SAMPLE)["library-arg"][0]
    value_line = marked(LOSSES, "minilosses: value")[0]
    wrapper_line = marked(LOSSES, "minilosses: wrapper")[0]
    rec = record(d, "library", SAMPLE, oracle=True)
    check_chain(rec, os.path.join(d, "library.json"), user_line, value_line, wrapper_line)
    f = penalty_finding(json.loads(report(rec, "--format", "json")))
    check_eq(f.get("cause"), "python-value", "cause")
    check_eq(f.get("severity"), "info", "a cost the user cannot act on is info")
    check_eq(loc(f.get("location")), (os.path.realpath(agtest.sample(SAMPLE)), user_line), "location: the user's line")
    check_eq(loc(f.get("library_location")), (os.path.realpath(LOSSES), value_line),
             "library_location: the line that passes the value, not the decorator helper's")
    says = "the library does it: minilosses/losses.py:%d passes weight as a Python value (False) on one call" \
           " and a tensor on another" % value_line
    check(says in f.get("message", ""), "message says %r" % says, f.get("message"))
    rec_text = f.get("recommendation") or ""
    check("Report it to minilosses, naming minilosses/losses.py:%d" % value_line in rec_text and
          "Pass weight as a tensor" not in rec_text, "advice: report it to the library", rec_text)
    check(f.get("fix") is None and "nothing in your code to edit" in (f.get("no_edit") or ""),
          "no edit, and why", (f.get("fix"), f.get("no_edit")))
    rc, out, err = agtest.agprof_cmd("fix", rec)
    check("+++" not in out and "@@" not in out, "agprof fix prints no edit", out[-2000:])
    want = "%s:%d %s minilosses/losses.py:%d" % (SAMPLE, user_line, ARROW, value_line)
    check(want in report(rec), "text report shows %r" % want)


def check_user_passes(d, how):
    """The user's line passes weight to scaled() (by keyword or by position), which passes it on: a warning."""
    forward_line = marked(LOSSES, "minilosses: forward")[0]
    rec = record(d, how, SAMPLE, [how])
    f = penalty_finding(json.loads(report(rec, "--format", "json")))
    check_eq(f.get("severity"), "warning", "%s: the user's call passes weight: a warning" % how)
    check_eq(loc(f.get("location")), (os.path.realpath(agtest.sample(SAMPLE)),
                                      agtest.marker_lines(SAMPLE)["user-" + how][0]), "%s: location" % how)
    check_eq(loc(f.get("library_location")), (os.path.realpath(LOSSES), forward_line), "%s: library_location" % how)
    check("Pass weight as a tensor" in (f.get("recommendation") or "") and
          "the library does it" not in f.get("message", ""), "%s: advice to the user's call" % how,
          (f.get("message"), f.get("recommendation")))


def check_pyfunc(d):
    marks = agtest.marker_lines(PYFUNC)
    doc = json.loads(report(record(d, "pyfunc", PYFUNC), "--format", "json"))
    sev = {f.get("function"): f["severity"] for f in doc.get("findings", []) if f["rule"] == "py-function"}
    check_eq(sev.get("setup"), "info", "a ~2 ms py_function in a long run is info (line %d)" % marks["cheap-blackbox"][0])
    check_eq(sev.get("train_step"), "warning", "a 0.75 s py_function stays a warning (line %d)"
             % marks["costly-blackbox"][0])


def main():
    agtest.need_agprof()
    d = agtest.tmpdir()
    check_library_passes(d)
    check_user_passes(d, "keyword")
    check_user_passes(d, "positional")
    check_pyfunc(d)
    agtest.finish("library_arg")


if __name__ == "__main__":
    main()
